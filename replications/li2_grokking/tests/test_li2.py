"""li2_grokking: the tiers and the members of each experiment, the stage statistics and a short training."""
import math

import numpy as np
import pytest
import torch

from replications.li2_grokking import common
from shared.nn import feature_stages as fs
from shared.pipeline.paper import load_papers
from shared.train.full_batch import train_full_batch

PAPER = "li2_grokking"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_grok_members_and_width_bracket(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    assert len(common.members(cfg["grok"], "grok", cfg["critical_c"])) == len(cfg["grok"]["etas"]) * \
        len(cfg["grok"]["seeds"])
    n, widths = common.widths(cfg["width"])
    assert min(widths) < n <= max(widths)


def test_full_tier_is_fig3():
    g = load_papers([PAPER], "full", {})[PAPER].cfg["grok"]
    assert (g["order"], g["width"], round(g["fraction"] * g["order"] ** 2), g["steps"]) == (71, 2048, 2016, 400)
    assert len(g["seeds"]) == 15 and 2e-4 in g["etas"] and 0.0 in g["etas"]


def test_critical_fraction_matches_code_values():
    # the dossier's examples of the code's p* = 2.7482 ln M / M
    for m, p in ((23, 0.375), (31, 0.303), (71, 0.165), (127, 0.105)):
        assert common.critical_fraction(m, 2.7482) == pytest.approx(p, abs=2e-3)


def test_scaling_members_and_splits():
    sec = {"multipliers": [0.6, 1.5], "seeds": [0, 1], "eta": 1e-3}
    mem = common.members(sec, "scaling17", 2.7482)
    assert len(mem) == 4 and mem[0]["fraction"] == pytest.approx(0.6 * 2.7482 * math.log(17) / 17)
    masks = [common.split(17, m["fraction"], m["seed"], "s") for m in mem]
    assert masks[0].sum() == round(mem[0]["fraction"] * 289)
    assert not torch.equal(masks[0], masks[1])  # seeds give different splits
    assert torch.equal(masks[0], common.split(17, mem[0]["fraction"], 0, "s"))  # deterministic


def test_gf_vanishes_only_when_wide_and_no_decay():
    torch.manual_seed(0)
    y = torch.randn(20, 5)
    wide, narrow = torch.randn(20, 40), torch.randn(20, 8)
    assert fs.backprop_signal(wide, y, 0.0)[1] < 1e-8
    assert fs.backprop_signal(narrow, y, 0.0)[1] > 1e-3
    assert fs.backprop_signal(wide, y, 1e-1)[1] > 1e-6


def test_feature_stats_on_planted_fourier_units():
    order, k = 11, 3
    comps = common.components_of(order)
    x = np.arange(order)
    units = [np.cos(2 * np.pi * f * x / order + ph) for f in (1, 2, 3, 4) for ph in (0.0, 1.0)]
    left = torch.tensor(np.stack(units, 1))
    state = {"left": left, "right": left.clone(), "out": left.T.clone()}
    s = common.feature_stats(state, comps, 0.9, 0.9)
    assert s["pure_frac"] == 1.0 and s["frequencies"] == 4
    noisy = {kk: v + 0.5 * torch.randn(v.shape, generator=torch.Generator().manual_seed(k)) for kk, v in state.items()}
    assert common.feature_stats(noisy, comps, 0.9, 0.9)["pure_frac"] < 1.0


def test_short_training_records_stage_statistics():
    order = 7
    _, a, b, labels = common.table(order)
    mem = common.members({"fraction": 0.5, "etas": [0.0, 1e-3], "seeds": [0]}, "grok", 2.7482)
    masks = torch.stack([common.split(order, m["fraction"], m["seed"], "t") for m in mem])
    from replications.li2_grokking.model import build
    model = build({"order": order, "width": 32, "activation": "quadratic", "member_seeds": [0, 0]})
    rec = common.stage_recorder(a, b, labels, masks, [0.0, 1e-3], common.components_of(order),
                                {"purity": 0.9, "norm_share": 0.9}, 5, 10)
    h = train_full_batch(model, a, b, labels, masks, steps=10, lr=1e-3, weight_decay=torch.tensor([0.0, 1e-3]),
                         eval_every=5, on_eval=rec, progress=False)
    assert h["gf_ridge"].shape == (3, 2) and torch.isfinite(h["repulsion"]).all()
    assert h["gf_ridge"][:, 0].max() < 1e-8  # eta = 0, width 32 >= n = 24 (or 25): G_F = 0
