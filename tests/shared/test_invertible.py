"""shared.nn.invertible: exact inverses, log-determinants against autograd Jacobians, per-layer contracts, modes.

Float64 throughout (except the float32 test). Fresh flows are close to the identity (zero-initialised output
convolutions, uninitialised ActNorm), so most checks first push every parameter away from its init: an inversion
or log-determinant bug in a coupling cannot show while the coupling is the identity.
"""
import copy

import pytest
import torch
from torch.autograd.functional import jacobian

from shared.nn.invertible import (
    ActNorm,
    AffineCoupling,
    ConvConditioner,
    Flow,
    InvertibleLinear,
    MLPConditioner,
    Permutation,
    Squeeze,
    glow,
    perturbed,
)


DT = torch.float64
COND_DIM = 4

# name -> (shape of one sample, glow kwargs). Flat: MLP conditioners, dims even, odd (uneven split) and wider.
# Image: conv conditioners after a 2x2 squeeze, 1 channel (4 after squeeze) and 3 channels (12, odd halves 6/6).
VARIANTS = {
    "flat2": ((2,), dict(hidden=16)),
    "flat7": ((7,), dict(hidden=16)),
    "flat16": ((16,), dict(hidden=16)),
    "flat16_permuted": ((16,), dict(hidden=16, mixing="permutation")),
    "img1": ((1, 8, 8), dict(hidden=8, image=True, squeeze=True)),
    "img3": ((3, 8, 8), dict(hidden=8, image=True, squeeze=True)),
}
MODES = [0, 2]  # a plain flow, and one with two modes


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _randn(*shape, seed, dtype=DT):
    return torch.randn(*shape, generator=_gen(seed), dtype=dtype)


def _perturb(module, scale=0.1, seed=123):
    return perturbed(module, seed, scale)


def _flow(name, modes, *, blocks=2, seed=0, dtype=DT):
    shape, kw = VARIANTS[name]
    torch.manual_seed(seed)
    flow = glow(shape[0], blocks, modes=modes, cond_dim=COND_DIM if modes else 0, **kw)
    return flow.to(dtype), shape


def _mode_list(modes):
    return list(range(modes)) if modes else [None]


def _rel(a, b):
    return ((a - b).norm() / b.norm()).item()


def _jacobian_logdet(fn, x):
    """log|det d fn / dx| per sample of x (batch, *shape), fn mapping a batch to a batch of the same numel."""
    out = []
    for xi in x:
        j = jacobian(lambda v: fn(v[None])[0], xi, vectorize=True)
        sign, logabs = torch.linalg.slogdet(j.reshape(xi.numel(), xi.numel()))
        assert sign != 0
        out.append(logabs)
    return torch.stack(out)


# ---------------------------------------------------------------------------------------------------------- flows
@pytest.mark.parametrize("modes", MODES)
@pytest.mark.parametrize("name", list(VARIANTS))
def test_flow_inverts_exactly_after_perturbation(name, modes):
    flow, shape = _flow(name, modes)
    _perturb(flow)
    x = _randn(5, *shape, seed=1)
    for mode in _mode_list(modes):
        y, logdet = flow(x, mode)
        assert y.shape == x.shape  # squeeze is undone at the end
        # the perturbation must make the map far from the identity, or this test proves little
        assert _rel(y, x) > 0.1 and logdet.abs().min() > 1e-2
        torch.testing.assert_close(flow.inverse(y, mode), x, rtol=0, atol=1e-12 * x.abs().max().item())
        # and the other way round: forward(inverse(z)) == z
        z = _randn(5, *shape, seed=2)
        torch.testing.assert_close(flow(flow.inverse(z, mode), mode)[0], z, rtol=0, atol=1e-12 * z.abs().max().item())


@pytest.mark.parametrize("modes", MODES)
@pytest.mark.parametrize("name", list(VARIANTS))
def test_flow_logdet_matches_autograd_jacobian(name, modes):
    flow, shape = _flow(name, modes)
    _perturb(flow)
    x = _randn(2, *shape, seed=3)
    for mode in _mode_list(modes):
        expected = _jacobian_logdet(lambda v: flow(v, mode)[0], x)
        torch.testing.assert_close(flow(x, mode)[1], expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("modes", MODES)
@pytest.mark.parametrize("name", list(VARIANTS))
def test_fresh_flow_is_affine_with_identity_couplings(name, modes):
    """Couplings start as the identity (zero-initialised last layers): after ActNorm's data-dependent init the
    whole flow is an affine map, its log-determinant is the same for every sample, and every mode is the same
    map (modes differ only through the conditioners)."""
    flow, shape = _flow(name, modes)
    x_init = _randn(64, *shape, seed=4) * 2.0 + 0.5
    flow.train()
    flow(x_init, _mode_list(modes)[0])  # ActNorm init
    flow.eval()
    for m in flow.modules():
        if isinstance(m, AffineCoupling):
            kept = _randn(3, m.conditioner.net[0].in_features - (COND_DIM if modes else 0), seed=5) \
                if isinstance(m.conditioner, MLPConditioner) else _randn(3, m.conditioner.inp.in_channels, 4, 4, seed=5)
            cond = _randn(3, COND_DIM, seed=6) if modes else None
            shift, raw = m.conditioner(kept, cond)
            assert shift.abs().max() == 0 and raw.abs().max() == 0

    x = _randn(6, *shape, seed=7) * 3.0
    zero = torch.zeros(1, *shape, dtype=DT)
    mode = _mode_list(modes)[0]
    offset = flow(zero, mode)[0]
    jac = jacobian(lambda v: flow(v, mode)[0], zero, vectorize=True).reshape(zero.numel(), zero.numel())
    affine = (x.flatten(1) @ jac.T).reshape(x.shape) + offset
    y, logdet = flow(x, mode)
    torch.testing.assert_close(y, affine, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(logdet, logdet[:1].expand(6), rtol=0, atol=1e-12)
    if modes:
        torch.testing.assert_close(flow(x, 1)[0], y, rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------------------- modes
@pytest.mark.parametrize("name", list(VARIANTS))
def test_two_modes_are_different_maps(name):
    flow, shape = _flow(name, 2)
    _perturb(flow)
    x = _randn(4, *shape, seed=8)
    y0, y1 = flow(x, 0)[0], flow(x, 1)[0]
    assert _rel(y0, y1) > 1e-2
    # each mode inverts its own output, and inverting with the other mode does not give x back
    torch.testing.assert_close(flow.inverse(y0, 0), x, rtol=0, atol=1e-12)
    torch.testing.assert_close(flow.inverse(y1, 1), x, rtol=0, atol=1e-12)
    assert _rel(flow.inverse(y0, 1), x) > 1e-2


def test_missing_or_unexpected_mode_raises():
    with_modes, shape = _flow("flat7", 2)
    plain, _ = _flow("flat7", 0)
    x = _randn(2, *shape, seed=9)
    with pytest.raises(ValueError, match=r"2 modes; pass mode=0\.\.1"):
        with_modes(x)
    with pytest.raises(ValueError, match="2 modes"):
        with_modes.inverse(x)
    with pytest.raises(ValueError, match="no modes"):
        plain(x, 0)  # 0 is falsy: must still count as "a mode was passed"
    with pytest.raises(ValueError, match="no modes"):
        plain.inverse(x, 1)
    for bad in (2, -1):  # out of range: a clear error, not an embedding IndexError
        with pytest.raises(ValueError, match="not " + str(bad)):
            with_modes(x, bad)


def test_modes_without_a_conditioning_width_are_refused():
    """With cond_dim = 0 the conditioners never see the mode, so 'two modes' would silently be one map."""
    with pytest.raises(ValueError, match="cond_dim"):
        glow(4, 1, 8, modes=2)


# ---------------------------------------------------------------------------------------------------------- layers
def _coupling(kind, transform_first, channels, cond_dim=0, scale_bound=2.0):
    split = channels // 2
    kept, changed = (channels - split, split) if transform_first else (split, channels - split)
    cls = MLPConditioner if kind == "mlp" else ConvConditioner
    return AffineCoupling(channels, cls(kept, changed, 8, cond_dim), transform_first, scale_bound)


# name -> (layer factory, sample shape, whether it reads cond)
LAYERS = {
    "actnorm_flat": (lambda: ActNorm(5), (5,), False),
    "actnorm_img": (lambda: ActNorm(3), (3, 4, 4), False),
    "linear_flat": (lambda: InvertibleLinear(5), (5,), False),
    "linear_img": (lambda: InvertibleLinear(3), (3, 4, 4), False),
    "squeeze": (lambda: Squeeze(), (2, 4, 4), False),
    "unsqueeze": (lambda: Squeeze(reverse=True), (8, 2, 2), False),
    "coupling_mlp_first": (lambda: _coupling("mlp", True, 7), (7,), False),
    "coupling_mlp_second": (lambda: _coupling("mlp", False, 7), (7,), False),
    "coupling_mlp_cond": (lambda: _coupling("mlp", True, 6, cond_dim=COND_DIM), (6,), True),
    "coupling_conv_first": (lambda: _coupling("conv", True, 3), (3, 4, 4), False),
    "coupling_conv_second": (lambda: _coupling("conv", False, 3), (3, 4, 4), False),
    "coupling_conv_cond": (lambda: _coupling("conv", False, 4, cond_dim=COND_DIM), (4, 4, 4), True),
}


def _layer(name, scale=0.3):
    factory, shape, uses_cond = LAYERS[name]
    torch.manual_seed(0)
    layer = _perturb(factory().to(DT), scale=scale)
    cond = _randn(2, COND_DIM, seed=10) if uses_cond else None
    return layer, shape, cond


@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_logdet_matches_autograd_jacobian(name):
    layer, shape, cond = _layer(name)
    x = _randn(2, *shape, seed=11)
    expected = torch.stack([_jacobian_logdet(lambda v: layer(v, None if cond is None else cond[i:i + 1])[0],
                                             x[i:i + 1])[0] for i in range(2)])
    torch.testing.assert_close(layer(x, cond)[1], expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_inverts_exactly(name):
    layer, shape, cond = _layer(name)
    x = _randn(2, *shape, seed=12)
    y = layer(x, cond)[0]
    torch.testing.assert_close(layer.inverse(y, cond), x, rtol=0, atol=1e-13)


# ActNorm
@pytest.mark.parametrize("shape", [(4,), (3, 5, 5)])
def test_actnorm_data_dependent_init(shape):
    layer = ActNorm(shape[0]).to(DT)
    scale = torch.tensor([0.5, 2.0, 7.0, 0.1][: shape[0]], dtype=DT).view(1, -1, *([1] * (len(shape) - 1)))
    x = _randn(32, *shape, seed=13) * scale + 3.0
    assert not layer.initialized
    y, _ = layer(x)
    assert layer.initialized
    per_channel = y.transpose(0, 1).reshape(shape[0], -1)
    torch.testing.assert_close(per_channel.mean(1), torch.zeros(shape[0], dtype=DT), rtol=0, atol=1e-12)
    # every channel's std (>= 0.1 here) is above min_std, so the unit std is exact up to rounding
    torch.testing.assert_close(per_channel.std(1, correction=0), torch.ones(shape[0], dtype=DT), rtol=0, atol=1e-12)

    # only once: a second batch with other statistics leaves the parameters alone
    before = {k: v.clone() for k, v in layer.state_dict().items()}
    layer(_randn(32, *shape, seed=14) * 10.0 - 4.0)
    for k, v in layer.state_dict().items():
        assert torch.equal(v, before[k]), k


def test_actnorm_min_std_floors_constant_channels():
    """A channel constant on the init batch (std 0) is scaled by 1/min_std, not by infinity; glow passes min_std on."""
    layer = ActNorm(2, min_std=1e-2).to(DT)
    x = _randn(8, 2, seed=25)
    x[:, 1] = 5.0
    y, logdet = layer(x)
    assert torch.isfinite(y).all() and torch.isfinite(logdet).all()
    torch.testing.assert_close(layer.log_scale[1], -torch.log(torch.tensor(1e-2, dtype=DT)), rtol=1e-14, atol=0)
    assert torch.equal(y[:, 1], torch.zeros(8, dtype=DT))
    flow = glow(4, 2, 8, min_std=0.25)
    assert [m.min_std for m in flow.modules() if isinstance(m, ActNorm)] == [0.25, 0.25]


def test_actnorm_no_init_in_eval_mode():
    layer = ActNorm(3).to(DT).eval()
    x = _randn(16, 3, seed=15) * 4.0 + 2.0
    y, logdet = layer(x)
    assert not layer.initialized
    assert torch.equal(y, x) and torch.equal(logdet, torch.zeros(16, dtype=DT))
    assert layer.loc.abs().max() == 0 and layer.log_scale.abs().max() == 0


def test_actnorm_single_sample_init_is_finite_and_inverse_needs_init():
    layer = ActNorm(3).to(DT)
    with pytest.raises(RuntimeError, match="first forward pass"):
        layer.inverse(_randn(2, 3, seed=16))  # decoding first would fix a different space than encoding later
    layer(_randn(1, 3, seed=17))  # one sample: std 0 per channel, floored by min_std rather than NaN
    assert torch.isfinite(layer.log_scale).all() and torch.isfinite(layer.loc).all()


def test_actnorm_checkpoint_is_not_reinitialized():
    """`initialized` is a buffer: a fresh module loading a trained checkpoint must not re-fit to its first batch."""
    trained = ActNorm(3).to(DT)
    trained(_randn(16, 3, 4, 4, seed=16) * 3.0 + 1.0)
    state = trained.state_dict()
    assert "initialized" in state and bool(state["initialized"])

    fresh = ActNorm(3).to(DT)
    fresh.load_state_dict(state)
    fresh.train()
    x = _randn(16, 3, 4, 4, seed=17) * 0.2 - 5.0
    y, _ = fresh(x)
    torch.testing.assert_close(fresh.loc, trained.loc, rtol=0, atol=0)
    torch.testing.assert_close(fresh.log_scale, trained.log_scale, rtol=0, atol=0)
    torch.testing.assert_close(y, trained(x)[0], rtol=0, atol=0)


def test_actnorm_matches_formula():
    layer = _perturb(ActNorm(3).to(DT), scale=0.5)
    x = _randn(4, 3, 2, 5, seed=18)
    y, logdet = layer(x)
    expected = (x + layer.loc.view(1, 3, 1, 1)) * layer.log_scale.exp().view(1, 3, 1, 1)
    torch.testing.assert_close(y, expected, rtol=1e-14, atol=1e-14)
    torch.testing.assert_close(logdet, (10 * layer.log_scale.sum()).expand(4), rtol=1e-14, atol=1e-14)


# InvertibleLinear
@pytest.mark.parametrize("channels", [1, 3, 8])
def test_invertible_linear_is_orthogonal_at_init(channels):
    torch.manual_seed(channels)
    w = InvertibleLinear(channels).weight.detach()  # built in float32, as a default-dtype model would be
    torch.testing.assert_close(w.T @ w, torch.eye(channels), rtol=0, atol=1e-5)
    layer = InvertibleLinear(channels)
    assert layer(torch.randn(2, channels, 3, 3))[1].abs().max() < 1e-5  # |det| = 1


def test_invertible_linear_matches_1x1_conv_and_solve():
    """Forward is a 1x1 convolution; the inverse must be W^-1 (not W^T, which agrees only while W is orthogonal),
    and stay accurate for an ill-conditioned W, where a solve is backward stable."""
    torch.manual_seed(0)
    layer = InvertibleLinear(4).to(DT)
    u, _, vh = torch.linalg.svd(_randn(4, 4, seed=19))
    with torch.no_grad():
        layer.weight.copy_(u @ torch.diag(torch.tensor([1e3, 1.0, 0.3, 1e-3], dtype=DT)) @ vh)  # cond 1e6
    x = _randn(3, 4, 5, 5, seed=20)
    y, logdet = layer(x)
    torch.testing.assert_close(y, torch.nn.functional.conv2d(x, layer.weight[:, :, None, None]), rtol=1e-13,
                               atol=1e-13)
    torch.testing.assert_close(logdet, torch.full((3,), 25 * torch.log(torch.tensor(0.3, dtype=DT)).item(), dtype=DT))
    # backward error of a solve: ~eps * cond(W) = 1e-10 relative, far below what W^T or a lost reshape would give
    assert _rel(layer.inverse(y), x) < 1e-8
    assert _rel(torch.einsum("ij,bj...->bi...", layer.weight.T, y), x) > 0.5  # W^T is not the inverse here


def test_permutation_is_an_exact_reordering_with_zero_logdet():
    torch.manual_seed(1)
    layer = Permutation(6)
    x = _randn(3, 6, seed=33)
    y, logdet = layer(x)
    assert sorted(layer.order.tolist()) == list(range(6)) and not torch.equal(layer.order, torch.arange(6))
    assert torch.equal(y, x[:, layer.order]) and torch.equal(layer.inverse(y), x)
    assert torch.equal(logdet, torch.zeros(3, dtype=DT))


def test_glow_mixing_choice():
    assert any(isinstance(m, Permutation) for m in glow(6, 2, 8, mixing="permutation").modules())
    assert not any(isinstance(m, InvertibleLinear) for m in glow(6, 2, 8, mixing="permutation").modules())
    with pytest.raises(ValueError, match="mixing"):
        glow(6, 2, 8, mixing="shuffle")


# Squeeze
def test_squeeze_pair_is_exact_permutation_with_zero_logdet():
    x = _randn(2, 3, 8, 6, seed=21)
    down, up = Squeeze(), Squeeze(reverse=True)
    y, ld = down(x)
    assert y.shape == (2, 12, 4, 3) and torch.equal(ld, torch.zeros(2, dtype=DT))
    assert torch.equal(y.flatten(1).sort(1).values, x.flatten(1).sort(1).values)  # a permutation of the entries
    assert torch.equal(down.inverse(y), x)
    z, ld = up(y)
    assert torch.equal(z, x) and torch.equal(ld, torch.zeros(2, dtype=DT))
    assert torch.equal(up.inverse(x), y)
    # space-to-depth keeps each 2x2 block's entries together at one position
    assert torch.equal(y[0, :, 0, 0].sort().values, x[0, :, :2, :2].flatten().sort().values)


# AffineCoupling
@pytest.mark.parametrize("kind, shape", [("mlp", (7,)), ("conv", (3, 4, 4))])
@pytest.mark.parametrize("transform_first", [True, False])
def test_coupling_keeps_half_and_matches_formula(kind, shape, transform_first):
    torch.manual_seed(0)
    layer = _perturb(_coupling(kind, transform_first, shape[0]).to(DT), scale=0.5)
    x = _randn(3, *shape, seed=22)
    y, logdet = layer(x)
    split = shape[0] // 2
    changed_idx, kept_idx = (slice(None, split), slice(split, None)) if transform_first else \
        (slice(split, None), slice(None, split))
    assert torch.equal(y[:, kept_idx], x[:, kept_idx])  # bit-for-bit
    shift, raw = layer.conditioner(x[:, kept_idx])
    s = 2.0 * torch.tanh(raw / 2.0)
    assert s.abs().max() > 0.05  # the perturbation reaches the scale
    torch.testing.assert_close(y[:, changed_idx], (x[:, changed_idx] + shift) * s.exp(), rtol=1e-14, atol=1e-14)
    torch.testing.assert_close(logdet, s.flatten(1).sum(1), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("bound", [0.5, 2.0])
@pytest.mark.parametrize("kind, shape", [("mlp", (6,)), ("conv", (2, 3, 3))])
def test_coupling_log_scale_is_bounded(kind, shape, bound):
    """Huge conditioner outputs saturate the log-scale at +-bound instead of overflowing exp."""
    torch.manual_seed(0)
    layer = _coupling(kind, True, shape[0], scale_bound=bound).to(DT)
    last = layer.conditioner.net[-1] if kind == "mlp" else layer.conditioner.out
    n_changed = (shape[0] // 2) * (9 if kind == "conv" else 1)
    x = _randn(4, *shape, seed=23)
    for sign in (1.0, -1.0):
        with torch.no_grad():
            last.bias.zero_()
            last.bias[last.bias.shape[0] // 2:] = sign * 1e6  # raw log-scale half
        y, logdet = layer(x)
        assert torch.isfinite(y).all()
        torch.testing.assert_close(logdet, torch.full((4,), sign * bound * n_changed, dtype=DT))
        torch.testing.assert_close(layer.inverse(y), x, rtol=0, atol=1e-12)
    # random huge weights, mixed signs: every element's log-scale within [-bound, bound]
    with torch.no_grad():
        last.weight.normal_(0.0, 1e4)
        last.bias.normal_(0.0, 1e4)
    y, logdet = layer(x)
    shift, raw = layer.conditioner(x[:, shape[0] // 2:])
    assert raw.abs().max() > 100 * bound
    assert torch.isfinite(y).all() and (logdet.abs() <= bound * n_changed + 1e-12).all()
    changed = x[:, : shape[0] // 2]
    log_scale = torch.log(y[:, : shape[0] // 2] / (changed + shift))
    assert log_scale.abs().max() <= bound + 1e-9


# ---------------------------------------------------------------------------------------------------------- float32
@pytest.mark.parametrize("name", ["flat16", "img3"])
def test_float32_inversion_error_is_small(name):
    """Rounding in float32 (eps 6e-8) is amplified by at most the conditioning of each layer: with couplings'
    log-scales bounded by 2 and weights perturbed by 0.1 the round trip measures ~1e-6 relative; 1e-4 leaves
    headroom and still catches an inverse that is only approximate (e.g. a fixed-point iteration, or W^T)."""
    flow, shape = _flow(name, 2, dtype=torch.float32)
    _perturb(flow, scale=0.1)
    x = torch.randn(8, *shape, generator=_gen(24))
    for mode in (0, 1):
        y = flow(x, mode)[0]
        assert _rel(y, x) > 0.1
        assert _rel(flow.inverse(y, mode), x) < 1e-4


def test_perturb_helper_touches_every_parameter():
    """Guard for _perturb: if a parameter kept its (zero) init, the tests above could miss a bug in it."""
    flow, _ = _flow("img3", 2)
    fresh = copy.deepcopy(flow)
    _perturb(flow)
    for (name, p), q in zip(flow.named_parameters(), fresh.parameters()):
        assert (p - q).abs().min() > 0, name
    assert isinstance(flow, Flow) and not flow.training
