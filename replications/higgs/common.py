"""What this paper's analyses share: a probe that evaluates a model with some layers' weights replaced, the four
experiments (linearity by noise injection, Gaussianisation, data-free quantizers, bit allocation) and their small
statistics. Every experiment takes a list of (name, nn.Linear) and a loss function (float64)."""
import math

import torch
from torch import nn

from shared.nn import quantization as Q


class Probe:
    """The loss of a model with chosen layers' weights replaced (restored afterwards, exactly)."""

    def __init__(self, layers, loss):
        self.names = [n for n, _ in layers]
        self.params = [m.weight for _, m in layers]
        self.orig = [w.detach().clone() for w in self.params]
        self.loss = loss
        self.evals = 0
        self.base = self.evaluate({})

    @torch.no_grad()
    def evaluate(self, new):
        """Loss with layer l's weight set to new[l] (a dict; other layers unchanged)."""
        for l, w in new.items():
            self.params[l].copy_(w)
        value = float(self.loss())
        for l in new:
            self.params[l].copy_(self.orig[l])
        self.evals += 1
        return value

    def antithetic(self, deltas):
        """(L(W + d) + L(W - d)) / 2: the first-order term of the expansion cancels. Returns (mean CE, mean exp CE)."""
        plus = self.evaluate({l: self.orig[l] + d for l, d in deltas.items()})
        minus = self.evaluate({l: self.orig[l] - d for l, d in deltas.items()})
        return (plus + minus) / 2, (math.exp(plus) + math.exp(minus)) / 2


def unit_noise(w, gen):
    """Gaussian noise with |noise|_F = |w|_F: t * unit_noise has relative error exactly t^2."""
    z = torch.randn(w.shape, generator=gen, dtype=w.dtype).to(w.device)  # drawn on the CPU: the same on any device
    return z * (w.norm() / z.norm())


def r2(pred, meas):
    pred, meas = torch.as_tensor(pred), torch.as_tensor(meas)
    return float(1 - ((meas - pred) ** 2).sum() / ((meas - meas.mean()) ** 2).sum())


def concordance(a, b):
    """Fraction of pairs ordered alike by a and b (Kendall's concordance; 0.5 is chance)."""
    pairs = [(i, j) for i in range(len(a)) for j in range(i + 1, len(a))]
    return sum((a[i] - a[j]) * (b[i] - b[j]) > 0 for i, j in pairs) / len(pairs)


# ----------------------------------------------------------------------------------------------- (1) linearity

def linearity(probe, lin, seed):
    """Fit alpha_l from single-layer antithetic injections at relative sizes lin["calib_t"] (regression of the CE
    increase on t^2 through the origin), then predict lin["tests"] random multi-layer injections t_l = scale * u_l,
    u ~ U[0, 1]^L (fresh noise), at the small and the large scale (the same u and noise, only scaled)."""
    gen = torch.Generator().manual_seed(seed)
    n = len(probe.params)
    alpha, alpha_ppl = [], []
    base_ppl = math.exp(probe.base)
    for l in range(n):
        z = unit_noise(probe.orig[l], gen)
        ts = torch.tensor(lin["calib_t"], dtype=torch.float64)
        rise = [probe.antithetic({l: t * z}) for t in lin["calib_t"]]
        d_ce = torch.tensor([ce - probe.base for ce, _ in rise])
        d_ppl = torch.tensor([ppl - base_ppl for _, ppl in rise])
        alpha.append(float((ts ** 2 * d_ce).sum() / (ts ** 4).sum()))
        alpha_ppl.append(float((ts ** 2 * d_ppl).sum() / (ts ** 4).sum()))
    u = torch.rand(lin["tests"], n, generator=gen, dtype=torch.float64)
    zs = [[unit_noise(w, gen) for w in probe.orig] for _ in range(lin["tests"])]
    a, ap = torch.tensor(alpha, dtype=torch.float64), torch.tensor(alpha_ppl, dtype=torch.float64)
    out = {"alpha": alpha, "alpha_ppl": alpha_ppl}
    for regime in ("small", "large"):
        scale = lin[f"{regime}_t"]
        meas, meas_ppl = [], []
        for i in range(lin["tests"]):
            ce, ppl = probe.antithetic({l: scale * u[i, l] * zs[i][l] for l in range(n)})
            meas.append(ce - probe.base)
            meas_ppl.append(ppl - base_ppl)
        t2 = (scale * u) ** 2
        pred, pred_ppl = t2 @ a, t2 @ ap
        meas, meas_ppl = torch.tensor(meas), torch.tensor(meas_ppl)
        out[regime] = {"pred": pred.tolist(), "meas": meas.tolist(), "r2": r2(pred, meas),
                       "r2_ppl": r2(pred_ppl, meas_ppl),
                       "relerr": float(((pred - meas).abs() / meas.abs()).median())}
    return out


# ----------------------------------------------------------------------------------------------- (2) Gaussianisation

def gaussian_stats(x):
    """Excess kurtosis and Kolmogorov-Smirnov distance to N(0, 1) of the pooled values x (already standardised)."""
    x = x.flatten().double()
    kurt = float((x ** 4).mean() / (x ** 2).mean() ** 2 - 3)
    s = torch.sort(x).values
    cdf = torch.special.ndtr(s)
    k = torch.arange(1, len(s) + 1, dtype=torch.float64) / len(s)
    ks = float(torch.maximum(k - cdf, cdf - (k - 1 / len(s))).max())
    return kurt, ks


def rotated_groups(w, group, how, signs, orth):
    """Groups of `group` consecutive weights: raw, RHT-rotated, or rotated by a Haar-random orthogonal matrix;
    each group divided by its root mean square."""
    g = w.reshape(-1, group)
    if how == "rht":
        g = Q.rht(g, signs)
    elif how == "orth":
        g = g @ orth.T
    return g / g.pow(2).mean(1, keepdim=True).sqrt().clamp(min=1e-30)


def gaussianisation(weights, group, seed):
    """{how: [(kurtosis, KS) per layer]} for how in none / rht / orth, and the same for Gaussian matrices of the
    same shapes (the noise floor of the statistics)."""
    gen = torch.Generator().manual_seed(seed)
    signs = Q.random_signs(group, seed)
    orth, _ = torch.linalg.qr(torch.randn(group, group, generator=gen, dtype=torch.float64))
    out = {how: [gaussian_stats(rotated_groups(w, group, how, signs, orth)) for w in weights]
           for how in ("none", "rht", "orth")}
    out["gauss_none"] = [gaussian_stats(rotated_groups(torch.randn(w.shape, generator=gen, dtype=torch.float64),
                                                       group, "none", signs, orth)) for w in weights]
    return out


# ----------------------------------------------------------------------------------------------- (3) quantizers

def make_grids(bits_list, p2_samples, seed):
    """{(method, bits): grid} for rtn (uniform on [-1, 1], absmax), nf (NF quantiles, absmax), higgs (Lloyd-Max,
    RHT + rms), higgs_p2 (CLVQ 2-D grid with 2^(2 bits) points, RHT + rms) and norot (Lloyd-Max + rms, no rotation)."""
    grids = {}
    for b in bits_list:
        lm = Q.lloyd_max_grid(2 ** b)
        grids.update({("rtn", b): Q.uniform_grid(b), ("nf", b): Q.nf_grid(b), ("higgs", b): lm, ("norot", b): lm,
                      ("higgs_p2", b): Q.clvq_grid(2 ** (2 * b), 2, samples=p2_samples, seed=seed)})
    return grids


def quantize(w, method, grid, group, signs):
    if method in ("rtn", "nf"):
        return Q.absmax_quantize(w, grid, group)
    return Q.higgs_quantize(w, grid, group, signs, rotate=method != "norot")


# ----------------------------------------------------------------------------------------------- (4) allocation

def random_allocation(costs, budget, gen):
    """The control: every layer at its cheapest option, then upgrades to the next option in a random order of
    layers, until none fits."""
    choice = [0] * len(costs)
    spent = sum(c[0] for c in costs)
    while True:
        moved = False
        for l in torch.randperm(len(costs), generator=gen).tolist():
            j = choice[l]
            if j + 1 < len(costs[l]) and spent + costs[l][j + 1] - costs[l][j] <= budget:
                spent += costs[l][j + 1] - costs[l][j]
                choice[l] = j + 1
                moved = True
        if not moved:
            return choice


def gcd_unit(sizes):
    return math.gcd(*sizes)


class Quadratic(nn.Module):
    """The counterexample for the regime check: a linear least-squares model y = W1 x1 + W2 x2 + b (the image's two
    halves, two 'layers') with a mean-squared-error loss, which is exactly quadratic in the weights."""

    def __init__(self, d_input, n_out):
        super().__init__()
        self.split = d_input // 2
        self.layers = nn.ModuleList((nn.Linear(self.split, n_out), nn.Linear(d_input - self.split, n_out,
                                                                               bias=False)))

    def forward(self, x):
        return self.layers[0](x[:, : self.split]) + self.layers[1](x[:, self.split:])


def fit_quadratic(x, y, n_classes, ridge=1e-3):
    """Ridge least squares on one-hot targets (the model at its optimum on the training data)."""
    model = Quadratic(x.shape[1], n_classes).double()
    xa = torch.cat((x, torch.ones(len(x), 1, dtype=x.dtype)), 1)
    target = torch.nn.functional.one_hot(y, n_classes).double()
    sol = torch.linalg.solve(xa.T @ xa + ridge * len(x) * torch.eye(xa.shape[1], dtype=x.dtype), xa.T @ target)
    with torch.no_grad():
        model.layers[0].weight.copy_(sol[: model.split].T)
        model.layers[1].weight.copy_(sol[model.split: -1].T)
        model.layers[0].bias.copy_(sol[-1])
    return model
