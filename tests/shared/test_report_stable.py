"""The same code and config render the same report.md, whether Snakemake renders it (metrics and figures in the
paper's declared order) or `rerender` scores it again from what the committed report kept: only the fields that must
change (render time, commit) may differ."""
import json
import re
import shutil
from pathlib import Path

from shared.pipeline.paper import Paper
from shared.pipeline.report import render, rerender

ROOT = Path(__file__).resolve().parents[2]
PAPER = "bilinear_mlp"  # metrics and figures both declared out of alphabetical order
VOLATILE = re.compile(r"^- (Rendered at|Commit:) .*$", re.M)


def _report(out):
    return VOLATILE.sub(lambda m: f"- {m.group(1)} ...", (out / "report.md").read_text())


def test_snakemake_render_and_rerender_write_the_same_report(tmp_path):
    out = tmp_path / "reports" / PAPER / "quick"
    shutil.copytree(ROOT / "reports" / PAPER / "quick", out)
    paper = Paper(PAPER, "quick", root=ROOT)
    # what the report rule passes: P.metrics() and P.figures(), in the order pipeline.py declares them
    metrics = [out / "metrics" / Path(path).name for path in paper.metrics()]
    figures = [out / "figures" / Path(path).name for path in paper.figures()]
    for listed in (metrics, figures):
        assert [f.name for f in listed] != sorted(f.name for f in listed), "pick a paper whose orders are not sorted"
    cost = json.loads((out / "provenance.json").read_text())["cost"]

    render(PAPER, "quick", ROOT / "replications" / PAPER, metrics, figures, out, out / "config.json", cost=cost)
    by_snakemake = _report(out)
    rerender(PAPER, "quick", tmp_path / "reports", ROOT / "replications")
    assert _report(out) == by_snakemake
    rerender(PAPER, "quick", tmp_path / "reports", ROOT / "replications")
    assert _report(out) == by_snakemake
    headings = re.findall(r"^### (.*)$", by_snakemake.split("## Figures", 1)[1].split("\n## ", 1)[0], re.M)
    assert len(headings) == len(figures)
