"""shared.nn.bcos: the unit's definition, f(x) = W(x) x exactly, W(x) against autograd in explanation mode, B = 1 as a
linear network, and the convolution as the linear layer on unfolded patches."""
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.bcos import BcosConv2d, BcosLinear, LogitLayer, add_inverse, explanation_mode, logit_bias
from shared.nn.dynamic_linear import dynamic_linear_map



def bcos_cnn(b, max_out=2, seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(BcosConv2d(2, 4, 3, padding=1, b=b, max_out=max_out),
                         BcosConv2d(4, 6, 3, stride=2, padding=1, b=b, max_out=max_out),
                         BcosConv2d(6, 5, 1, b=b, max_out=max_out),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), LogitLayer(0.5, logit_bias(5))).double()


def inputs(n=3, seed=1):
    torch.manual_seed(seed)
    return add_inverse(torch.rand(n, 1, 6, 6, dtype=torch.float64))


def explained_jacobian(model, x):
    """(N, out, *in) by autograd with the dynamic scales detached, one sample at a time."""
    with explanation_mode(model):
        return torch.stack([torch.autograd.functional.jacobian(lambda z: model(z[None])[0], xi) for xi in x])


@pytest.mark.parametrize("b", [1.0, 1.5, 2.0, 2.5])
def test_network_is_its_dynamic_linear_map_and_explanation_jacobian(b):
    model, x = bcos_cnn(b), inputs()
    m = dynamic_linear_map(model, x)
    out = model(x)
    torch.testing.assert_close(m.bias, torch.full_like(out, logit_bias(5)), rtol=0, atol=1e-12)
    assert ((m.apply(x) - out).abs().max() / out.abs().max()).item() < 1e-10
    assert ((m.contributions(x).flatten(2).sum(-1) + m.bias - out).abs().max() / out.abs().max()).item() < 1e-10
    torch.testing.assert_close(m.weight, explained_jacobian(model, x), rtol=1e-10, atol=1e-12)


def test_plain_gradient_is_not_the_map_for_b_above_one():
    model, x = bcos_cnn(2.0), inputs()
    plain = torch.stack([torch.autograd.functional.jacobian(lambda z: model(z[None])[0], xi) for xi in x])
    weight = dynamic_linear_map(model, x).weight
    assert ((plain - weight).abs().max() / weight.abs().max()).item() > 1e-3


def test_b_one_without_maxout_is_a_linear_network():
    model = bcos_cnn(1.0, max_out=1)
    w1, w2 = dynamic_linear_map(model, inputs(seed=1)).weight, dynamic_linear_map(model, inputs(seed=2)).weight
    torch.testing.assert_close(w1, w2, rtol=0, atol=1e-12)
    torch.testing.assert_close(w1[0], w1[1], rtol=0, atol=1e-12)


def test_unit_definition_bound_and_weight_norm_invariance():
    torch.manual_seed(3)
    layer = BcosLinear(7, 4, b=2.5, max_out=1, scale=1.0).double()
    x = torch.randn(5, 7, dtype=torch.float64)
    out = layer(x)
    w_hat = layer.weight / layer.weight.norm(dim=1, keepdim=True)
    lin = x @ w_hat.T
    norm = (x.pow(2).sum(1, keepdim=True) + 1e-6).sqrt()
    cos = lin / norm
    torch.testing.assert_close(out, lin * (cos.abs() + 1e-6).pow(1.5), rtol=1e-12, atol=1e-14)
    assert (out.abs() <= x.norm(dim=1, keepdim=True) * (1 + 1e-5)).all()  # |B-cos(x; w)| <= ||x||
    with torch.no_grad():
        layer.weight.mul_(torch.tensor([[3.0], [0.1], [7.0], [1.0]], dtype=torch.float64))
    torch.testing.assert_close(layer(x), out, rtol=1e-12, atol=1e-14)
    one = BcosLinear(7, 4, b=1.0, max_out=1, scale=1.0).double()
    torch.testing.assert_close(one(x), x @ (one.weight / one.weight.norm(dim=1, keepdim=True)).T, rtol=0, atol=1e-14)


def test_maxout_keeps_the_larger_unit():
    torch.manual_seed(4)
    layer = BcosLinear(5, 3, b=1.0, max_out=2, scale=1.0).double()
    x = torch.randn(4, 5, dtype=torch.float64)
    w_hat = layer.weight / layer.weight.norm(dim=1, keepdim=True)
    torch.testing.assert_close(layer(x), (x @ w_hat.T).view(4, 3, 2).amax(-1), rtol=0, atol=1e-14)


@pytest.mark.parametrize("b,stride,padding", [(2.0, 1, 1), (1.5, 2, 0), (2.5, 2, 1)])
def test_conv_is_the_linear_layer_on_unfolded_patches(b, stride, padding):
    torch.manual_seed(5)
    conv = BcosConv2d(3, 4, 3, stride=stride, padding=padding, b=b, max_out=2).double()
    linear = BcosLinear(3 * 9, 4, b=b, max_out=2, scale=conv.scale.item()).double()
    linear.weight.data.copy_(conv.weight.detach().flatten(1))
    x = torch.rand(2, 3, 7, 7, dtype=torch.float64)
    out = conv(x)
    patches = F.unfold(x, 3, padding=padding, stride=stride).transpose(1, 2)  # (N, L, C k k)
    expected = linear(patches.reshape(-1, 27)).view(2, -1, 4).transpose(1, 2).reshape(out.shape)
    torch.testing.assert_close(out, expected, rtol=1e-10, atol=1e-12)


def test_default_scale_and_encoding():
    assert BcosConv2d(6, 4, 3).scale.item() == pytest.approx(3 * math.sqrt(6) / 100)
    assert BcosLinear(16, 4).scale.item() == pytest.approx(4 / 100)
    x = torch.rand(2, 3, 4, 4)
    encoded = add_inverse(x)
    assert encoded.shape == (2, 6, 4, 4)
    torch.testing.assert_close(encoded[:, :3] + encoded[:, 3:], torch.ones_like(x))
    assert logit_bias(10) == pytest.approx(math.log(0.1 / 0.9))
