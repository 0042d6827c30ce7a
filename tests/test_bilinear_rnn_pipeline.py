"""The bilinear_rnn paper's real Snakemake pipeline, run in a temporary copy of the repository with a tiny
quick-tier override (every experiment, baselines included, trains 30 steps; short test sequences)."""
import json
from pathlib import Path

import pytest
import yaml
from snakemake_helpers import (
    assert_rerun_is_no_op_and_figure_edit_does_not_retrain,
    check_claims_exit_code,
    copy_paper_repo,
    rendered_claims,
    run_quick_pipeline,
    snakemake,
)

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "replications" / "bilinear_rnn"
RAW = yaml.safe_load((PAPER / "config.yaml").read_text())
STEPS = 30


def _override(tier_cfg, **plain):
    """`bilinear_rnn={...}` for --config, as one line of flow-style YAML."""
    body = {**plain, **({"quick": tier_cfg} if tier_cfg else {})}
    return "bilinear_rnn=" + yaml.safe_dump(body, default_flow_style=True, width=10**6).strip()


# Experiments merge key by key: only `steps` of each is replaced, whatever experiments config.yaml lists.
# frozen_draws stays at its default: with fewer draws P3-frozen-success-rate (|rate - (1 - 2^-H)| <= 0.05) would
# fail by sampling noise alone.
TINY = _override({
    "experiments": {name: {"steps": STEPS} for name in RAW["quick"]["experiments"]},
    "test": {"sequences": 32, "length": 60, "lengths": [10, 60], "seed": 999},
    "analysis": {"subspace_positions": [20, 60]},
})
FIGURES = {"lengths_accuracy.png", "hierarchy_accuracy.png", "eigenvalues_eigen.png", "frozen_frozen.png"}


def copy_repo(dest):
    return copy_paper_repo(dest, "bilinear_rnn")


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    return run_quick_pipeline(tmp_path_factory.mktemp("repo"), "bilinear_rnn", TINY)


# ---------------------------------------------------------------- the tiny quick-tier run
@pytest.mark.slow
def test_quick_pipeline_renders_scored_report(pipeline):
    report = pipeline / "reports" / "bilinear_rnn" / "quick"
    rows = rendered_claims(pipeline, "bilinear_rnn")
    assert len(rows) >= 10
    assert {r["status"] for r in rows} <= {"PASS", "FAIL", "NOT RUN"}
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == {c["id"] for c in yaml.safe_load((PAPER / "claims.yaml").read_text())["claims"]}
    # Proposition 3 is checked on frozen random transitions: it does not depend on training, so it holds even
    # after 30 steps (the other claims are about trained models and may go either way here)
    for claim in ("P3-frozen-diagonal-parity", "P3-frozen-success-rate"):
        assert by_id[claim]["status"] == "PASS", by_id[claim]
    # claims scored only at the full tier are reported, not silently dropped
    for claim in ("R1-full-modadd50", "R8-full-fsm25", "R10-cp-large-fsm25"):
        assert by_id[claim]["status"] == "NOT RUN", by_id[claim]
    # every claim that names a quick-tier expectation is scored: none is NOT RUN for lack of a metric
    claims = yaml.safe_load((PAPER / "claims.yaml").read_text())["claims"]
    for claim in claims:
        if "quick" in claim["tiers"]:
            assert by_id[claim["id"]]["status"] in {"PASS", "FAIL"}, by_id[claim["id"]]
    assert {p.name for p in (report / "figures").glob("*.png")} == FIGURES
    for fig in FIGURES:
        assert (report / "figures" / fig).stat().st_size > 1000
    assert (report / "provenance.json").is_file()
    assert (pipeline / "reports" / "index.md").is_file()


@pytest.mark.slow
def test_override_reached_the_jobs(pipeline):
    res = pipeline / "results" / "bilinear_rnn" / "quick"
    cfg = json.loads((res / "config.json").read_text())
    assert cfg["tier"] == "quick" and cfg["test"]["lengths"] == [10, 60]
    for name, experiment in cfg["experiments"].items():
        assert experiment["steps"] == STEPS
        # only `steps` was overridden: the rest of each experiment is config.yaml's
        assert {k: v for k, v in experiment.items() if k != "steps"} == \
            {k: v for k, v in RAW["quick"]["experiments"][name].items() if k != "steps"}
    for name in RAW["quick"]["experiments"]:
        history = json.loads((res / "models" / f"{name}.json").read_text())
        assert history["steps"] == STEPS
        assert all(h[-1]["step"] == STEPS for h in history["history"].values())
        evals = json.loads((res / "eval" / f"{name}.json").read_text())
        for run in evals["runs"].values():
            assert run["lengths"] == [10, 60]
            assert all(0.0 <= a <= 1.0 for a in run["acc_exact"])
            if RAW["quick"]["experiments"][name].get("additive"):  # the two inexact evaluations of the ablation
                assert len(run["acc_renormalize"]) == len(run["acc_plain"]) == 2


@pytest.mark.slow
def test_rerun_is_a_no_op_and_figure_change_does_not_retrain(pipeline):
    assert_rerun_is_no_op_and_figure_edit_does_not_retrain(
        pipeline, TINY, pipeline / "replications" / "bilinear_rnn" / "plot_lengths.py", ("bilinear_rnn_train", "bilinear_rnn_evaluate"))


@pytest.mark.slow
def test_check_claims_exit_code_follows_the_report(pipeline):
    check_claims_exit_code(pipeline, rendered_claims(pipeline, "bilinear_rnn"))


# ---------------------------------------------------------------- invalid configs, rejected at parse time
@pytest.mark.parametrize("override, message", [
    (_override({"experiments": {"full": {"model": "bogus"}}}), "invalid config key 'experiments.full.model"),
    (_override({"experiments": {"full": {"step": 30}}}), "invalid config key 'experiments.full"),
    (_override({"experiments": {"cp_new": {"model": "cp", "tasks": ["fsm5"], "seeds": [0], "steps": 5}}}),
     "invalid config key 'experiments.cp_new"),  # cp without a rank
    (_override({"experiments": {"full": {"tasks": ["modadd1"]}}}), "invalid config key 'experiments.full.tasks.0"),
    (_override({"test": {"sequences": 0}}), "invalid config key 'test.sequences"),
    (_override(None, hierarchy=["full", "nosuch"]), "'nosuch' is not an experiment"),
    (_override({"analysis": {"eigen_experiment": "nosuch"}}), "'nosuch' is not an experiment"),
])
def test_invalid_config_is_rejected_before_any_job(tmp_path, override, message):
    repo = copy_repo(tmp_path)
    proc = snakemake(repo, "--cores", "1", "--config", override)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert message in out, out[-2000:]
    assert not (repo / "results").exists() and not (repo / "reports").exists()


@pytest.mark.parametrize("override, key", [
    pytest.param(_override({"test": {"length": 60, "lengths": [10, 500]}}), "test.lengths",
                 id="test-lengths-beyond-test-length"),
    pytest.param(_override({"analysis": {"eigen_task": "modadd7"}}), "analysis.eigen_task", id="eigen-task-not-trained"),
    pytest.param(_override({"analysis": {"subspace_positions": [50, 900]}}), "analysis.subspace_positions",
                 id="subspace-beyond-test-length"),
])
def test_inconsistent_config_is_rejected_before_any_job(tmp_path, override, key):
    repo = copy_repo(tmp_path)
    proc = snakemake(repo, "-n", "--cores", "1", "--config", override)  # a dry run: nothing is trained either way
    assert proc.returncode != 0 and f"invalid config key '{key}'" in proc.stdout + proc.stderr


def test_unknown_tier_is_rejected(tmp_path):
    proc = snakemake(copy_repo(tmp_path), "--cores", "1", "--config", "tier=medium")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "'tier'" in out and "quick, full" in out


# ---------------------------------------------------------------- the full tier plans cleanly
@pytest.mark.parametrize("profile", ["full", "slurm"])
def test_full_tier_dry_runs_with_each_profile(tmp_path, profile):
    """The paper-scale DAG (every experiment of the full tier) plans without running anything."""
    repo = copy_repo(tmp_path)
    proc = snakemake(repo, "-n", "--profile", f"profiles/{profile}")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert set(RAW["full"]["experiments"]) - set(RAW["quick"]["experiments"])  # e.g. block8: full tier only
    for experiment in RAW["full"]["experiments"]:
        assert f"results/bilinear_rnn/full/models/{experiment}.safetensors" in out, experiment
        assert f"results/bilinear_rnn/full/eval/{experiment}.json" in out, experiment
    assert "results/bilinear_rnn/full/data/tasks.safetensors" in out
    assert "reports/bilinear_rnn/full/report.md" in out
    assert "results/bilinear_rnn/quick" not in out
    assert not (repo / "results").exists()
