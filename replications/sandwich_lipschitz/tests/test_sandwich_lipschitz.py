"""sandwich_lipschitz: the toy target, the official schedule, the exact best gamma-Lipschitz fit on known cases,
the margin rule, and the committed tiers' run grids."""
import math

import pytest
import torch

from replications.sandwich_lipschitz import analyze_toy, common
from shared.pipeline.paper import load_papers

PAPER = "sandwich_lipschitz"


def test_square_wave_is_the_official_target():
    x = torch.tensor([-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5])
    assert common.square_wave(x).tolist() == [1, 1, 0, 0, 1, 1, 0]


def test_triangle_schedule():
    lr = common.triangle_lr(100)
    assert lr(1.0, 39) == pytest.approx(1.0) and lr(1.0, 79) == pytest.approx(0.05) and lr(1.0, 99) == 0.0
    assert lr(1.0, 19) == pytest.approx(0.5)


def test_best_lipschitz_fit_known_cases():
    x = torch.linspace(-1, 1, 101)[:, None].double()
    y = (x > 0).double()
    assert analyze_toy.best_lipschitz_mse(x, y, 1000.0) < 1e-12  # steep enough: exact
    # continuous optimum for a unit step at slope 1: a ramp of width 1 centred on the step, error 1/2 - |t| on it,
    # MSE over [-1, 1] = (2 int_0^{1/2} s^2 ds) / 2 = 1/24
    assert analyze_toy.best_lipschitz_mse(x, y, 1.0) == pytest.approx(1 / 24, rel=0.05)
    assert analyze_toy.best_lipschitz_mse(x, 2 * x, 1.0) > 0  # a slope-2 line cannot be matched at gamma 1


def test_margin_rule():
    logits = torch.tensor([[3.0, 1.0, 0.0], [0.0, 2.0, 1.9]])
    y = torch.tensor([0, 2])
    m = common.margins(logits, y)
    assert m.tolist() == pytest.approx([2.0, -0.1])
    assert common.certified(m, 1.0, 2.0 / math.sqrt(2) - 1e-6).tolist() == [True, False]
    assert common.certified(m, 1.0, 2.0 / math.sqrt(2) + 1e-6).tolist() == [False, False]


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_tiers_hold_the_runs_the_claims_read(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    names = {s["name"] for s in common.toy_specs(cfg["toy"])}
    for g in (1.0, 5.0, 10.0):
        assert {f"sandwich-g{g:g}-seed0", f"orthogonal-g{g:g}-seed0"} <= names
    e = cfg["images"]
    names = {s["name"] for s in common.image_specs(e)}
    assert {"sandwich-g1-seed0", "orthogonal-g1-seed0", "sandwich-g10-seed0", "plain-seed0"} <= names
