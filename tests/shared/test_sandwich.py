"""shared.nn.sandwich against its formula: the Cayley transform gives orthonormal rows; the layer is
h' = sqrt(2) A^T Psi relu(sqrt(2) Psi^-1 B h + b); its Lipschitz constant (Jacobian norms, the explicit matrix bound,
a pair search) never exceeds gamma on random weights and inputs; the parameterisation reaches a known 1-Lipschitz
layer; the eval-mode cache follows the parameters."""
import math

import pytest
import torch
import torch.nn.functional as F

from shared.nn import layer_registry as registry
from shared.nn.sandwich import (LipschitzMLP, SandwichLinear, cayley, empirical_lipschitz,
                                jacobian_spectral_norms)


@pytest.mark.parametrize("shape", [(8, 11), (64, 128), (10, 138), (12, 5)])
def test_cayley_is_orthonormal(shape):
    W = torch.randn(*shape, dtype=torch.float64) * 3
    Q = cayley(W)
    small = min(shape)
    gram = Q @ Q.T if shape[0] <= shape[1] else Q.T @ Q
    assert (gram - torch.eye(small, dtype=torch.float64)).abs().max() < 1e-12


def test_forward_is_the_formula():
    torch.manual_seed(0)
    layer = SandwichLinear(5, 3, scale=1.7).double()
    with torch.no_grad():
        layer.psi.normal_()
    x = torch.randn(4, 5, dtype=torch.float64)
    Q = cayley(layer.alpha * layer.weight / layer.weight.norm())
    A, B = Q[:, :3], Q[:, 3:]
    psi = torch.diag(torch.exp(layer.psi))
    want = math.sqrt(2) * (A.T @ psi @ F.relu(math.sqrt(2) * torch.linalg.inv(psi) @ B @ (1.7 * x).T
                                               + layer.bias[:, None])).T
    assert torch.allclose(layer(x), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("gamma", [0.5, 1.0, 5.0])
def test_network_is_gamma_lipschitz(gamma):
    """Random weights (psi, biases and alpha perturbed too): the Jacobian norms at random points and a pair search
    stay <= gamma; and the explicit matrix bound of each layer, ||2 A^T Psi D Psi^-1 B||_2 <= 1 for every ReLU
    pattern D (the layer's Jacobian is sqrt2 A^T Psi D sqrt2 Psi^-1 B), holds at random patterns."""
    torch.manual_seed(1)
    model = LipschitzMLP(3, [16, 16], 2, gamma, "sandwich").double()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("psi", "bias")):
                p.normal_(0, 2)
            elif name.endswith("alpha"):
                p.mul_(4)
    x = torch.randn(500, 3, dtype=torch.float64) * 3
    norms = jacobian_spectral_norms(model, x)
    assert norms.max() <= gamma * (1 + 1e-9)
    assert empirical_lipschitz(model, x[:50], steps=50, lr=0.05) <= gamma * (1 + 1e-9)
    for layer in model.hidden:
        Q = cayley(layer.alpha * layer.weight / layer.weight.norm())
        A, B = Q[:, :16], Q[:, 16:]
        psi = torch.diag(torch.exp(layer.psi))
        for _ in range(20):
            D = torch.diag((torch.rand(16, dtype=torch.float64) < 0.5).double())
            assert torch.linalg.matrix_norm(2 * A.T @ psi @ D @ torch.linalg.inv(psi) @ B, 2) <= 1 + 1e-12


def test_plain_network_breaks_the_bound():
    torch.manual_seed(1)
    model = LipschitzMLP(3, [16, 16], 2, 1.0, "plain").double()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(3)
    assert jacobian_spectral_norms(model, torch.randn(100, 3, dtype=torch.float64)).max() > 1


def test_onto_a_known_one_lipschitz_layer():
    """The 1-Lipschitz layer h -> relu(h) is reached: A = B = I / sqrt2 (so A A^T + B B^T = I) and Psi = I give
    sqrt2 (I / sqrt2) relu(sqrt2 (I / sqrt2) h + 0). The free weight comes from inverting the Cayley map:
    Z = (I + A^T)^-1 (I - A^T), V = -B^T (I + Z) / 2, U = (Z - V^T V) / 2 (Z - V^T V is skew)."""
    eye = torch.eye(4, dtype=torch.float64)
    A = B = eye / math.sqrt(2)
    Z = torch.linalg.solve(eye + A.T, eye - A.T)
    V = -B.T @ (eye + Z) / 2
    W = torch.cat([(Z - V.T @ V) / 2, V]).T  # the layer's (m, m + n) weight is the transposed tall [U; V]
    layer = SandwichLinear(4, 4).double()
    with torch.no_grad():
        layer.weight.copy_(W)
        layer.alpha.copy_(W.norm().reshape(1))
        layer.bias.zero_()
    x = torch.randn(9, 4, dtype=torch.float64)
    assert torch.allclose(layer(x), F.relu(x), rtol=0, atol=1e-12)


def test_eval_cache_follows_the_parameters():
    torch.manual_seed(2)
    layer = SandwichLinear(3, 4).double().eval()
    x = torch.randn(5, 3, dtype=torch.float64)
    before = layer(x)
    with torch.no_grad():
        layer.weight.add_(0.5)
    after = layer(x)
    assert not torch.allclose(before, after)
    assert torch.allclose(after, layer.train()(x), rtol=0, atol=1e-12)


def test_registered_family():
    layer = registry.make("sandwich", 6, 4)
    assert registry.count("sandwich", 6, 4)["params"] == sum(p.numel() for p in layer.parameters()) == 4 * 10 + 9
