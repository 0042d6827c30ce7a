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


# ----------------------------------------------------------------------------------------------- HIGGS (appended)
# Data-free quantization with Hadamard rotations and Gaussian MSE-optimal grids, and dynamic bit allocation
# (Malinovskii, Panferov, Ilin, Guo, Richtarik, Alistarh, "HIGGS: Pushing the Limits of Large Language Model
# Quantization via the Linearity Theorem", NAACL 2025). Weights are quantized in groups of g consecutive entries of
# the row-major flattened matrix; a grid is a (n,) tensor (scalar, p = 1) or (n, p) tensor (vector, p = 2) of points.

def fwht(x):
    """Orthonormal fast Walsh-Hadamard transform along the last dimension (a power of two): H x / sqrt(n), with H
    the Sylvester Hadamard matrix. H / sqrt(n) is symmetric and orthogonal, so fwht is its own inverse."""
    n = x.shape[-1]
    if n & (n - 1):
        raise ValueError(f"fwht needs a power-of-two length, got {n}")
    shape = x.shape
    y = x.reshape(-1, n)
    h = 1
    while h < n:
        y = y.view(-1, n // (2 * h), 2, h)
        y = torch.stack((y[:, :, 0] + y[:, :, 1], y[:, :, 0] - y[:, :, 1]), dim=2)
        h *= 2
    return (y.reshape(shape) / n ** 0.5).to(x.dtype)


def random_signs(n, seed, dtype=torch.float64):
    """n random signs (+1 / -1) from `seed`: the diagonal D of the randomised Hadamard transform H D."""
    gen = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 2, (n,), generator=gen) * 2 - 1).to(dtype)


def rht(x, signs):
    """Randomised Hadamard transform of the last dimension: (H / sqrt(n)) diag(signs) x."""
    return fwht(x * signs.to(x.device, x.dtype))


def inverse_rht(y, signs):
    """The exact inverse of rht: diag(signs) (H / sqrt(n)) y."""
    return fwht(y) * signs.to(y.device, y.dtype)


def _phi(x):
    return torch.exp(-0.5 * x ** 2) / (2 * torch.pi) ** 0.5


def gaussian_cell_mse(points):
    """E[(X - Q(X))^2] for X ~ N(0, 1) and Q the nearest point of the sorted scalar grid `points`, in closed form
    (per cell (a, b): dP (1 + c^2) + a phi(a) - b phi(b) - 2 c (phi(a) - phi(b)))."""
    c = torch.sort(points.double()).values
    inf = torch.tensor([float("inf")], dtype=c.dtype)
    edges = torch.cat((-inf, (c[1:] + c[:-1]) / 2, inf))
    a, b = edges[:-1], edges[1:]
    dp = torch.special.ndtr(b) - torch.special.ndtr(a)
    pa, pb = _phi(a), _phi(b)
    apa = torch.where(torch.isinf(a), torch.zeros_like(a), a * pa)
    bpb = torch.where(torch.isinf(b), torch.zeros_like(b), b * pb)
    return float((dp * (1 + c ** 2) + apa - bpb - 2 * c * (pa - pb)).sum())


def lloyd_max_grid(n_points, iters=2000, tol=1e-13):
    """The MSE-optimal scalar quantizer of N(0, 1) with n_points levels (Lloyd-Max), by Lloyd's iteration with exact
    Gaussian centroids: each point moves to E[X | X in its cell] = (phi(a) - phi(b)) / (Phi(b) - Phi(a))."""
    c = torch.special.ndtri((torch.arange(n_points, dtype=torch.float64) + 0.5) / n_points)
    inf = torch.tensor([float("inf")], dtype=torch.float64)
    for _ in range(iters):
        edges = torch.cat((-inf, (c[1:] + c[:-1]) / 2, inf))
        a, b = edges[:-1], edges[1:]
        new = (_phi(a) - _phi(b)) / (torch.special.ndtr(b) - torch.special.ndtr(a))
        if (new - c).abs().max() < tol:
            return new
        c = new
    return c


def clvq_grid(n_points, dim, samples=1 << 16, iters=60, seed=0):
    """A vector grid of n_points in R^dim for N(0, I): k-means (Lloyd's algorithm on samples, the batch form of
    competitive-learning VQ), started from random samples. Returns (n_points, dim), float64."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(samples, dim, generator=gen, dtype=torch.float64)
    c = x[torch.randperm(samples, generator=gen)[:n_points]].clone()
    for _ in range(iters):
        idx = torch.cdist(x, c).argmin(1)
        sums = torch.zeros_like(c).index_add_(0, idx, x)
        counts = torch.bincount(idx, minlength=n_points).to(x.dtype)
        c = torch.where(counts[:, None] > 0, sums / counts.clamp(min=1)[:, None], c)
    return c


def nf_grid(bits):
    """A NormalFloat-style quantile grid in [-1, 1] (QLoRA's NF4 construction at any bit width): 2^(bits-1)
    positive and 2^(bits-1) - 1 negative quantiles of N(0, 1) at evenly spaced probabilities up to `offset`, an exact
    zero, normalised by the largest. offset = 1 - (1 / (2 (2^bits - 1)) + 1 / (2^(bits + 1))) / 2 (0.9677 at 4 bits)."""
    k = 2 ** bits
    offset = 1 - 0.5 * (1 / (2 * (k - 1)) + 1 / (2 * k))
    pos = torch.special.ndtri(torch.linspace(offset, 0.5, k // 2 + 1, dtype=torch.float64)[:-1])
    neg = -torch.special.ndtri(torch.linspace(offset, 0.5, k // 2, dtype=torch.float64)[:-1])
    v = torch.cat((pos, torch.zeros(1, dtype=torch.float64), neg))
    return torch.sort(v / v.abs().max()).values


def uniform_grid(bits):
    """2^bits evenly spaced points on [-1, 1] (symmetric absmax round-to-nearest)."""
    return torch.linspace(-1, 1, 2 ** bits, dtype=torch.float64)


def nearest_point(x, grid):
    """Each entry of x (scalar grid (n,)) or each p-tuple of the last dimension (vector grid (n, p)) replaced by its
    nearest grid point."""
    grid = grid.to(x.device, x.dtype)
    if grid.dim() == 1:
        g = torch.sort(grid).values
        idx = torch.bucketize(x.contiguous(), (g[1:] + g[:-1]) / 2)
        return g[idx]
    p = grid.shape[1]
    flat = x.reshape(-1, p)
    chunk = max(1, (1 << 24) // grid.shape[0])  # distance matrices of at most 2^24 entries
    idx = torch.cat([torch.cdist(flat[i:i + chunk], grid).argmin(1) for i in range(0, len(flat), chunk)])
    return grid[idx].reshape(x.shape)


def grid_bits(grid):
    """Code bits per weight of a grid: log2(n) / p."""
    import math
    return math.log2(grid.shape[0]) / (1 if grid.dim() == 1 else grid.shape[1])


def _groups(w, group):
    if w.numel() % group:
        raise ValueError(f"{w.numel()} weights do not split into groups of {group}")
    return w.reshape(-1, group)


def absmax_quantize(w, grid, group):
    """Grid in [-1, 1] scaled per group of `group` consecutive weights by the group's absolute maximum (NF / RTN
    style; one scale per group). Returns the dequantized weights, shaped like w."""
    g = _groups(w, group)
    s = g.abs().amax(1, keepdim=True)
    s = torch.where(s > 0, s, torch.ones_like(s))
    return (nearest_point(g / s, grid) * s).reshape(w.shape)


def higgs_quantize(w, grid, group, signs=None, scale="rms", rotate=True, return_scale=False):
    """HIGGS: each group of `group` (a power of two) consecutive weights rotated by the randomised Hadamard transform,
    divided by its root mean square (so that it is close to N(0, 1) entrywise), rounded to the nearest point of
    the Gaussian-MSE-optimal `grid`, rescaled and rotated back. `signs` (group,) default: seed 0. Returns the
    dequantized weights, shaped like w. `scale="absmax"` instead scales the grid's largest point to the group's
    largest entry (a control); a tensor (groups, 1) gives stored scales (dequantize -> quantize with the stored scales
    is the identity). `rotate=False` skips the rotation (a control: the same grid on the raw groups).
    `return_scale`: also return the scales (groups, 1)."""
    if signs is None:
        signs = random_signs(group, 0)
    if not rotate:
        signs = None
    g = _groups(w, group) if signs is None else rht(_groups(w, group), signs)
    if torch.is_tensor(scale):
        s = scale
    elif scale == "rms":
        s = g.pow(2).mean(1, keepdim=True).sqrt()
    else:
        s = g.abs().amax(1, keepdim=True) / grid.abs().max()
    s = torch.where(s > 0, s, torch.ones_like(s))
    q = nearest_point(g / s, grid) * s
    q = (q if signs is None else inverse_rht(q, signs)).reshape(w.shape)
    return (q, s) if return_scale else q


def relative_error(w, q):
    """t^2 = |q - w|_F^2 / |w|_F^2."""
    return float(((q - w) ** 2).sum() / (w ** 2).sum())


# ----------------------------------------------------------------------------------------------- bit allocation

def dp_allocate(alphas, errors, costs, budget):
    """Exact multiple-choice knapsack by dynamic programming: choose one option j_l per layer to minimise
    sum_l alphas[l] * errors[l][j_l] subject to sum_l costs[l][j_l] <= budget, with integer costs (discretise
    first). Returns (choice list, objective); raises ValueError when no choice fits."""
    inf = float("inf")
    best = [0.0] + [inf] * budget  # best[c]: smallest objective of the layers so far at total cost exactly c
    back = []
    for a, errs, cs in zip(alphas, errors, costs):
        new, arg = [inf] * (budget + 1), [-1] * (budget + 1)
        for c0, v0 in enumerate(best):
            if v0 == inf:
                continue
            for j, (e, c) in enumerate(zip(errs, cs)):
                c1 = c0 + int(c)
                if c1 <= budget and v0 + a * e < new[c1]:
                    new[c1], arg[c1] = v0 + a * e, j
        back.append(arg)
        best = new
    c = min(range(budget + 1), key=lambda k: best[k])
    if best[c] == inf:
        raise ValueError("no allocation fits the budget")
    value, choice = best[c], []
    for arg, cs in zip(reversed(back), reversed(costs)):
        j = arg[c]
        choice.append(j)
        c -= int(cs[j])
    return choice[::-1], value


def greedy_allocate(alphas, errors, costs, budget):
    """The control: start every layer at its cheapest option and repeatedly take the upgrade with the largest
    decrease of alpha * error per unit of added cost that still fits. Returns (choice list, objective)."""
    choice = [min(range(len(cs)), key=lambda j: cs[j]) for cs in costs]
    spent = sum(cs[j] for cs, j in zip(costs, choice))
    while True:
        best, pick = 0.0, None
        for l, (a, errs, cs) in enumerate(zip(alphas, errors, costs)):
            for j in range(len(cs)):
                dc = cs[j] - cs[choice[l]]
                gain = a * (errs[choice[l]] - errs[j])
                if dc > 0 and spent + dc <= budget and gain / dc > best:
                    best, pick = gain / dc, (l, j, dc)
        if pick is None:
            break
        choice[pick[0]] = pick[1]
        spent += pick[2]
    return choice, sum(a * errs[j] for a, errs, j in zip(alphas, errors, choice))
