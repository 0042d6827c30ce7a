"""sgd_xor_features: the sample-size grid, n* read off a curve, the stacked sweep learning XOR at a small d, the
random-features control, and the committed tiers measuring what the claims compare."""
import math

import pytest
import torch

from replications.sgd_xor_features import common
from replications.sgd_xor_features.train_sweep import stacked_init
from shared.data.hypercube import hypercube_parity
from shared.pipeline.paper import load_papers
from shared.pipeline.run import RunContext

PAPER = "sgd_xor_features"


def test_sample_sizes_are_a_window_in_n_over_d():
    assert common.sample_sizes(16, {"lo_log2_per_d": -1, "hi_log2_per_d": 1, "per_octave": 2}) == [
        8, 11, 16, 23, 32]


def test_n_star_interpolates_in_log_n():
    ns = [10, 100, 1000]
    assert common.n_star(ns, [0.5, 0.3, 0.1], 0.2) == pytest.approx(math.sqrt(100 * 1000))
    assert common.n_star(ns, [0.01, 0.0, 0.0], 0.05) == 10
    assert math.isinf(common.n_star(ns, [0.5, 0.4, 0.3], 0.05))
    assert common.log_slope([2, 4, 8], [3, 12, 48]) == pytest.approx(2.0)


def test_the_sweep_learns_xor_with_enough_samples_only():
    d, ns, cfg = 8, [4, 256], {"width": 16, "init_scale": 0.01, "lr": 0.1, "batch_size": 32}
    run = RunContext(type("Args", (), {"params": {}, "threads": 1})())
    net = stacked_init(d, len(ns), cfg, run, [0], "init")
    pools = tuple(t[None] for t in hypercube_parity(d, max(ns), (0, 1), torch.Generator().manual_seed(0)))
    net, runs = common.train_fixed_samples(net, ns, 1, cfg, 400, pools, torch.Generator().manual_seed(1))
    x, y = hypercube_parity(d, 2000, (0, 1), torch.Generator().manual_seed(2))
    few, many = common.test_error(net, x, y).tolist()
    assert runs == [(0, 4), (0, 256)] and many < 0.05 < few


def test_random_features_learn_at_small_d_and_stop_early():
    gen = torch.Generator().manual_seed(0)
    x, y = hypercube_parity(6, 1024, (0, 1), gen)
    xt, yt = hypercube_parity(6, 1000, (0, 1), gen)
    errors = common.random_features_curve(x, y, xt, yt, [8, 128, 256, 512, 1024], 256, 1e-3, gen, stop_below=0.05)
    assert errors[0] > 0.2 and errors[2] < 0.05 and math.isnan(errors[-1])


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_measure_what_the_claims_compare(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    assert 64 in cfg["features"]["dims"] and max(cfg["features"]["dims"]) == 64  # X8 reads d = 64
    assert len(cfg["sweep"]["dims"]) >= 5 and len(cfg["phases"]["seeds"]) >= 8
