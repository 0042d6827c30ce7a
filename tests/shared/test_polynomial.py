"""shared.nn.polynomial (MONet): the Mu-layer against its formula, the degrees the layers compute (by scaling and by
the Chebyshev fit), the quadratic-form weights, the spatial shift, the GELU width that matches parameters."""
import pytest
import torch

from shared.nn import bilinear_analysis as ba
from shared.nn.polynomial import MONet, MuLayer, PolyBlock, degree_residuals, gelu_width, mu_params, spatial_shift


def layer(**kw):
    torch.manual_seed(0)
    return MuLayer(6, 3, 8, 2, **kw).double()


def test_mu_layer_is_its_formula():
    mu = layer()
    with torch.no_grad():
        mu.alpha.fill_(0.7)
    x = torch.randn(5, 6, dtype=torch.float64)
    a = x @ mu.left.weight.T + mu.left.bias
    b = x @ mu.right.v.T @ mu.right.u.T + mu.right_bias
    expected = (0.7 * a * b + a) @ mu.out.weight.T + mu.out.bias
    assert torch.allclose(mu(x), expected, atol=1e-12)
    assert sum(p.numel() for p in mu.parameters()) == mu_params(6, 3, 8, 2)


def test_without_biases_the_product_is_homogeneous_of_degree_2():
    mu = layer(shortcut=False, bias_init=0.0)
    with torch.no_grad():
        mu.out.bias.zero_()
    x = torch.randn(4, 6, dtype=torch.float64)
    for t in (0.5, 3.0, -2.0):
        assert torch.allclose(mu(t * x), t ** 2 * mu(x), atol=1e-10)
    mu.shortcut = True  # + A x adds the degree-1 part: f(t x) = t^2 q(x) + t l(x)
    q = 0.5 * (mu(x) + mu(-x))
    lin = 0.5 * (mu(x) - mu(-x))
    assert torch.allclose(mu(3 * x), 9 * q + 3 * lin, atol=1e-10)
    assert lin.abs().max() > 1e-3 and q.abs().max() > 1e-3


def test_fitted_degrees_of_layer_block_and_network():
    torch.manual_seed(1)
    x0, v = torch.randn(6, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    res = degree_residuals(layer(), x0, v, [1, 2, 3])
    assert res[1] > 1e-3 and res[2] < 1e-12 and res[3] < 1e-12
    assert degree_residuals(layer(mix="linear"), x0, v, [1])[1] < 1e-12
    assert degree_residuals(layer(branch_norm=True), x0, v, [2])[2] > 1e-6  # LayerNorm: not a polynomial

    block = PolyBlock(8, expansion=2, rank_ratio=2, norm=False).double()
    for p in block.parameters():  # larger weights, so that the degree-4 terms are far above rounding on the line
        p.data.mul_(3)
    g0, gv = torch.randn(3, 3, 8, dtype=torch.float64), torch.randn(3, 3, 8, dtype=torch.float64)
    res = degree_residuals(block, g0, gv, [3, 4])
    assert res[3] > 1e-6 and res[4] < 1e-10

    net = MONet((1, 8, 8), 4, [8], [2], expansion=2, rank_ratio=2, norm=False).double()
    torch.nn.init.normal_(net.head.weight)
    x0, v = torch.randn(64, dtype=torch.float64), torch.randn(64, dtype=torch.float64)
    assert degree_residuals(net, x0, v, [16], nodes=48)[16] < 1e-10  # 2 blocks: 4^2


def test_bilinear_weights_give_the_quadratic_form_and_the_rank_cap():
    mu = layer()
    left, right = mu.bilinear_weights()
    q = ba.interaction_matrices(left, right, mu.out.weight.double())
    q[:, -1, -1] += mu.out.bias.double()
    z = ba.append_one(torch.randn(7, 6, dtype=torch.float64))
    assert torch.allclose(torch.einsum("cij,ni,nj->nc", q, z, z), mu(z[:, :-1]), atol=1e-12)
    assert torch.linalg.matrix_rank(q).max() <= 2 * (mu.rank + 1)
    with pytest.raises(ValueError, match="no branch LayerNorm"):
        layer(branch_norm=True).bilinear_weights()


def test_spatial_shift_moves_each_quarter_one_step_and_keeps_the_edges():
    h = torch.arange(3.0).view(1, 3, 1, 1).expand(1, 3, 3, 4)  # value = row index
    w = torch.arange(3.0).view(1, 1, 3, 1).expand(1, 3, 3, 4)  # value = column index
    sh, sw = spatial_shift(h), spatial_shift(w)
    assert sh[0, :, 0, 0].tolist() == [0, 0, 1] and sh[0, :, 0, 1].tolist() == [1, 2, 2]  # +H, -H
    assert sw[0, 0, :, 2].tolist() == [0, 0, 1] and sw[0, 0, :, 3].tolist() == [1, 2, 2]  # +W, -W
    assert torch.equal(sh[..., 2:], h[..., 2:]) and torch.equal(sw[..., :2], w[..., :2])  # the other axis untouched


@pytest.mark.parametrize("norm", [False, True])
def test_gelu_width_matches_the_mu_layer_parameters(norm):
    for dim, hidden in ((32, 32), (64, 192)):
        mu = MuLayer(dim, dim, hidden, hidden // 8, branch_norm=norm)
        gelu = MuLayer(dim, dim, gelu_width(dim, dim, hidden, hidden // 8, norm), 1, mix="gelu")
        n = [sum(p.numel() for p in m.parameters()) for m in (mu, gelu)]
        assert abs(n[1] / n[0] - 1) < 0.02


def test_monet_shapes_and_bad_stages():
    net = MONet((3, 16, 16), 10, [32, 64], [1, 1], stem_convs=1)
    assert net(torch.randn(2, 3 * 16 * 16)).shape == (2, 10)
    with pytest.raises(ValueError, match="one entry per stage"):
        MONet((3, 16, 16), 10, [32, 64], [1])
    with pytest.raises(ValueError, match="mix must be one of"):
        MuLayer(4, 4, 4, 1, mix="relu")
