"""What every paper folder must do, checked for every discovered paper and for a paper fresh from the template.

Each paper's quick tier runs once, from its tests/tiny.yaml, in a scratch copy (the `tiny_render` fixture); two
dry runs against that copy make the other checks of that tier:
  * the report renders and scores every claim; the rerun is a no-op (the first dry run);
  * editing a figure script redraws that figure only; editing model.py retrains; editing a caption re-renders
    only the report; a config override reruns the work it changes (the second dry run, all four edits at once:
    each edit's effect is the jobs that read its file and those downstream of them);
  * `replicate check-claims` exits 1 exactly when a claim FAILs.
The full tier's plans are tests/papers/test_full_tier_plans.py.
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
from shared.pipeline.scratch import ROOT, copy_repo, render_tiny, snakemake, tiny_config, tiny_configfiles

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


def planned_jobs(output):
    """The jobs a dry run with -p printed, each as {rule, input, output, reason, shell}."""
    jobs = []
    for block in re.split(r"^\[[^\]\n]+\]$", output, flags=re.M)[1:]:
        block = block.split("\nJob stats:")[0]
        fields = dict(re.findall(r"^    (\w+): (.*)$", block, re.M))
        shell = re.search(r"^Shell command: (.*)$", block, re.M)
        jobs.append({"rule": re.search(r"^(?:local)?rule (\w+):", block, re.M)[1], "reason": fields.get("reason", ""),
                     "input": _files(fields.get("input", "")), "output": _files(fields.get("output", "")),
                     "shell": shell[1] if shell else ""})
    return jobs


def _files(listed):
    """The paths of a job block's `input:` or `output:` line, without their flags ("report.md (update)")."""
    return {f.split(" (", 1)[0] for f in listed.split(", ") if f}


def downstream(jobs, start):
    """The rules of `start` and of every job that reads, directly or not, what they write."""
    found = list(start)
    while more := [j for j in jobs if j not in found and j["input"] & set().union(*(f["output"] for f in found))]:
        found += more
    return {j["rule"] for j in found}


_EDIT_PLANS = {}


def edit_plan(paper):
    """One dry run (with shell commands) after editing a figure script, the model, a caption, and overriding the first
    number of the tiny config: (planned jobs, the edited files relative to the copy, the override's key path and new
    value). Each edit's effect is read from the jobs that have its file as an input and the jobs downstream of them."""
    name, repo, tiny = paper
    if name not in _EDIT_PLANS:
        folder = repo / "replications" / name
        model = folder / "model.py"
        if not model.is_file():  # its layer is in shared/nn/: the first paper-local module its train script imports
            model = Path(local_imports(folder, "train", name)[1])
        files = {"plot": sorted(folder.rglob("plot_*.py"))[0], "model": model,
                 "caption": sorted((folder / "captions").glob("*.rst"))[0]}
        path, value = _first_number(tiny_config(name, repo)[name]["quick"])
        override = value + 1
        for key in reversed(path):
            override = {key: override}
        with edited(files["plot"]), edited(files["model"]), edited(files["caption"]):
            out = dry_run(repo, name, *tiny, "-p", "--config", f"{name}={json.dumps({'quick': override})}")
        relative = {k: str(f.relative_to(repo)) for k, f in files.items()}
        _EDIT_PLANS[name] = planned_jobs(out), relative, path, value + 1
    return _EDIT_PLANS[name]


def test_figure_edit_redraws_only_figures(paper):
    name = paper[0]
    jobs, files, _, _ = edit_plan(paper)
    reading = [j for j in jobs if files["plot"] in j["input"]]
    assert reading and {j["rule"] for j in reading} == {f"{name}_figure"}, reading
    affected = downstream(jobs, reading)
    assert f"{name}_report" in affected and affected <= {f"{name}_figure", f"{name}_report", name}, affected


def test_model_edit_retrains(paper):
    """model.py, or where the paper has none (its layer is in shared/nn/), the first paper-local module that its
    train script imports."""
    name = paper[0]
    jobs, files, _, _ = edit_plan(paper)
    assert any(j["rule"].startswith(f"{name}_train") and files["model"] in j["input"] for j in jobs), files["model"]


def test_caption_edit_rerenders_only_the_report(paper):
    name = paper[0]
    jobs, files, _, _ = edit_plan(paper)
    reading = [j for j in jobs if files["caption"] in j["input"]]
    assert {j["rule"] for j in reading} == {f"{name}_report"}, reading
    assert downstream(jobs, reading) == {f"{name}_report", name}


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
    trigger reruns the config rule (its reason says so) and the work whose parameters carry the new value (its
    command shows it, or, where no other edit planned it first, its reason), and the report that reads them."""
    name = paper[0]
    jobs, _, path, value = edit_plan(paper)
    by_rule = {j["rule"]: j for j in jobs}
    assert "Params have changed" in by_rule[f"{name}_config"]["reason"], by_rule[f"{name}_config"]
    assert f"{name}_report" in downstream(jobs, [by_rule[f"{name}_config"]])
    work = [j for j in jobs if j["rule"] not in {f"{name}_config", f"{name}_figure", f"{name}_report", name}]
    assert any(f'"{path[-1]}": {json.dumps(value)}' in j["shell"] or "Params have changed" in j["reason"]
               for j in work), (path, value, work)


def test_check_claims_exit_code(paper):
    name, repo, _ = paper
    rows = list(csv.DictReader(open(repo / "reports" / name / "quick" / "claims.csv")))
    proc = subprocess.run([sys.executable, "-m", "shared.pipeline.cli", "check-claims", "--tier", "quick", name],
                          cwd=repo, capture_output=True, text=True)
    assert proc.returncode == (1 if any(r["status"] == "FAIL" for r in rows) else 0), proc.stdout + proc.stderr
