"""Reference tests (float64) of the HIGGS part of shared/nn/quantization.py: the randomised Hadamard rotation, the
Gaussian grids (Lloyd-Max, CLVQ, NF, uniform), grid quantization and the dynamic-programming bit allocation."""
import itertools
import math

import pytest
import torch

from shared.nn import quantization as Q

D = torch.float64


def sylvester(n):
    h = torch.ones(1, 1, dtype=D)
    while h.shape[0] < n:
        h = torch.cat((torch.cat((h, h), 1), torch.cat((h, -h), 1)), 0)
    return h


@pytest.mark.parametrize("n", [1, 2, 8, 64])
def test_fwht_is_the_orthonormal_sylvester_matrix(n):
    x = torch.randn(5, n, generator=torch.Generator().manual_seed(n), dtype=D)
    assert torch.allclose(Q.fwht(x), x @ sylvester(n).T / math.sqrt(n), atol=1e-13)


def test_rht_is_orthogonal_and_inverts_exactly():
    n = 128
    signs = Q.random_signs(n, 3)
    assert set(signs.tolist()) == {-1.0, 1.0}
    m = Q.rht(torch.eye(n, dtype=D), signs)  # rows: images of the unit vectors, i.e. the matrix transposed
    assert torch.allclose(m @ m.T, torch.eye(n, dtype=D), atol=1e-13)
    x = torch.randn(7, n, generator=torch.Generator().manual_seed(0), dtype=D)
    y = Q.rht(x, signs)
    assert torch.allclose(Q.inverse_rht(y, signs), x, atol=1e-13)
    assert torch.allclose(y.norm(dim=1), x.norm(dim=1), rtol=1e-13)
    with pytest.raises(ValueError):
        Q.fwht(torch.zeros(3, 12, dtype=D))


def test_lloyd_max_matches_the_known_gaussian_quantizers():
    """Max (1960) / Lloyd (1982): MSE of the optimal 2-, 4-, 8- and 16-level quantizers of N(0, 1)."""
    known = {2: 0.3634, 4: 0.1175, 8: 0.03455, 16: 0.009497}
    for n, mse in known.items():
        grid = Q.lloyd_max_grid(n)
        assert Q.gaussian_cell_mse(grid) == pytest.approx(mse, rel=2e-3)
        assert torch.allclose(grid, -grid.flip(0), atol=1e-10)  # symmetric
    assert Q.lloyd_max_grid(2)[1] == pytest.approx(math.sqrt(2 / math.pi), rel=1e-10)


def test_gaussian_cell_mse_agrees_with_monte_carlo():
    grid = Q.nf_grid(3) * 2.1
    x = torch.randn(400_000, generator=torch.Generator().manual_seed(0), dtype=D)
    mc = float(((Q.nearest_point(x, grid) - x) ** 2).mean())
    assert Q.gaussian_cell_mse(grid) == pytest.approx(mc, rel=0.01)


@pytest.mark.parametrize("bits", [2, 3, 4])
def test_lloyd_max_beats_uniform_and_nf_at_any_scale(bits):
    """The Lloyd-Max grid's MSE on N(0, 1) is below that of the uniform and NF grids at the same number of points,
    each at its best scale (scanned)."""
    lm = Q.gaussian_cell_mse(Q.lloyd_max_grid(2 ** bits))
    for grid in (Q.uniform_grid(bits), Q.nf_grid(bits)):
        best = min(Q.gaussian_cell_mse(grid * s) for s in torch.linspace(0.3, 6, 300).tolist())
        assert lm < best


def test_nf4_is_qlora_normal_float():
    g = Q.nf_grid(4)
    assert len(g) == 16 and g[0] == -1 and g[-1] == 1 and (g == 0).sum() == 1
    assert float(g[8]) == pytest.approx(0.0796, abs=2e-4) and float(g[1]) == pytest.approx(-0.6962, abs=2e-4)


def test_clvq_grid_beats_the_scalar_grid_in_two_dimensions():
    x = torch.randn(50_000, 2, generator=torch.Generator().manual_seed(1), dtype=D)
    g2 = Q.clvq_grid(64, 2, samples=1 << 15, iters=40)
    mse2 = float(((Q.nearest_point(x, g2) - x) ** 2).mean())
    assert mse2 < Q.gaussian_cell_mse(Q.lloyd_max_grid(8))  # same 3 bits per weight


def grids():
    return [Q.uniform_grid(3), Q.nf_grid(4), Q.lloyd_max_grid(8), Q.clvq_grid(16, 2, samples=4096, iters=10)]


@pytest.mark.parametrize("k", range(4))
def test_quantize_is_idempotent_for_every_grid(k):
    grid = grids()[k]
    w = torch.randn(16, 64, generator=torch.Generator().manual_seed(k), dtype=D)
    signs = Q.random_signs(32, 1)
    if k < 2:  # the [-1, 1] grids, absmax-scaled: the group's largest entry stays a grid point
        q = Q.absmax_quantize(w, grid, 32)
        assert torch.allclose(Q.absmax_quantize(q, grid, 32), q, atol=1e-12)
        # every quantized value is a grid point times its group's scale
        s = w.reshape(-1, 32).abs().amax(1, keepdim=True)
        assert torch.allclose(Q.nearest_point(q.reshape(-1, 32) / s, grid) * s, q.reshape(-1, 32), atol=1e-12)
    for rotate in (True, False):  # with the stored scales, quantizing the dequantized weights is the identity
        q, s = Q.higgs_quantize(w, grid, 32, signs, rotate=rotate, return_scale=True)
        assert torch.allclose(Q.higgs_quantize(q, grid, 32, signs, scale=s, rotate=rotate), q, atol=1e-10)


def test_nearest_point_is_the_nearest():
    grid = Q.nf_grid(3)
    x = torch.linspace(-1.3, 1.3, 1001, dtype=D)
    q = Q.nearest_point(x, grid)
    assert torch.allclose((q - x).abs(), (x[:, None] - grid[None]).abs().min(1).values)
    g2 = Q.clvq_grid(8, 2, samples=2048, iters=5)
    y = torch.randn(100, 2, dtype=D)
    assert torch.allclose(((Q.nearest_point(y, g2) - y) ** 2).sum(1), torch.cdist(y, g2).min(1).values ** 2)


def test_higgs_error_on_gaussian_weights_is_the_grid_mse():
    w = torch.randn(256, 1024, generator=torch.Generator().manual_seed(2), dtype=D)
    grid = Q.lloyd_max_grid(16)
    t2 = Q.relative_error(w, Q.higgs_quantize(w, grid, 1024))
    assert t2 == pytest.approx(Q.gaussian_cell_mse(grid), rel=0.03)


def brute_force(alphas, errors, costs, budget):
    best = (math.inf, None)
    for choice in itertools.product(*[range(len(c)) for c in costs]):
        if sum(c[j] for c, j in zip(costs, choice)) <= budget:
            best = min(best, (sum(a * e[j] for a, e, j in zip(alphas, errors, choice)), choice))
    return best


@pytest.mark.parametrize("seed", range(8))
def test_dp_matches_brute_force_and_respects_the_budget(seed):
    gen = torch.Generator().manual_seed(seed)
    layers, opts = 5, 4
    alphas = (torch.rand(layers, generator=gen, dtype=D) * 10).tolist()
    errors = torch.sort(torch.rand(layers, opts, generator=gen, dtype=D), dim=1, descending=True).values.tolist()
    costs = [sorted(torch.randint(1, 9, (opts,), generator=gen).tolist()) for _ in range(layers)]
    budget = int(torch.randint(sum(min(c) for c in costs), sum(max(c) for c in costs) + 1, (1,), generator=gen))
    choice, value = Q.dp_allocate(alphas, errors, costs, budget)
    ref, _ = brute_force(alphas, errors, costs, budget)
    assert value == pytest.approx(ref, rel=1e-12)
    assert sum(c[j] for c, j in zip(costs, choice)) <= budget
    assert value == pytest.approx(sum(a * e[j] for a, e, j in zip(alphas, errors, choice)), rel=1e-12)
    g_choice, g_value = Q.greedy_allocate(alphas, errors, costs, budget)
    assert sum(c[j] for c, j in zip(costs, g_choice)) <= budget and g_value >= value - 1e-12


def test_dp_raises_when_nothing_fits():
    with pytest.raises(ValueError):
        Q.dp_allocate([1.0], [[1.0, 0.5]], [[3, 4]], 2)
