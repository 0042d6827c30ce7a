"""Statistics the analyses share: Pearson (torch) and Spearman (scipy) correlations, a least-squares slope with its
standard error (scaling exponents) and its range when each point is known only to a bracket, the crossing point of
a rate curve (phase boundaries), and the error measures of an exact identity or a reconstruction (relative error,
PSNR)."""
import math

import numpy as np
from scipy.stats import spearmanr


def pearson(a, b):
    """Pearson r; nan when either side is constant (no variance to correlate)."""
    a, b = a - a.mean(), b - b.mean()
    denominator = (a.norm() * b.norm()).item()
    return (a @ b).item() / denominator if denominator > 0 else float("nan")


def spearman(x, y):
    """Spearman's rank correlation of two 1-D sequences (scipy.stats.spearmanr): tied values get their average rank,
    as the hand-written version this replaces did (same value to 1e-16); nan when either side is constant, and nan
    when either holds a NaN (the old one ranked NaNs last and returned a number)."""
    return float(spearmanr(np.asarray(x, float), np.asarray(y, float)).statistic)


def linear_fit(x, y):
    """Ordinary least squares y = slope * x + intercept, with the slope's standard error (needs >= 3 points) and
    R^2: the fitted exponent of a scaling law when x, y are logs. Returns a dict of floats."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3:
        raise ValueError(f"a slope with an uncertainty needs at least 3 points, got {len(x)}")
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    spread = ((x - x.mean()) ** 2).sum()
    stderr = float(np.sqrt((residual ** 2).sum() / (len(x) - 2) / spread)) if spread > 0 else float("nan")
    total = ((y - y.mean()) ** 2).sum()
    r2 = float(1 - (residual ** 2).sum() / total) if total > 0 else float("nan")
    return {"slope": float(slope), "intercept": float(intercept), "slope_stderr": stderr, "r2": r2, "n": len(x)}


def crossing(x, rate, level=0.5):
    """The first x at which `rate` (sampled at increasing x) reaches `level`, interpolated linearly between the
    two samples around it; nan if it never does, x[0] if it starts there (a boundary such as the training fraction
    at which half the seeds generalise)."""
    x, rate = np.asarray(x, float), np.asarray(rate, float)
    above = np.nonzero(rate >= level)[0]
    if len(above) == 0:
        return float("nan")
    i = above[0]
    if i == 0:
        return float(x[0])
    x0, x1, r0, r1 = x[i - 1], x[i], rate[i - 1], rate[i]
    return float(x0 + (level - r0) * (x1 - x0) / (r1 - r0))


def bracket_slopes(x, lo, hi):
    """(min, max) least-squares slope of y on x when each y_i may lie anywhere in [lo_i, hi_i] (a boundary known only
    to its grid bracket): the slope is linear in y, so its extremes are at corners, all 2^n of which are fitted.
    (nan, nan) when a bracket is not finite."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    if not np.all(np.isfinite(lo + hi)):
        return float("nan"), float("nan")
    slopes = [linear_fit(x, np.where(np.array(bits) == 1, hi, lo))["slope"] for bits in np.ndindex(*(2,) * len(lo))]
    return float(min(slopes)), float(max(slopes))


def rel_err(a, b, norm="max", per_sample=False):
    """Relative error of `a` against the reference `b`: |a - b| / |b|, with |.| the largest absolute entry ("max") or
    the Euclidean norm ("l2"). A float over the whole tensors, or with per_sample=True a tensor with one value per
    row of the batch (dims after the first flattened). A zero reference gives inf or nan, never a small number."""
    if norm not in ("max", "l2"):
        raise ValueError(f"norm {norm!r} is not 'max' or 'l2'")
    diff = a - b
    if per_sample:
        diff, b = diff.flatten(1), b.flatten(1)
        if norm == "max":
            return diff.abs().amax(1) / b.abs().amax(1)
        return diff.norm(dim=1) / b.norm(dim=1)
    if norm == "max":
        return (diff.abs().max() / b.abs().max()).item()
    return (diff.norm() / b.norm()).item()


def psnr(a, b, peak=1.0, per_sample=False):
    """Peak signal-to-noise ratio 10 log10(peak^2 / MSE) in dB of `a` against `b` (pixels in [0, peak]): a float over
    the whole batch (inf where they are equal), or with per_sample=True a tensor with one value per image."""
    if per_sample:
        mse = (a - b).flatten(1).pow(2).mean(1)
        return 10 * (peak ** 2 / mse).log10()
    mse = ((a - b) ** 2).mean().item()
    return math.inf if mse == 0 else 10 * math.log10(peak ** 2 / mse)
