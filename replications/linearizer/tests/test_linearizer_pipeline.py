"""The linearizer paper's real Snakemake pipeline from tests/tiny.yaml (the `tiny_render` scratch copy the
conformance suite also uses): what is particular to this paper. The report rendering, the no-op rerun, what an
edit reruns and the check-claims exit code are the conformance suite's (tests/papers/test_conformance.py)."""
import json
from pathlib import Path

import pytest

from shared.io.files import load_yaml
from shared.pipeline.config import deep_merge
from shared.pipeline.report import read_csv

PAPER = Path(__file__).resolve().parents[1]
RAW = load_yaml((PAPER / "config.yaml").read_text())
TINY = load_yaml((PAPER / "tests" / "tiny.yaml").read_text())["linearizer"]["quick"]
CLAIMS = load_yaml((PAPER / "claims.yaml").read_text())["claims"]
# identities that hold by construction, whatever the weights: they must PASS even after a few training steps
BY_CONSTRUCTION = ("L1-superposition", "L1-superposition-max", "L1-homogeneity", "L1-zero", "L2-inversion",
                   "L3-composition", "L3-power", "L4-adjoint", "L4-penrose-1", "L4-penrose-2", "L4-penrose-3",
                   "L4-penrose-4", "L4-svd", "O1-euler-one-step-exact", "O2-rk4-one-step-exact",
                   "P1-idempotent-everywhere")
CONTROLS = ("L1-control-euclidean", "L1-control-not-linearizer", "P1-control")
FULL_ONLY = tuple(c["id"] for c in CLAIMS if "quick" not in c["tiers"])
MODELS = deep_merge(RAW["quick"]["models"], TINY["models"])  # tiny.yaml drops some models with `~`
DROPPED = tuple(c["id"] for c in CLAIMS if "quick" in c["tiers"] and c["metric"].split(".")[0] not in
                {*MODELS, "algebra"})


def _figures(models):
    """`<figure>--<namespace>.png` for every figure pipeline.analyses declares."""
    names = {"exactness--algebra.png"}
    for name, spec in models.items():
        if spec["kind"] == "projective":
            names.add(f"projective--{name}.png")
        elif spec["dataset"] == "eight_gaussians":
            names.add(f"toy--{name}.png")
        else:
            names |= {f"samples--{name}.png", f"singular--{name}.png"}
    return names


@pytest.fixture(scope="module")
def rendered(tiny_render):
    return tiny_render("linearizer")


def test_identities_pass_and_full_only_claims_read_not_run(rendered):
    rows = read_csv(rendered / "reports" / "linearizer" / "quick" / "claims.csv")
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == {c["id"] for c in CLAIMS} and len(rows) == len(CLAIMS)
    for claim in CLAIMS:  # every claim with a quick-tier expectation is scored: none lacks its metric
        if "quick" in claim["tiers"] and claim["id"] not in DROPPED:
            assert by_id[claim["id"]]["status"] in {"PASS", "FAIL"}, by_id[claim["id"]]
    for claim in DROPPED:  # a model the tiny config drops: its claims read NOT RUN, with the reason
        assert by_id[claim]["status"] == "NOT RUN" and "not in this run's config" in by_id[claim]["reason"]
    for claim in BY_CONSTRUCTION + CONTROLS:
        assert by_id[claim]["status"] == "PASS", by_id[claim]
    # the claims scored only at the full tier (the paper's MNIST / CelebA numbers) are reported, not dropped
    assert FULL_ONLY and all(c.startswith("I3-") for c in FULL_ONLY)
    for claim in FULL_ONLY:
        assert by_id[claim]["status"] == "NOT RUN", by_id[claim]


def test_one_figure_per_declared_figure_and_namespace(rendered):
    report = rendered / "reports" / "linearizer" / "quick"
    figures = _figures(MODELS)
    assert {p.name for p in (report / "figures").glob("*.png")} == figures
    text = (report / "report.md").read_text()
    for fig in figures:
        assert (report / "figures" / fig).stat().st_size > 1000
        assert f"figures/{fig}" in text


def test_tiny_config_reached_the_jobs_and_checkpoints_follow_the_run_contract(rendered):
    res = rendered / "results" / "linearizer" / "quick"
    cfg = json.loads((res / "config.json").read_text())
    assert cfg["analysis"]["steps"] == TINY["analysis"]["steps"]
    for name, spec in cfg["models"].items():
        raw = RAW["quick"]["models"][name]
        # models merge key by key: kind, dataset, seed and rank stay config.yaml's
        assert {k: spec[k] for k in ("kind", "dataset", "seed")} == {k: raw[k] for k in ("kind", "dataset", "seed")}
        assert spec["model"]["rank"] == raw["model"]["rank"]
        record = json.loads((res / "models" / f"{name}.json").read_text())
        assert record["history"][-1]["step"] == TINY["models"][name]["train"]["steps"]
        (run,) = record["runs"]
        assert run["name"] == name and run["kind"] == spec["kind"] and run["seed"] == spec["seed"]
        assert run["model"] == spec["model"] and record["provenance"]["seeds"] == [spec["seed"]]
    algebra = json.loads((res / "metrics" / "algebra.json").read_text())
    assert algebra["info"]["inputs"] == TINY["analysis"]["algebra"]["inputs"]
    assert algebra["info"]["model"] == cfg["analysis"]["algebra"]["model"] and algebra["info"]["seeds"] == [0]
    digits = json.loads((res / "metrics" / "digits.json").read_text())
    assert digits["info"]["samples"] == TINY["analysis"]["samples"] and "trained" in digits["info"]
