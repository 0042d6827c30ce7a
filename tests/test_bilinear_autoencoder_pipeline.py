"""The bilinear autoencoder paper's real Snakemake pipeline, run in a temporary copy of the repository that holds
this paper and the flagship it consumes (bilinear_mlp), with a tiny quick-tier override: the flagship's `size`
experiment trains one width for one epoch, every autoencoder and the TopK SAE 30 steps, at two penalties."""
import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from snakemake_helpers import (
    assert_rerun_is_no_op_and_figure_edit_does_not_retrain,
    check_claims_exit_code,
    copy_paper_repo,
    rendered_claims,
    snakemake,
)

from shared.data import read_prepared
from shared.io.checkpoints import load_state_dicts
from shared.pipeline.config import deep_merge

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "replications" / "bilinear_autoencoder"
RAW = yaml.safe_load((PAPER / "config.yaml").read_text())
CLAIMS = yaml.safe_load((PAPER / "claims.yaml").read_text())["claims"]
STEPS = 30
FLAGSHIP_RUN = "d_hidden=50,seed=0"  # the run config.yaml's mnist_bilinear dataset reads


def _override(paper, tier_cfg):
    """`<paper>={quick: {...}}` for --config, as one line of flow-style YAML."""
    return f"{paper}=" + yaml.safe_dump({"quick": tier_cfg}, default_flow_style=True, width=10**6).strip()


BAE_TINY = {
    "train": {"steps": STEPS},
    "alphas": [0.0, 1.0],  # B3's ratios and costs compare alpha = 1 with alpha = 0
    "topk": {"ks": [8], "steps": STEPS},  # B7 reads topk8
    "datasets": {"planted": {"train": 2000, "test": 1024}},
    "analysis": {"prefix": {"points": 256}, "manifold": {"model": "mixed_a100"}},
}
CONFIG = [
    _override("bilinear_mlp", {"experiments": {"size": {"epochs": 1, "grid": {"d_hidden": [50], "seed": [0]}}}}),
    _override("bilinear_autoencoder", BAE_TINY),
]
DATASETS = deep_merge(deep_merge(RAW["common"], RAW["quick"]), BAE_TINY)["datasets"]
HEAVY_RULES = ("bilinear_autoencoder_data", "bilinear_autoencoder_train", "bilinear_autoencoder_pareto",
               "bilinear_autoencoder_prefix", "bilinear_autoencoder_manifold", "bilinear_mlp_train", "prepare_dataset")
BY_CONSTRUCTION = ("B1-closed-form-loss", "B1-closed-form-loss-mnist")  # identities: they hold for any weights
FLAGSHIP_CKPT = "results/bilinear_mlp/quick/models/size.safetensors"


def _figures():
    """`<fig>_<ns>.png` for every figure rules.smk's BAE_FIGURES registers."""
    names = set()
    for name, spec in DATASETS.items():
        names |= {f"pareto_pareto_{name}.png", f"prefix_prefix_{name}.png", f"gram_manifold_{name}.png"}
        if spec["source"] == "planted":
            names.add(f"manifold_manifold_{name}.png")
    return names


def _jobs(log):
    """(rule, wildcards) of every job a Snakemake log reports, in order ('' for a rule without wildcards)."""
    jobs = []
    for line in log.splitlines():
        if match := re.fullmatch(r"(?:local)?rule (\w+):", line):
            jobs.append([match[1], ""])
        elif jobs and line.startswith("    wildcards: "):
            jobs[-1][1] = line.removeprefix("    wildcards: ")
    return [tuple(j) for j in jobs]


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    start = time.perf_counter()
    repo = copy_paper_repo(tmp_path_factory.mktemp("repo"), "bilinear_mlp", "bilinear_autoencoder")
    proc = snakemake(repo, "--cores", "2", "bilinear_autoencoder", "--config", *CONFIG)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    print(f"bilinear_autoencoder quick pipeline (tiny, with the flagship): {time.perf_counter() - start:.0f} s")
    return repo, proc.stdout + proc.stderr


# ---------------------------------------------------------------- the tiny quick-tier run
@pytest.mark.slow
def test_quick_pipeline_renders_scored_report(pipeline):
    repo, _ = pipeline
    report = repo / "reports" / "bilinear_autoencoder" / "quick"
    rows = rendered_claims(repo, "bilinear_autoencoder")
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == {c["id"] for c in CLAIMS} and len(rows) == len(CLAIMS)
    for claim in CLAIMS:  # every claim with a quick-tier expectation is scored: none NOT RUN for lack of a metric
        expected = {"PASS", "FAIL"} if "quick" in claim["tiers"] else {"NOT RUN"}
        assert by_id[claim["id"]]["status"] in expected, by_id[claim["id"]]
    for claim in BY_CONSTRUCTION:
        assert by_id[claim]["status"] == "PASS", by_id[claim]
    figures = _figures()
    assert {p.name for p in (report / "figures").glob("*.png")} == figures
    text = (report / "report.md").read_text()
    for fig in figures:
        assert (report / "figures" / fig).stat().st_size > 1000
        assert f"figures/{fig}" in text
    assert (report / "provenance.json").is_file()
    # only this paper was asked for: the flagship's report is not built
    assert not (repo / "reports" / "bilinear_mlp").exists()


@pytest.mark.slow
def test_flagship_checkpoint_is_trained_by_its_own_rule_and_consumed(pipeline):
    repo, log = pipeline
    jobs = _jobs(log)
    assert ("bilinear_mlp_train", "experiment=size") in jobs
    assert [j for j in jobs if j[0] == "bilinear_mlp_train"] == [("bilinear_mlp_train", "experiment=size")]
    order = [j[0] for j in jobs]
    data_job = jobs.index(("bilinear_autoencoder_data", "dataset=mnist_bilinear"))
    assert order.index("bilinear_mlp_train") < data_job
    # the flagship trained only what the override asked, and only the experiment this paper reads
    assert sorted(p.name for p in (repo / "results" / "bilinear_mlp" / "quick" / "models").iterdir()) == \
        ["size.json", "size.safetensors"]
    states, meta = load_state_dicts(repo / FLAGSHIP_CKPT)
    assert set(states) == {FLAGSHIP_RUN} and [r["epochs"] for r in meta["runs"]] == [1]
    # this paper's activations are the checkpoint's embedding of MNIST-5k: read from it, not retrained
    res = repo / "results" / "bilinear_autoencoder" / "quick"
    arrays, info = read_prepared(res / "data" / "mnist_bilinear.safetensors")
    assert info["source"] == FLAGSHIP_CKPT and info["run"] == FLAGSHIP_RUN
    images, _ = read_prepared(repo / "data" / "prepared" / "mnist_5k.safetensors")
    weight = states[FLAGSHIP_RUN]["embed.weight"].double().numpy()
    for split in ("train", "test"):
        pixels = images[f"x_{split}"].reshape(len(images[f"x_{split}"]), -1) / 255.0
        np.testing.assert_allclose(arrays[f"x_{split}"], pixels @ weight.T, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(arrays[f"y_{split}"], images[f"y_{split}"])
    assert arrays["x_train"].shape == (4000, 50)


@pytest.mark.slow
def test_override_reached_the_jobs(pipeline):
    repo, _ = pipeline
    res = repo / "results" / "bilinear_autoencoder" / "quick"
    cfg = json.loads((res / "config.json").read_text())
    assert cfg["train"]["steps"] == STEPS and cfg["alphas"] == [0.0, 1.0] and cfg["topk"]["ks"] == [8]
    assert cfg["datasets"]["planted"]["train"] == 2000 and cfg["datasets"]["mnist_bilinear"]["run"] == FLAGSHIP_RUN
    runs = {f"{kind}_a{a}" for kind in cfg["kinds"] for a in (0, 100)}
    for name, spec in DATASETS.items():
        history = json.loads((res / "models" / f"{name}.json").read_text())["history"]
        assert set(history) == runs | {"topk8"}
        assert all(h[-1]["step"] == STEPS for h in history.values())
    planted_data, _ = read_prepared(res / "data" / "planted.safetensors")
    assert planted_data["x_train"].shape == (2000, 32) and planted_data["x_test"].shape == (1024, 32)
    prefix = json.loads((res / "metrics" / "prefix_planted.json").read_text())
    assert prefix["info"]["held_out"] == 256
    manifold = json.loads((res / "metrics" / "manifold_planted.json").read_text())
    assert manifold["info"]["model"] == "mixed_a100"
    # the pareto metrics check the closed form on every autoencoder of both datasets
    for name in DATASETS:
        pareto = json.loads((res / "metrics" / f"pareto_{name}.json").read_text())
        gaps = [k for k in pareto["metrics"] if k.endswith(".closed_form_gap")]
        assert len(gaps) == len(runs)


@pytest.mark.slow
def test_check_claims_exit_code_follows_the_report(pipeline):
    repo, _ = pipeline
    check_claims_exit_code(repo, rendered_claims(repo, "bilinear_autoencoder"))


@pytest.mark.slow
def test_rerun_is_a_no_op_and_figure_change_does_not_retrain(pipeline):
    repo, _ = pipeline  # last: it edits a figure script of the scratch copy
    assert_rerun_is_no_op_and_figure_edit_does_not_retrain(
        repo, CONFIG, repo / "replications" / "bilinear_autoencoder" / "plot_pareto.py", HEAVY_RULES,
        targets=("bilinear_autoencoder",))
