"""gptq_babai: reference tests of shared/nn/quantization.py in float64 (GPTQ back to front = Babai's nearest plane on
random lattices, bit for bit; Babai's bound without clipping; lazy blocks; idempotent grid) and the MLP's layer
inputs."""
import pytest
import torch

from replications.gptq_babai import common, model
from shared.nn import quantization as Q

D = torch.float64


def random_problem(n=24, rows=16, m=96, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(m, n, generator=gen, dtype=D) @ torch.randn(n, n, generator=gen, dtype=D)
    return torch.randn(rows, n, generator=gen, dtype=D), Q.hessian(x)


@pytest.mark.parametrize("seed", range(5))
def test_babai_on_a_random_lattice_is_gptq_back_to_front(seed):
    """A random basis B and targets t: Babai's coefficients equal GPTQ's codes run in reverse order on y = B^-1 t with
    H = B^T B, unit scale and no clipping, bit for bit."""
    gen = torch.Generator().manual_seed(seed)
    n = 12
    b = torch.randn(n, n, generator=gen, dtype=D)
    t = 3 * torch.randn(7, n, generator=gen, dtype=D)
    c = Q.babai_nearest_plane(b, t)
    y = torch.linalg.solve(b, t.T).T
    one, zero = torch.ones(7, 1, dtype=D), torch.zeros(7, 1, dtype=D)
    z, _ = Q.gptq(y, b.T @ b, one, zero, 0, order=torch.arange(n - 1, -1, -1), clip=False)
    assert torch.equal(c, z)
    # Babai's bound on that lattice: |t - Bc|^2 <= 1/4 sum |b~_i|^2
    g = Q.gram_schmidt(b)
    assert ((t - c @ b.T) ** 2).sum(1).max() <= 0.25 * (g ** 2).sum() + 1e-12


def test_gram_schmidt_is_orthogonal_and_keeps_the_flag():
    b = torch.randn(6, 6, generator=torch.Generator().manual_seed(1), dtype=D)
    g = Q.gram_schmidt(b)
    off = g.T @ g - torch.diag((g ** 2).sum(0))
    assert off.abs().max() < 1e-10
    r = torch.linalg.qr(b).R
    assert torch.allclose((g ** 2).sum(0), r.diagonal() ** 2, rtol=1e-10)


@pytest.mark.parametrize("kind", Q.ORDERS)
@pytest.mark.parametrize("clip", [False, True])
def test_gptq_in_any_order_is_babai_on_the_reversed_basis(kind, clip):
    w, h = random_problem()
    s, zp, maxq = Q.minmax_grid(w, 3)
    order = Q.column_order(h, kind)
    z, q = Q.gptq(w, h, s, zp, maxq, order=order, clip=clip)
    assert torch.equal(z, Q.babai_layer(w, h, s, zp, maxq, order=order.flip(0), clip=clip))
    assert torch.equal(z, Q.gptq(w, h, s, zp, maxq, order=order, clip=clip, block=5)[0])  # lazy blocks
    if clip:
        assert z.min() >= 0 and z.max() <= maxq
    else:
        assert (Q.layer_error(w, q, h) <= Q.babai_bound(h, s, order) * (1 + 1e-12)).all()


def test_bound_pivots_are_the_gram_schmidt_norms_of_the_reversed_basis():
    w, h = random_problem()
    order = Q.column_order(h, "act")
    a = torch.linalg.cholesky(h[order.flip(0)][:, order.flip(0)]).T
    g = Q.gram_schmidt(a)
    s = torch.full((1, 1), 0.3, dtype=D)
    assert torch.allclose(Q.babai_bound(h, s, order), 0.25 * 0.09 * (g ** 2).sum(), rtol=1e-10)


def test_clipping_can_break_the_bound():
    w, h = random_problem(seed=3)
    s, zp, maxq = Q.minmax_grid(w, 2, shrink=0.3)
    _, q = Q.gptq(w, h, s, zp, maxq, clip=True)
    assert (Q.layer_error(w, q, h) > Q.babai_bound(h, s)).any()


def test_grid_is_idempotent_and_rtn_rounds_to_nearest():
    w, _ = random_problem()
    s, zp, maxq = Q.minmax_grid(w, 4)
    z, q = Q.rtn(w, s, zp, maxq)
    assert torch.equal(Q.rtn(q, s, zp, maxq)[1], q)
    assert ((w - q).abs() <= s / 2 + 1e-12).all()  # min-max grid covers every weight: nothing clips in RTN
    assert z.min() >= 0 and z.max() <= maxq


def test_greedy_order_is_a_permutation_and_white_h_gives_rtn():
    w, h = random_problem()
    assert sorted(Q.column_order(h, "greedy").tolist()) == list(range(h.shape[0]))
    s, zp, maxq = Q.minmax_grid(w, 3)
    eye = torch.eye(w.shape[1], dtype=D)
    assert torch.equal(Q.gptq(w, eye, s, zp, maxq)[0], Q.rtn(w, s, zp, maxq)[0])


def test_layer_inputs_and_concordance():
    torch.manual_seed(0)
    net = model.build({"d_input": 10, "hidden": [6, 5], "n_classes": 3}).double()
    x = torch.randn(4, 10, dtype=D)
    xs = net.layer_inputs(x)
    assert [t.shape[1] for t in xs] == [10, 6, 5]
    assert torch.allclose(net.layers[2](xs[2]), net(x))
    assert common.concordance([1, 2, 3], [1, 2, 3]) == 1 and common.concordance([1, 2, 3], [3, 2, 1]) == 0
