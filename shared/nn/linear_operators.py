"""Linear layers as matrices: the operator of a convolution on a given input shape, null-space bases, SVD summaries.

A layer that maps more input dimensions than it has outputs (a wide-to-narrow Linear, a strided or channel-reducing
Conv) has a null space: perturbations of any size in it leave the layer's output, and so the network's, unchanged.
"""
import math

import torch
from torch import nn


def operator_matrix(linear_fn, input_shape, dtype=torch.float64, chunk=1024):
    """The matrix (out_dim, in_dim) of a linear, bias-free function of one input of `input_shape` (no batch axis):
    column j is linear_fn(e_j). `linear_fn` takes a batch (B, *input_shape)."""
    n = math.prod(input_shape)
    columns = []
    for start in range(0, n, chunk):
        basis = torch.eye(n, dtype=dtype)[start:start + chunk].reshape(-1, *input_shape)
        columns.append(linear_fn(basis).reshape(basis.shape[0], -1))
    return torch.cat(columns).T


def layer_operator(layer, input_shape, dtype=torch.float64):
    """The weight part of a Linear or Conv layer (bias dropped) as a matrix on inputs of `input_shape`."""
    if isinstance(layer, nn.Linear):
        return layer.weight.detach().to(dtype)
    if isinstance(layer, (nn.Conv1d, nn.Conv2d)):
        conv = type(layer)(layer.in_channels, layer.out_channels, layer.kernel_size, layer.stride, layer.padding,
                           layer.dilation, layer.groups, bias=False, padding_mode=layer.padding_mode).to(dtype)
        conv.weight.data.copy_(layer.weight.detach())
        with torch.no_grad():
            return operator_matrix(conv, input_shape, dtype)
    raise TypeError(f"no operator for {type(layer).__name__}: pass a Linear or Conv1d/Conv2d layer")


def null_space(matrix, rtol=1e-10):
    """An orthonormal basis (in_dim, k) of {v: matrix @ v = 0}: the right singular vectors whose singular values are
    at most rtol times the largest (and all directions beyond the rank when in_dim > out_dim)."""
    _, s, vh = torch.linalg.svd(matrix, full_matrices=True)
    rank = int((s > rtol * s[0]).sum()) if s.numel() else 0
    return vh[rank:].T


def svd_summary(singular_values, energies=(0.9, 0.99), rtol=1e-10):
    """How low-rank a map is, from its singular values (descending): numerical rank, stable rank ||A||_F^2/||A||_2^2,
    entropy rank exp(H(p)) with p = s / sum(s) (Roy & Vetterli, 2007), the number of values holding each fraction of
    the squared Frobenius norm, and the top value's share of it."""
    s = singular_values.detach().double()
    energy = s.pow(2)
    total = energy.sum()
    p = s / s.sum()
    cumulative = energy.cumsum(0) / total
    summary = {
        "numerical_rank": int((s > rtol * s[0]).sum()),
        "stable_rank": float(total / energy[0]),
        "entropy_rank": float(torch.exp(-(p * torch.log(p.clamp_min(1e-300))).sum())),
        "top_share": float(energy[0] / total),
    }
    for fraction in energies:
        summary[f"rank_{round(fraction * 100)}"] = int((cumulative < fraction - 1e-12).sum()) + 1
    return summary
