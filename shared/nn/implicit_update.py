"""The implicit weight update of a contextual block (Dherin et al. 2025, "Learning without training").

A contextual block is T_W(C, x) = f(W A(C, x) + b): a contextual layer A (attention, an RNN, ...) read out at the
query, then an MLP whose first dense layer is W. With the context vector dA(C) = A(C, x) - A(x),

    dW(C) = (W dA(C)) A(x)^T / ||A(x)||^2        (rank 1)

gives (W + dW) A(x) = W A(C, x), so T_W(C, x) = T_{W + dW}(x) exactly, for any f and any A with A(x) != 0.
dW is the minimum-Frobenius-norm solution of dW A(x) = W dA (dW = W dA A(x)^+).

Everything here is batched: activations are (batch, d_in), W is (d_out, d_in), updates are (batch, d_out, d_in).
A contextual layer is passed as a function `layer(Z) -> (batch, d_in)`, the output at the last row (the query) of
token rows Z (batch, rows, d_tok); `layer` must accept a single row (the query-only pass). Computations are done in
the dtype of the inputs: pass float64 for exactness (no epsilon is added to ||A(x)||^2).
"""
import torch


def context_vector(layer, z_context, z_query):
    """(A(C, x), A(x)): the layer on the context rows followed by the query row, and on the query row alone.
    z_context (batch, n, d_tok), z_query (batch, d_tok)."""
    a_context = layer(torch.cat([z_context, z_query[:, None]], dim=1))
    a_query = layer(z_query[:, None])
    return a_context, a_query


def implicit_update(W, a_context, a_query):
    """dW = (W (a_context - a_query)) a_query^T / ||a_query||^2, one rank-1 matrix per sample."""
    delta = (a_context - a_query) @ W.T  # (batch, d_out)
    return torch.einsum("bo,bi->boi", delta, a_query) / (a_query * a_query).sum(-1)[:, None, None]


def pinv_update(W, a_context, a_query):
    """The minimum-norm solution of dW a_query = W (a_context - a_query) through the pseudo-inverse of a_query."""
    target = (a_context - a_query) @ W.T  # (batch, d_out)
    pinv = torch.linalg.pinv(a_query[:, :, None])  # (batch, 1, d_in)
    return target[:, :, None] @ pinv


def patched_preactivation(W, dW, a_query, b=None):
    """(W + dW) A(x) (+ b) per sample: the first layer's pre-activation of the patched, context-free pass."""
    out = torch.einsum("boi,bi->bo", W + dW, a_query)
    return out if b is None else out + b


def partial_update(layer, W, z_context, z_query, kept):
    """Theorem 2.2 for part of the context: with Y the context rows NOT in `kept` (a bool mask of length n), returns
    (dW(Y), A(C \\ Y, x), A(C, x)) with dW(Y) = (W (A(C, x) - A(C \\ Y, x))) A(C \\ Y, x)^T / ||A(C \\ Y, x)||^2, so that
    T_W(C, x) = T_{W + dW(Y)}(C \\ Y, x)."""
    a_full = layer(torch.cat([z_context, z_query[:, None]], dim=1))
    a_rest = layer(torch.cat([z_context[:, kept], z_query[:, None]], dim=1))
    return implicit_update(W, a_full, a_rest), a_rest, a_full


def prefix_activations(layer, z_context, z_query):
    """A_i = A(c_1..c_i, x) for i = 0..n (A_0 = A(x)): (batch, n + 1, d_in)."""
    n = z_context.shape[1]
    return torch.stack([layer(torch.cat([z_context[:, :i], z_query[:, None]], dim=1)) for i in range(n + 1)], dim=1)


def token_updates(W, prefix):
    """W_i = W + dW(c_1..c_i) for i = 0..n from the prefix activations (batch, n + 1, d_in): (batch, n + 1, d_out, d_in)."""
    a0 = prefix[:, 0]
    delta = (prefix - a0[:, None]) @ W.T  # (batch, n + 1, d_out)
    return W + torch.einsum("bno,bi->bnoi", delta, a0) / (a0 * a0).sum(-1)[:, None, None, None]


def marginal_norms(updates):
    """||dW_{i+1} - dW_i||_F = ||W_{i+1} - W_i||_F for i = 0..n-1: (batch, n)."""
    return torch.linalg.matrix_norm(updates[:, 1:] - updates[:, :-1])


def gd_steps(W, prefix):
    """The same sequence as online gradient descent: W_{i+1} = W_i - h grad L_i(W_i), h = 1/||A(x)||^2, with the linear
    loss L_i(W) = trace(D_i^T W), D_i = W_0 (A_i - A_{i+1}) A(x)^T (so grad L_i = D_i). Returns (batch, n + 1, ...)."""
    a0 = prefix[:, 0]
    h = 1.0 / (a0 * a0).sum(-1)[:, None, None]
    current = W.expand(prefix.shape[0], *W.shape).clone()
    steps = [current]
    for i in range(prefix.shape[1] - 1):
        grad = torch.einsum("bo,bi->boi", (prefix[:, i] - prefix[:, i + 1]) @ W.T, a0)  # D_i, W_0 = W
        current = current - h * grad
        steps.append(current)
    return torch.stack(steps, dim=1)


def residual_update(W, h_context, h_query):
    """Residual block out = h + f(W h + b), h = x + A(.): the patch (dW, db') with dW = (W dh) h(x)^T / ||h(x)||^2 and
    the steering bias db' = dh = h_context - h_query added to the residual stream, so that the query-only pass
    h(x) + db' + f((W + dW) h(x) + b) equals the context pass exactly."""
    return implicit_update(W, h_context, h_query), h_context - h_query


def numerical_rank(mats, rtol=1e-10):
    """Numerical rank of each matrix (batch, m, n): singular values above rtol times the largest."""
    s = torch.linalg.svdvals(mats)
    return (s > rtol * s[..., :1]).sum(-1)
