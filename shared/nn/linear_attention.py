"""Linear (softmax-free) self-attention on in-context regression prompts, and its one-layer weight analysis.

Tokens are rows: a prompt is Z in R^{(n+1) x (d+1)}, rows (x_i, y_i) for the n context examples and (x_q, 0) for
the query, last. One head with value matrix P and merged key-query matrix Q maps row i to

    z_i + (1/n) * sum_{j in keys} (z_i^T Q z_j) * P z_j,

summed over heads; the keys are every row, or every context row when `mask_query_key` (the query's own key and
value masked out, as in Ahn et al.'s code). In the column notation of von Oswald et al. and Mahankali et al.,
W^{KQ} = Q^T and W^{PV} = P. Parametrisations:

    full    P and Q are free (d+1) x (d+1) matrices;
    sparse  Ahn et al.: P = [[P_x, 0], [0, 1]] and Q = [[Q_x, 0], [0, 0]], only the d x d blocks learned.

The prediction is `readout_sign` times the query row's last entry (Ahn et al. read out its negative).
"""
import torch
from torch import nn

PARAMETRISATIONS = ("full", "sparse")


class LinearSelfAttention(nn.Module):
    """One layer of `heads` linear-attention heads with a residual connection, on prompts of `d` covariates."""

    def __init__(self, d, heads=1, param="full", mask_query_key=False, init_std=0.1):
        super().__init__()
        if param not in PARAMETRISATIONS:
            raise ValueError(f"param must be one of {PARAMETRISATIONS}, not {param!r}")
        self.d, self.heads, self.param, self.mask_query_key = d, heads, param, mask_query_key
        size = d + 1 if param == "full" else d
        self.value = nn.Parameter(init_std * torch.randn(heads, size, size))
        self.key_query = nn.Parameter(init_std * torch.randn(heads, size, size))

    def matrices(self):
        """(P, Q), each (heads, d+1, d+1), whatever the parametrisation."""
        if self.param == "full":
            return self.value, self.key_query
        pad = (0, 1, 0, 1)  # one zero row and column after the d x d block
        label = torch.zeros(self.d + 1, self.d + 1, dtype=self.value.dtype, device=self.value.device)
        label[self.d, self.d] = 1.0  # the y -> y entry of P is fixed to 1
        return nn.functional.pad(self.value, pad) + label, nn.functional.pad(self.key_query, pad)

    def forward(self, z):
        n = max(z.shape[-2] - 1, 1)  # context examples: every row but the query (a query alone: 1)
        p, q = self.matrices()
        scores = torch.einsum("bid,hde,bje->bhij", z, q, z) / n
        if self.mask_query_key:
            scores = scores * torch.cat([scores.new_ones(n), scores.new_zeros(1)])
        values = torch.einsum("bjd,hed->bhje", z, p)
        return z + torch.einsum("bhij,bhje->bie", scores, values)


class LinearTransformer(nn.Module):
    """`layers` LinearSelfAttention layers (residual, no softmax, normalisation or MLP); `forward` predicts y_q."""

    def __init__(self, d, layers=1, heads=1, param="full", mask_query_key=False, readout_sign=1.0, init_std=0.1):
        super().__init__()
        self.layers = nn.ModuleList(LinearSelfAttention(d, heads, param, mask_query_key, init_std)
                                    for _ in range(layers))
        self.readout_sign = float(readout_sign)

    def forward(self, z):
        for layer in self.layers:
            z = layer(z)
        return self.readout_sign * z[..., -1, -1]


def effective_preconditioner(layer, head=0):
    """One layer's prediction as one step of preconditioned GD: y_hat = x_q^T Gamma g + nuisance, with
    g = (1/n) sum_i y_i x_i, Gamma = a B^T + c u^T (a = P[d, d], u = P[d, :d], B^T = Q[:d, :d], c = Q[:d, d]).

    Returns Gamma and the nuisance sizes that vanish at the population optimum, each relative to ||Gamma||_F and
    invariant under the rescaling (a, u, B, c) -> (s a, s u, B / s, c / s): ||B^T u|| and |a| ||c||."""
    p, q = (m[head].detach() for m in layer.matrices())
    d = layer.d
    a, u, b_t, c = p[d, d], p[d, :d], q[:d, :d], q[:d, d]
    gamma = a * b_t + torch.outer(c, u)
    norm = torch.linalg.norm(gamma)
    return gamma, {"b_t_u": float(torch.linalg.norm(b_t @ u) / norm),
                   "a_c": float(a.abs() * torch.linalg.norm(c) / norm)}


def preconditioned_gd_form(layer, prompts):
    """One layer's prediction of y_q (before the readout sign) written term by term in float64, the right side of
    y_hat = x_q^T Gamma g + (1/n) sum_j (u^T x_j)(x_q^T B^T x_j) + (a/n) sum_j y_j^2 c^T x_q (+ the query's own
    term when its key is not masked): the reference a layer's forward pass must match."""
    p, q = (m[0].detach().to(torch.float64) for m in layer.matrices())
    d = layer.d
    a, u, b_t, c = p[d, d], p[d, :d], q[:d, :d], q[:d, d]
    gamma = a * b_t + torch.outer(c, u)
    x, y = prompts.x.to(torch.float64), prompts.y.to(torch.float64)
    xs, ys, xq = x[:, :-1], y[:, :-1], x[:, -1]
    n = xs.shape[1]
    g = torch.einsum("bn,bnd->bd", ys, xs) / n
    out = torch.einsum("bd,de,be->b", xq, gamma, g)
    out = out + torch.einsum("bn,bn->b", xs @ u, torch.einsum("bd,de,bne->bn", xq, b_t, xs)) / n
    out = out + a * (ys**2).sum(1) / n * (xq @ c)
    if not layer.mask_query_key:
        out = out + (xq @ u) * torch.einsum("bd,de,be->b", xq, b_t, xq) / n
    return out
