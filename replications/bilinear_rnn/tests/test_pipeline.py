"""The bilinear_rnn paper's own checks of its pipeline: what its tiny quick tier (tests/tiny.yaml, rendered once
per session by the `tiny_render` fixture) produced, and the config errors pipeline.check and the schema raise.
What every paper must do (rerun no-op, edits, check-claims, full-tier dry runs) is tests/papers/test_conformance.py."""
import csv
import json
from pathlib import Path

import pytest
import yaml

from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Paper

from replications.bilinear_rnn import pipeline

PAPER = Path(__file__).resolve().parents[1]
REPO = PAPER.parents[1]
RAW = yaml.safe_load((PAPER / "config.yaml").read_text())
TINY = yaml.safe_load((PAPER / "tests" / "tiny.yaml").read_text())["bilinear_rnn"]["quick"]
CLAIMS = yaml.safe_load((PAPER / "claims.yaml").read_text())["claims"]
FIGURES = {"lengths--accuracy.png", "hierarchy--accuracy.png", "eigenvalues--eigen.png", "frozen--frozen.png"}


@pytest.fixture(scope="module")
def tiny(tiny_render):
    return tiny_render("bilinear_rnn")


def _claims(repo):
    with open(repo / "reports" / "bilinear_rnn" / "quick" / "claims.csv", newline="") as f:
        return {row["id"]: row for row in csv.DictReader(f)}


# ---------------------------------------------------------------- the tiny quick-tier run
@pytest.mark.slow
def test_tiny_report_scores_every_claim(tiny):
    by_id = _claims(tiny)
    assert set(by_id) == {c["id"] for c in CLAIMS}
    # Proposition 3 is checked on frozen random transitions: it does not depend on training, so it holds even
    # after a few steps (the other claims are about trained models and may go either way here)
    for claim in ("P3-frozen-diagonal-parity", "P3-frozen-success-rate"):
        assert by_id[claim]["status"] == "PASS", by_id[claim]
    # claims scored only at the full tier are reported, not silently dropped
    for claim in ("R1-full-modadd50", "R8-full-fsm25", "R10-cp-large-fsm25"):
        assert by_id[claim]["status"] == "NOT RUN", by_id[claim]
    # every claim that names a quick-tier expectation is scored, unless the tiny config (not the committed one)
    # leaves its metric out, which the render says (shared.pipeline.claims.check_metrics_written)
    for claim in CLAIMS:
        if "quick" in claim["tiers"]:
            row = by_id[claim["id"]]
            assert row["status"] in {"PASS", "FAIL"} or "config differs from the committed" in row["reason"], row
    figures = tiny / "reports" / "bilinear_rnn" / "quick" / "figures"
    assert {p.name for p in figures.glob("*.png")} == FIGURES


@pytest.mark.slow
def test_tiny_config_reached_the_jobs(tiny):
    res = tiny / "results" / "bilinear_rnn" / "quick"
    cfg = json.loads((res / "config.json").read_text())
    assert cfg["test"]["lengths"] == TINY["test"]["lengths"]
    for name, experiment in cfg["experiments"].items():
        # only the keys tiny.yaml names were replaced: the rest of each experiment is config.yaml's
        assert experiment == {**RAW["quick"]["experiments"][name], **TINY["experiments"][name]}
    for name, experiment in cfg["experiments"].items():
        history = json.loads((res / "models" / f"{name}.json").read_text())
        assert history["steps"] == experiment["steps"] and history["experiment"] == name
        assert [r["seed"] for r in history["runs"]] == [s for _ in experiment["tasks"] for s in experiment["seeds"]]
        assert all(h[-1]["step"] == experiment["steps"] for h in history["history"].values())
        evals = json.loads((res / "eval" / f"{name}.json").read_text())
        assert len(evals["runs"]) == len(experiment["tasks"]) * len(experiment["seeds"])
        for run in evals["runs"].values():
            assert run["lengths"] == TINY["test"]["lengths"]
            assert all(0.0 <= a <= 1.0 for a in run["acc_exact"])
            if experiment.get("additive"):  # the two inexact evaluations of the ablation
                assert len(run["acc_renormalize"]) == len(run["acc_plain"]) == len(TINY["test"]["lengths"])


# ---------------------------------------------------------------- invalid configs, rejected while parsing
@pytest.mark.parametrize("override, message", [
    ({"experiments": {"full": {"model": "bogus"}}}, "invalid config key 'experiments.full.model"),
    ({"experiments": {"full": {"step": 30}}}, "invalid config key 'experiments.full"),
    ({"experiments": {"cp_new": {"model": "cp", "tasks": ["fsm5"], "seeds": [0], "steps": 5}}},
     "invalid config key 'experiments.cp_new"),  # cp without a rank
    ({"experiments": {"full": {"tasks": ["modadd1"]}}}, "invalid config key 'experiments.full.tasks.0"),
    ({"test": {"sequences": 0}}, "invalid config key 'test.sequences"),
    ({"device": "tpu"}, "invalid config key 'device"),
])
def test_schema_rejects(override, message):
    with pytest.raises(ConfigError, match="bilinear_rnn") as error:
        Paper("bilinear_rnn", "quick", {"quick": override}, root=REPO)
    assert message in str(error.value)


@pytest.mark.parametrize("override, key, message", [
    ({"hierarchy": ["full", "nosuch"]}, "hierarchy", "'nosuch' is not an experiment"),
    ({"analysis": {"eigen_experiment": "nosuch"}}, "analysis.eigen_experiment", "'nosuch' is not an experiment"),
    ({"analysis": {"eigen_task": "modadd7"}}, "analysis.eigen_task", "allowed: parity, modadd5"),
    ({"analysis": {"eigen_task": "fsm5"}}, "analysis.eigen_task", "must be an addition task"),
    ({"analysis": {"eigen_seed": 7}}, "analysis.eigen_seed", "is not a seed"),
    ({"test": {"length": 60, "lengths": [10, 500]}}, "test.lengths", "exceeds test.length = 60"),
    ({"analysis": {"subspace_positions": [50, 900]}}, "analysis.subspace_positions", "<= test.length = 500"),
    ({"analysis": {"subspace_positions": [50, 50]}}, "analysis.subspace_positions", "from < to"),
])
def test_check_rejects(override, key, message):
    cfg = Paper("bilinear_rnn", "quick", root=REPO).cfg
    for section, value in override.items():
        cfg[section] = {**cfg[section], **value} if isinstance(value, dict) else value
    with pytest.raises(ConfigError) as error:
        pipeline.check(cfg)
    assert str(error.value).startswith(f"'{key}'") and message in str(error.value)
    # and the Paper names the paper and the tier before the key
    with pytest.raises(ConfigError, match=rf"^bilinear_rnn \(quick tier\): '{key}'"):
        Paper("bilinear_rnn", "quick", {"quick": override}, root=REPO)


def test_unknown_tier_is_rejected():
    with pytest.raises(ConfigError, match="'tier'.*quick, full"):
        Paper("bilinear_rnn", "medium", root=REPO)


# ---------------------------------------------------------------- both tiers declare the same steps
@pytest.mark.parametrize("tier", ["quick", "full"])
def test_tiers_parse_and_declare_every_analysis(tier):
    paper = Paper("bilinear_rnn", tier, root=REPO)
    assert pipeline.check(paper.cfg) is None
    assert set(paper.analyses) == {"accuracy", "eigen", "frozen"}
    evals = paper.analyses["accuracy"].reads["evals"]
    assert evals == [f"results/bilinear_rnn/{tier}/eval/{e}.json" for e in sorted(RAW[tier]["experiments"])]
    eigen = paper.analyses["eigen"]
    assert eigen.reads["checkpoint"] == f"results/bilinear_rnn/{tier}/models/{paper.cfg['analysis']['eigen_experiment']}.safetensors"
    assert {Path(f).name for f in paper.figures()} == FIGURES
    assert paper.analyses["frozen"].reads == {}  # Prop. 3 trains nothing


def test_full_tier_has_experiments_the_quick_tier_lacks():
    assert set(RAW["full"]["experiments"]) - set(RAW["quick"]["experiments"])  # e.g. block8: full tier only
