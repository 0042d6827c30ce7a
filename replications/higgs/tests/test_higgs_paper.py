"""higgs: tests of this paper's experiment code (float64): the probe restores weights exactly, antithetic injection
cancels the first-order term, the linearity fit is exact on a quadratic loss, the Gaussianity statistics, the
random allocation fits its budget and the layer lists of both models. The shared module's reference tests are in
tests/shared/test_quantization_higgs.py."""
import math

import torch

from replications.higgs import common as C
from replications.higgs import model as M
from replications.higgs.pipeline import layer_sizes

D = torch.float64


def quadratic_probe(seed=0):
    """A quadratic loss of two layers around its minimum: L = sum_l |A_l (W_l - W*_l)|^2 + const."""
    gen = torch.Generator().manual_seed(seed)
    net = M.ReluMLP(6, [5], 3).double()
    target = [m.weight.detach().clone() for m in net.layers]
    mats = [torch.randn(m.weight.shape[1], m.weight.shape[1], generator=gen, dtype=D) for m in net.layers]
    loss = lambda: sum(((m.weight - t) @ a).pow(2).sum() for m, t, a in zip(net.layers, target, mats)).item() + 1.0
    return C.Probe(list(zip(("a", "b"), net.layers)), loss), net, mats


def test_probe_restores_weights_and_antithetic_cancels_first_order():
    probe, net, _ = quadratic_probe()
    before = [m.weight.detach().clone() for m in net.layers]
    d = torch.randn_like(before[0])
    probe.evaluate({0: before[0] + d})
    assert all(torch.equal(m.weight, w) for m, w in zip(net.layers, before))
    # a loss linear in the weights: the antithetic mean equals the base loss
    lin = C.Probe([("a", net.layers[0])], lambda: float(net.layers[0].weight.sum()))
    ce, _ = lin.antithetic({0: d})
    assert math.isclose(ce, lin.base, abs_tol=1e-12)


def test_linearity_is_exact_for_a_quadratic_loss_up_to_cross_terms():
    """On a quadratic loss, alpha_l is the exact curvature along the calibration direction; the prediction's relative
    error is the same at every scale (the regime check's counterexample)."""
    probe, _, _ = quadratic_probe(1)
    out = C.linearity(probe, {"calib_t": [0.1, 0.3], "tests": 6, "small_t": 0.2, "large_t": 2.0}, seed=3)
    assert math.isclose(out["small"]["relerr"], out["large"]["relerr"], rel_tol=1e-6)


def test_unit_noise_has_the_weights_norm_and_r2_concordance():
    w = torch.randn(8, 8, dtype=D)
    z = C.unit_noise(w, torch.Generator().manual_seed(0))
    assert math.isclose(float(z.norm()), float(w.norm()), rel_tol=1e-12)
    assert C.r2([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == 1.0
    assert C.concordance([1, 2, 3], [3, 2, 1]) == 0.0 and C.concordance([1, 2, 3], [1, 5, 9]) == 1.0


def test_gaussian_stats_of_gaussian_and_uniform_samples():
    gen = torch.Generator().manual_seed(0)
    kg, sg = C.gaussian_stats(torch.randn(200_000, generator=gen, dtype=D))
    assert abs(kg) < 0.05 and sg < 0.005
    ku, su = C.gaussian_stats((torch.rand(200_000, generator=gen, dtype=D) - 0.5) * math.sqrt(12))
    assert abs(ku + 1.2) < 0.05 and su > 0.03  # a uniform distribution: excess kurtosis -1.2


def test_random_allocation_fits_and_fills_the_budget():
    costs = [[2, 3, 4, 8], [4, 6, 8, 16], [1, 1.5, 2, 4]]
    for seed in range(5):
        choice = C.random_allocation(costs, 20, torch.Generator().manual_seed(seed))
        spent = sum(c[j] for c, j in zip(costs, choice))
        assert spent <= 20
        assert all(j + 1 == len(c) or spent + c[j + 1] - c[j] > 20 for c, j in zip(costs, choice))


def test_layer_lists_match_the_pipeline_sizes():
    cfg = {"lm": {"model": {"d_model": 16, "d_hidden": 32, "n_head": 2, "n_layer": 2, "n_ctx": 8}},
           "mlp": {"d_input": 784, "hidden": [32, 32], "n_classes": 10}}
    lm = M.build({"kind": "lm", "vocab_size": 50, "model": cfg["lm"]["model"]})
    mlp = M.build({"kind": "mlp", **cfg["mlp"]})
    sizes = layer_sizes(cfg)
    assert [m.weight.numel() for _, m in M.quantized_layers(lm)] == sizes["lm"] * 2
    assert [m.weight.numel() for _, m in M.quantized_layers(mlp)] == sizes["mlp"]


def test_quadratic_counterexample_is_at_its_least_squares_optimum():
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(300, 10, generator=gen, dtype=D), torch.randint(0, 3, (300,), generator=gen)
    quad = C.fit_quadratic(x, y, 3, ridge=0.0)
    params = [p for p in quad.parameters()]
    loss = ((quad(x) - torch.nn.functional.one_hot(y, 3).double()) ** 2).sum(1).mean()
    grads = torch.autograd.grad(loss, params)
    assert max(float(g.abs().max()) for g in grads) < 1e-10
