"""Correlation statistics the analyses share: Pearson (torch) and Spearman (numpy)."""
import numpy as np


def pearson(a, b):
    """Pearson r; nan when either side is constant (no variance to correlate)."""
    a, b = a - a.mean(), b - b.mean()
    denominator = (a.norm() * b.norm()).item()
    return (a @ b).item() / denominator if denominator > 0 else float("nan")


def spearman(x, y):
    """Rank correlation; tied values get their average rank."""
    rx, ry = _ranks(np.asarray(x, float)), _ranks(np.asarray(y, float))
    return float(np.corrcoef(rx, ry)[0, 1])


def _ranks(a):
    ranks = np.empty(len(a))
    ranks[a.argsort()] = np.arange(len(a))
    for value in np.unique(a):
        ranks[a == value] = ranks[a == value].mean()
    return ranks
