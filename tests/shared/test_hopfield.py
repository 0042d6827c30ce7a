"""shared.nn.hopfield against its formulas: the update is softmax attention, the energy never increases (float64),
the three kinds of fixed points, the one-step bound, and the three layers (heads, masks, the lookup)."""
import math

import pytest
import torch

from shared.nn import hopfield as hf


def patterns(n=40, d=16, seed=0):
    return torch.randn(n, d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def test_update_is_softmax_attention():
    X, xi = patterns(), patterns(5, seed=1)
    beta = 0.3
    by_hand = torch.stack([sum(torch.softmax(beta * X @ s, 0)[i] * X[i] for i in range(len(X))) for s in xi])
    assert torch.allclose(hf.hopfield_update(X, xi, beta), by_hand, atol=1e-13)
    assert torch.allclose(hf.softmax_attention(xi, X, X, beta), by_hand, atol=1e-13)


def test_energy_formula_and_descent():
    X, xi = patterns(), patterns(8, seed=2)
    beta = 0.5
    M2 = (X * X).sum(1).max()
    by_hand = torch.stack([-torch.log(torch.exp(beta * X @ s).sum()) / beta + 0.5 * s @ s
                           + math.log(len(X)) / beta + 0.5 * M2 for s in xi])
    assert torch.allclose(hf.hopfield_energy(X, xi, beta), by_hand, atol=1e-12)
    for beta in (0.05, 0.5, 5.0):
        state, energy = xi, hf.hopfield_energy(X, xi, beta)
        for _ in range(30):
            state = hf.hopfield_update(X, state, beta)
            new = hf.hopfield_energy(X, state, beta)
            assert (new <= energy + 1e-12).all()
            energy = new
        assert (energy >= -1e-9).all()  # E is bounded below by 0 for this form


def test_three_kinds_of_fixed_points():
    # global: small beta, every start ends at one point near the mean of the patterns
    X = patterns() + 2.0
    fixed, _ = hf.iterate_to_fixed_point(X, patterns(6, seed=3), 1e-3)
    assert (fixed - fixed[0]).abs().max() < 1e-8 and (fixed[0] - X.mean(0)).norm() < 0.1
    # single pattern: well-separated patterns, large beta, a start near x_i ends at x_i
    Y = 3 * torch.eye(8, dtype=torch.float64)
    fixed, _ = hf.iterate_to_fixed_point(Y, Y + 0.3, 5.0)
    assert (fixed - Y).abs().max() < 1e-6
    assert (hf.mass_count(torch.softmax(5.0 * fixed @ Y.T, -1)) == 1).all()
    # metastable: two near-identical patterns and a far one; from the pair the state averages the pair
    Z = torch.tensor([[1.0, 0, 0], [1.0, 0.05, 0], [0, 0, 1.0]], dtype=torch.float64)
    fixed, _ = hf.iterate_to_fixed_point(Z, Z[:1], 10.0)
    assert hf.mass_count(torch.softmax(10.0 * fixed @ Z.T, -1)).item() == 2
    assert (fixed[0] - Z[:2].mean(0)).norm() < 0.01


def test_separation_and_one_step_bound():
    X = torch.nn.functional.normalize(patterns(30, 20), dim=1)
    G = X @ X.T
    delta = hf.separation(X)
    assert torch.allclose(delta[0], 1 - G[0, 1:].max())
    for beta in (1.0, 10.0, 100.0):
        err = (hf.hopfield_update(X, X, beta) - X).norm(dim=1)
        assert (err <= hf.one_step_bound(X, beta) + 1e-12).all()


def test_mass_count():
    p = torch.tensor([[0.95, 0.05, 0.0], [0.5, 0.3, 0.2], [1 / 3, 1 / 3, 1 / 3]])
    assert hf.mass_count(p).tolist() == [1, 3, 3]


@pytest.mark.parametrize("steps", [0, 2])
def test_bare_layer_is_the_update(steps):
    X, xi = patterns(12, 8), patterns(3, 8, seed=4)
    layer = hf.Hopfield(8, scaling=0.7, update_steps_max=steps, projections=False, normalize_stored_pattern=False,
                        normalize_state_pattern=False, normalize_pattern_projection=False).double()
    assert torch.allclose(layer(X[None], xi[None])[0], hf.hopfield_update(X, xi, 0.7, steps + 1), atol=1e-13)


def test_layer_defaults_heads_and_mask():
    torch.manual_seed(0)
    layer = hf.Hopfield(12, hidden_size=4, num_heads=3).double()
    assert layer.beta == 0.5 and isinstance(layer.norm_stored, torch.nn.LayerNorm)
    x = patterns(10, 12).reshape(2, 5, 12)
    mask = torch.tensor([[True] * 3 + [False] * 2, [True] * 5])
    out = layer(x, mask=mask)
    garbage = x.clone()
    garbage[0, 3:] = 1e3  # masked stored patterns must not matter
    assert out.shape == (2, 5, 12) and torch.allclose(layer(garbage, x, x * 1, mask=mask)[0], out[0], atol=1e-12)


def test_pooling_and_lookup_layers():
    torch.manual_seed(0)
    pool = hf.HopfieldPooling(10, hidden_size=6, num_heads=2, output_size=7, quantity=3)
    x = torch.randn(4, 9, 10)
    assert pool(x).shape == (4, 21)
    assert torch.allclose(pool(x), pool(x[:, torch.randperm(9)]), atol=1e-6)  # a set: order does not matter
    look = hf.HopfieldLayer(10, 5, quantity=6)
    by_hand = torch.softmax(x @ look.keys.T / math.sqrt(10), -1) @ look.values
    assert torch.allclose(look(x), by_hand, atol=1e-6)


def test_registered_family():
    from shared.nn import layer_registry as registry
    assert "hopfield" in registry.families()
    assert registry.count("hopfield", 16, 36) == {"params": 64 * 52, "macs": 64 * 52}
    assert registry.count("hopfield", 16, 32, "block") == {"params": 1024, "macs": 1024}
