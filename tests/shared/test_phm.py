"""shared.nn.phm against its formula: the forward pass equals x H^T with H = sum_i kron(A_i, S_i) materialised
(float64), the exact parameter count n^3 + d_in d_out / n, the Hamilton matrices are the quaternion units, and PHM
with A_i fixed to them equals the quaternion linear layer written from the Hamilton product table."""
import pytest
import torch

from shared.nn import layer_registry as registry
from shared.nn.phm import PHM, hamilton_matrices, phm_params, quaternion_linear


@pytest.mark.parametrize("d_in, d_out, n", [(8, 6, 2), (64, 32, 4), (60, 90, 5)])
def test_forward_is_the_sum_of_kronecker_products(d_in, d_out, n):
    layer = PHM(d_in, d_out, n).double().reset_parameters(torch.Generator().manual_seed(0))
    x = torch.randn(7, 3, d_in, dtype=torch.float64)
    h = sum(torch.kron(layer.a[i], layer.s[i]) for i in range(n))
    assert (layer(x) - x @ h.T).abs().max() < 1e-12
    assert (layer.matrix() - h).abs().max() < 1e-12 and torch.equal(layer.kron_matrix(), h)
    assert layer.n_params() == n ** 3 + d_in * d_out // n == phm_params(d_in, d_out, n)


def test_hamilton_matrices_are_the_quaternion_units():
    one, i, j, k = hamilton_matrices()
    assert torch.equal(one, torch.eye(4, dtype=torch.float64))
    for unit in (i, j, k):
        assert torch.equal(unit @ unit, -one)
    assert torch.equal(i @ j, k) and torch.equal(j @ k, i) and torch.equal(k @ i, j) and torch.equal(i @ j @ k, -one)


def test_quaternion_linear_is_the_hamilton_product():
    """d_in = d_out = 4: one quaternion weight times one quaternion input, by the product's formula."""
    w, x = torch.randn(4, 1, 1, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
    a1, b1, c1, d1 = w.flatten()
    a2, b2, c2, d2 = x
    want = torch.stack([a1 * a2 - b1 * b2 - c1 * c2 - d1 * d2, a1 * b2 + b1 * a2 + c1 * d2 - d1 * c2,
                        a1 * c2 - b1 * d2 + c1 * a2 + d1 * b2, a1 * d2 + b1 * c2 - c1 * b2 + d1 * a2])
    assert (quaternion_linear(x, w) - want).abs().max() < 1e-14


def test_phm_with_hamilton_a_is_the_quaternion_layer():
    layer = PHM(32, 48, 4, fixed_a=hamilton_matrices()).double().reset_parameters()
    x = torch.randn(5, 32, dtype=torch.float64)
    assert (layer(x) - quaternion_linear(x, layer.s)).abs().max() < 1e-12
    assert layer.n_params() == 32 * 48 // 4 and [f[0] for f in layer.factors()] == ["s"]


def test_init_matches_linear_variance_and_divisibility_is_checked():
    layer = PHM(512, 512, 4).reset_parameters(torch.Generator().manual_seed(0))
    # entries of H have variance sum_i A_i[p, q]^2 / (3 d_in): nn.Linear's 1/(3 d_in) when the A_i have variance 1/n
    a_scale = layer.a.pow(2).sum(0).mean().item()
    assert abs(layer.matrix().var().item() * 3 * 512 / a_scale - 1) < 0.05 and abs(a_scale - 1) < 0.3
    with pytest.raises(ValueError, match="divisible by n"):
        PHM(10, 8, 4)


def test_registered_counts_by_hand():
    # layer 16 -> 36, n = 4: 4^3 + 16 * 36 / 4 params, 4^2 * 16 + 16 * 36 macs; block 16 -> 32 -> 16: twice
    assert registry.count("phm", 16, 36) == {"params": 208, "macs": 832}
    assert registry.count("phm", 16, 32, "block") == {"params": 2 * (64 + 128), "macs": 16 * 48 + 1024}
    assert registry.count("phm", 16, 36, n=2) == {"params": 8 + 288, "macs": 64 + 576}
