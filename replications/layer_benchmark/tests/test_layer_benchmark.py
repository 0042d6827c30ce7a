"""Fast checks of the plan, the training of one unit, the comparisons and the leaderboard (bad configs:
tests/bad_config.yaml; the conformance suite renders the report from tests/tiny.yaml)."""
import json
from pathlib import Path

import pytest
import torch
from torch import nn

from replications.layer_benchmark.analyze import comparisons, leaderboard, summarize
from replications.layer_benchmark.common import budgets, plan, score, spec_of, teacher_data, train_one
from replications.layer_benchmark.model import block_of, build
from replications.layer_benchmark.pareto import front
from shared.nn import layer_registry
from shared.nn.layer_registry import count, families
from shared.pipeline.config import load_paper_config
from shared.pipeline.report import leaderboard_table

PAPER = "replications/layer_benchmark"


@pytest.fixture(scope="module")
def cfg():
    return load_paper_config(PAPER, "quick")


class Scaled(nn.Module):
    """A throwaway 'later paper' layer: a dense map times a learned scalar."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.linear, self.scale = nn.Linear(d_in, d_out, bias=False), nn.Parameter(torch.ones(()))

    def forward(self, x):
        return self.scale * self.linear(x)


def test_a_family_registered_later_is_in_the_plan(cfg):
    families()  # discover the library's own families first, as the benchmark does
    layer_registry.register(
        "throwaway_scaled", layer=lambda d_in, d_out: Scaled(d_in, d_out),
        params=lambda d_in, d_out: d_in * d_out + 1, macs=lambda d_in, d_out: d_in * d_out,
        block=lambda d, h: nn.Sequential(Scaled(d, h), nn.ReLU(), Scaled(h, d)),
        block_params=lambda d, h: 2 * d * h + 2, block_macs=lambda d, h: 2 * d * h)
    try:
        for task in cfg["tasks"]:
            units = [u for u in plan(cfg, task) if u["family"] == "throwaway_scaled"]
            assert [u["budgets"] for u in units] == [["params", "macs"]], task
            model = build(spec_of(cfg, task, units[0], vocab=16))
            assert sum(p.numel() for p in block_of(model).parameters()) == units[0]["params"]
        excluded = {**cfg, "exclude": {"throwaway_scaled": "not a layer of the suite"}}
        assert all(u["family"] != "throwaway_scaled" for u in plan(excluded, "digits"))
    finally:
        layer_registry.FAMILIES.pop("throwaway_scaled")


def test_committed_leaderboard_covers_every_registered_family(cfg):
    """A family registered after the last quick run adds no file that run loaded, so the staleness check cannot see
    it: this does. Rerun `snakemake --cores 2 layer_benchmark` after registering a layer."""
    metrics = Path(__file__).parents[3] / "reports/layer_benchmark/quick/metrics/benchmark.json"
    board = json.loads(metrics.read_text())["info"]["leaderboard"]
    benchmarked = {row[0].strip("`") for row in board["rows"]}
    assert benchmarked == set(families()) - set(cfg["exclude"]), sorted(benchmarked ^ set(families()))


def test_plan_matches_every_family_to_both_budgets(cfg):
    units = plan(cfg, "digits")
    assert {u["family"] for u in units} == set(families())
    for measure, budget in budgets(cfg, "digits").items():
        assert budget == 8192  # dense ReLU block 64 -> 64 -> 64
        for family in families():
            (unit,) = [u for u in units if u["family"] == family and measure in u["budgets"]]
            # the grid's closest width: within the grid's step (1.5x) of the budget, unless the grid ends first
            assert unit[measure] / budget < 1.5 and (unit[measure] / budget > 1 / 1.5 or unit["width"] == 1024)
            assert unit[measure] == count(family, 64, unit["width"], "block")[measure]
    assert len([u for u in units if u["family"] == "dense"]) == 1  # params = MACs: one set of runs for both


def test_training_improves_on_init_and_repeats_exactly():
    t = {"d": 8, "teacher_width": 8, "data_seed": 0, "n_train": 128, "n_val": 16, "n_test": 64, "epochs": 3,
         "batch_size": 32, "weight_decay": 0.0}
    data = teacher_data(t)
    spec = {"kind": "regression", "family": "swiglu", "d": 8, "width": 8, "hyper": {}, "d_out": 1}
    losses = []
    for _ in range(2):
        torch.manual_seed(0)
        model = build(spec)
        before = score("regression", model, data, "test")[0]
        train_one("regression", model, data, t, 0.01, torch.Generator().manual_seed(1))
        losses.append(score("regression", model, data, "test")[0])
    assert losses[0] == losses[1] < before


def unit(family, budgets, mean, init, params=100, fwd=1.0):
    seeds = {s: {"test_metric": mean + d, "init_metric": init, "test_loss": 0.0, "init_loss": 0.0}
             for s, d in enumerate((-0.01, 0.0, 0.01))}
    return {"family": family, "budgets": budgets, "seeds": seeds, "params": params, "macs": params,
            "params_built": params, "width": 8, "lr": 0.01, "forward_s": fwd, "fwdbwd_s": 2 * fwd}


def test_comparisons_and_their_untrained_controls():
    image = {"units": [unit(f, ["params", "macs"], 0.9 if f == "dense" else 0.8, 0.1)
                       for f in ("dense", "btt", "monarch", "low_rank", "kronecker", "bilinear", "bcos",
                                 "quadratic")], "timing": {"batch": 4}}
    lm = {"units": [unit(f, ["params", "macs"], 2.0 if f == "dense" else 1.9, 5.0, fwd=2.0)
                    for f in ("dense", "bilinear", "reglu", "swiglu")], "timing": {"batch": 4}}
    rows = {"im": summarize(image), "lm": summarize(lm)}
    assert rows["im"]["dense", "params"]["std"] == pytest.approx(0.01)
    assert rows["lm"]["swiglu", "params"]["fwdbwd_speed"] == 1.0
    out = comparisons(rows, {"image": "im", "structured": "im", "lm": "lm"})
    assert out["glu_minus_relu_lm_params"] == pytest.approx(-0.1)
    assert out["glu_minus_relu_lm_params_untrained"] == pytest.approx(3.0)
    assert out["glu_spread_lm_params"] == pytest.approx(0.0) and out["glu_spread_lm_params_untrained"] == pytest.approx(3.1)
    assert out["btt_minus_dense_structured_macs"] == pytest.approx(-0.1)
    assert out["btt_minus_dense_structured_macs_untrained"] == pytest.approx(-0.8)  # the layer under test untrained
    assert out["low_rank_minus_dense_structured_params_untrained"] == pytest.approx(0.7)  # dense untrained


def test_pareto_front():
    x, y = [1, 2, 3, 4], [0.5, 0.7, 0.6, 0.9]
    assert front(x, y, lower_is_better=False) == [0, 1, 3]
    assert front(x, y, lower_is_better=True) == [0]


def test_leaderboard_renders_into_the_readme_section(tmp_path):
    image = {"units": [unit("dense", ["params"], 0.9, 0.1), unit("btt", ["params"], 0.8, 0.1)],
             "timing": {"batch": 4}}
    board = leaderboard({"digits": summarize(image)}, {"digits": "image"}, ["dense", "btt"], [0, 1, 2])
    folder = tmp_path / "reports" / "layer_benchmark" / "quick" / "metrics"
    assert "No leaderboard yet" in leaderboard_table(tmp_path / "reports", tmp_path)
    folder.mkdir(parents=True)
    (folder / "benchmark.json").write_text(json.dumps({"metrics": {}, "info": {"leaderboard": board}}))
    text = leaderboard_table(tmp_path / "reports", tmp_path)
    assert "| `dense` | 90.0 ± 1.0 |" in text and "| `btt` | 80.0 ± 1.0 |" in text
    assert "(reports/layer_benchmark/quick/figures/leaderboard--benchmark.png)" in text
