"""The bilinear autoencoder paper's real Snakemake pipeline from tests/tiny.yaml (the `tiny_render` scratch copy the
conformance suite also uses; it holds this paper and the flagship it consumes, bilinear_mlp, each shrunk by its own
tiny.yaml): what is particular to this paper. The report rendering, the no-op rerun, what an edit reruns and the
check-claims exit code are the conformance suite's (tests/papers/test_conformance.py)."""
import json
from pathlib import Path

import numpy as np
import pytest

from replications.bilinear_autoencoder.pipeline import run_name
from shared.data import read_prepared
from shared.io.checkpoints import load_state_dicts
from shared.io.files import load_yaml
from shared.pipeline.config import deep_merge
from shared.pipeline.report import read_csv

PAPER = Path(__file__).resolve().parents[1]
RAW = load_yaml((PAPER / "config.yaml").read_text())
TINY = load_yaml((PAPER / "tests" / "tiny.yaml").read_text())["bilinear_autoencoder"]["quick"]
CFG = deep_merge(deep_merge(RAW["common"], RAW["quick"]), TINY)
CLAIMS = load_yaml((PAPER / "claims.yaml").read_text())["claims"]
BY_CONSTRUCTION = ("B1-closed-form-loss", "B1-closed-form-loss-mnist")  # identities: they hold for any weights
FLAGSHIP = CFG["datasets"]["mnist_bilinear"]  # the run of bilinear_mlp's checkpoint this paper reads
RUNS = {run_name(kind, alpha) for kind in CFG["kinds"] for alpha in CFG["alphas"]}


def _figures():
    """`<figure>--<namespace>.png` for every figure pipeline.analyses declares."""
    names = set()
    for name, spec in CFG["datasets"].items():
        names |= {f"pareto--pareto_{name}.png", f"prefix--prefix_{name}.png", f"gram--manifold_{name}.png"}
        if spec["source"] == "planted":
            names.add(f"manifold--manifold_{name}.png")
    return names


@pytest.fixture(scope="module")
def rendered(tiny_render):
    return tiny_render("bilinear_autoencoder")


def test_every_quick_claim_is_scored_and_the_identities_pass(rendered):
    report = rendered / "reports" / "bilinear_autoencoder" / "quick"
    by_id = {r["id"]: r for r in read_csv(report / "claims.csv")}
    assert set(by_id) == {c["id"] for c in CLAIMS}
    for claim in CLAIMS:  # every claim with a quick-tier expectation is scored: none NOT RUN for lack of a metric
        expected = {"PASS", "FAIL"} if "quick" in claim["tiers"] else {"NOT RUN"}
        assert by_id[claim["id"]]["status"] in expected, by_id[claim["id"]]
        assert "was not produced" not in by_id[claim["id"]]["reason"], by_id[claim["id"]]
    for claim in BY_CONSTRUCTION:
        assert by_id[claim]["status"] == "PASS", by_id[claim]
    assert {p.name for p in (report / "figures").glob("*.png")} == _figures()
    # only this paper was asked for: the flagship's report is not built, only the checkpoint this paper reads
    assert not (rendered / "reports" / "bilinear_mlp").exists()


def test_flagship_checkpoint_is_read_not_retrained(rendered):
    res = rendered / "results" / "bilinear_autoencoder" / "quick"
    checkpoint = f"results/bilinear_mlp/quick/models/{FLAGSHIP['experiment']}.safetensors"
    states, _ = load_state_dicts(rendered / checkpoint)
    arrays, info = read_prepared(res / "data" / "mnist_bilinear.safetensors")
    assert info["source"] == checkpoint and info["run"] == FLAGSHIP["run"]
    # this paper's activations are the checkpoint's embedding of MNIST-5k, pixels in [0, 1]
    images, _ = read_prepared(rendered / "data" / "prepared" / "mnist_5k.safetensors")
    weight = states[FLAGSHIP["run"]]["embed.weight"].double().numpy()
    for split in ("train", "test"):
        pixels = images[f"x_{split}"].reshape(len(images[f"x_{split}"]), -1) / 255.0
        np.testing.assert_allclose(arrays[f"x_{split}"], pixels @ weight.T, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(arrays[f"y_{split}"], images[f"y_{split}"])
    assert arrays["x_train"].shape == (4000, weight.shape[0])


def test_tiny_config_reached_the_jobs(rendered):
    res = rendered / "results" / "bilinear_autoencoder" / "quick"
    cfg = json.loads((res / "config.json").read_text())
    assert cfg["train"]["steps"] == TINY["train"]["steps"] and cfg["alphas"] == TINY["alphas"]
    for name in CFG["datasets"]:
        history = json.loads((res / "models" / f"{name}.json").read_text())["history"]
        assert set(history) == RUNS | {f"topk{k}" for k in TINY["topk"]["ks"]}
        assert all(h[-1]["step"] == TINY["train"]["steps"] for n, h in history.items() if n in RUNS)
        _, meta = load_state_dicts(res / "models" / f"{name}.safetensors")  # run.save's one metadata schema
        assert {r["kind"] for r in meta["runs"]} == set(CFG["kinds"]) | {"topk"} and meta["provenance"]["seeds"]
        pareto = json.loads((res / "metrics" / f"pareto_{name}.json").read_text())
        assert len([k for k in pareto["metrics"] if k.endswith(".closed_form_gap")]) == len(RUNS)
        assert pareto["info"]["trained"]["config_hash"]  # the training-time provenance reaches the report
    planted, _ = read_prepared(res / "data" / "planted.safetensors")
    spec = CFG["datasets"]["planted"]
    assert planted["x_train"].shape == (spec["train"], spec["d"]) and planted["x_test"].shape == (spec["test"], spec["d"])
    prefix = json.loads((res / "metrics" / "prefix_planted.json").read_text())
    assert prefix["info"]["held_out"] == TINY["analysis"]["prefix"]["points"]
    manifold = json.loads((res / "metrics" / "manifold_planted.json").read_text())
    assert manifold["info"]["model"] == CFG["analysis"]["manifold"]["model"]
