"""The linearizer paper's real Snakemake pipeline, run in a temporary copy of the repository with a tiny quick-tier
override (every model trains 25 steps; small analyses; 20 solver steps in place of 100)."""
import json
import time
from pathlib import Path

import pytest
import yaml
from snakemake_helpers import (
    assert_rerun_is_no_op_and_figure_edit_does_not_retrain,
    check_claims_exit_code,
    rendered_claims,
    run_quick_pipeline,
)

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "replications" / "linearizer"
RAW = yaml.safe_load((PAPER / "config.yaml").read_text())
CLAIMS = yaml.safe_load((PAPER / "claims.yaml").read_text())["claims"]
STEPS = 25
# Models merge key by key: only `train.steps` of each is replaced, whatever models config.yaml lists. The solver
# steps drop from 100 to 20: collapsing MNIST-5k's 784 x 784 step matrices is most of the run's time.
TINY = "linearizer=" + yaml.safe_dump({"quick": {
    "models": {name: {"train": {"steps": STEPS}} for name in RAW["quick"]["models"]},
    "analysis": {"steps": 20, "samples": 64, "invert": 16, "energy_points": 200,
                 "components": 8, "algebra": {"inputs": 8}, "projective": {"inputs": 16, "components": 8}},
}}, default_flow_style=True, width=10**6).strip()
HEAVY_RULES = ("linearizer_data", "linearizer_train", "linearizer_onestep", "linearizer_algebra",
               "linearizer_projective")
# identities that hold by construction, whatever the weights: they must PASS even after 25 training steps
BY_CONSTRUCTION = ("L1-superposition", "L1-superposition-max", "L1-homogeneity", "L1-zero", "L2-inversion",
                   "L3-composition", "L3-power", "L4-adjoint", "L4-penrose-1", "L4-penrose-2", "L4-penrose-3",
                   "L4-penrose-4", "L4-svd", "O1-euler-one-step-exact", "O2-rk4-one-step-exact",
                   "P1-idempotent-everywhere")
CONTROLS = ("L1-control-euclidean", "L1-control-not-linearizer", "P1-control")
FULL_ONLY = tuple(c["id"] for c in CLAIMS if "quick" not in c["tiers"])


def _figures(models):
    """`<fig>_<ns>.png` for every figure rules.smk's LIN_FIGURES registers."""
    names = {"exactness_algebra.png"}
    for name, spec in models.items():
        if spec["kind"] == "projective":
            names.add(f"projective_{name}.png")
        elif spec["dataset"] == "eight_gaussians":
            names.add(f"toy_{name}.png")
        else:
            names |= {f"samples_{name}.png", f"singular_{name}.png"}
    return names


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    start = time.perf_counter()
    repo = run_quick_pipeline(tmp_path_factory.mktemp("repo"), "linearizer", TINY)
    print(f"linearizer quick pipeline (tiny override): {time.perf_counter() - start:.0f} s")
    return repo


# ---------------------------------------------------------------- the tiny quick-tier run
@pytest.mark.slow
def test_quick_pipeline_renders_scored_report(pipeline):
    report = pipeline / "reports" / "linearizer" / "quick"
    rows = rendered_claims(pipeline, "linearizer")
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == {c["id"] for c in CLAIMS} and len(rows) == len(CLAIMS)
    # every claim with a quick-tier expectation is scored: none is NOT RUN for lack of a metric
    for claim in CLAIMS:
        if "quick" in claim["tiers"]:
            assert by_id[claim["id"]]["status"] in {"PASS", "FAIL"}, by_id[claim["id"]]
    for claim in BY_CONSTRUCTION + CONTROLS:
        assert by_id[claim]["status"] == "PASS", by_id[claim]
    # the claims scored only at the full tier (the paper's MNIST / CelebA numbers) are reported, not dropped
    assert FULL_ONLY and all(c.startswith("I3-") for c in FULL_ONLY)
    for claim in FULL_ONLY:
        assert by_id[claim]["status"] == "NOT RUN", by_id[claim]
    figures = _figures(RAW["quick"]["models"])
    assert {p.name for p in (report / "figures").glob("*.png")} == figures
    for fig in figures:
        assert (report / "figures" / fig).stat().st_size > 1000
        assert f"figures/{fig}" in (report / "report.md").read_text()
    assert (report / "provenance.json").is_file()
    assert (pipeline / "reports" / "index.md").is_file()


@pytest.mark.slow
def test_override_reached_the_jobs(pipeline):
    res = pipeline / "results" / "linearizer" / "quick"
    cfg = json.loads((res / "config.json").read_text())
    assert cfg["tier"] == "quick" and cfg["analysis"]["steps"] == 20 and cfg["analysis"]["samples"] == 64
    for name, spec in cfg["models"].items():
        assert spec["train"]["steps"] == STEPS
        # only `train.steps` was overridden: the rest of each model is config.yaml's
        raw = RAW["quick"]["models"][name]
        assert {k: v for k, v in spec.items() if k != "train"} == {k: v for k, v in raw.items() if k != "train"}
        assert {k: v for k, v in spec["train"].items() if k != "steps"} == \
            {k: v for k, v in raw["train"].items() if k != "steps"}
        history = json.loads((res / "models" / f"{name}.json").read_text())["history"]
        assert history[-1]["step"] == STEPS
    algebra = json.loads((res / "metrics" / "algebra.json").read_text())
    assert algebra["info"]["inputs"] == 8 and algebra["info"]["steps"] == 20
    digits = json.loads((res / "metrics" / "digits.json").read_text())
    assert digits["info"]["samples"] == 64 and digits["info"]["steps"] == 20


@pytest.mark.slow
def test_rerun_is_a_no_op_and_figure_change_does_not_retrain(pipeline):
    assert_rerun_is_no_op_and_figure_edit_does_not_retrain(
        pipeline, TINY, pipeline / "replications" / "linearizer" / "plot_samples.py", HEAVY_RULES)


@pytest.mark.slow
def test_check_claims_exit_code_follows_the_report(pipeline):
    check_claims_exit_code(pipeline, rendered_claims(pipeline, "linearizer"))
