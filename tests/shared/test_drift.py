"""shared.pipeline.drift: the comparison of two runs' claims, and a real rerun of a tiny paper on other kernels
whose drift.json reaches the re-rendered report and the README's generated drift table."""
import json
import shutil
from pathlib import Path

from shared.pipeline.drift import compare, measure
from shared.pipeline.report import drift_table, rerender
from shared.pipeline.scratch import ROOT, render_tiny, tiny_configfiles

PAPER = "lsa_one_step_gd"


def _row(value, status="PASS"):
    return {"reproduced": value, "status": status}


def test_compare_counts_changes_and_flips():
    here = {"a": _row("1.0"), "b": _row("0.5"), "c": _row("yes"), "d": _row("2", "PASS")}
    there = {"a": _row("1.0"), "b": _row("0.25"), "c": _row("no"), "d": _row("3", "FAIL")}
    result = compare(here, there)
    assert result["summary"]["numeric"] == 3 and result["summary"]["changed"] == 2
    assert result["claims"]["b"]["rel_change"] == 0.5 and result["summary"]["flipped"] == ["d"]
    assert "rel_change" not in result["claims"]["c"]


def test_tiny_rerun_on_other_kernels(tmp_path):
    repo, proc = render_tiny(tmp_path / "repo", PAPER)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tiny = [str(Path(f).relative_to(ROOT)) for f in tiny_configfiles(PAPER)]
    for f in tiny:
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, repo / f)
    summary = measure([PAPER], root=repo, configfiles=tiny, threads_per_job=1)[PAPER]
    drift = json.loads((repo / "reports" / PAPER / "quick" / "drift.json").read_text())
    assert drift["setting"]["ATEN_CPU_CAPABILITY"] == "avx2" and summary["compared"] > 0
    rerender(PAPER, "quick", repo / "reports", repo / "replications")
    assert "## Drift on other machines" in (repo / "reports" / PAPER / "quick" / "report.md").read_text()
    assert f"`{PAPER}` | {summary['changed']} of {summary['numeric']}" in drift_table(repo / "reports", [PAPER])
