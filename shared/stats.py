"""Correlation statistics the analyses share: Pearson (torch) and Spearman (scipy)."""
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
