"""shared.stats.spearman (scipy.stats.spearmanr) against the average-rank definition it replaced; rel_err and psnr
against the papers' own definitions they replaced (bit for bit)."""
import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from shared.stats import bracket_slopes, linear_fit, psnr, rel_err, spearman


def average_rank_spearman(x, y):
    """The hand-written version spearman replaced: Pearson r of the ranks, ties at their average rank."""
    def ranks(a):
        r = np.empty(len(a))
        r[a.argsort()] = np.arange(len(a))
        for value in np.unique(a):
            r[a == value] = r[a == value].mean()
        return r
    return float(np.corrcoef(ranks(np.asarray(x, float)), ranks(np.asarray(y, float)))[0, 1])


@pytest.mark.parametrize("seed", range(20))
def test_matches_average_ranks_with_and_without_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    x = rng.integers(0, 5, n) if seed % 2 else rng.normal(size=n)  # odd seeds: many ties on both sides
    y = rng.integers(0, 4, n)
    assert spearman(x, y) == pytest.approx(average_rank_spearman(x, y), abs=1e-12)


def test_exact_values_and_input_types():
    import torch

    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([3.0, 1.0, 2.0])) == pytest.approx(-0.5)
    assert isinstance(spearman([1, 2, 3], [1, 3, 2]), float)


@pytest.mark.parametrize("x", [[1.0, 1.0, 1.0], [1.0, math.nan, 3.0]], ids=["constant", "nan"])
def test_no_correlation_to_compute_is_nan(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(spearman(x, [1.0, 2.0, 3.0]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rel_err_equals_the_paper_definitions_it_replaced(dtype):
    g = torch.Generator().manual_seed(0)
    a, b = (torch.randn(6, 3, 5, generator=g, dtype=dtype) for _ in range(2))
    assert rel_err(a, b) == ((a - b).abs().max() / b.abs().max()).item()  # bcos_networks, dwsnets, template
    assert rel_err(a, b, "l2") == float(torch.linalg.norm(a - b) / torch.linalg.norm(b))  # lsa_one_step_gd
    assert torch.equal(rel_err(a, b, per_sample=True),  # linearscope (its 1e-300 floor only acts on a zero reference)
                       (a - b).flatten(1).abs().amax(1) / b.flatten(1).abs().amax(1).clamp_min(1e-300))
    a2, b2 = a.flatten(1), b.flatten(1)
    assert torch.equal(rel_err(a2, b2, "l2", per_sample=True), (a2 - b2).norm(dim=-1) / b2.norm(dim=-1))  # ELM
    assert torch.equal(rel_err(a2, b2, per_sample=True), (a2 - b2).abs().amax(1) / b2.abs().amax(1))  # harmless


def test_rel_err_of_a_zero_reference_is_not_finite_and_bad_norm_raises():
    zero = torch.zeros(3)
    assert math.isinf(rel_err(torch.ones(3), zero)) and math.isnan(rel_err(zero, zero))
    with pytest.raises(ValueError, match="norm 'l1'"):
        rel_err(zero, zero, "l1")


def test_psnr_equals_the_paper_definitions_it_replaced():
    g = torch.Generator().manual_seed(1)
    x = torch.rand(4, 64, generator=g)
    y = (x + 0.05 * torch.randn(4, 64, generator=g)).clamp(0, 1)
    assert psnr(y, x) == 10 * math.log10(1.0 / F.mse_loss(y, x).item())  # linearscope
    mse = float(((y.double() - x.double()) ** 2).mean())
    assert psnr(y.double(), x.double(), 2.0) == 10 * math.log10(2.0 ** 2 / mse)  # linearizer
    assert torch.equal(psnr(y, x, per_sample=True), 10 * torch.log10(1.0 / (y - x).pow(2).mean(1)))  # harmless
    assert psnr(x, x) == math.inf
    assert psnr(x / 2, x) == pytest.approx(10 * math.log10(1 / (x / 2).pow(2).mean().item()))


def test_bracket_slopes_are_the_extreme_corner_fits():
    x = np.log(np.log([23, 31, 47, 71]) / np.array([23, 31, 47, 71]))
    lo, hi = np.log([0.3, 0.25, 0.2, 0.15]), np.log([0.35, 0.3, 0.25, 0.2])
    low, high = bracket_slopes(x, lo, hi)
    w = (x - x.mean()) / ((x - x.mean()) ** 2).sum()  # the slope is sum w_i y_i: its extremes pick lo or hi by sign
    assert low == pytest.approx((w * np.where(w > 0, lo, hi)).sum()) and high == pytest.approx((w * np.where(w > 0, hi, lo)).sum())
    assert low < linear_fit(x, (lo + hi) / 2)["slope"] < high
    assert all(math.isnan(v) for v in bracket_slopes(x, lo, [np.nan, *hi[1:]]))
