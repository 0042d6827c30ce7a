"""The paper template (shared/templates/paper): `replicate new-paper` output is valid, joins the workflow at once,
and its own smoke test (the quick tier end to end) passes. Everything runs in a copy of the repository in tmp_path."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shared.pipeline.claims import load_claims
from shared.pipeline.cli import PLACEHOLDER, TEMPLATE_DIR
from shared.pipeline.config import TIERS, load_paper_config

ROOT = Path(__file__).resolve().parents[1]
NAME = "demo_paper"
RULES = [NAME, f"{NAME}_data", f"{NAME}_train", f"{NAME}_analyze"]  # defined in the paper's rules.smk
SHARED_RULES = ["paper_config", "paper_figure", "paper_report"]  # shared/pipeline/rules/common.smk, used by every paper
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")


def run(args, cwd, timeout=600):
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """Snakefile, pyproject.toml, shared/ and an empty replications/ with only the new paper in it."""
    root = tmp_path_factory.mktemp("repo")
    for name in ("Snakefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, root / name)
    shutil.copytree(ROOT / "shared", root / "shared", ignore=IGNORE)
    (root / "replications").mkdir()
    done = run(["-m", "shared.pipeline.cli", "new-paper", NAME, "--root", str(root)], cwd=root)
    assert done.returncode == 0, done.stderr
    return root


def test_new_paper_has_no_placeholder_left(repo):
    paper = repo / "replications" / NAME
    files = [p for p in paper.rglob("*") if p.is_file()]
    assert len(files) == len([p for p in TEMPLATE_DIR.rglob("*") if p.is_file() and "__pycache__" not in p.parts])
    for path in files:
        assert PLACEHOLDER not in str(path.relative_to(repo)), path
        assert PLACEHOLDER not in path.read_text(), path
    for name in ("README.md", "config.yaml", "config.schema.yaml", "claims.yaml", "deviations.md", "rules.smk",
                 "model.py", "train.py", "analyze.py", "plot_accuracy.py", "captions/accuracy.rst",
                 f"test_{NAME}_smoke.py"):
        assert (paper / name).is_file(), name


def test_new_paper_claims_and_config_validate(repo):
    paper = repo / "replications" / NAME
    doc = load_claims(paper / "claims.yaml")
    assert doc["paper"] == NAME
    assert len(doc["claims"]) >= 2
    assert all("quick" in claim["tiers"] for claim in doc["claims"])
    for tier in TIERS:
        cfg = load_paper_config(paper, tier)
        assert cfg["tier"] == tier
        assert cfg["dataset"] == "digits"
    assert load_paper_config(paper, "full")["epochs"] > load_paper_config(paper, "quick")["epochs"]


def test_rules_globals_carry_the_paper_name(repo):
    """Every rules.smk shares one namespace: a global without the paper's name could clobber another paper's."""
    text = (repo / "replications" / NAME / "rules.smk").read_text()
    names = re.findall(r"^([A-Za-z_]\w*)\s*=", text, flags=re.M) + re.findall(r"^def (\w+)", text, flags=re.M)
    assert names
    assert all(NAME in name for name in names), names
    assert re.findall(r"^rule (\w+):", text, flags=re.M) == RULES
    assert "{PY:q}" in text and not re.search(r'"python3? ', text)


def job_counts(out):
    """{rule: count} from the job-stats table of a Snakemake dry run."""
    return {m[1]: int(m[2]) for m in re.finditer(r"^\s*(\w+)\s+(\d+)\s*$", out, flags=re.M)}


def test_workflow_picks_up_new_paper(repo):
    # the default target (every paper's quick report, then the index) includes the new paper at once
    done = run(["-m", "snakemake", "-n", "--cores", "2"], cwd=repo, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    counts = job_counts(out)
    for rule in RULES[1:] + SHARED_RULES + ["index", "all"]:
        assert counts.get(rule) == 1, f"{rule} missing from the dry run:\n{out}"
    assert f"reports/{NAME}/quick/report.md" in out
    # and so does its target rule, by name, at either tier
    for tier in TIERS:
        done = run(["-m", "snakemake", NAME, "-n", "--cores", "2", "--config", f"tier={tier}"], cwd=repo, timeout=300)
        out = done.stdout + done.stderr
        assert done.returncode == 0, out
        assert set(job_counts(out)) - {"total"} == set(RULES + SHARED_RULES), out
        assert f"reports/{NAME}/{tier}/report.md" in out


@pytest.mark.slow
def test_new_paper_smoke_test_passes(repo):
    done = run(["-m", "pytest", str(repo / "replications" / NAME), "-q", "-p", "no:cacheprovider"], cwd=repo, timeout=900)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert re.search(r"\b1 passed\b", done.stdout), done.stdout
