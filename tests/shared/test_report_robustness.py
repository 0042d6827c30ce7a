"""Extensions, post-hoc findings, controls and fragile findings (other seeds: seeds.json; other kernels: drift.json),
rendered from real files of a small fake paper in tmp_path."""
import csv
import json
import subprocess
import sys

import pytest
import yaml

from shared.io.files import write_json
from shared.pipeline.claims import ClaimsError, ControlPassesError, load_claims
from shared.pipeline.report import index, render


def finding(cid, metric, expect, **more):
    return {"id": cid, "kind": "finding", "statement": f"{cid} holds", "source": "Fig 1", "paper_value": 1.0,
            "metric": metric, "check": ">=", "counterexample": -1.0, "tiers": {"quick": {"expect": expect}}, **more}


CLAIMS = [
    finding("steady", "acc.test", 0.9),
    finding("wobbly", "acc.margin", 0.5),
    finding("kernel-flip", "acc.kernel", 0.5),
    finding("chosen-late", "acc.test", 0.9, post_hoc="the cut at 0.9 was chosen after the first run (March)"),
    finding("with-control", "acc.test", 0.9, control="acc.untrained"),
    {**finding("ours", "acc.test", 0.9), "kind": "extension"},
    {"id": "exact", "kind": "identity", "statement": "s", "source": "App", "metric": "acc.exact", "check": "is_true",
     "tiers": {"quick": None}},
]
METRICS = {"test": 0.95, "margin": 0.52, "kernel": 0.6, "untrained": 0.1, "exact": True}


def paper(root, claims=CLAIMS, metrics=METRICS):
    """replications/toy and this run's metrics file; returns the render function of its quick report."""
    paper_dir = root / "replications" / "toy"
    paper_dir.mkdir(parents=True, exist_ok=True)
    (paper_dir / "claims.yaml").write_text(yaml.safe_dump({"paper": "toy", "title": "Toy", "claims": claims}))
    (paper_dir / "deviations.md").write_text("## Expectations fixed before the first run\n\nAll.\n")
    (root / "results").mkdir(exist_ok=True)
    (root / "results" / "acc.json").write_text(json.dumps({"metrics": metrics}))
    (root / "results" / "config.json").write_text(json.dumps({"seeds": [0]}))
    out = root / "reports" / "toy" / "quick"
    out.mkdir(parents=True, exist_ok=True)
    return lambda: render("toy", "quick", paper_dir, [root / "results" / "acc.json"], [], out,
                          root / "results" / "config.json")


def seeds_json(out, config_hash, runs, code=None):
    write_json(out / "seeds.json", {
        "measured_utc": "2026-12-06T19:00:00+00:00", "tier": "quick", "seed_shift": 1000, "seeds": [int(s) for s in runs],
        "inputs": {"config": config_hash, "code": code or {}},
        "runs": {seed: {"metrics": {f"acc.{k}": v for k, v in metrics.items()}, "skipped": {}, "skipped_namespaces": {}, "cpu_s": 30.0}
                 for seed, metrics in runs.items()}})


def rows(out):
    return {row["id"]: row for row in csv.DictReader((out / "claims.csv").open())}


def test_extension_and_post_hoc_are_counted_apart_and_post_hoc_shows_in_the_status(tmp_path):
    results = paper(tmp_path)()
    assert load_claims(tmp_path / "replications" / "toy" / "claims.yaml")["claims"][5]["kind"] == "extension"
    out = tmp_path / "reports" / "toy" / "quick"
    md = (out / "report.md").read_text()
    assert ("7 claims: findings 0 robust PASS / 4 PASS not rerun of 4; post-hoc findings 0 robust PASS / 1 PASS "
            "not rerun of 1; extensions 1 / 1 PASS; identities 1 / 1 PASS") in md
    assert "| ✅ PASS, post hoc |" in md and "post hoc: the cut at 0.9 was chosen after the first run" in md
    row = rows(out)["chosen-late"]
    assert row["status"] == "PASS" and row["post_hoc"].startswith("the cut at 0.9")  # readers of status unchanged
    assert "PASS, post hoc" in (out / "claims.html").read_text() and "PASS, post hoc" in (out / "claims.rst").read_text()
    assert [r.status for r in results].count("PASS") == 7
    # the new columns come after the old ones: an older reader finds every column where it was
    header = (out / "claims.csv").read_text().splitlines()[0].split(",")
    assert header[:15] == ["id", "kind", "tier", "status", "paper_value", "reproduced", "check", "expected", "reason",
                           "metric", "secondary", "source", "statement", "note", "if_fail"]
    assert header[15:] == ["post_hoc", "control", "control_value", "robustness", "spread"]
    index(tmp_path / "reports", tmp_path / "reports" / "index.md", tmp_path / "replications")
    assert "post-hoc findings 0 robust PASS / 1 PASS not rerun of 1; extensions 1 / 1 PASS" in (
        tmp_path / "reports" / "index.md").read_text()


def test_a_control_is_shown_beside_the_reproduced_value(tmp_path):
    paper(tmp_path)()
    out = tmp_path / "reports" / "toy" / "quick"
    assert "| 0.95 (control: 0.1) |" in (out / "report.md").read_text()
    assert rows(out)["with-control"]["control_value"] == "0.1"


def test_a_control_that_passes_its_findings_own_check_is_an_error_naming_paper_claim_and_metrics(tmp_path):
    render_it = paper(tmp_path, metrics={**METRICS, "untrained": 0.93})
    with pytest.raises(ControlPassesError) as err:
        render_it()
    message = str(err.value)
    for words in ("toy", "claim 'with-control'", "acc.untrained = 0.93", "acc.test = 0.95", ">= 0.9"):
        assert words in message
    assert not (tmp_path / "reports" / "toy" / "quick" / "claims.csv").exists()  # nothing scored
    done = subprocess.run([sys.executable, "-m", "shared.pipeline.report", "render", "--paper", "toy", "--tier",
                           "quick", "--paper-dir", "replications/toy", "--metrics", "results/acc.json",
                           "--out-dir", "reports/toy/quick"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("Invalid input; the report of toy (quick) was not written.\n"
                                  "toy: claim 'with-control': its control acc.untrained = 0.93 passes")


def test_in_a_smoke_run_a_passing_control_fails_its_claim_instead_of_stopping_the_render(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_SMOKE_STEPS", "3")  # a few steps trained: controls pass like the results
    results = {r.id: r for r in paper(tmp_path, metrics={**METRICS, "untrained": 0.93})()}
    assert results["with-control"].status == "FAIL" and "passes the check too" in results["with-control"].reason


def test_a_missing_control_fails_its_claim_and_a_control_on_an_identity_is_refused(tmp_path):
    metrics = {k: v for k, v in METRICS.items() if k != "untrained"}
    results = {r.id: r for r in paper(tmp_path, metrics=metrics)()}
    assert results["with-control"].status == "FAIL"
    assert results["with-control"].reason == "control metric acc.untrained was not produced"
    claims = [*CLAIMS[:6], {**CLAIMS[6], "control": "acc.untrained"}]
    with pytest.raises(ClaimsError, match="claim 'exact': key 'control' is only for a finding or an extension"):
        paper(tmp_path, claims=claims)()


def test_fragile_from_other_seeds(tmp_path):
    render_it = paper(tmp_path)
    render_it()
    out = tmp_path / "reports" / "toy" / "quick"
    config = json.loads((out / "provenance.json").read_text())["inputs"]["config"]
    seeds_json(out, config, {"1": {**METRICS, "margin": 0.47}, "2": {**METRICS, "margin": 0.55}})
    results = {r.id: r for r in render_it()}
    assert results["wobbly"].robustness == "fragile" and results["steady"].robustness == "robust"
    assert results["wobbly"].spread == "0.47 to 0.55"
    md = (out / "report.md").read_text()
    assert "findings 3 robust PASS / 1 fragile of 4" in md
    assert "⚠️ fragile: FAIL at seeds +1000 (0.47)" in md
    seeds_section = md.split("## Other seeds")[1].split("## Drift")[0]
    assert "| `wobbly` | finding | 0.52 (PASS) | 0.47 (FAIL) | 0.55 (PASS) | 0.47 to 0.55 | ⚠️ **fragile** |" in seeds_section
    assert rows(out)["wobbly"]["robustness"] == "fragile"
    index(tmp_path / "reports", tmp_path / "reports" / "index.md", tmp_path / "replications")
    assert "[findings 3 robust PASS / 1 fragile of 4](toy/quick/report.md)" in (tmp_path / "reports" / "index.md").read_text()


def test_a_threshold_changed_after_the_seeds_ran_is_rescored_without_a_rerun(tmp_path):
    render_it = paper(tmp_path)
    render_it()
    out = tmp_path / "reports" / "toy" / "quick"
    config = json.loads((out / "provenance.json").read_text())["inputs"]["config"]
    seeds_json(out, config, {"1": {**METRICS, "margin": 0.47}})
    claims = [finding("wobbly", "acc.margin", 0.4)]
    paper(tmp_path, claims=claims)  # the claim's threshold moved: every run passes it now
    assert render_it()[0].robustness == "robust"


def test_fragile_from_the_drift_run(tmp_path):
    render_it = paper(tmp_path)
    render_it()
    out = tmp_path / "reports" / "toy" / "quick"
    config = json.loads((out / "provenance.json").read_text())["inputs"]["config"]
    drift = {"measured_utc": "2026-12-06T18:00:00+00:00", "against": {"config_hash": config, "rendered": "x"},
             "setting": {"ATEN_CPU_CAPABILITY": "avx2"}, "summary": {"numeric": 1, "changed": 1,
                                                                    "median_rel_change": 0.2, "max_rel_change": 0.2,
                                                                    "flipped": []},
             "claims": {"kernel-flip": {"here": "0.6", "there": "0.45", "status_here": "PASS", "status_there": "FAIL",
                                        "flips": True, "rel_change": 0.25},
                        "steady": {"here": "0.95", "there": "0.95", "status_here": "PASS", "status_there": "PASS",
                                   "flips": False, "rel_change": 0.0}}}
    write_json(out / "drift.json", drift)
    results = {r.id: r for r in render_it()}
    assert results["kernel-flip"].robustness == "fragile" and results["steady"].robustness == "robust"
    assert results["wobbly"].robustness == ""  # no other run scored it
    md = (out / "report.md").read_text()
    assert "findings 1 robust PASS / 2 PASS not rerun / 1 fragile of 4" in md
    assert "⚠️ fragile: FAIL at other kernels (0.45)" in md
    # a drift run against another config is shown, but not used
    write_json(out / "drift.json", {**drift, "against": {"config_hash": "other", "rendered": "x"}})
    assert {r.id: r.robustness for r in render_it()}["kernel-flip"] == ""
    assert "**Not used**: measured against another config." in (out / "report.md").read_text()


def test_stale_seeds_json_is_shown_but_not_used(tmp_path):
    render_it = paper(tmp_path)
    render_it()
    out = tmp_path / "reports" / "toy" / "quick"
    config = json.loads((out / "provenance.json").read_text())["inputs"]["config"]
    seeds_json(out, "another-config", {"1": {**METRICS, "margin": 0.47}})
    assert {r.id: r.robustness for r in render_it()}["wobbly"] == ""
    md = (out / "report.md").read_text()
    assert "seeds.json (measured 2026-12-06) is **stale**: config changed. Its runs are not used" in md
    # the report's code: the fixture's metrics record none, so make one up on both sides
    (tmp_path / "results" / "acc.json").write_text(json.dumps({"metrics": METRICS,
                                                               "info": {"code": {"shared/x.py": "aaa"}}}))
    seeds_json(out, config, {"1": {**METRICS, "margin": 0.47}}, code={"shared/x.py": "bbb"})
    assert {r.id: r.robustness for r in render_it()}["wobbly"] == ""
    assert "is **stale**: code changed: shared/x.py." in (out / "report.md").read_text()
    seeds_json(out, config, {"1": {**METRICS, "margin": 0.47}}, code={"shared/x.py": "aaa"})
    assert {r.id: r.robustness for r in render_it()}["wobbly"] == "fragile"


def test_a_control_passing_at_another_seed_makes_its_finding_fragile_not_an_error(tmp_path):
    render_it = paper(tmp_path)
    render_it()
    out = tmp_path / "reports" / "toy" / "quick"
    config = json.loads((out / "provenance.json").read_text())["inputs"]["config"]
    seeds_json(out, config, {"1": {**METRICS, "untrained": 0.92}})
    result = {r.id: r for r in render_it()}["with-control"]
    assert result.status == "PASS" and result.robustness == "fragile"
    assert "⚠️ fragile: FAIL at seeds +1000 (0.95)" in (out / "report.md").read_text()
