"""shared.nn.group_analysis and shared.nn.feature_stages against their formulas and known answers."""
import numpy as np
import pytest
import torch

from shared.data.groups import all_pairs, by_name, real_components, word_tensor
from shared.nn.feature_stages import (
    backprop_signal,
    feature_interaction,
    gram_distance,
    repulsion_agreement,
    ridge_top_layer,
)
from shared.nn.group_analysis import component_energy, cp_als, cp_rank, network_tensor, support_triples, unit_alignment
from shared.nn.multiplicative import GroupPairNet, centred_targets
from shared.stats import crossing, linear_fit



def test_energy_fractions_sum_to_one_and_find_a_planted_frequency():
    comps = real_components(by_name("Z11"))
    a = np.arange(11)
    planted = np.cos(2 * np.pi * 3 * a / 11 + 0.4)
    e = component_energy(np.stack([planted, np.random.default_rng(0).standard_normal(11)]), comps)
    np.testing.assert_allclose(e.sum(-1), 1.0, atol=1e-12)
    assert e[0].argmax() == 3 and e[0, 3] > 1 - 1e-12


def test_unit_alignment_of_a_hand_built_fourier_network():
    m, k = 7, 2
    a = np.arange(m)
    state = {"left": np.stack([np.cos(2 * np.pi * k * a / m), np.cos(2 * np.pi * 1 * a / m)], 1),
             "right": np.stack([np.sin(2 * np.pi * k * a / m), np.random.default_rng(1).standard_normal(m)], 1),
             "out": np.stack([np.cos(2 * np.pi * k * a / m + 1), np.cos(2 * np.pi * 3 * a / m)])}
    out = unit_alignment(state, real_components(by_name(f"Z{m}")))
    assert out["component"][0] == k and out["purity"][0] > 1 - 1e-12 and out["same_component"][0]
    assert not out["same_component"][1]


@pytest.mark.parametrize("name, rank", [("Z3", 4), ("Z4", 5)])
def test_cp_rank_of_small_group_algebras(name, rank):
    t = word_tensor(by_name(name), "ab")
    found, errors = cp_rank(t, range(rank - 1, rank + 1), restarts=3, sweeps=300)
    assert found == rank and errors[rank - 1] > 0.1  # rank-1 less leaves a large residual (dossier pilot: 0.41, 0.35)


def test_cp_als_recovers_a_planted_low_rank_tensor():
    rng = np.random.default_rng(0)
    factors = [rng.standard_normal((6, 3)) for _ in range(3)]
    t = np.einsum("ar,br,cr->abc", *factors)
    error, (x, y, z) = cp_als(t, 3, restarts=2, sweeps=200)
    assert error < 1e-8
    np.testing.assert_allclose(np.einsum("ar,br,cr->abc", x, y, z), t, atol=1e-6)


def test_support_of_the_product_word_is_diagonal():
    g = by_name("S3")
    comps = real_components(g)
    assert support_triples(word_tensor(g, "ab"), comps) == {(i, i, i) for i in range(len(comps))}


@pytest.mark.parametrize("activation", ["quadratic", "bilinear"])
def test_network_tensor_is_the_forward_pass(activation):
    net = GroupPairNet(5, 6, activation=activation, seeds=(4,))
    a, b = all_pairs(5)
    full, cross = network_tensor(net.member_state(0), activation)
    np.testing.assert_allclose(full.reshape(25, 5), net(a, b)[0].detach().numpy(), atol=1e-6)
    if activation == "bilinear":
        np.testing.assert_allclose(cross, full)
    with pytest.raises(ValueError):
        network_tensor(net.member_state(0), "relu")


def test_backprop_signal_vanishes_exactly_when_the_top_layer_interpolates():
    torch.manual_seed(0)
    y = centred_targets(torch.randint(0, 5, (30,)), 5)
    wide, narrow = torch.randn(30, 60), torch.randn(30, 10)
    assert backprop_signal(wide, y, 0.0)[1] < 1e-12  # K >= n, eta = 0: memorised, nothing flows back
    assert backprop_signal(wide, y, 0.5)[1] > 1e-4  # weight decay leaves a residual
    assert backprop_signal(narrow, y, 0.0)[1] > 1e-2  # K < n cannot interpolate
    eta = 0.3
    g, _ = backprop_signal(wide, y, eta)
    f = wide.double()
    closed = eta * torch.linalg.solve(f @ f.T + eta * torch.eye(30, dtype=f.dtype), y.double())  # Y - F V*
    v = ridge_top_layer(wide, y, eta)
    torch.testing.assert_close(g, closed @ v.T)
    torch.testing.assert_close(v, torch.linalg.solve(f.T @ f + eta * torch.eye(60, dtype=f.dtype), f.T @ y.double()))


def test_feature_interaction_and_repulsion():
    torch.manual_seed(1)
    base = torch.randn(200, 1)
    f = torch.cat([base + 0.3 * torch.randn(200, 1), base + 0.3 * torch.randn(200, 1), torch.randn(200, 3)], 1)
    b = feature_interaction(f, 1e-3)
    centred = f.double() - f.double().mean(0)
    torch.testing.assert_close(b @ (centred.T @ centred + 1e-3 * torch.eye(5, dtype=b.dtype)), torch.eye(5, dtype=b.dtype))
    assert b[0, 1] < 0  # two similar features repel
    assert repulsion_agreement(f, 1e-3, top=1) == 1.0


def test_gram_distance():
    assert gram_distance(torch.eye(6)) < 1e-12
    ones = torch.ones(6, 1)
    assert gram_distance(torch.cat([torch.eye(6), ones], 1)) < 1e-12  # I + 11^T
    assert gram_distance(torch.randn(6, 3)) > 0.1


def test_linear_fit_and_crossing():
    x = np.log([17, 23, 31, 41])
    fit = linear_fit(x, -1.0 * x + 2 + np.array([0.01, -0.01, 0.01, -0.01]))
    assert abs(fit["slope"] + 1) < 0.05 and 0 < fit["slope_stderr"] < 0.05 and fit["r2"] > 0.99
    exact = linear_fit([0, 1, 2], [1, 3, 5])
    assert exact["slope"] == pytest.approx(2) and exact["slope_stderr"] == pytest.approx(0, abs=1e-12)
    with pytest.raises(ValueError, match="at least 3"):
        linear_fit([0, 1], [0, 1])
    assert crossing([0.1, 0.2, 0.3], [0.0, 0.4, 0.8]) == pytest.approx(0.225)
    assert crossing([0.1, 0.2], [0.6, 1.0]) == 0.1 and np.isnan(crossing([0.1, 0.2], [0.0, 0.1]))
