"""Modern continuous Hopfield networks as layers (Ramsauer et al., "Hopfield Networks is All You Need", ICLR 2021).

Stored patterns are the rows of X (N, d), a state is xi (..., d), M = max_i |x_i|:

    energy  E(xi) = -lse(beta, X xi) + xi.xi / 2 + log(N) / beta + M^2 / 2,   lse(beta, z) = log sum_i exp(beta z_i) / beta
    update  xi_new = softmax(beta X xi)^T X        (one CCCP step on E: E never increases)

With queries Q = R W_Q (state patterns R), keys K = Y W_K and values V = Y W_V (stored patterns Y) the update of every
query at once is attention, softmax(beta Q K^T) V, and beta = 1/sqrt(d_k) is the transformer's scale.

The three layers follow the official hflayers package (ml-jku/hopfield-layers): `Hopfield` (stored, state and value
patterns all from inputs), `HopfieldPooling` (learned state patterns, the queries, pool a set) and `HopfieldLayer`
(learned stored patterns and values: a lookup / prototype memory queried by the input). Their defaults are the
package's: beta = 1/sqrt(head dimension), LayerNorm on stored, state and value patterns, one update. The functions are
the bare equations (no projections, no normalisation, explicit beta) that the paper's theory is about.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.layer_registry import register


def lse(beta, z):
    """beta^-1 log sum_i exp(beta z_i) over the last axis."""
    return torch.logsumexp(beta * z, -1) / beta


def hopfield_energy(X, xi, beta):
    """E(xi) of states xi (..., d) for stored patterns X (N, d) (module docstring)."""
    M2 = (X * X).sum(-1).max()
    return -lse(beta, xi @ X.T) + 0.5 * (xi * xi).sum(-1) + math.log(X.shape[0]) / beta + 0.5 * M2


def hopfield_update(X, xi, beta, steps=1):
    """`steps` updates xi <- softmax(beta X xi)^T X of states xi (..., d)."""
    for _ in range(steps):
        xi = torch.softmax(beta * xi @ X.T, -1) @ X
    return xi


def iterate_to_fixed_point(X, xi, beta, tol=1e-10, max_steps=10_000):
    """Update until no state moves more than `tol` (max norm of the change); returns (states, updates taken)."""
    for step in range(1, max_steps + 1):
        new = hopfield_update(X, xi, beta)
        moved = (new - xi).norm(dim=-1).max()
        xi = new
        if moved <= tol:
            return xi, step
    return xi, max_steps


def separation(X):
    """Delta_i = x_i.x_i - max_{j != i} x_i.x_j of each stored pattern: > 0 where x_i is the unique best match of itself."""
    G = X @ X.T
    self_overlap = G.diagonal().clone()
    G.fill_diagonal_(-math.inf)
    return self_overlap - G.max(-1).values


def one_step_bound(X, beta):
    """The retrieval error bound at a stored pattern: |f(x_i) - x_i| <= 2 M (N - 1) exp(-beta Delta_i) (from
    1 - p_i <= (N - 1) exp(-beta Delta_i) and |x_j - x_i| <= 2 M); the paper's bound for a state near x_i adds the
    state's distance to Delta_i's margin."""
    M = X.norm(dim=-1).max()
    return 2 * M * (X.shape[0] - 1) * torch.exp(-beta * separation(X))


def mass_count(p, mass=0.9):
    """Smallest number of patterns whose softmax weights p (..., N) sum to at least `mass`: 1 at a single-pattern fixed
    point, about N at the global average, in between at a metastable state (the paper's count for BERT heads)."""
    cumulative = p.sort(-1, descending=True).values.cumsum(-1)
    return (cumulative < mass).sum(-1) + 1


def _heads(x, n):
    """(B, L, n * h) -> (B, n, L, h)."""
    return x.unflatten(-1, (n, -1)).transpose(1, 2)


def associate(q, k, v, beta, steps=0, eps=1e-4, mask=None):
    """Heads (B, H, Lq, h), (B, H, Lk, h), (B, H, Lk, e) -> (B, H, Lq, e): `steps` updates of q in key space
    (q <- softmax(beta q k^T) k; None: until no query moves more than eps, at most 1,000), then the readout
    softmax(beta q k^T) v. steps = 0 is the single update of attention (the package's update_steps_max=0).
    mask (B, Lk) is True where a stored pattern is present."""
    bias = None if mask is None else torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(
        ~mask, -math.inf)[:, None, None, :]

    def weights(q):
        scores = beta * q @ k.transpose(-1, -2)
        return torch.softmax(scores if bias is None else scores + bias, -1)

    for _ in range(1000 if steps is None else steps):
        new = weights(q) @ k
        moved, q = (new - q).norm(dim=-1).max(), new
        if steps is None and moved <= eps:
            break
    return weights(q) @ v


class Hopfield(nn.Module):
    """hflayers.Hopfield: (stored (B, Ls, d), state (B, Lq, d) = stored, values (B, Ls, d) = stored) -> (B, Lq, out).
    hidden_size is per head (the association space of one head, beta = 1/sqrt(hidden_size) unless `scaling` is
    given); projections=False uses the patterns themselves (no W_Q, W_K, W_V, no output map): the bare update."""

    def __init__(self, input_size, hidden_size=None, num_heads=1, output_size=None, scaling=None, update_steps_max=0,
                 update_steps_eps=1e-4, normalize_stored_pattern=True, normalize_state_pattern=True,
                 normalize_pattern_projection=True, projections=True, bias=True):
        super().__init__()
        hidden_size = hidden_size or input_size
        self.num_heads, self.steps, self.eps = num_heads, update_steps_max, update_steps_eps
        self.beta = scaling if scaling is not None else 1 / math.sqrt(hidden_size)
        width = hidden_size * num_heads
        if not projections and (width != input_size or (output_size or input_size) != input_size):
            raise ValueError("Hopfield(projections=False) needs hidden_size * num_heads == output_size == input_size")

        def norm(on):
            return nn.LayerNorm(input_size) if on else nn.Identity()

        def proj(d_out):
            return nn.Linear(input_size, d_out, bias=bias) if projections else nn.Identity()

        self.norm_stored, self.norm_state = norm(normalize_stored_pattern), norm(normalize_state_pattern)
        self.norm_values = norm(normalize_pattern_projection)
        self.q, self.k, self.v = proj(width), proj(width), proj(width)
        self.out = nn.Linear(width, output_size or input_size, bias=bias) if projections else nn.Identity()

    def forward(self, stored, state=None, values=None, mask=None):
        state = stored if state is None else state
        values = stored if values is None else values
        n = self.num_heads
        q = _heads(self.q(self.norm_state(state)), n)
        k = _heads(self.k(self.norm_stored(stored)), n)
        v = _heads(self.v(self.norm_values(values)), n)
        z = associate(q, k, v, self.beta, self.steps, self.eps, mask)
        return self.out(z.transpose(1, 2).flatten(-2))


class HopfieldPooling(nn.Module):
    """hflayers.HopfieldPooling: `quantity` learned state patterns (queries in the association space) retrieve from
    the set (B, L, d) (mask (B, L): True where an instance is present) -> (B, quantity * output_size)."""

    def __init__(self, input_size, hidden_size=None, num_heads=1, output_size=None, quantity=1, **kwargs):
        super().__init__()
        hidden_size = hidden_size or input_size
        self.hopfield = Hopfield(input_size, hidden_size, num_heads, output_size, **kwargs)
        self.hopfield.q = nn.Identity()  # the state patterns are learned in the association space itself
        self.hopfield.norm_state = nn.Identity()
        self.queries = nn.Parameter(torch.randn(quantity, hidden_size * num_heads) / math.sqrt(hidden_size))

    def forward(self, x, mask=None):
        state = self.queries.expand(x.shape[0], -1, -1)
        return self.hopfield(x, state, mask=mask).flatten(1)


class HopfieldLayer(nn.Module):
    """hflayers.HopfieldLayer as a lookup: `quantity` learned stored patterns K (quantity, d_in) and their learned
    values V (quantity, d_out); x (..., d_in) -> softmax(beta x K^T) V, beta = 1/sqrt(d_in) unless given.
    normalize=True puts LayerNorm on x and K (the package's default); the registry builds it bare."""

    def __init__(self, input_size, output_size=None, quantity=64, scaling=None, normalize=False):
        super().__init__()
        output_size = output_size or input_size
        self.beta = scaling if scaling is not None else 1 / math.sqrt(input_size)
        self.keys = nn.Parameter(torch.randn(quantity, input_size))
        self.values = nn.Parameter(torch.randn(quantity, output_size) / math.sqrt(quantity))
        self.norm = nn.LayerNorm(input_size, elementwise_affine=False) if normalize else nn.Identity()

    def forward(self, x):
        return torch.softmax(self.beta * self.norm(x) @ self.norm(self.keys).T, -1) @ self.values


def softmax_attention(q, k, v, beta):
    """softmax(beta q k^T) v through torch's fused kernel: the reference the update is checked against."""
    return F.scaled_dot_product_attention(q, k, v, scale=beta)


register("hopfield", layer=lambda d_in, d_out, quantity: HopfieldLayer(d_in, d_out, quantity),
         params=lambda d_in, d_out, quantity: quantity * (d_in + d_out),
         macs=lambda d_in, d_out, quantity: quantity * (d_in + d_out),
         block=lambda d, h, quantity: HopfieldLayer(d, d, h),  # h stored patterns: d -> h (softmax) -> d
         block_params=lambda d, h, quantity: 2 * d * h, block_macs=lambda d, h, quantity: 2 * d * h,
         hyper={"quantity": 64}, nonlinear=True, cite="Ramsauer et al. 2021 (HopfieldLayer lookup)")
