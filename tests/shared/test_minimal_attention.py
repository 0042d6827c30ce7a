"""shared/nn/minimal_attention.py against its formulas, float64: collapsed QK and VO equal the products they replace
(per head), the symmetric and PSD forms are symmetric (PSD: s_ii >= 0), the scores are the bilinear form, and the
parameter counts are the closed forms."""
import math

import pytest
import torch

from shared.nn.minimal_attention import (MinimalAttention, PatchClassifier, attention_parameters, count_parameters,
                                         patches, tril_size)


def _x(b=3, t=5, d=8, seed=0):
    return torch.randn(b, t, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _reference(x, wq, wk, wv, wo, d_k, causal=False):
    """Textbook multi-head attention, per head, float64: softmax(Q K^T / sqrt(d_k)) V, heads concatenated, W_O."""
    outs = []
    for h in range(wq.shape[0]):
        s = (x @ wq[h].T) @ (x @ wk[h].T).transpose(-1, -2) / math.sqrt(d_k)
        if causal:
            t = x.shape[1]
            s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        outs.append(s.softmax(-1) @ (x @ wv[h].T))
    w_o = torch.cat(list(wo), dim=1)  # (d, H d_v)
    return torch.cat(outs, -1) @ w_o.T


@pytest.mark.parametrize("n_head", [1, 2])
@pytest.mark.parametrize("causal", [False, True])
def test_separate_matches_textbook_attention(n_head, causal):
    torch.manual_seed(0)
    a = MinimalAttention(8, n_head, causal=causal).double()
    x = _x()
    ref = _reference(x, a.w_q, a.w_k, a.w_v, a.w_o, a.d_k, causal)
    assert (a(x) - ref).abs().max() < 1e-12


@pytest.mark.parametrize("n_head", [1, 2])
def test_collapsed_qk_and_vo_equal_the_products_per_head(n_head):
    torch.manual_seed(1)
    d = 8
    sep = MinimalAttention(d, n_head, d_k=d, d_v=d).double()  # d_k = d: the "same size" condition
    col = MinimalAttention(d, n_head, qk="collapsed", vo="collapsed", d_k=d, d_v=d).double()
    with torch.no_grad():
        for h in range(n_head):
            col.w_qk[h] = sep.w_q[h].T @ sep.w_k[h]
            col.w_vo[h] = sep.w_o[h] @ sep.w_v[h]
    x = _x(d=d)
    assert (sep.scores(x) - col.scores(x)).abs().max() < 1e-12
    assert (sep(x) - col(x)).abs().max() < 1e-12
    # with d_k < d the product of a head has rank <= d_k
    small = MinimalAttention(d, 2).double()
    assert all(torch.linalg.matrix_rank(m) <= small.d_k for m in small.qk_matrices())


def test_scores_are_the_bilinear_form():
    torch.manual_seed(2)
    x = _x()
    for qk in ("separate", "collapsed", "symmetric", "psd"):
        a = MinimalAttention(8, 2, qk=qk).double()
        w = a.qk_matrices()
        ref = torch.einsum("bid,hde,bje->bhij", x, w, x) / math.sqrt(a.d_k)
        assert (a.scores(x) - ref).abs().max() < 1e-12, qk


@pytest.mark.parametrize("qk", ["symmetric", "psd"])
def test_symmetric_forms_give_symmetric_scores(qk):
    torch.manual_seed(3)
    a = MinimalAttention(8, 2, qk=qk).double()
    s = a.scores(_x())
    assert (s - s.transpose(-1, -2)).abs().max() < 1e-12
    w = a.qk_matrices()
    assert torch.equal(w, w.transpose(-1, -2))
    if qk == "psd":
        assert torch.linalg.eigvalsh(w).min() > -1e-12
        assert torch.diagonal(s, dim1=-2, dim2=-1).min() >= 0
    # a standard head scores some token below zero against itself (random weights)
    std = MinimalAttention(8, 1).double()
    assert (torch.diagonal(std.scores(_x(b=8)), dim1=-2, dim2=-1) < 0).any()


def test_identity_vo_is_the_heads_mean_of_attention_averages():
    torch.manual_seed(4)
    a = MinimalAttention(8, 2, qk="collapsed", vo="identity").double()
    x = _x()
    p = a.probabilities(x)
    assert (a(x) - (p @ x.unsqueeze(1)).mean(1)).abs().max() < 1e-12
    assert torch.allclose(p.sum(-1), torch.ones_like(p.sum(-1)))


@pytest.mark.parametrize("qk", ["separate", "collapsed", "symmetric", "psd"])
@pytest.mark.parametrize("vo", ["separate", "collapsed", "identity"])
@pytest.mark.parametrize("n_head", [1, 4])
def test_parameter_counts(qk, vo, n_head):
    d = 16
    a = MinimalAttention(d, n_head, qk=qk, vo=vo)
    dk = d // n_head
    per = {"separate": 2 * d * dk, "collapsed": d * d, "symmetric": d * (d + 1) // 2, "psd": d * (d + 1) // 2}[qk]
    per += {"separate": 2 * d * dk, "collapsed": d * d, "identity": 0}[vo]
    assert sum(p.numel() for p in a.parameters()) == n_head * per == attention_parameters(d, n_head, qk, vo)
    for mlp_ratio, n_layer in ((4, 2), (0, 3), (0, 0)):
        kw = dict(image_size=28, channels=1, patch=7, d=d, n_layer=n_layer, n_head=n_head, n_classes=10, qk=qk,
                  vo=vo, mlp_ratio=mlp_ratio)
        assert sum(p.numel() for p in PatchClassifier(**kw).parameters()) == count_parameters(**kw)
    assert tril_size(d) == 136


def test_patches_tile_the_image_row_major():
    img = torch.arange(2 * 3 * 4 * 4, dtype=torch.float64).reshape(2, 3, 4, 4)
    p = patches(img, 2)
    assert p.shape == (2, 4, 12)
    assert torch.equal(p[1, 1], img[1, :, 0:2, 2:4].reshape(-1))  # token 1: top-right patch, channels first
    with pytest.raises(ValueError):
        patches(img, 3)
