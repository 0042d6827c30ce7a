"""Real Snakemake runs for the pipeline tests: a scratch copy of the workflow with one paper, and the command."""
import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def copy_paper_repo(dest, *papers):
    """Snakefile, the shared rules, the profiles and replications/<paper> of the papers named only, under `dest`
    (several when one paper's pipeline consumes another's)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "Snakefile", dest / "Snakefile")
    shutil.copytree(ROOT / "shared" / "rules", dest / "shared" / "rules", ignore=ignore)
    shutil.copytree(ROOT / "profiles", dest / "profiles", ignore=ignore)
    for paper in papers:
        shutil.copytree(ROOT / "replications" / paper, dest / "replications" / paper, ignore=ignore)
    return dest


def config_args(config):
    """`--config` values: one `paper={...}` string, or a list of them (one per paper)."""
    return [config] if isinstance(config, str) else list(config)


def snakemake(cwd, *args, env=None):
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=900)


def assert_rerun_is_no_op_and_figure_edit_does_not_retrain(repo, config, plot_script, heavy_rules, targets=()):
    """A second run plans nothing; a real edit of a figure script (Snakemake ignores a bare touch) replans only the
    figure and report rules, none of `heavy_rules`. `config` as config_args takes it; `targets`: the rules or files
    the run asked for (none: the default target)."""
    args = ("--cores", "2", *targets, "--config", *config_args(config), "-n")
    proc = snakemake(repo, *args)
    assert "Nothing to be done" in proc.stdout + proc.stderr
    plot_script.write_text(plot_script.read_text() + "# edited\n")
    proc = snakemake(repo, *args)
    out = proc.stdout + proc.stderr
    assert "paper_figure" in out and "paper_report" in out
    for rule in heavy_rules:
        assert rule not in out, rule


def check_claims_exit_code(repo, rows):
    """`replicate check-claims` exits 1 exactly when a claim of `rows` (the tier's claims.csv) FAILs."""
    proc = subprocess.run([sys.executable, "-m", "shared.pipeline.cli", "check-claims", "--tier", "quick"], cwd=repo,
                          capture_output=True, text=True)
    assert proc.returncode == (1 if any(r["status"] == "FAIL" for r in rows) else 0), proc.stdout + proc.stderr


def run_quick_pipeline(dest, paper, config):
    """The paper's quick tier, really run, in a scratch copy at `dest`; returns the copy."""
    repo = copy_paper_repo(dest, paper)
    proc = snakemake(repo, "--cores", "2", "--config", config)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return repo


def rendered_claims(repo, paper):
    """The rows of a rendered quick-tier report's claims.csv, after checking the report has its four sections."""
    report = repo / "reports" / paper / "quick"
    text = (report / "report.md").read_text()
    for section in ("## Claims", "## Figures", "## Deviations from the paper", "## Provenance"):
        assert section in text
    rows = list(csv.DictReader(open(report / "claims.csv")))
    assert {r["status"] for r in rows} <= {"PASS", "FAIL", "NOT RUN"}
    return rows
