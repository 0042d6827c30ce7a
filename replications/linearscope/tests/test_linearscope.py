"""linearscope: the interpreter helpers on small random models (float64)."""
import pytest
import torch

from replications.linearscope import analyze_bilinear, analyze_cnn, model
from shared.nn.dynamic_linear import FrozenGates, dynamic_linear_map
from shared.stats import rel_err

PAPER = "linearscope"
CNN = {"arch": "cnn", "in_channels": 1, "size": 8, "channels": [3, 4], "bias": True, "n_classes": 5}


def _cnn(bias=True):
    torch.manual_seed(0)
    return model.build({**CNN, "bias": bias}).double().eval()


def test_interpreter_replays_is_jacobian_and_bias_splits_by_layer():
    net, x = _cnn(), torch.rand(6, 64, dtype=torch.float64)
    lin = dynamic_linear_map(net, x)
    assert rel_err((lin.weight @ x.unsqueeze(-1)).squeeze(-1) + lin.bias, net(x), per_sample=True).max() < 1e-12
    assert rel_err(analyze_cnn.jacobian(net, x), lin.weight, per_sample=True).max() < 1e-12
    parts = analyze_cnn.bias_by_layer(net, x)
    assert parts.shape == (3, 6, 5) and torch.allclose(parts.sum(0), lin.bias, atol=1e-12)
    assert dynamic_linear_map(_cnn(bias=False), x).bias.abs().max() == 0


def test_linearity_check_tells_frozen_from_network():
    net, x = _cnn(), torch.rand(4, 64, dtype=torch.float64)
    z1, z2 = torch.rand_like(x), torch.randn_like(x)
    hooks = FrozenGates(net)
    with torch.no_grad():
        hooks.run("record", lambda: net(x))
        frozen = analyze_cnn.linearity_err(lambda z: hooks.run("replay", lambda: net(z)), z1, z2)
    hooks.remove()
    assert frozen.max() < 1e-12 and analyze_cnn.linearity_err(net, z1, z2).max() > 1e-3


def test_bilinear_rows_are_the_quadratic_form():
    torch.manual_seed(0)
    net = model.build({"arch": "bilinear", "in_channels": 1, "size": 3, "d_hidden": 4, "n_classes": 2}).double()
    x = torch.randn(5, 9, dtype=torch.float64)
    b = torch.einsum("ch,hi,hj->cij", net.head.weight, net.bilinear.left, net.bilinear.right)
    lin = dynamic_linear_map(net, x)
    assert torch.allclose(lin.weight, torch.einsum("cij,ni->ncj", b, x), atol=1e-12)
    jac = analyze_cnn.jacobian(net, x)
    assert torch.allclose(jac, lin.weight + torch.einsum("cij,nj->nci", b, x), atol=1e-12)
    assert analyze_bilinear.__doc__  # the analysis module imports


def test_spread_covers_a_sorted_split():
    assert analyze_cnn.spread(1000, 10).tolist() == [0, 111, 222, 333, 444, 555, 666, 777, 888, 999]


def test_localisation_of_a_point_a_box_and_noise():
    from replications.linearscope.analyze_sr import localisation
    point, spread_out = torch.zeros(1, 196, dtype=torch.float64), torch.ones(1, 196, dtype=torch.float64)
    point[0, 100] = 1.0
    spread_out[0, 7 * 14 + 7] += 1e-9  # the peak in the middle: the whole 7x7 window lies inside the image
    assert localisation(point, 1, 14).item() == pytest.approx(1.0)
    assert localisation(spread_out, 1, 14).item() == pytest.approx(49 / 196)


def test_sr_net_is_exactly_replayed_and_doubles_the_side():
    torch.manual_seed(0)
    net = model.build({"arch": "sr", "in_channels": 3, "size": 8, "width": 4, "layers": 2}).double().eval()
    x = torch.rand(2, 3 * 4 * 4, dtype=torch.float64)
    lin = dynamic_linear_map(net, x)
    assert lin.weight.shape == (2, 3 * 8 * 8, 3 * 4 * 4)
    assert rel_err((lin.weight @ x.unsqueeze(-1)).squeeze(-1) + lin.bias, net(x), per_sample=True).max() < 1e-12


def test_over_seeds_means_findings_and_keeps_the_worst_identity():
    from replications.linearscope.common import over_seeds, seeds_of
    per_seed = [{"err": 1e-15, "share": 0.1}, {"err": 3e-15, "share": 0.2}, {"err": 2e-15, "share": 0.6}]
    assert over_seeds(per_seed, worst=("err",)) == {"err": 3e-15, "share": pytest.approx(0.3)}
    assert seeds_of({"cnn_s2": {"seed": 2}, "cnn_s0": {"seed": 0}, "bilinear_s0": {"seed": 0}}) == [0, 2]
