"""Sparse parities on the Boolean hypercube, generated (no download): x uniform on {-1, +1}^d, and the label the
product of the coordinates in `support`, negated for two coordinates so that y = -x_i x_j is Glasgow's (2023) XOR.

    x, y = hypercube_parity(d, n, support=(0, 1), generator=g)    # x (n, d) float32 of +-1, y (n,) of +-1

A seeded torch.Generator makes the draw reproducible; the first n rows of a larger draw from the same generator
state are the draw of n rows (nested training sets for a sample-size sweep).
"""
import torch


def parity_label(x, support=(0, 1)):
    """y = -prod_{i in support} x_i for |support| = 2 (XOR as Glasgow writes it), +prod otherwise."""
    prod = x[..., list(support)].prod(-1)
    return -prod if len(support) == 2 else prod


def hypercube_parity(d, n, support=(0, 1), generator=None):
    if not 0 < len(support) <= d or len(set(support)) != len(support) or max(support) >= d or min(support) < 0:
        raise ValueError(f"support {tuple(support)} must be distinct coordinates of 0..{d - 1}")
    x = torch.randint(0, 2, (n, d), generator=generator).float() * 2 - 1
    return x, parity_label(x, support)
