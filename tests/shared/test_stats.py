"""shared.stats.spearman (scipy.stats.spearmanr) against the average-rank definition it replaced."""
import math
import warnings

import numpy as np
import pytest

from shared.stats import spearman


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
