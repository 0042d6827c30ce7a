"""Multilinear Operator Networks (MONet; Cheng, Chrysos, Georgopoulos, Cevher, ICLR 2024): the Mu-layer, the
Poly-block, the spatial shift, a small MONet, and a numerical check of the polynomial degree a network computes.

Mu-layer, the paper's form (dossier 2.1):   y = C [ (A x) * (B D x) + A x ]
with * the Hadamard product and B D a rank-l factorisation (shared.nn.structured.LowRank: D = v, B = u). The
official code (PolyMlp) adds biases on both branches (initialised to 1), a learnable scalar alpha on the product, a
LayerNorm on each branch (`branch_norm`) and, in a block's first Mu-layer, a spatial shift of both branches. Without
the LayerNorms the layer is exactly a bilinear layer on [x, 1] whose right half has rank l + 1:
    a * (alpha b + 1) = (A' z) * (R' z),  z = [x, 1],  A' = [A, a0],  R' = [alpha B D, alpha b0 + 1]
so every weight analysis of shared.nn.bilinear_analysis applies (`MuLayer.bilinear_weights`).

`mix` replaces what the layer computes from its branches, for ablations:
    "product" C (alpha a * b + a)      the Mu-layer (shortcut=False drops the + a)
    "linear"  C a                      the Hadamard product removed: a linear map
    "gelu"    C gelu(a)                an MLP with an activation (the low-rank branch unused: build it with
                                       `gelu_width` hidden units to match the Mu-layer's parameters)

A Poly-block is x + Mu1(N(x)), then x + Mu2(N(x)) with one LayerNorm N shared by both (as the official code) or none
(norm=False); without any LayerNorm it is a polynomial of degree 4 in x, and a stack of k blocks one of degree 4^k.
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.structured import LowRank

MIXES = ("product", "linear", "gelu")


def spatial_shift(x):
    """S^2-MLP's shift of a token grid (N, H, W, C): the four channel quarters move one step along +H, -H, +W, -W.
    Out of place (torch.cat); the edge row or column a shift vacates keeps its own value, as the official code's
    in-place slice assignments intend. (Those overlap in the +1 directions, which torch does not define: the dossier
    measured row 0 smeared over every row.)"""
    c = x.shape[-1]
    q = c // 4  # the last group takes the remainder when c is not a multiple of 4
    parts = x.split([q, q, q, c - 3 * q], dim=-1)
    return torch.cat([_step(parts[0], 1, 1), _step(parts[1], -1, 1), _step(parts[2], 1, 2), _step(parts[3], -1, 2)],
                     dim=-1)


def _step(x, step, dim):
    """x shifted by one along `dim` (+1: index i takes i - 1), the vacated edge keeping its own value."""
    n = x.shape[dim]
    if step > 0:
        return torch.cat([x.narrow(dim, 0, 1), x.narrow(dim, 0, n - 1)], dim=dim)
    return torch.cat([x.narrow(dim, 1, n - 1), x.narrow(dim, n - 1, 1)], dim=dim)


class MuLayer(nn.Module):
    """(..., d_in) -> (..., d_out); with shift=True the input is a token grid (N, H, W, d_in).

    hidden: m (the Hadamard width); rank: l (the official code uses m // 8). Weights start as nn.Linear's default,
    U(+-1/sqrt(fan_in)) per factor; the branch biases at `bias_init` (the code's 1: the product then starts near the
    shortcut, a * 1)."""

    def __init__(self, d_in, d_out, hidden, rank, mix="product", shortcut=True, alpha=True, branch_norm=False,
                 shift=False, bias_init=1.0):
        super().__init__()
        if mix not in MIXES:
            raise ValueError(f"mix must be one of {MIXES}, got {mix!r}")
        self.d_in, self.d_out, self.hidden, self.rank = d_in, d_out, hidden, rank
        self.mix, self.shortcut, self.shift = mix, shortcut, shift
        self.left = nn.Linear(d_in, hidden)  # A, a0
        self.out = nn.Linear(hidden, d_out)  # C, c0
        nn.init.constant_(self.left.bias, bias_init)
        if mix == "product":
            self.right = LowRank(d_in, hidden, rank)  # D = right.v (l, d_in), B = right.u (m, l)
            for param, fan_in in ((self.right.v, d_in), (self.right.u, rank)):
                nn.init.uniform_(param, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))
            self.right_bias = nn.Parameter(torch.full((hidden,), float(bias_init)))
            self.alpha = nn.Parameter(torch.ones(())) if alpha else None
            self.norms = nn.ModuleList([nn.LayerNorm(hidden), nn.LayerNorm(hidden)]) if branch_norm else None

    def forward(self, x):
        a = self.left(x)
        if self.shift:
            a = spatial_shift(a)
        if self.mix == "linear":
            return self.out(a)
        if self.mix == "gelu":
            return self.out(F.gelu(a))
        r = x @ self.right.v.T  # D x, (.., l)
        if self.shift:
            r = spatial_shift(r)
        b = r @ self.right.u.T + self.right_bias
        if self.norms is not None:
            a, b = self.norms[0](a), self.norms[1](b)
        h = a * b if self.alpha is None else self.alpha * a * b
        return self.out(h + a if self.shortcut else h)

    @torch.no_grad()
    def bilinear_weights(self, dtype=torch.float64):
        """(left (m, d_in+1), right (m, d_in+1)): out(left z * right z) + c0 is this layer on z = [x, 1] (shift off,
        no branch LayerNorm). right has rank <= rank + 1, so each class's interaction matrix has rank <= 2 (rank+1)."""
        if self.mix != "product" or self.norms is not None or self.shift:
            raise ValueError("bilinear_weights needs mix='product', no branch LayerNorm and no shift")
        alpha = 1.0 if self.alpha is None else self.alpha.to(dtype)
        left = torch.cat([self.left.weight.to(dtype), self.left.bias.to(dtype)[:, None]], dim=1)
        right = torch.cat([alpha * self.right.matrix().to(dtype), alpha * self.right_bias.to(dtype)[:, None]], dim=1)
        if self.shortcut:
            right[:, -1] += 1
        return left, right


def gelu_width(d_in, d_out, hidden, rank, branch_norm=False):
    """The hidden width of a mix='gelu' layer with (nearly) the parameters of a Mu-layer (d_in, d_out, hidden, rank):
    the product's low-rank branch, its bias, alpha and branch LayerNorms go to extra GELU units."""
    mu = hidden * (d_in + 1 + d_out) + rank * (d_in + hidden) + hidden + 1 + 4 * hidden * branch_norm
    return round(mu / (d_in + 1 + d_out))


def mu_params(d_in, d_out, hidden, rank):
    """Trainable numbers of a Mu-layer (mix='product', alpha, no branch norm): A, a0, D, B, b0, alpha, C, c0."""
    return hidden * (d_in + 1) + rank * (d_in + hidden) + hidden + 1 + d_out * (hidden + 1)


class PolyBlock(nn.Module):
    """x + Mu1(N(x)) then x + Mu2(N(x)) on a token grid (N, H, W, dim): Mu1 of hidden dim with the spatial shift
    (shift=True), Mu2 of hidden expansion * dim; rank = hidden // rank_ratio; one LayerNorm N shared by both
    (norm=True, the code's block) or none. branch_norm follows norm, as in the code's PolyMlp."""

    def __init__(self, dim, expansion=3, rank_ratio=8, mix="product", shortcut=True, shift=True, norm=True):
        super().__init__()
        self.norm = nn.LayerNorm(dim) if norm else nn.Identity()
        layers = []
        for hidden, shifted in ((dim, shift), (expansion * dim, False)):
            rank = max(1, hidden // rank_ratio)
            width = gelu_width(dim, dim, hidden, rank, norm) if mix == "gelu" else hidden
            layers.append(MuLayer(dim, dim, width, rank, mix=mix, shortcut=shortcut, branch_norm=norm,
                                  shift=shifted))
        self.mu1, self.mu2 = layers

    def forward(self, x):
        x = x + self.mu1(self.norm(x))
        return x + self.mu2(self.norm(x))


class MONet(nn.Module):
    """A small MONet on flat images (N, C*H*W), channels first: the pyramid patch embedding (conv k2 s2 to dims[0]/2,
    then conv k2 s2 to dims[0]; stem_convs=1 keeps only the second, stride 2), stages of Poly-blocks with a 3x3
    stride-2 conv between stages, a final LayerNorm (none when norm=False), global average pool and a zero-initialised
    linear head. Every part but the Mu-layers (and LayerNorms) is linear."""

    def __init__(self, image_shape, n_classes, dims, depths, expansion=3, rank_ratio=8, mix="product",
                 shortcut=True, shift=True, norm=True, stem_convs=2):
        super().__init__()
        if len(dims) != len(depths):
            raise ValueError(f"dims {dims} and depths {depths} must have one entry per stage")
        self.image_shape = tuple(image_shape)
        c = self.image_shape[0]
        stem = [nn.Conv2d(c, dims[0] // 2, 2, 2)] if stem_convs == 2 else []
        stem.append(nn.Conv2d(dims[0] // 2 if stem_convs == 2 else c, dims[0], 2, 2))
        self.stem = nn.Sequential(*stem)
        self.stages = nn.ModuleList()
        self.downsamples = nn.ModuleList()
        for i, (dim, depth) in enumerate(zip(dims, depths)):
            self.stages.append(nn.Sequential(*[PolyBlock(dim, expansion, rank_ratio, mix, shortcut, shift, norm)
                                               for _ in range(depth)]))
            if i + 1 < len(dims):
                self.downsamples.append(nn.Conv2d(dim, dims[i + 1], 3, 2, 1))
        self.norm = nn.LayerNorm(dims[-1]) if norm else nn.Identity()
        self.head = nn.Linear(dims[-1], n_classes)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, x):
        x = self.stem(x.view(-1, *self.image_shape)).permute(0, 2, 3, 1)  # (N, H, W, C) tokens
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i < len(self.downsamples):
                x = self.downsamples[i](x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        return self.head(self.norm(x).mean(dim=(1, 2)))


def degree_residuals(f, x0, direction, degrees, nodes=64):
    """{k: how far f is from a polynomial of degree k along the line x0 + t direction, t in [-1, 1]}: the largest
    residual of a least-squares Chebyshev fit of degree k to f at `nodes` Chebyshev points, over every output,
    relative to the largest |f - mean f| on the line. f maps (n, ...) -> (n, outputs); run it in float64. A network
    of exact degree K gives rounding-level residuals for k >= K and not for k < K (when its top coefficient on the
    line is not negligible)."""
    t = np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)
    tt = torch.as_tensor(t, dtype=x0.dtype).view(-1, *([1] * x0.dim()))
    with torch.no_grad():
        y = f(x0.unsqueeze(0) + tt * direction.unsqueeze(0)).reshape(nodes, -1).cpu().numpy()
    scale = np.abs(y - y.mean(0)).max()
    out = {}
    for k in degrees:
        fit = np.polynomial.chebyshev.chebval(t, np.polynomial.chebyshev.chebfit(t, y, k)).T
        out[k] = float(np.abs(y - fit).max() / scale)
    return out


def _mu_macs(d_in, d_out, hidden, rank):
    return hidden * d_in + rank * (d_in + hidden) + hidden * d_out


def _register():
    """The Mu-layer as a family of shared.nn.layer_registry: layer d_in -> d_out with hidden = d_out; block
    d -> h -> d as the Poly-block's second Mu-layer (hidden h); rank = hidden // rank_ratio (the code's 8)."""
    from shared.nn.layer_registry import register

    def rank(hidden, rank_ratio):
        return max(1, hidden // rank_ratio)

    register("mu",
             layer=lambda d_in, d_out, rank_ratio: MuLayer(d_in, d_out, d_out, rank(d_out, rank_ratio)),
             params=lambda d_in, d_out, rank_ratio: mu_params(d_in, d_out, d_out, rank(d_out, rank_ratio)),
             macs=lambda d_in, d_out, rank_ratio: _mu_macs(d_in, d_out, d_out, rank(d_out, rank_ratio)),
             block=lambda d, h, rank_ratio: MuLayer(d, d, h, rank(h, rank_ratio)),
             block_params=lambda d, h, rank_ratio: mu_params(d, d, h, rank(h, rank_ratio)),
             block_macs=lambda d, h, rank_ratio: _mu_macs(d, d, h, rank(h, rank_ratio)),
             hyper={"rank_ratio": 8}, nonlinear=True, cite="Cheng et al. 2024 (MONet)")


_register()
