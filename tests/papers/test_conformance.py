"""What every paper folder must do, checked for every discovered paper and for a paper fresh from the template.

Each paper's quick tier runs once, from its tests/tiny.yaml, in a scratch copy (the `tiny_render` fixture); the
other checks are dry runs against that copy, so they cost a workflow parse each:
  * the report renders and scores every claim; the rerun is a no-op;
  * editing a figure script redraws that figure only; editing model.py retrains; editing a caption re-renders
    only the report;
  * `replicate check-claims` exits 1 exactly when a claim FAILs;
  * the full tier parses and plans with each profile (default, full, slurm), nothing run.
"""
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from shared.pipeline.cli import new_paper
from shared.pipeline.paper import discover_papers, local_imports
from shared.pipeline.scratch import (ROOT, copy_repo, planned_rules, render_tiny, snakemake, tiny_config,
                                     tiny_configfiles)

PAPERS = discover_papers(ROOT / "replications")
_TEMPLATE_RUN = {}
SECTIONS = ("## Claims", "## Figures", "## Deviations from the paper", "## What this run cost", "## Provenance")


@pytest.fixture(scope="module")
def template_root(tmp_path_factory):
    """A repository whose replications/ holds one paper made by `replicate new-paper` from the template."""
    root = copy_repo(tmp_path_factory.mktemp("template_root"), [])
    new_paper("from_template", root)
    return root


@pytest.fixture(params=[*PAPERS, "from_template"])
def paper(request, tiny_render, template_root):
    """(name, scratch copy with its tiny quick tier rendered, the --configfile arguments of its tiny config)."""
    name = request.param
    if name == "from_template":
        if name not in _TEMPLATE_RUN:
            repo, proc = render_tiny(template_root.parent / "template_run", name, root=template_root)
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
            _TEMPLATE_RUN[name] = repo
        repo, root = _TEMPLATE_RUN[name], template_root
    else:
        repo, root = tiny_render(name), ROOT
    files = [str(repo / Path(f).relative_to(root)) for f in tiny_configfiles(name, root)]
    return name, repo, ["--configfile", *files] if files else []


def dry_run(repo, *args):
    proc = snakemake(repo, "-n", "--cores", "2", *args)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


class edited:
    """Append a comment to a file for the duration of a `with` block (Snakemake ignores a bare touch)."""

    def __init__(self, path):
        self.path, self.text = Path(path), Path(path).read_text()

    def __enter__(self):
        self.path.write_text(self.text + "\n# edited by the conformance test\n")

    def __exit__(self, *exc):
        self.path.write_text(self.text)


def test_report_renders_and_scores_every_claim(paper):
    name, repo, _ = paper
    out = repo / "reports" / name / "quick"
    text = (out / "report.md").read_text()
    for section in SECTIONS:
        assert section in text, section
    rows = list(csv.DictReader(open(out / "claims.csv")))
    assert rows and {r["status"] for r in rows} <= {"PASS", "FAIL", "NOT RUN"}
    for row in rows:
        assert f"`{row['id']}`" in text
    assert "Models as trained" in text  # the training-time provenance reached the report
    assert list((out / "figures").glob("*--*.png"))
    cost = json.loads((out / "provenance.json").read_text())["cost"]  # every job's record reached the report
    assert cost["summary"]["jobs"] == len(cost["jobs"]) >= 2 and cost["summary"]["cpu_s"] > 0


def test_rerun_is_a_no_op(paper):
    name, repo, tiny = paper
    assert "Nothing to be done" in dry_run(repo, name, *tiny)


def test_figure_edit_redraws_only_figures(paper):
    name, repo, tiny = paper
    plot = sorted((repo / "replications" / name).glob("plot_*.py"))[0]
    with edited(plot):
        planned = planned_rules(dry_run(repo, name, *tiny))
    assert f"{name}_figure" in planned and f"{name}_report" in planned
    assert planned <= {f"{name}_figure", f"{name}_report", name}, planned


def test_model_edit_retrains(paper):
    """model.py, or where the paper has none (its layer is in shared/nn/), the first paper-local module that its
    train script imports."""
    name, repo, tiny = paper
    folder = repo / "replications" / name
    model = folder / "model.py"
    if not model.is_file():
        model = Path(local_imports(folder, "train", name)[1])
    with edited(model):
        planned = planned_rules(dry_run(repo, name, *tiny))
    assert any(rule.startswith(f"{name}_train") for rule in planned), planned


def test_caption_edit_rerenders_only_the_report(paper):
    name, repo, tiny = paper
    caption = sorted((repo / "replications" / name / "captions").glob("*.rst"))[0]
    with edited(caption):
        planned = planned_rules(dry_run(repo, name, *tiny))
    assert planned == {f"{name}_report", name}, planned


def _first_number(mapping, path=()):
    """The path and value of the first number in a tiny config (outside lists): a setting its jobs use."""
    for key, value in mapping.items():
        if isinstance(value, dict) and (found := _first_number(value, (*path, key))):
            return found
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return (*path, key), value
    return None


def test_a_config_override_reruns_the_jobs_it_changes(paper):
    """A changed setting never leaves the rendered report standing in for the new config: Snakemake's params
    trigger reruns the jobs whose slice of the config changed, and the report that reads them."""
    name, repo, tiny = paper
    tiny_cfg = tiny_config(name, repo)[name]["quick"]
    path, value = _first_number(tiny_cfg)
    override = value + 1
    for key in reversed(path):
        override = {key: override}
    planned = planned_rules(dry_run(repo, name, *tiny, "--config", f"{name}={json.dumps({'quick': override})}"))
    assert {f"{name}_config", f"{name}_report"} <= planned, (path, planned)
    assert planned - {f"{name}_config", f"{name}_figure", f"{name}_report", name}, (path, planned)  # the work too


def test_check_claims_exit_code(paper):
    name, repo, _ = paper
    rows = list(csv.DictReader(open(repo / "reports" / name / "quick" / "claims.csv")))
    proc = subprocess.run([sys.executable, "-m", "shared.pipeline.cli", "check-claims", "--tier", "quick", name],
                          cwd=repo, capture_output=True, text=True)
    assert proc.returncode == (1 if any(r["status"] == "FAIL" for r in rows) else 0), proc.stdout + proc.stderr


@pytest.mark.parametrize("profile", ["default", "full", "slurm"])
def test_full_tier_plans_with_each_profile(paper, profile):
    name, repo, _ = paper
    if profile == "slurm":
        # as README.md writes it, without --cores (Snakemake would cap every job's threads at it); on CPU nodes
        # (accelerator=cpu) no job asks for a GPU, and no job gets a partition, CPUs or GRES from the profile
        for extra in ([], ["--config", "accelerator=cpu"]):
            proc = snakemake(repo, "-n", name, "--profile", "profiles/slurm", *extra)
            out = proc.stdout + proc.stderr
            assert proc.returncode == 0, out[-3000:]
            assert not re.search(r"slurm_partition|cpus_per_task|gres", out), out[-3000:]
        assert "gpu=1" not in out
    else:
        args = ["--config", "tier=full"] if profile == "default" else ["--profile", f"profiles/{profile}"]
        out = dry_run(repo, name, *args)
    assert f"reports/{name}/full/report.md" in out
    assert f"{name}_report" in planned_rules(out)
