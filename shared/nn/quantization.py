"""Post-training weight quantization of a linear layer: round-to-nearest on a uniform grid, GPTQ, Babai's nearest
plane algorithm, and Babai's error bound (Chen, Shabanzadeh, Crncevic, Hoefler, Alistarh, "The Geometry of LLM
Quantization: GPTQ as Babai's Nearest Plane Algorithm", ICLR 2026; GPTQ: Frantar et al., ICLR 2023).

Conventions. A layer's weights W are (rows, n); calibration inputs X are (m, n) (one sample a row) and
H = X^T X / m (+ damping). One row w is quantized to q = s (z - zp) with integer codes z in [0, 2^bits - 1] (per-row
scale s and zero point zp, fixed before quantization, so that the set of reachable q is a fixed (shifted) lattice).
The layer error of a row is (w - q)^T H (w - q) = s^2 (y - z)^T H (y - z), y = w / s + zp the continuous codes: a
closest-vector problem with target A y on the lattice A Z^n, H = A^T A.

"Without clipping" (clip=False) means codes are not clamped to [0, 2^bits - 1] (the grid extends): only then is the
problem a pure lattice problem and Babai's bound applies. Everything here works in the dtype it is given (use
float64 for exact comparisons).
"""
import torch

ORDERS = ("natural", "reverse", "act", "greedy")


# ----------------------------------------------------------------------------------------------- grid and RTN

def minmax_grid(w, bits, shrink=1.0):
    """Per-row asymmetric min-max grid: (scale (rows, 1), zero point (rows, 1), maxq). `shrink` < 1 narrows the grid
    (the scale is multiplied by it, the centre kept), so that weights at the row's ends clip."""
    maxq = 2 ** bits - 1
    lo = w.min(dim=1, keepdim=True).values.clamp(max=0)
    hi = w.max(dim=1, keepdim=True).values.clamp(min=0)
    scale = (hi - lo) / maxq
    scale = torch.where(scale > 0, scale, torch.ones_like(scale)) * shrink
    centre = (hi + lo) / 2
    zero = torch.round(maxq / 2 - centre / scale)
    return scale, zero, maxq


def to_codes(w, scale, zero, maxq, clip=True):
    """Nearest integer codes of w on the grid (ties to even, as torch.round), clamped to [0, maxq] when clip."""
    z = torch.round(w / scale + zero)
    return z.clamp(0, maxq) if clip else z


def from_codes(z, scale, zero):
    return scale * (z - zero)


def rtn(w, scale, zero, maxq, clip=True):
    """Round-to-nearest: (codes, dequantized weights)."""
    z = to_codes(w, scale, zero, maxq, clip)
    return z, from_codes(z, scale, zero)


# ----------------------------------------------------------------------------------------------- Hessian and orders

def hessian(x, damp=0.01):
    """H = X^T X / m + damp * mean(diag) I (GPTQ's damping, relative to the mean diagonal)."""
    h = x.T @ x / x.shape[0]
    return h + damp * h.diagonal().mean() * torch.eye(h.shape[0], dtype=h.dtype, device=h.device)


def inverse_factor(h):
    """GPTQ's factor: the upper-triangular U with H^-1 = U^T U."""
    return torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)


def column_order(h, kind):
    """The column order GPTQ processes: natural (0..n-1), reverse (n-1..0, 'back-to-front': Babai's order), act
    (descending diag H, GPTQ's act-order) or greedy (a pivoted Cholesky of H taking the smallest remaining pivot at
    each step, processed back to front: the order is chosen from its end, each time the column whose pivot d_i,
    given the columns placed after it, is smallest; the dynamic form of act-order)."""
    n = h.shape[0]
    if kind == "natural":
        return torch.arange(n)
    if kind == "reverse":
        return torch.arange(n - 1, -1, -1)
    if kind == "act":
        return torch.argsort(h.diagonal(), descending=True, stable=True).cpu()
    if kind == "greedy":  # built from the back: the column processed last has pivot H_jj, the one before it the
        g = h.clone()     # diagonal of the Schur complement of H on the columns still unplaced, and so on
        remaining = torch.ones(n, dtype=torch.bool, device=h.device)
        back = []
        for _ in range(n):
            d = torch.where(remaining, g.diagonal(), torch.full_like(g.diagonal(), torch.inf))
            j = int(torch.argmin(d))
            back.append(j)
            remaining[j] = False
            g -= torch.outer(g[:, j], g[j, :]) / g[j, j]  # Schur complement: condition on column j
        return torch.tensor(back[::-1])
    raise ValueError(f"order {kind!r} is not one of {ORDERS}")


# ----------------------------------------------------------------------------------------------- GPTQ

def gptq(w, h, scale, zero, maxq, order=None, clip=True, block=None):
    """GPTQ (Frantar et al. 2023) with fixed per-row grids: columns in `order` (default natural); each column is
    rounded, its error divided by U_jj is propagated to the columns not yet processed through the row j of U (H^-1 =
    U^T U in the processing order). `block`: lazy batch updates of that many columns (the same arithmetic, regrouped).
    Returns (codes (rows, n), dequantized weights), both in the original column order."""
    n = w.shape[1]
    perm = torch.arange(n) if order is None else torch.as_tensor(order)
    inv = torch.argsort(perm)
    u = inverse_factor(h[perm][:, perm])
    w = w[:, perm].clone()
    z = torch.zeros_like(w)
    block = block or n
    for b0 in range(0, n, block):
        b1 = min(b0 + block, n)
        wb = w[:, b0:b1].clone()
        errs = torch.zeros_like(wb)
        for j in range(b1 - b0):
            col = wb[:, j]
            zj = to_codes(col[:, None], scale, zero, maxq, clip)[:, 0]
            z[:, b0 + j] = zj
            err = (col - from_codes(zj[:, None], scale, zero)[:, 0]) / u[b0 + j, b0 + j]
            wb[:, j:] -= torch.outer(err, u[b0 + j, b0:b1][j:])
            errs[:, j] = err
        w[:, b1:] -= errs @ u[b0:b1, b1:]
    z = z[:, inv]
    return z, from_codes(z, scale, zero)


# ----------------------------------------------------------------------------------------------- Babai

def gram_schmidt(b):
    """Gram-Schmidt vectors (columns) of the basis b (d, n), in column order, without normalisation (modified GS)."""
    g = b.clone()
    for i in range(b.shape[1]):
        gi = g[:, i]
        if i + 1 < b.shape[1]:
            g[:, i + 1:] -= torch.outer(gi, gi @ g[:, i + 1:] / (gi @ gi))
    return g


def babai_nearest_plane(b, t, lo=None, hi=None):
    """Babai's nearest plane algorithm (1986) for the closest vector to targets t (k, d) in the lattice b Z^n (basis
    columns b (d, n)): for i = n..1, c_i = round(<t, b~_i> / |b~_i|^2) (clamped to [lo, hi] if given), t -= c_i b_i.
    Returns the integer coefficients c (k, n)."""
    g = gram_schmidt(b)
    t = t.clone()
    c = torch.zeros(t.shape[0], b.shape[1], dtype=t.dtype, device=t.device)
    for i in range(b.shape[1] - 1, -1, -1):
        ci = torch.round(t @ g[:, i] / (g[:, i] @ g[:, i]))
        if lo is not None:
            ci = ci.clamp(lo, hi)
        c[:, i] = ci
        t -= torch.outer(ci, b[:, i])
    return c


def babai_layer(w, h, scale, zero, maxq, order=None, clip=False):
    """Babai's nearest plane on the Hessian lattice of a layer: basis A = chol(H)^T (H = A^T A, A upper triangular,
    columns in `order`), targets A y with y = w / scale + zero. Returns the codes (rows, n) in the original order."""
    n = w.shape[1]
    perm = torch.arange(n) if order is None else torch.as_tensor(order)
    a = torch.linalg.cholesky(h[perm][:, perm]).T
    y = (w / scale + zero)[:, perm]
    c = babai_nearest_plane(a, y @ a.T, *((0, maxq) if clip else (None, None)))
    return c[:, torch.argsort(perm)]


def babai_bound(h, scale, order=None):
    """Babai's bound on the layer error of GPTQ in `order` without clipping, per row: 1/4 sum_i s^2 d_i, where d_i are
    the pivots of H in GPTQ's processing order, d_i = 1 / U_ii^2 (the squared Gram-Schmidt norms of the Hessian lattice
    basis taken in the reverse order)."""
    n = h.shape[0]
    perm = torch.arange(n) if order is None else torch.as_tensor(order)
    d = inverse_factor(h[perm][:, perm]).diagonal() ** -2
    return 0.25 * scale.reshape(-1) ** 2 * d.sum()


def layer_error(w, q, h):
    """Per-row layer error (w - q)^T H (w - q)."""
    e = w - q
    return ((e @ h) * e).sum(dim=1)
