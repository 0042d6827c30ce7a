"""shared.nn.quadratic_neuron against its formula: the forward term by term, a degree-2 polynomial of the input
(third finite differences vanish, second do not), ReLinear's initialisation reduces it to nn.Linear, and the
parameter groups put exactly W_g, b_g, W_b, c at the quadratic rate."""
import pytest
import torch
from torch import nn

from shared.nn import layer_registry as registry
from shared.nn.quadratic_neuron import QuadraticConv2d, QuadraticLinear, quadratic_param_groups, relinear_init


def layer(d_in=5, d_out=3, seed=0):
    torch.manual_seed(seed)
    return QuadraticLinear(d_in, d_out).double()


def test_forward_is_the_formula():
    q = layer()
    x = torch.randn(7, 5, dtype=torch.float64)
    wr, br, wg, bg, wb, c = (q.r.weight, q.r.bias, q.g.weight, q.g.bias, q.b.weight, q.b.bias)
    for n in range(7):
        for j in range(3):
            want = (wr[j] @ x[n] + br[j]) * (wg[j] @ x[n] + bg[j]) + wb[j] @ (x[n] * x[n]) + c[j]
            assert torch.allclose(q(x)[n, j], want, rtol=0, atol=1e-12)


def test_degree_two_polynomial_along_any_line():
    """f(x0 + t v) is a quadratic in t: its third finite difference is zero (to rounding), its second is not."""
    q = layer()
    x0, v = torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
    f = [q(x0 + t * v) for t in range(4)]
    third = f[3] - 3 * f[2] + 3 * f[1] - f[0]
    second = f[2] - 2 * f[1] + f[0]
    assert third.abs().max() < 1e-12
    assert second.abs().min() > 1e-3


def test_relinear_init_is_the_linear_layer():
    q = relinear_init(layer())
    linear = nn.Linear(5, 3).double()
    linear.load_state_dict({"weight": q.r.weight, "bias": q.r.bias})
    x = torch.randn(11, 5, dtype=torch.float64)
    assert torch.equal(q(x), linear(x))
    assert torch.equal(q.g.weight, torch.zeros(3, 5, dtype=torch.float64)) and torch.equal(q.g.bias, torch.ones(3,
                                                                                           dtype=torch.float64))


def test_relinear_init_needs_biases():
    with pytest.raises(ValueError, match="bias=True"):
        relinear_init(QuadraticLinear(4, 2, bias=False))


def test_param_groups_split_by_module():
    model = nn.Sequential(QuadraticLinear(4, 6), nn.ReLU(), QuadraticLinear(6, 2), nn.Linear(2, 2))
    linear, quadratic = quadratic_param_groups(model, lr=0.1, lr_quadratic=1e-4)
    assert (linear["lr"], quadratic["lr"]) == (0.1, 1e-4)
    assert {id(p) for p in quadratic["params"]} == {id(p) for i in (0, 2) for m in (model[i].g, model[i].b)
                                                     for p in m.parameters()}
    assert len(linear["params"]) + len(quadratic["params"]) == len(list(model.parameters()))
    torch.optim.SGD(quadratic_param_groups(model, 0.1, 0.0), lr=0.1)  # a valid torch optimizer spec


def test_registered_counts_by_hand():
    # layer 16 -> 36: 3 * 16 * 36 weights + 3 * 36 biases; block 16 -> 32 -> 16: 6 * 16 * 32 + 3 * (32 + 16)
    assert registry.count("quadratic_neuron", 16, 36) == {"params": 1836, "macs": 1728}
    assert registry.count("quadratic_neuron", 16, 32, "block") == {"params": 3216, "macs": 3072}


def test_conv_is_the_neuron_per_patch_and_linear_at_relinear_init():
    torch.manual_seed(0)
    q = relinear_init(QuadraticConv2d(2, 3, 3, padding=1).double())
    x = torch.randn(2, 2, 5, 5, dtype=torch.float64)
    assert torch.equal(q(x), q.r(x))
    nn.init.normal_(q.g.weight), nn.init.normal_(q.b.weight)
    patch = x[0, :, 1:4, 1:4].reshape(-1)  # the receptive field of output pixel (2, 2)
    w = {k: getattr(q, k).weight[1].reshape(-1) for k in "rgb"}
    want = ((w["r"] @ patch + q.r.bias[1]) * (w["g"] @ patch + q.g.bias[1]) + w["b"] @ (patch * patch) + q.b.bias[1])
    assert torch.allclose(q(x)[0, 1, 2, 2], want, rtol=0, atol=1e-12)
