"""Published reports change only when meant to, through real Snakemake runs of implicit_icl_update's tiny config (its
cheapest paper) in a scratch copy holding the committed report: a run off the committed config says so at the top
of its report and in the index; a run that fails (a job, or the render itself) leaves the report and figures as
they were, byte for byte. (A metric key no analysis writes, refused at render, is in test_inputs_checks.py.)"""
import shutil
from pathlib import Path

import pytest

from shared.pipeline.report import index
from shared.pipeline.scratch import copy_repo, load_scaled, snakemake, tiny_configfiles

ROOT = Path(__file__).resolve().parents[2]
PAPER = "implicit_icl_update"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    repo = copy_repo(tmp_path_factory.mktemp("inputs_reports"), [PAPER])
    shutil.copytree(ROOT / "reports" / PAPER, repo / "reports" / PAPER)
    shutil.copy2(ROOT / "README.md", repo / "README.md")
    return repo


def published(repo):
    """{path: bytes} of everything the report of the quick tier consists of."""
    folder = repo / "reports" / PAPER / "quick"
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run(repo, *args):
    proc = snakemake(repo, "--cores", "1", PAPER, "--configfile", *tiny_configfiles(PAPER), *args,
                     timeout=load_scaled(600))
    return proc.returncode, proc.stdout + proc.stderr


def test_a_run_off_the_committed_config_is_marked_in_its_report_and_the_index(repo):
    code, out = run(repo, "--forceall")  # a fresh copy has no run records: Snakemake takes the report as up to date
    assert code == 0, out
    report = (repo / "reports" / PAPER / "quick" / "report.md").read_text()
    header = report.split("## Claims")[0]
    assert "**Not the committed config.**" in header and f"replications/{PAPER}/config.yaml" in header
    for key, used in (("n", "8"), ("width", "4"), ("analysis.ft_lrs", "0.1")):
        assert f"- `{key}`: " in header and header.split(f"- `{key}`: ")[1].split("\n")[0].endswith(f"→ {used}"), header
    index(repo / "reports", replications_dir=repo / "replications")
    for page in (repo / "reports" / "index.md", repo / "README.md"):
        row = next(line for line in page.read_text().splitlines() if line.startswith(f"| {PAPER} "))
        assert "⚠️ **not the committed config**: `analysis.ft_lrs`" in row, row


def test_a_failed_run_replaces_no_report_and_no_figure(repo):
    before = published(repo)
    script = repo / "replications" / PAPER / "analyze_dynamics.py"
    text = script.read_text()
    script.write_text('raise SystemExit("sabotaged for a test")\n' + text)
    try:  # another finetune setting: that analysis and its figure run again, and succeed; dynamics fails
        code, out = run(repo, "--keep-going", "--config", f"{PAPER}={{quick: {{analysis: {{ft_steps: 2}}}}}}")
    finally:
        script.write_text(text)
    assert code != 0 and "sabotaged for a test" in out, out
    assert (repo / "results" / PAPER / "quick" / "figures" / "finetune--finetune.png").is_file()  # drawn, not shown
    assert published(repo) == before


def test_a_report_job_that_fails_midway_leaves_the_report_whole(repo):
    """The render itself fails after scoring (deviations.md, which it quotes, is not UTF-8): Snakemake keeps the
    outputs (update()) and the render had written only into its copy of the folder."""
    before = published(repo)
    deviations = repo / "replications" / PAPER / "deviations.md"
    text = deviations.read_bytes()
    deviations.write_bytes(text + b"\n\xff\xfe not text\n")
    try:
        code, out = run(repo)
    finally:
        deviations.write_bytes(text)
    assert code != 0 and "UnicodeDecodeError" in (repo / "results" / PAPER / "quick" / "logs" / "report.log").read_text()
    assert published(repo) == before
    assert not list((repo / "reports" / PAPER).glob(".quick.*"))  # no half-written copy left beside it


def test_the_declared_paper_scale_part_is_a_committed_config_not_an_override():
    """A full report rendered from config.yaml's full tier with the paper's paper_scale.yaml applied is fresh and says
    it is that part; any other change of the full tier stays 'config changed' and 'not the committed config'."""
    from shared.pipeline.config import committed_config_hashes, load_paper_config, paper_scale_config
    from shared.pipeline.report import config_overrides, with_override_banner
    from shared.pipeline.scratch import ROOT
    from shared.pipeline.staleness import _config_reason
    from shared.pipeline.tiers import config_hash

    paper_dir = ROOT / "replications" / "distmult"
    scale, full = paper_scale_config(paper_dir), load_paper_config(paper_dir, "full")
    assert scale != full and paper_scale_config(ROOT / "replications" / "bcos_networks") is None
    other = {**scale, "seeds": [0, 1]}
    assert _config_reason(paper_dir, "full", config_hash(scale)) == []
    assert _config_reason(paper_dir, "full", config_hash(other)) == ["config changed"]
    assert _config_reason(paper_dir, "quick", config_hash(scale)) == ["config changed"]
    committed = committed_config_hashes(paper_dir, "full")
    assert config_hash(scale) in committed and config_hash(other) not in committed
    overrides = config_overrides(paper_dir, "full", scale)
    assert {o["key"] for o in overrides} == {"graphs.fb15k", "graphs.wn18", "seeds"}
    assert "paper-scale part" in with_override_banner("# T\n\nbody", overrides, paper_dir, "full", True)
    assert "Not the committed config" in with_override_banner("# T\n\nbody", overrides, paper_dir, "full")
