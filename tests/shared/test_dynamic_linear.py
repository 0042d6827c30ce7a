"""shared.nn.dynamic_linear against autograd on each architecture, and shared.nn.linear_operators against definitions.

Piecewise-linear networks (ReLU, max-pool) are their own frozen map: W(x) is the autograd Jacobian. For smooth gates
the reference is the same network written with its gates detached by hand, differentiated by autograd."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.bilinear import BilinearMLP, RMSNorm
from shared.nn.dynamic_linear import dynamic_linear_map
from shared.nn.linear_operators import layer_operator, null_space, operator_matrix, svd_summary
from shared.nn.transformer import Transformer



def per_sample_jacobian(fn, x):
    """(N, *out, *in) by autograd on one sample at a time."""
    return torch.stack([torch.autograd.functional.jacobian(lambda z: fn(z[None])[0], xi) for xi in x])


def relu_cnn():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 6, 3),
                         nn.ReLU(inplace=True), nn.Flatten(), nn.Linear(6 * 2 * 2, 5))


def test_piecewise_linear_cnn_is_its_jacobian():
    model, x = relu_cnn().double(), torch.randn(3, 1, 8, 8, dtype=torch.float64)
    m = dynamic_linear_map(model, x)
    torch.testing.assert_close(m.weight, per_sample_jacobian(model, x), rtol=0, atol=1e-12)
    torch.testing.assert_close(m.apply(x), model(x), rtol=0, atol=1e-12)
    torch.testing.assert_close(m.contributions(x).flatten(2).sum(-1) + m.bias, model(x), rtol=0, atol=1e-12)


def test_smooth_gates_match_hand_detached_network():
    torch.manual_seed(1)
    lin1, norm, lin2 = nn.Linear(6, 8), nn.LayerNorm(8), nn.Linear(8, 3)
    model = nn.Sequential(lin1, nn.SiLU(), norm, nn.GELU(), lin2).double()
    x = torch.randn(4, 6, dtype=torch.float64)

    def detached(z, at):
        u, ua = lin1(z), lin1(at)
        h, ha = u * torch.sigmoid(ua).detach(), F.silu(ua)
        inv = torch.rsqrt(ha.var(-1, unbiased=False, keepdim=True) + norm.eps).detach()
        g, ga = (h - h.mean(-1, keepdim=True)) * inv * norm.weight + norm.bias, norm(ha)
        return lin2(g * (F.gelu(ga) / ga).detach())

    m = dynamic_linear_map(model, x)
    reference = torch.stack([torch.autograd.functional.jacobian(lambda z, at=xi: detached(z[None], at[None])[0], xi)
                             for xi in x])
    torch.testing.assert_close(m.weight, reference, rtol=0, atol=1e-12)
    torch.testing.assert_close(m.output, model(x), rtol=0, atol=1e-12)


def test_bilinear_mlp_freezes_its_left_half():
    torch.manual_seed(2)
    model = nn.Sequential(RMSNorm(5), BilinearMLP(5, 7, bias=True)).double()
    x = torch.randn(3, 5, dtype=torch.float64)
    m = dynamic_linear_map(model, x)
    for xi, w in zip(x, m.weight):
        inv = torch.rsqrt(xi.pow(2).mean() + 1e-8)
        bil = model[1].bilinear
        left = bil.left @ (xi * inv) + bil.left_bias
        torch.testing.assert_close(w, model[1].down.weight @ (left[:, None] * bil.right) * inv, rtol=0, atol=1e-12)


def test_transformer_from_embeddings_is_exact():
    torch.manual_seed(3)
    lm = Transformer(vocab_size=11, d_model=8, d_hidden=16, n_head=2, n_layer=2, n_ctx=6, mlp="swiglu")
    tokens = torch.randint(0, 11, (2, 5))

    def last_logits(model, emb):
        h = emb
        for block in model.blocks:
            h = block(h)
        return model.unembed(model.norm(h))[:, -1]

    m = dynamic_linear_map(lm, lm.embed(tokens).detach(), forward=last_logits)
    assert m.weight.shape == (2, 11, 5, 8)
    torch.testing.assert_close(m.output, lm.double()(tokens)[:, -1], rtol=0, atol=1e-10)


def test_unfrozen_gate_is_reported():
    model = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.Linear(3, 2)).double()
    with pytest.raises(ValueError, match="no freezer"):
        dynamic_linear_map(model, torch.randn(2, 3, dtype=torch.float64))


@pytest.mark.parametrize("layer, shape", [(nn.Linear(9, 4), (9,)), (nn.Conv2d(2, 3, 3, stride=2), (2, 7, 7)),
                                          (nn.Conv1d(3, 1, 2), (3, 6))])
def test_layer_operator_and_null_space(layer, shape):
    a = layer_operator(layer, shape)
    x = torch.randn(2, *shape, dtype=torch.float64)
    with torch.no_grad():
        expected = (layer.double()(x) - layer(torch.zeros_like(x))).reshape(2, -1)
    torch.testing.assert_close(x.reshape(2, -1) @ a.T, expected, rtol=0, atol=1e-12)
    basis = null_space(a)
    assert basis.shape[1] == a.shape[1] - torch.linalg.matrix_rank(a)
    torch.testing.assert_close(basis.T @ basis, torch.eye(basis.shape[1], dtype=torch.float64), rtol=0, atol=1e-12)
    assert (a @ basis).abs().max() < 1e-10


def test_operator_matrix_reads_columns():
    w = torch.randn(4, 6, dtype=torch.float64)
    torch.testing.assert_close(operator_matrix(lambda z: z @ w.T, (6,), chunk=4), w)


def test_svd_summary():
    s = svd_summary(torch.tensor([2.0, 1.0, 1.0, 0.0]))
    assert s["numerical_rank"] == 3
    assert s["stable_rank"] == pytest.approx(6 / 4)
    assert s["top_share"] == pytest.approx(4 / 6)
    assert s["rank_90"] == 3 and s["rank_99"] == 3
    assert svd_summary(torch.ones(5))["entropy_rank"] == pytest.approx(5)
