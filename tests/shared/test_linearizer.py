"""shared.nn.linearizer: the induced vector space is a vector space, f = g_out^-1(A g_in(.)) is linear in it, and the
linear algebra on A (compose, power, transpose, pinv, svd, projector) carries over to f as maps on elements.

All flows are random Glow flows with every parameter pushed away from its (near-identity) init, in float64; a
fresh flow is close to an affine map, under which ordinary and induced linearity nearly coincide and the controls
below (checks that must fail) would not fail. Equalities go through g and g^-1 several times, so they hold to
float64 rounding amplified by the flows' conditioning: 1e-10 relative leaves >100x headroom over what is measured.
"""
import copy

import pytest
import torch

from shared.nn.invertible import glow, perturbed
from shared.nn.linearizer import InducedSpace, Linearizer


DT = torch.float64
TOL = 1e-10  # induced-linear-algebra identities, relative
FAIL = 1e-2  # a control must miss by more than this, relative


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _randn(*shape, seed):
    return torch.randn(*shape, generator=_gen(seed), dtype=DT)


def _flow(shape, *, modes=0, seed=0, scale=0.1):
    """A random perturbed Glow flow on samples of `shape` ((D,) flat or (C, H, W) image), eval mode."""
    image = len(shape) == 3
    torch.manual_seed(seed)
    flow = glow(shape[0], 2, 8 if image else 16, image=image, squeeze=image, modes=modes,
                cond_dim=4 if modes else 0).to(DT)
    return perturbed(flow, 1000 + seed, scale)


def _shared_pair():
    flow = _flow((6,), modes=2)
    return InducedSpace(flow, (6,), 0), InducedSpace(flow, (6,), 1)


# name -> () -> (space_in, space_out)
PAIRS = {
    "shared_modes": _shared_pair,  # one flow, mode 0 -> mode 1
    "separate_flows": lambda: (InducedSpace(_flow((6,), seed=1), (6,)), InducedSpace(_flow((6,), seed=2), (6,))),
    "rect_5_to_8": lambda: (InducedSpace(_flow((5,), seed=3), (5,)), InducedSpace(_flow((8,), seed=4), (8,))),
    "image_16_to_6": lambda: (InducedSpace(_flow((1, 4, 4), seed=5), (1, 4, 4)),
                              InducedSpace(_flow((6,), seed=6), (6,))),
}

# name -> () -> space
SPACES = {
    "mode0": lambda: _shared_pair()[0],
    "mode1": lambda: _shared_pair()[1],
    "plain": lambda: InducedSpace(_flow((7,), seed=7), (7,)),
    "image": lambda: InducedSpace(_flow((3, 4, 4), seed=8), (3, 4, 4)),
}


def _elem(space, batch, seed, scale=1.0):
    return scale * _randn(batch, *space.shape, seed=seed)


def _rel(a, b):
    return ((a - b).norm() / b.norm()).item()


def _same(a, b, tol=TOL):
    """max |a - b| within tol, relative to the larger of 1 and max |b| (for elements that may be near 0)."""
    err = (a - b).abs().max().item()
    assert err <= tol * max(1.0, b.abs().max().item()), err


def _matrix(rows, cols, seed, rank=None):
    """Random (rows, cols), entries ~ 1/sqrt(cols) so the coordinates stay O(1); exactly of `rank` if given."""
    if rank is None:
        return _randn(rows, cols, seed=seed) / cols ** 0.5
    return _randn(rows, rank, seed=seed) @ _randn(rank, cols, seed=seed + 1) / cols


def _linearizer(pair, seed=10, rank=None):
    s_in, s_out = PAIRS[pair]()
    return Linearizer(_matrix(s_out.dim, s_in.dim, seed, rank), s_in, s_out)


# --------------------------------------------------------------------------------------------- InducedSpace
@pytest.mark.parametrize("name", list(SPACES))
def test_vector_space_axioms(name):
    s = SPACES[name]()
    a, b, c = _elem(s, 4, 1), _elem(s, 4, 2), _elem(s, 4, 3)
    zero = s.zero(4)
    _same(s.add(a, b), s.add(b, a))
    _same(s.add(s.add(a, b), c), s.add(a, s.add(b, c)))
    _same(s.add(a, zero), a)
    _same(s.add(a, s.neg(a)), zero)
    _same(s.scale(1.0, a), a)
    _same(s.scale(2.5, s.add(a, b)), s.add(s.scale(2.5, a), s.scale(2.5, b)))
    _same(s.scale(2.5 - 0.7, a), s.add(s.scale(2.5, a), s.scale(-0.7, a)))
    _same(s.scale(2.5, s.scale(-0.7, a)), s.scale(2.5 * -0.7, a))
    _same(s.scale(0.0, a), zero)
    # per-element scalars act row by row
    cs = torch.tensor([2.0, -1.0, 0.5, 3.0], dtype=DT)
    _same(s.scale(cs, a), torch.cat([s.scale(c_i.item(), a[i:i + 1]) for i, c_i in enumerate(cs)]))
    # control: the structure is not Euclidean (else every test here would pass for a trivial flow)
    assert _rel(s.add(a, b), a + b) > FAIL and _rel(s.scale(2.5, a), 2.5 * a) > FAIL
    assert zero.abs().max() > FAIL


@pytest.mark.parametrize("name", list(SPACES))
def test_inner_product_and_norm(name):
    s = SPACES[name]()
    a, b, c = _elem(s, 5, 4), _elem(s, 5, 5), _elem(s, 5, 6)
    torch.testing.assert_close(s.inner(a, b), s.inner(b, a), rtol=0, atol=0)
    assert (s.inner(a, a) > 0).all()
    torch.testing.assert_close(s.norm(a) ** 2, s.inner(a, a), rtol=1e-13, atol=0)
    assert s.norm(s.zero(3)).abs().max() < 1e-12
    # bilinear in the induced operations, not in + and *
    torch.testing.assert_close(s.inner(s.add(s.scale(1.5, a), b), c), 1.5 * s.inner(a, c) + s.inner(b, c),
                               rtol=TOL, atol=TOL)


def test_zero_follows_dtype_and_batch():
    s = SPACES["plain"]()
    z = s.zero(3)
    assert z.shape == (3, 7) and z.dtype == DT
    torch.testing.assert_close(s.encode(z), torch.zeros(3, 7, dtype=DT), rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------------- linearity
def _superposition_error(f, s_in, s_out, x1, x2, c1, c2):
    lhs = f(s_in.add(s_in.scale(c1, x1), s_in.scale(c2, x2)))
    rhs = s_out.add(s_out.scale(c1, f(x1)), s_out.scale(c2, f(x2)))
    return _rel(lhs, rhs)


@pytest.mark.parametrize("pair", list(PAIRS))
def test_superposition_holds_in_induced_spaces_only(pair):
    f = _linearizer(pair)
    s_in, s_out = f.space_in, f.space_out
    x1, x2 = _elem(s_in, 6, 11), _elem(s_in, 6, 12)
    c1, c2 = 1.7, -0.8
    assert _superposition_error(f, s_in, s_out, x1, x2, c1, c2) < TOL
    # per-element coefficients as well
    cs1, cs2 = _randn(6, seed=13), _randn(6, seed=14)
    assert _superposition_error(f, s_in, s_out, x1, x2, cs1, cs2) < TOL

    # control 1: f is not linear under Euclidean + and *
    euclid = _rel(f(c1 * x1 + c2 * x2), c1 * f(x1) + c2 * f(x2))
    assert euclid > FAIL, euclid

    # control 2: a map of the same form with a nonlinearity between the flows is not linear in the induced spaces
    def not_linear(x):
        return s_out.decode(torch.tanh(s_in.encode(x)) @ f.matrix.T)

    assert _superposition_error(not_linear, s_in, s_out, x1, x2, c1, c2) > FAIL


@pytest.mark.parametrize("pair", list(PAIRS))
def test_maps_zero_to_zero(pair):
    f = _linearizer(pair)
    _same(f(f.space_in.zero(2)), f.space_out.zero(2), tol=1e-12)


@pytest.mark.parametrize("pair", list(PAIRS))
def test_output_shape_is_output_space_shape(pair):
    f = _linearizer(pair)
    assert f(_elem(f.space_in, 3, 15)).shape == (3, *f.space_out.shape)


# --------------------------------------------------------------------------------------------- compose / power
def _chain(kind):
    """Three spaces a -> b -> c that compose."""
    if kind == "shared_modes":
        s0, s1 = _shared_pair()
        return s0, s1, InducedSpace(s0.flow, s0.shape, 0)  # a new object equal to s0
    return (InducedSpace(_flow((5,), seed=20), (5,)), InducedSpace(_flow((8,), seed=21), (8,)),
            InducedSpace(_flow((1, 4, 4), seed=22), (1, 4, 4)))


@pytest.mark.parametrize("kind", ["shared_modes", "three_flows"])
def test_compose_equals_applying_both(kind):
    a, b, c = _chain(kind)
    f1 = Linearizer(_matrix(b.dim, a.dim, 30), a, b)
    f2 = Linearizer(_matrix(c.dim, b.dim, 31), InducedSpace(b.flow, b.shape, b.mode), c)  # equal, not identical
    h = f2.compose(f1)
    assert h.space_in == a and h.space_out == c and h.matrix.shape == (c.dim, a.dim)
    x = _elem(a, 4, 32)
    assert _rel(h(x), f2(f1(x))) < TOL


def test_compose_rejects_mismatched_spaces():
    s0, s1 = _shared_pair()
    f1 = Linearizer(_matrix(6, 6, 33), s0, s1)  # lands in mode 1
    with pytest.raises(ValueError, match="same flow and mode"):
        Linearizer(_matrix(6, 6, 34), s0).compose(f1)  # expects mode 0
    twin = InducedSpace(copy.deepcopy(s1.flow), s1.shape, 1)  # same weights and mode, but another flow
    with pytest.raises(ValueError, match="same flow and mode"):
        Linearizer(_matrix(6, 6, 35), twin).compose(f1)
    other = InducedSpace(_flow((6,), seed=36), (6,))  # another flow, no modes
    with pytest.raises(ValueError):
        Linearizer(_matrix(6, 6, 37), other).compose(f1)


@pytest.mark.parametrize("name", ["mode1", "plain", "image"])
def test_power_equals_repeated_application(name):
    s = SPACES[name]()
    f = Linearizer(_matrix(s.dim, s.dim, 40), s)
    x = _elem(s, 3, 41)
    assert _rel(f.power(3)(x), f(f(f(x)))) < TOL
    assert _rel(f.power(1)(x), f(x)) < TOL
    _same(f.power(0)(x), x)


@pytest.mark.parametrize("pair", ["shared_modes", "separate_flows", "rect_5_to_8"])
def test_power_rejects_two_spaces(pair):
    f = _linearizer(pair)
    with pytest.raises(ValueError, match="same space"):
        f.power(2)


# --------------------------------------------------------------------------------------------- transpose / pinv
@pytest.mark.parametrize("pair", list(PAIRS))
def test_transpose_is_adjoint_under_induced_inner_products(pair):
    f = _linearizer(pair)
    ft = f.transpose()
    assert ft.space_in == f.space_out and ft.space_out == f.space_in
    x, y = _elem(f.space_in, 5, 50), _elem(f.space_out, 5, 51)
    lhs, rhs = f.space_out.inner(f(x), y), f.space_in.inner(x, ft(y))
    torch.testing.assert_close(lhs, rhs, rtol=TOL, atol=TOL)
    # control: not an adjoint for the Euclidean inner product of the elements themselves
    euclid_l, euclid_r = (f(x) * y).flatten(1).sum(1), (x * ft(y)).flatten(1).sum(1)
    assert _rel(euclid_l, euclid_r) > FAIL


@pytest.mark.parametrize("pair", list(PAIRS))
def test_pinv_satisfies_penrose_identities(pair):
    """A of rank 3 (of 5..16): the four Moore-Penrose conditions, checked on elements."""
    f = _linearizer(pair, rank=3)
    assert torch.linalg.matrix_rank(f.matrix) == 3
    fp = f.pinv()
    s_in, s_out = f.space_in, f.space_out
    assert fp.space_in == s_out and fp.space_out == s_in
    x1, x2 = _elem(s_in, 4, 60), _elem(s_in, 4, 61)
    y1, y2 = _elem(s_out, 4, 62), _elem(s_out, 4, 63)
    assert _rel(f(fp(f(x1))), f(x1)) < TOL  # f f+ f = f
    assert _rel(fp(f(fp(y1))), fp(y1)) < TOL  # f+ f f+ = f+
    torch.testing.assert_close(s_out.inner(f(fp(y1)), y2), s_out.inner(y1, f(fp(y2))), rtol=TOL, atol=TOL)
    torch.testing.assert_close(s_in.inner(fp(f(x1)), x2), s_in.inner(x1, fp(f(x2))), rtol=TOL, atol=TOL)
    # controls: rank deficiency is real (f+ f is not the identity), and the transpose is no pseudo-inverse
    assert _rel(fp(f(x1)), x1) > FAIL
    ft = f.transpose()
    assert _rel(f(ft(f(x1))), f(x1)) > FAIL


def test_pinv_of_invertible_map_is_its_inverse():
    s_in, s_out = PAIRS["separate_flows"]()
    f = Linearizer(_matrix(6, 6, 64) + torch.eye(6, dtype=DT), s_in, s_out)
    x = _elem(s_in, 4, 65)
    assert _rel(f.pinv()(f(x)), x) < TOL


# --------------------------------------------------------------------------------------------- svd
@pytest.mark.parametrize("rank", [None, 3])
@pytest.mark.parametrize("pair", list(PAIRS))
def test_svd_maps_right_vectors_to_scaled_left_vectors(pair, rank):
    f = _linearizer(pair, rank=rank)
    left, values, right = f.svd()
    k = min(f.space_in.dim, f.space_out.dim)
    assert left.shape == (k, *f.space_out.shape) and right.shape == (k, *f.space_in.shape) and values.shape == (k,)
    nonzero = values > 1e-10 * values[0]
    assert nonzero.sum() == (k if rank is None else rank)
    lhs, rhs = f(right[nonzero]), f.space_out.scale(values[nonzero], left[nonzero])
    for i in range(int(nonzero.sum())):
        assert _rel(lhs[i], rhs[i]) < TOL, i
    # the singular vectors are orthonormal under the induced inner products
    for space, vecs in ((f.space_out, left), (f.space_in, right)):
        gram = space.encode(vecs) @ space.encode(vecs).T
        torch.testing.assert_close(gram, torch.eye(k, dtype=DT), rtol=0, atol=1e-12)
    # control: Euclidean scaling of the left vectors is not f(right)
    assert _rel(lhs, values[nonzero].view(-1, *[1] * len(f.space_out.shape)) * left[nonzero]) > FAIL


# --------------------------------------------------------------------------------------------- projector
@pytest.mark.parametrize("dim, rank", [(6, 2), (16, 5), (48, 1)])
def test_projector_matrix_is_orthogonal_projection(dim, rank):
    basis = _randn(dim, rank, seed=70) * 10.0  # scale must not matter
    p = Linearizer.projector(basis)
    torch.testing.assert_close(p @ p, p, rtol=0, atol=1e-12)
    torch.testing.assert_close(p, p.T, rtol=0, atol=1e-12)
    torch.testing.assert_close(p @ basis, basis, rtol=0, atol=1e-12 * basis.abs().max().item())  # range = span
    torch.testing.assert_close(torch.trace(p), torch.tensor(float(rank), dtype=DT), rtol=0, atol=1e-12)


def test_projector_is_differentiable_in_basis():
    basis = _randn(5, 2, seed=71).requires_grad_()
    assert torch.autograd.gradcheck(lambda b: Linearizer.projector(b), (basis,))


INPUTS = {
    "gaussian": lambda shape, seed: _randn(4, *shape, seed=seed),
    "uniform": lambda shape, seed: torch.rand(4, *shape, generator=_gen(seed), dtype=DT) * 2.0 - 1.0,
    "large": lambda shape, seed: 30.0 * _randn(4, *shape, seed=seed),
}


@pytest.mark.parametrize("inputs", list(INPUTS))
@pytest.mark.parametrize("name", ["mode0", "plain", "image"])
def test_projector_linearizer_is_idempotent(name, inputs):
    s = SPACES[name]()
    rank = max(1, s.dim // 3)
    p = Linearizer.projector(_randn(s.dim, rank, seed=72))
    f = Linearizer(p, s)
    x = INPUTS[inputs](s.shape, 73)
    fx = f(x)
    assert _rel(f(fx), fx) < TOL
    assert _rel(fx, x) > FAIL  # it does project (x is not already in the range)
    # control: a perturbed projector is not idempotent
    r = _randn(s.dim, s.dim, seed=74)
    g = Linearizer(p + 0.1 * (r + r.T) / 2, s)
    gx = g(x)
    assert _rel(g(gx), gx) > FAIL


# --------------------------------------------------------------------------------------------- shape checks
@pytest.mark.parametrize("pair", list(PAIRS))
def test_wrong_matrix_shape_raises(pair):
    s_in, s_out = PAIRS[pair]()
    for shape in [(s_out.dim, s_in.dim + 1), (s_out.dim + 1, s_in.dim), (s_out.dim, s_out.dim * s_in.dim)]:
        with pytest.raises(ValueError, match="does not map"):
            Linearizer(torch.zeros(*shape, dtype=DT), s_in, s_out)
    if s_in.dim != s_out.dim:
        with pytest.raises(ValueError, match="does not map"):
            Linearizer(torch.zeros(s_in.dim, s_out.dim, dtype=DT), s_in, s_out)  # transposed
        with pytest.raises(ValueError, match="does not map"):
            Linearizer(torch.zeros(s_out.dim, s_in.dim, dtype=DT), s_in)  # one space: square expected
