"""Contextual blocks of "Learning without training" (Dherin et al. 2025) for in-context linear regression.

Tokens are rows: Z (batch, n + 1, D), rows (x_i, y_i) then the query (x_q, 0), D = d + 1. A contextual layer A maps
the rows to its output at the query row (batch, D):

    softmax  single-head softmax attention, q/k/v maps without bias, no output projection or positions; the query
             attends to every row, itself included (the causal mask changes nothing at the last row);
    linear   linear attention, A = (1/max(n, 1)) sum_j (z_q^T Q z_j) P z_j over every row (query included);
    gru      a GRU over the rows (hidden size D, h_0 = 0), read out after the query row (the D10 contrast).

The MLP is M(a) = U relu(W a + b), W (width x D) its first dense layer, U (D x width); the prediction is the last
coordinate of the block output at the query row:

    no skip    out = M(A(C, x))                        (Theorem 2.2's form)
    skip       out = h + M(h),  h = z_q + A(C, x)      (the residual variant, patched with dW and a steering bias)

`layers` > 1 stacks skip blocks with a LayerNorm (no affine) before each softmax attention (all rows, causal):
the D9-style check of block-by-block patches.
"""
import math

import torch
from torch import nn

from shared.nn import implicit_update as iu

KINDS = ("softmax", "linear", "gru")


class Layer(nn.Module):
    """One contextual layer; `all_rows(Z)` (causal, every row) for stacks, `forward(Z)` its output at the last row."""

    def __init__(self, kind, dim):
        super().__init__()
        self.kind, self.dim = kind, dim
        if kind == "gru":
            self.rnn = nn.GRU(dim, dim, batch_first=True)
        else:
            self.q = nn.Parameter(torch.randn(dim, dim) / math.sqrt(dim))
            self.k = nn.Parameter(torch.randn(dim, dim) / math.sqrt(dim))
            self.v = nn.Parameter(torch.randn(dim, dim) / math.sqrt(dim))

    def forward(self, z):
        if self.kind == "gru":
            return self.rnn(z)[0][:, -1]
        q = z[:, -1] @ self.q.T
        keys, values = z @ self.k.T, z @ self.v.T
        scores = torch.einsum("bd,bjd->bj", q, keys)
        if self.kind == "softmax":
            weights = torch.softmax(scores / math.sqrt(self.dim), dim=-1)
        else:
            weights = scores / max(z.shape[1] - 1, 1)
        return torch.einsum("bj,bjd->bd", weights, values)

    def all_rows(self, z):
        """Causal softmax attention at every row (stacks use softmax only)."""
        q, keys, values = z @ self.q.T, z @ self.k.T, z @ self.v.T
        scores = q @ keys.transpose(1, 2) / math.sqrt(self.dim)
        rows = z.shape[1]
        mask = torch.ones(rows, rows, dtype=torch.bool, device=z.device).tril()
        return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ values


class MLP(nn.Module):
    def __init__(self, dim, width):
        super().__init__()
        self.W = nn.Parameter(torch.randn(width, dim) / math.sqrt(dim))
        self.b = nn.Parameter(torch.zeros(width))
        self.U = nn.Parameter(torch.randn(dim, width) / math.sqrt(width))

    def forward(self, a, dW=None):
        pre = a @ self.W.T if dW is None else torch.einsum("boi,bi->bo", self.W + dW, a)
        return torch.relu(pre + self.b) @ self.U.T


def _norm(z):
    return nn.functional.layer_norm(z, z.shape[-1:])


class ContextualBlock(nn.Module):
    def __init__(self, d, kind="softmax", width=12, skip=False, layers=1):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        if layers > 1 and (kind != "softmax" or not skip):
            raise ValueError("stacks are skip blocks of softmax attention")
        self.dim, self.skip, self.layers = d + 1, skip, layers
        self.attn = nn.ModuleList(Layer(kind, self.dim) for _ in range(layers))
        self.mlp = nn.ModuleList(MLP(self.dim, width) for _ in range(layers))

    # --- one block ---------------------------------------------------------------------------------------------
    def contextual(self, z):
        """The activation the first dense layer W reads at the query: A (no skip) or h = z_q + A (skip)."""
        a = self.attn[0](z)
        return z[:, -1] + a if self.skip else a

    def head(self, a, dW=None, db=None):
        """Prediction from the activation at the query, with an optional per-sample patch (dW, steering bias db)."""
        stream = a if db is None else a + db
        out = stream + self.mlp[0](a, dW) if self.skip else self.mlp[0](a, dW)
        return out[:, -1]

    def forward(self, z):
        if self.layers == 1:
            return self.head(self.contextual(z))
        for attn, mlp in zip(self.attn, self.mlp):
            h = z + attn.all_rows(_norm(z))
            z = h + mlp(h)
        return z[:, -1, -1]

    # --- the implicit update ----------------------------------------------------------------------------------
    def patch(self, z):
        """(dW, db, activation of the query-only pass) of one block; db is None without skip."""
        a_ctx, a_q = self.contextual(z), self.contextual(z[:, -1:])
        if self.skip:
            dW, db = iu.residual_update(self.mlp[0].W, a_ctx, a_q)
            return dW, db, a_q
        return iu.implicit_update(self.mlp[0].W, a_ctx, a_q), None, a_q

    def patched_prediction(self, z, steering=True):
        """T_{W + dW}(x): the query row alone, with the patch computed from the context run."""
        dW, db, a_q = self.patch(z)
        return self.head(a_q, dW, db if steering else None)

    def stacked_patched_prediction(self, z):
        """Block-by-block patches of a stack: each block's (dW_l, db_l) from the context run's query-row activation
        h_C^l and the patched query-only stream's h^l; returns the query-only prediction."""
        contexts, s = [], z
        for attn, mlp in zip(self.attn, self.mlp):
            h = s + attn.all_rows(_norm(s))
            contexts.append(h[:, -1])
            s = h + mlp(h)
        stream = z[:, -1]
        for attn, mlp, h_ctx in zip(self.attn, self.mlp, contexts):
            h = stream + attn(_norm(stream)[:, None])
            dW, db = iu.residual_update(mlp.W, h_ctx, h)
            stream = h + db + mlp(h, dW)
        return stream[:, -1]


def build(spec):
    """A model from a run spec; the caller seeds torch first so that the init depends on the seed only."""
    return ContextualBlock(spec["d"], spec["kind"], spec["width"], spec["skip"], spec.get("layers", 1))
