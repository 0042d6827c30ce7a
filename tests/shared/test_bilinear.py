"""shared.nn.bilinear against their formulas, written out by hand (float64 reference checks)."""
import math

import pytest
import torch

from shared.nn.bilinear import GATES, ActivationMLP, Bilinear, BilinearMLP, RMSNorm

TOL = dict(rtol=1e-12, atol=1e-12)


# Activations written out from their definitions, not via torch.nn.functional.
def _relu(x):
    return torch.where(x > 0, x, torch.zeros_like(x))


def _gelu(x):  # exact (erf) GELU, torch's default
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def _silu(x):
    return x / (1.0 + torch.exp(-x))


HAND_ACT = {None: lambda x: x, "relu": _relu, "gelu": _gelu, "silu": _silu}


def _seeded(module_cls, *args, seed=0, **kwargs):
    torch.manual_seed(seed)
    return module_cls(*args, **kwargs).double()


def _randomize_biases(module, seed=1):
    """nn.Linear biases start small but non-zero; make them O(1) so a dropped bias cannot hide."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias"):
                p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype))


def _bilinear_by_hand(x, w, v, b1, b2, gate):
    left = torch.einsum("hi,ni->nh", w, x)
    right = torch.einsum("hi,ni->nh", v, x)
    if b1 is not None:
        left, right = left + b1, right + b2
    return HAND_ACT[gate](left) * right


def test_hand_activations_match_torch():
    """Guard for the references above: if these drift, the layer tests below lose their meaning."""
    x = torch.linspace(-6, 6, 101, dtype=torch.float64)
    for gate, ref in HAND_ACT.items():
        if gate is not None:
            torch.testing.assert_close(GATES[gate](x), ref(x), **TOL)


@pytest.mark.parametrize("gate", [None, "relu", "gelu", "silu"])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("d_in, d_out, batch", [(5, 7, 11), (16, 3, 4)])
def test_bilinear_matches_formula(gate, bias, d_in, d_out, batch):
    layer = _seeded(Bilinear, d_in, d_out, bias=bias, gate=gate)
    _randomize_biases(layer)
    x = torch.randn(batch, d_in, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    assert layer.left.shape == (d_out, d_in) and layer.right.shape == (d_out, d_in)
    if bias:
        assert layer.left_bias.shape == (d_out,) and layer.right_bias.shape == (d_out,)
    else:
        assert layer.left_bias is None and layer.right_bias is None
    expected = _bilinear_by_hand(x, layer.left, layer.right, layer.left_bias, layer.right_bias, gate)
    torch.testing.assert_close(layer(x), expected, **TOL)


@pytest.mark.parametrize("gate", ["relu", "gelu", "silu"])
def test_gate_applies_to_left_half_only(gate):
    """act(Wx) * (Vx), not (Wx) * act(Vx): swapping the halves must change the output."""
    layer = _seeded(Bilinear, 6, 8, gate=gate)
    x = torch.randn(32, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    swapped = _bilinear_by_hand(x, layer.right, layer.left, None, None, gate)
    assert not torch.allclose(layer(x), swapped, atol=1e-6)


def test_bilinear_works_on_leading_batch_dims():
    layer = _seeded(Bilinear, 4, 3, bias=True)
    x = torch.randn(2, 5, 4, dtype=torch.float64)
    flat = layer(x.reshape(-1, 4)).reshape(2, 5, 3)
    torch.testing.assert_close(layer(x), flat, **TOL)


@pytest.mark.parametrize("bias", [False, True])
def test_left_right_are_views_of_proj_weight(bias):
    d_in, d_out = 5, 4
    layer = _seeded(Bilinear, d_in, d_out, bias=bias)
    w = layer.proj.weight
    assert layer.left._base is w and layer.right._base is w
    assert layer.left.data_ptr() == w.data_ptr()
    assert layer.right.data_ptr() == w.data_ptr() + d_out * d_in * w.element_size()
    if bias:
        b = layer.proj.bias
        assert layer.left_bias._base is b and layer.right_bias._base is b
        assert layer.right_bias.data_ptr() == b.data_ptr() + d_out * b.element_size()

    x = torch.randn(7, d_in, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    before = layer(x).detach().clone()
    with torch.no_grad():
        layer.right[1].mul_(3.0)  # edit through the view ...
    assert torch.equal(w[d_out + 1], layer.right[1])  # ... shows in proj.weight
    after = layer(x).detach()
    right_out = x @ layer.right[1] + (layer.right_bias[1] if bias else 0.0)  # V_1 x + b2_1, after the edit
    left_out = x @ layer.left[1] + (layer.left_bias[1] if bias else 0.0)
    torch.testing.assert_close(after[:, 1], left_out * right_out, **TOL)
    others = [i for i in range(d_out) if i != 1]
    torch.testing.assert_close(after[:, others], before[:, others], **TOL)
    assert not torch.allclose(after[:, 1], before[:, 1])
    with torch.no_grad():
        layer.left.zero_()
        if bias:
            layer.left_bias.zero_()
    assert torch.count_nonzero(layer(x)) == 0


def test_left_gradient_flows_to_proj_weight():
    layer = _seeded(Bilinear, 3, 2)
    (layer.left.sum() + 2 * layer.right.sum()).backward()
    expected = torch.cat([torch.ones(2, 3), 2 * torch.ones(2, 3)]).double()
    torch.testing.assert_close(layer.proj.weight.grad, expected, **TOL)


@pytest.mark.parametrize("gate", [None, "relu", "silu"])
@pytest.mark.parametrize("bias", [False, True])
def test_bilinear_mlp_is_down_of_bilinear(gate, bias):
    d_model, d_hidden = 6, 10
    mlp = _seeded(BilinearMLP, d_model, d_hidden, bias=bias, gate=gate)
    _randomize_biases(mlp)
    assert (mlp.down.bias is not None) == bias
    x = torch.randn(9, d_model, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    b = mlp.bilinear
    hidden = _bilinear_by_hand(x, b.left, b.right, b.left_bias, b.right_bias, gate)
    expected = hidden @ mlp.down.weight.T + (mlp.down.bias if bias else 0.0)
    assert expected.shape == (9, d_model)
    torch.testing.assert_close(mlp(x), expected, **TOL)


@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
@pytest.mark.parametrize("bias", [False, True])
def test_activation_mlp_is_down_act_up(activation, bias):
    d_model, d_hidden = 6, 10
    mlp = _seeded(ActivationMLP, d_model, d_hidden, activation=activation, bias=bias)
    _randomize_biases(mlp)
    x = torch.randn(9, d_model, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    up = x @ mlp.up.weight.T + (mlp.up.bias if bias else 0.0)
    expected = HAND_ACT[activation](up) @ mlp.down.weight.T + (mlp.down.bias if bias else 0.0)
    torch.testing.assert_close(mlp(x), expected, **TOL)


@pytest.mark.parametrize("eps", [1e-8, 1e-2])
@pytest.mark.parametrize("shape", [(4, 8), (2, 3, 16)])
def test_rmsnorm_matches_formula(eps, shape):
    norm = RMSNorm(shape[-1], eps=eps).double()
    assert norm.weight is None
    x = torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    x[0] *= 1e-2  # a small row, so eps matters visibly at eps=1e-2
    expected = x / torch.sqrt((x * x).sum(-1, keepdim=True) / shape[-1] + eps)
    torch.testing.assert_close(norm(x), expected, **TOL)
    if eps == 1e-8:  # unit RMS along the last axis (rows of O(1) scale, where eps is negligible)
        rms = norm(x[1:]).pow(2).mean(-1).sqrt()
        torch.testing.assert_close(rms, torch.ones_like(rms), rtol=1e-6, atol=0)


def test_rmsnorm_affine():
    dim = 8
    norm = RMSNorm(dim, eps=1e-6, affine=True).double()
    assert isinstance(norm.weight, torch.nn.Parameter) and torch.equal(norm.weight, torch.ones(dim).double())
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(-2, 3, dim, dtype=torch.float64))
    x = torch.randn(5, dim, dtype=torch.float64, generator=torch.Generator().manual_seed(8))
    expected = x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * norm.weight
    torch.testing.assert_close(norm(x), expected, **TOL)
    assert [n for n, _ in norm.named_parameters()] == ["weight"]
    assert list(RMSNorm(dim).parameters()) == []


@pytest.mark.parametrize("gate", ["tanh", "ReLU", "", "identity"])
def test_invalid_gate_raises(gate):
    with pytest.raises(ValueError, match="gate must be one of"):
        Bilinear(3, 3, gate=gate)
    with pytest.raises(ValueError, match="gate must be one of"):
        BilinearMLP(3, 3, gate=gate)


@pytest.mark.parametrize("activation", ["tanh", "RELU", None, "bilinear"])
def test_invalid_activation_raises(activation):
    with pytest.raises(ValueError, match="activation must be one of"):
        ActivationMLP(3, 3, activation=activation)
