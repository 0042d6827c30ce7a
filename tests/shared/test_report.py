"""Report rendering, index, and the `replicate` CLI, on a small fake paper in tmp_path."""
import csv
import json
import subprocess
import sys

import pytest
import yaml

from shared.pipeline import cli
from shared.pipeline.report import index, render, rerender, rst_problems

CLAIMS = {
    "paper": "toy",
    "title": "Toy paper | with a pipe",
    "claims": [
        {"id": "good", "kind": "finding", "counterexample": 0.5, "statement": "accuracy is high", "source": "Tab 1", "paper_value": 97.0,
         "metric": "acc.test", "check": ">=", "tiers": {"quick": {"expect": 0.9, "note": "5k samples"},
                                                         "full": {"expect": 0.9}}},
        {"id": "bad", "kind": "finding", "counterexample": 0.1, "statement": "spectrum is low-rank", "source": "Fig 3", "paper_value": "20 of 512",
         "metric": "spectra.top40", "check": "within", "tiers": {"quick": {"expect": 0.9, "tol": 0.01}},
         "if_fail": "too few epochs at quick tier"},
        {"id": "unexplained", "kind": "identity", "statement": "a | b", "source": "App A", "paper_value": None,
         "metric": "spectra.missing", "check": "is_true", "tiers": {"quick": None}},
        {"id": "gpu-only", "kind": "finding", "counterexample": 5, "statement": "big model", "source": "Sec 5", "paper_value": 1,
         "metric": "acc.big", "check": "<", "tiers": {"quick": {"expect": 2}, "full": {"expect": 2}}},
        {"id": "full-only", "kind": "control", "statement": "paper scale", "source": "Sec 6", "paper_value": 1,
         "metric": "acc.test", "check": ">", "tiers": {"full": {"expect": 0.5}}},
    ],
}


@pytest.fixture
def project(tmp_path):
    """replications/toy with claims, a caption and deviations; metrics for both tiers."""
    paper_dir = tmp_path / "replications" / "toy"
    (paper_dir / "captions").mkdir(parents=True)
    (paper_dir / "claims.yaml").write_text(yaml.safe_dump(CLAIMS, sort_keys=False))
    (paper_dir / "captions" / "spectrum.rst").write_text("Eigenvalue spectrum\n===================\nTop 40 of 512.\n")
    (paper_dir / "deviations.md").write_text(
        "We train for 40 epochs instead of 100.\n\n## Expectations fixed before the first run\n\nAll of them, in"
        " March.\n\n## Analysis choices made after seeing results\n\n- The cut at 0.1.\n\n## Data\n\nDigits.\n")
    for tier in ("quick", "full"):
        metrics = tmp_path / "results" / tier / "metrics"
        metrics.mkdir(parents=True)
        (metrics / "acc.json").write_text(json.dumps(
            {"metrics": {"test": 0.95}, "skipped": {"big": "needs a GPU"}, "info": {"wall_s": 3.5, "seeds": [0, 1]}}))
        (metrics / "spectra.json").write_text(json.dumps({"metrics": {"top40": 0.5, "missing": False},
                                                            "info": {"device": "cpu"}}))
        figures = tmp_path / "reports" / "toy" / tier / "figures"
        figures.mkdir(parents=True)
        (figures / "spectrum.png").write_bytes(b"png")
        (figures / "loss.png").write_bytes(b"png")
    (tmp_path / "results" / "quick" / "config.json").write_text(json.dumps({"epochs": 40}))
    return tmp_path


def render_tier(root, tier):
    out = root / "reports" / "toy" / tier
    metrics = sorted((root / "results" / tier / "metrics").glob("*.json"))
    config = root / "results" / tier / "config.json"
    return render("toy", tier, root / "replications" / "toy", metrics, sorted((out / "figures").glob("*.png")),
                  out, config if config.exists() else None)


def run_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "shared.pipeline.cli", *args], cwd=cwd, capture_output=True, text=True)


def test_render_writes_report_csv_and_provenance(project):
    results = render_tier(project, "quick")
    assert {r.id: r.status for r in results} == {
        "good": "PASS", "bad": "FAIL", "unexplained": "FAIL", "gpu-only": "NOT RUN", "full-only": "NOT RUN"}
    out = project / "reports" / "toy" / "quick"
    md = (out / "report.md").read_text()
    assert md.startswith("# Toy paper | with a pipe")
    assert ("5 claims: findings 0 robust PASS / 1 PASS not rerun / 1 FAIL / 1 NOT RUN of 3; identities 0 / 1 PASS (1 FAIL — a bug); "
            "controls 0 / 1 PASS") in md
    assert "never a claim that the paper's number was matched" in md and "not a reproduction" in md
    header = md.split("## Claims")[0]
    assert "### Expectations fixed before the first run\n\nAll of them, in March." in header
    assert "### Analysis choices made after seeing results\n\n- The cut at 0.1." in header
    assert ("| `bad` | finding | spectrum is low-rank | Fig 3 | 20 of 512 | within 0.01 of 0.9 | 0.5 | ❌ **FAIL** |"
            in md)
    assert "a \\| b" in md  # pipes escaped inside table cells
    assert "needs a GPU" in md and "5k samples" in md
    # Figures: caption file gives title + caption; a figure without one still appears.
    assert "### Eigenvalue spectrum\n\n![Eigenvalue spectrum](figures/spectrum.png)\n\nTop 40 of 512." in md
    assert "![loss](figures/loss.png)" in md
    deviations = md.split("## Deviations from the paper")[1].split("## Provenance")[0]
    assert "We train for 40 epochs instead of 100." in deviations and "Digits." in deviations
    assert "The cut at 0.1" not in deviations  # shown once, in the header
    assert "FAIL `bad`" in deviations and "too few epochs at quick tier" in deviations
    assert "FAIL `unexplained`" in deviations and "NO EXPLANATION RECORDED" in deviations
    assert "value is false" in deviations  # a key no analysis writes is an input error: tests/shared/test_inputs_*.py
    assert "FAIL `good`" not in deviations
    assert "wall_s=3.5" in md and "Config hash: `" in md
    rows = {row["id"]: row for row in csv.DictReader((out / "claims.csv").open())}
    assert rows["bad"]["status"] == "FAIL" and rows["bad"]["reproduced"] == "0.5" and rows["bad"]["tier"] == "quick"
    assert rows["gpu-only"]["reason"] == "needs a GPU"
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["seeds"] == [0, 1] and prov["device"] == ["cpu"] and prov["config_hash"]
    assert set(prov["inputs"]) == {"claims", "deviations", "config", "code"}
    assert sorted(p.name for p in (out / "metrics").iterdir()) == ["acc.json", "spectra.json"]
    assert "numpy" in prov["packages"]


def test_full_tier_has_no_quick_disclaimer_and_render_cli_works(project):
    out = project / "reports" / "toy" / "full"
    done = subprocess.run(
        [sys.executable, "-m", "shared.pipeline.report", "render", "--paper", "toy", "--tier", "full",
         "--paper-dir", "replications/toy", "--metrics", "results/full/metrics/acc.json", "results/full/metrics/spectra.json",
         "--figures", "reports/toy/full/figures/loss.png", "--out-dir", "reports/toy/full"],
        cwd=project, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    md = (out / "report.md").read_text()
    assert "findings 0 robust PASS / 1 PASS not rerun / 2 NOT RUN of 3; identities 0 / 1 PASS; controls 1 / 1 PASS" in md
    assert "never a claim" not in md
    assert "No claim failed at this tier." in md


def test_index_merges_tiers_and_counts(project):
    render_tier(project, "quick")
    render_tier(project, "full")
    index(project / "reports", project / "reports" / "index.md", project / "replications")
    merged = list(csv.DictReader((project / "reports" / "toy" / "claims.csv").open()))
    assert [(r["tier"], r["id"]) for r in merged][:2] == [("quick", "good"), ("quick", "bad")]
    assert sum(r["tier"] == "full" for r in merged) == 5 and len(merged) == 10
    md = (project / "reports" / "index.md").read_text()
    quick = ("[findings 0 robust PASS / 1 PASS not rerun / 1 FAIL / 1 NOT RUN of 3](toy/quick/report.md); identities 0 / 1 PASS (1 FAIL — a bug); "
             "controls 0 / 1 PASS")
    assert f"| toy | Toy paper \\| with a pipe | {quick}<br>⚠️ **stale** (rendered " in md
    assert "the code that produced its metrics was not recorded" in md  # the fixture's metrics record no code


def test_check_claims_exit_codes(project):
    render_tier(project, "quick")
    render_tier(project, "full")
    failing = run_cli("check-claims", "--tier", "quick", cwd=project)
    assert failing.returncode == 1 and "bad" in failing.stdout and "unexplained" in failing.stdout
    assert run_cli("check-claims", "--tier", "full", "toy", cwd=project).returncode == 0
    assert run_cli("check-claims", "--tier", "full", "toy", "nosuchpaper", cwd=project).returncode == 2
    assert run_cli("check-claims", "--reports", "elsewhere", cwd=project).returncode == 2


def test_index_cli(project):
    render_tier(project, "quick")
    done = run_cli("index", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "[findings 0 robust PASS / 1 PASS not rerun / 1 FAIL / 1 NOT RUN of 3](toy/quick/report.md)" in (project / "reports" / "index.md").read_text()


def test_new_paper_substitutes_names_and_contents(tmp_path, monkeypatch):
    template = tmp_path / "template"
    (template / "__PAPER__").mkdir(parents=True)
    (template / "README.md").write_text("# __PAPER__\n")
    (template / "__PAPER__" / "__PAPER___model.py").write_text("NAME = '__PAPER__'\n")
    monkeypatch.setattr(cli, "TEMPLATE_DIR", template)
    target = cli.new_paper("my_paper", tmp_path)
    assert (target / "README.md").read_text() == "# my_paper\n"
    assert (target / "my_paper" / "my_paper_model.py").read_text() == "NAME = 'my_paper'\n"
    assert [p.name for p in (tmp_path / "replications").iterdir()] == ["my_paper"]  # no staging left over


def test_new_paper_cli_uses_real_template_and_refuses(tmp_path):
    done = run_cli("new-paper", "toy2", "--root", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    readme = tmp_path / "replications" / "toy2" / "README.md"
    assert readme.read_text().startswith("# toy2")
    made = [p for p in (tmp_path / "replications" / "toy2").rglob("*") if p.is_file()]
    assert len(made) == len([p for p in cli.TEMPLATE_DIR.rglob("*") if p.is_file() and "__pycache__" not in p.parts])
    for path in made:  # no placeholder left in a name or a text
        assert cli.PLACEHOLDER not in str(path) and cli.PLACEHOLDER not in path.read_text(), path
    readme.write_text("edited")
    again = run_cli("new-paper", "toy2", "--root", str(tmp_path), cwd=tmp_path)
    assert again.returncode != 0 and "already exists" in again.stderr and readme.read_text() == "edited"
    for bad in ("MyPaper", "2fast", "has-dash", "class"):
        refused = run_cli("new-paper", bad, "--root", str(tmp_path), cwd=tmp_path)
        assert refused.returncode != 0 and "lowercase Python identifier" in refused.stderr
        assert not (tmp_path / "replications" / bad).exists()


def test_staleness_names_what_changed_since_rendering(project):
    from shared.io.files import write_json
    from shared.pipeline.provenance import file_hash
    from shared.pipeline.staleness import check_report

    paper_dir = project / "replications" / "toy"
    code = paper_dir / "analyze.py"
    code.write_text("print('v1')\n")
    (paper_dir / "config.yaml").write_text("common: {epochs: 40}\nquick: {}\nfull: {}\n")
    (paper_dir / "config.schema.yaml").write_text("type: object\nproperties: {epochs: {type: integer, maximum: 1000}}\n")
    write_json(project / "results" / "quick" / "config.json", {"epochs": 40, "tier": "quick"})
    acc = project / "results" / "quick" / "metrics" / "acc.json"
    doc = json.loads(acc.read_text())
    doc["info"]["code"] = {"replications/toy/analyze.py": file_hash(code)}
    acc.write_text(json.dumps(doc))
    render_tier(project, "quick")
    out = project / "reports" / "toy" / "quick"
    state = lambda: check_report(out, paper_dir, "quick", root=project)
    assert not state().stale and state().rendered
    code.write_text("print('v2')\n")
    assert state().reasons == ["code changed: replications/toy/analyze.py"]
    code.write_text("print('v1')\n")
    (paper_dir / "config.yaml").write_text("common: {epochs: 41}\nquick: {}\nfull: {}\n")
    assert state().reasons == ["config changed"]
    (paper_dir / "config.yaml").write_text("common: {epochs: 40}\nquick: {}\nfull: {}\n")
    claims = yaml.safe_load((paper_dir / "claims.yaml").read_text())
    claims["claims"][1]["tiers"]["quick"]["tol"] = 0.5
    (paper_dir / "claims.yaml").write_text(yaml.safe_dump(claims))
    assert state().reasons == ["claims.yaml changed"]
    # a changed claims.yaml needs no run: the report re-scores the metrics it kept
    done = subprocess.run([sys.executable, "-m", "shared.pipeline.report", "rerender", "--paper", "toy", "--tier",
                           "quick"], cwd=project, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not state().stale
    rows = {row["id"]: row["status"] for row in csv.DictReader((out / "claims.csv").open())}
    assert rows == {"good": "PASS", "bad": "PASS", "unexplained": "FAIL", "gpu-only": "NOT RUN", "full-only": "NOT RUN"}


def test_rerender_keeps_skipped_analyses_not_run(project):
    out = project / "reports" / "toy" / "full"
    render("toy", "full", project / "replications" / "toy", [project / "results/full/metrics/acc.json"], [], out,
           None, {"spectra": "MNIST was not downloaded"})
    claims = yaml.safe_load((project / "replications/toy/claims.yaml").read_text())
    claims["claims"][1]["tiers"]["full"] = {"expect": 0.9, "tol": 0.01}  # a claim on the analysis not run
    (project / "replications/toy/claims.yaml").write_text(yaml.safe_dump(claims))
    rerendered = {r.id: (r.status, r.reason) for r in rerender("toy", "full", project / "reports",
                                                               project / "replications")}
    assert rerendered["bad"] == ("NOT RUN", "MNIST was not downloaded")
    assert rerendered["gpu-only"] == ("NOT RUN", "needs a GPU")
    assert rerendered["full-only"][0] == "PASS"
    assert [p.name for p in (out / "metrics").iterdir()] == ["acc.json"]



def test_claims_table_as_html_and_rst_for_the_html_report(project):
    render_tier(project, "quick")
    out = project / "reports" / "toy" / "quick"
    page = (out / "claims.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "Toy paper | with a pipe" in page
    for cid, status in (("good", "PASS"), ("bad", "FAIL"), ("unexplained", "FAIL"), ("gpu-only", "NOT RUN")):
        assert f'<tr class="{status.replace(" ", "-")}" id="claim-{cid}">' in page
    assert "too few epochs at quick tier" in page and "a | b" in page
    rst = (out / "claims.rst").read_text()
    assert not rst_problems(rst), rst_problems(rst)  # pipes, stars and underscores escaped
    body = __import__("docutils.core").core.publish_parts(rst, writer="html")["body"]
    assert "gpu-only" in body and "too few epochs at quick tier" in body and "FAIL unexplained" in body


def test_a_fail_named_in_deviations_is_explained_there(project):
    deviations = project / "replications" / "toy" / "deviations.md"
    deviations.write_text(deviations.read_text() + "\n## Known gaps\n\n- **The missing metric** (`unexplained`) is"
                          " not computed yet.\n  - It needs a second analysis.\n\n- Something else (`good-ish`).\n")
    render_tier(project, "quick")
    md = (project / "reports" / "toy" / "quick" / "report.md").read_text()
    assert "NO EXPLANATION RECORDED" not in md
    assert ("explanation: deviations.md, section 'Known gaps': - **The missing metric** (`unexplained`) is not "
            "computed yet. - It needs a second analysis.") in md
    assert "good-ish" not in md.split("### Failed claims in this run")[1]


def test_provenance_shows_the_device_that_ran_not_the_request(project):
    metrics = project / "results" / "quick" / "metrics"
    (project / "results" / "quick" / "config.json").write_text(json.dumps({"epochs": 40, "device": "auto"}))
    render_tier(project, "quick")
    prov = json.loads((project / "reports" / "toy" / "quick" / "provenance.json").read_text())
    assert prov["device"] == ["cpu"]  # spectra.json's info recorded it; the config's 'auto' is not a device
    (metrics / "spectra.json").write_text(json.dumps({"metrics": {"top40": 0.5, "missing": False}, "info": {
        "device": "cuda:0 (NVIDIA H100)", "trained": {"device": "cuda:0 (NVIDIA H100)", "git_commit": None,
                                                      "git_dirty": None, "config_hash": "x", "timestamp_utc": "t"}}}))
    render_tier(project, "quick")
    md = (project / "reports" / "toy" / "quick" / "report.md").read_text()
    assert "- Device: cuda:0 (NVIDIA H100)\n" in md and "auto" not in md.split("## Provenance")[1].split("\n")[5]
    (metrics / "spectra.json").write_text(json.dumps({"metrics": {"top40": 0.5, "missing": False}, "info": {}}))
    render_tier(project, "quick")
    md = (project / "reports" / "toy" / "quick" / "report.md").read_text()
    assert "- Device: auto (requested in the config; no job recorded the device it ran on)" in md


def test_save_writes_png_and_vector_pdf(tmp_path):
    from shared.pipeline.plots import pdf_path, save, subplots

    fig, axes = subplots(1, 1)
    axes[0, 0].plot([0, 1], [1, 0])
    save(fig, tmp_path / "curve--ns.png")
    assert (tmp_path / "curve--ns.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pdf = (tmp_path / "curve--ns.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and b"/Subtype /Image" not in pdf  # drawn as vectors, not an embedded bitmap
    assert pdf_path("a/b--c.png") == "a/b--c.pdf" and sorted(p.name for p in tmp_path.iterdir()) == [
        "curve--ns.pdf", "curve--ns.png"]
