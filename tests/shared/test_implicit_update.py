"""shared.nn.implicit_update: exactness in float64 for linear and softmax attention, rank 1, minimality, partial
context and the gradient-step rewrite (Dherin et al. 2025, Theorem 2.2 and Section 3)."""
import math

import pytest
import torch

from shared.nn import implicit_update as iu

D, WIDTH = 4, 7


def layers(kind, gen):
    q, k, v = (torch.randn(D, D, generator=gen, dtype=torch.float64) / math.sqrt(D) for _ in range(3))

    def layer(z):  # output at the last row; one row is the query-only pass
        scores = torch.einsum("bd,bjd->bj", z[:, -1] @ q.T, z @ k.T)
        if kind == "softmax":
            weights = torch.softmax(scores / math.sqrt(D), -1)
        else:  # linear attention normalised by max(n, 1) (LinearSelfAttention divides by n = 0 on one row)
            weights = scores / max(z.shape[1] - 1, 1)
        return torch.einsum("bj,bjd->bd", weights, z @ v.T)
    return layer


def setup(kind, n=9, batch=6):
    gen = torch.Generator().manual_seed(3)
    layer = layers(kind, gen)
    z = torch.randn(batch, n + 1, D, generator=gen, dtype=torch.float64)
    W = torch.randn(WIDTH, D, generator=gen, dtype=torch.float64)
    b = torch.randn(WIDTH, generator=gen, dtype=torch.float64)
    U = torch.randn(1, WIDTH, generator=gen, dtype=torch.float64)
    return layer, z, W, b, U


def mlp(a, W, b, U, dW=None):
    pre = a @ W.T if dW is None else iu.patched_preactivation(W, dW, a)
    return torch.relu(pre + b) @ U.T


@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_theorem_rank_and_minimality(kind):
    layer, z, W, b, U = setup(kind)
    a_ctx, a_q = iu.context_vector(layer, z[:, :-1], z[:, -1])
    dW = iu.implicit_update(W, a_ctx, a_q)
    assert (mlp(a_ctx, W, b, U) - mlp(a_q, W, b, U, dW)).abs().max() < 1e-12
    assert (iu.patched_preactivation(W, dW, a_q) - a_ctx @ W.T).abs().max() < 1e-12
    assert (iu.numerical_rank(dW) == 1).all()
    pinv = iu.pinv_update(W, a_ctx, a_q)
    assert (dW - pinv).abs().max() < 1e-12
    # any other solution dW + R with R a_q = 0 has a larger norm
    r = torch.randn(*dW.shape, dtype=torch.float64)
    r = r - torch.einsum("boi,bi->bo", r, a_q)[:, :, None] * a_q[:, None] / (a_q * a_q).sum(-1)[:, None, None]
    assert (torch.einsum("boi,bi->bo", r, a_q).abs().max() < 1e-12)
    assert (torch.linalg.matrix_norm(dW + r) > torch.linalg.matrix_norm(dW)).all()


@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_partial_context(kind):
    layer, z, W, b, U = setup(kind)
    n = z.shape[1] - 1
    kept = torch.arange(n) % 3 == 0
    dW, a_rest, a_full = iu.partial_update(layer, W, z[:, :-1], z[:, -1], kept)
    assert (mlp(a_full, W, b, U) - mlp(a_rest, W, b, U, dW)).abs().max() < 1e-12
    assert (iu.numerical_rank(dW) == 1).all()


@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_token_dynamics_and_gd_rewrite(kind):
    layer, z, W, b, U = setup(kind)
    prefix = iu.prefix_activations(layer, z[:, :-1], z[:, -1])
    updates = iu.token_updates(W, prefix)
    assert (updates[:, 0] - W).abs().max() < 1e-15
    a_ctx, a_q = iu.context_vector(layer, z[:, :-1], z[:, -1])
    assert (updates[:, -1] - W - iu.implicit_update(W, a_ctx, a_q)).abs().max() < 1e-12
    assert (iu.gd_steps(W, prefix) - updates).abs().max() < 1e-12
    norms = iu.marginal_norms(updates)
    assert norms.shape == (z.shape[0], z.shape[1] - 1)
    # telescoping: the marginal increments sum to the full update
    assert ((updates[:, 1:] - updates[:, :-1]).sum(1) - (updates[:, -1] - W)).abs().max() < 1e-12


def test_residual_variant_needs_steering():
    layer, z, W, b, U = setup("softmax")
    U = torch.randn(D, WIDTH, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    h_ctx = z[:, -1] + layer(z)
    h_q = z[:, -1] + layer(z[:, -1:])
    dW, db = iu.residual_update(W, h_ctx, h_q)
    ref = h_ctx + mlp(h_ctx, W, b, U)
    assert (ref - (h_q + db + mlp(h_q, W, b, U, dW))).abs().max() < 1e-12
    assert (ref - (h_q + mlp(h_q, W, b, U, dW))).abs().max() > 1e-3
