"""Structured linear layers that replace a dense d_in -> d_out matrix: low-rank, Kronecker, Monarch and Block
Tensor-Train (BTT), with exact parameter and multiply-add counts (Qiu et al., "Compute Better Spent", ICML 2024).

Every layer maps (..., d_in) -> (..., d_out) as x @ matrix().T, like nn.Linear without a bias, and lists its
`factors()`: each trainable tensor with the fan-in and fan-out of the dense map it applies (batch axes excluded).
That list is what a parametrisation (shared.nn.parametrization) scales, factor by factor.
`macs()` is the forward multiply-adds per example; `n_params()` the trainable numbers. Both are exact.

Shapes (d = a * b splits below come from `split`, the most balanced factorisation):
  Dense      W (d_out, d_in)                                        params = macs = d_in d_out
  LowRank    V (r, d_in), U (d_out, r):  x V^T U^T                  params = macs = r (d_in + d_out)
  Kronecker  A (n0, m0), B (n1, m1):  W = A (x) B                   params 2 sqrt(d)^2, macs m0 n1 (m1 + n0)
  Monarch    R: b blocks (d_out/b, d_in/b), then a transpose (the perfect shuffle), L: b blocks (d_out/b, d_out/b)
             params = macs = (d_in d_out + d_out^2) / b
  BTT        W1 (m1, m0, n0 r), W2 (n0, m1 r, n1):  two batched matmuls with a transpose between them
             params = macs = r m1 n0 (m0 + n1) (= 2 r d^1.5 when square); r = 1 with b = sqrt(d) is Monarch
The Monarch and BTT forward passes are batched matmuls (torch.matmul over a leading block axis), so their backward
passes are batched matmuls too.
"""
import math

import torch
from torch import nn


def split(d):
    """(a, b) with a * b = d and a <= b as close as possible (a = 1 for a prime)."""
    a = math.isqrt(d)
    while d % a:
        a -= 1
    return a, d // a


class Structured(nn.Module):
    """Common interface: factors(), macs(), n_params(), matrix()."""

    def n_params(self):
        return sum(p.numel() for p in self.parameters())

    @torch.no_grad()
    def matrix(self):
        """The dense (d_out, d_in) matrix this layer applies."""
        p = next(self.parameters())
        return self(torch.eye(self.d_in, dtype=p.dtype, device=p.device)).T


class Dense(Structured):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.d_in, self.d_out = d_in, d_out
        self.weight = nn.Parameter(torch.empty(d_out, d_in))

    def forward(self, x):
        return x @ self.weight.T

    def factors(self):
        return [("weight", self.weight, self.d_in, self.d_out)]

    def macs(self):
        return self.d_in * self.d_out


class LowRank(Structured):
    def __init__(self, d_in, d_out, rank):
        super().__init__()
        self.d_in, self.d_out, self.rank = d_in, d_out, rank
        self.v = nn.Parameter(torch.empty(rank, d_in))
        self.u = nn.Parameter(torch.empty(d_out, rank))

    def forward(self, x):
        return (x @ self.v.T) @ self.u.T

    def factors(self):
        return [("v", self.v, self.d_in, self.rank), ("u", self.u, self.rank, self.d_out)]

    def macs(self):
        return self.rank * (self.d_in + self.d_out)


class Kronecker(Structured):
    """W = A (x) B: x viewed as (m0, m1) maps to A X B^T, (n0, n1)."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.d_in, self.d_out = d_in, d_out
        (self.m0, self.m1), (self.n0, self.n1) = split(d_in), split(d_out)
        self.a = nn.Parameter(torch.empty(self.n0, self.m0))
        self.b = nn.Parameter(torch.empty(self.n1, self.m1))

    def forward(self, x):
        lead = x.shape[:-1]
        x = x.reshape(-1, self.m0, self.m1) @ self.b.T  # (B, m0, n1)
        return (self.a @ x).reshape(*lead, self.d_out)  # (B, n0, n1)

    def factors(self):
        return [("a", self.a, self.m0, self.n0), ("b", self.b, self.m1, self.n1)]

    def macs(self):
        return self.m0 * self.m1 * self.n1 + self.n0 * self.m0 * self.n1


class Monarch(Structured):
    """W = L P R with R, L block-diagonal (b blocks each) and P the shuffle (b, d_out/b) -> (d_out/b, b) -> b blocks."""

    def __init__(self, d_in, d_out, blocks):
        super().__init__()
        if d_in % blocks or d_out % blocks:
            raise ValueError(f"Monarch needs d_in ({d_in}) and d_out ({d_out}) divisible by blocks ({blocks})")
        self.d_in, self.d_out, self.blocks = d_in, d_out, blocks
        self.right = nn.Parameter(torch.empty(blocks, d_out // blocks, d_in // blocks))
        self.left = nn.Parameter(torch.empty(blocks, d_out // blocks, d_out // blocks))

    def forward(self, x):
        lead, b = x.shape[:-1], self.blocks
        x = x.reshape(-1, b, self.d_in // b).transpose(0, 1)  # (b, B, d_in/b)
        x = x @ self.right.transpose(1, 2)  # (b, B, d_out/b)
        x = x.permute(1, 2, 0).reshape(-1, b, self.d_out // b).transpose(0, 1)  # the shuffle: (b, B, d_out/b)
        x = x @ self.left.transpose(1, 2)
        return x.transpose(0, 1).reshape(*lead, self.d_out)

    def factors(self):
        b = self.blocks
        return [("right", self.right, self.d_in // b, self.d_out // b),
                ("left", self.left, self.d_out // b, self.d_out // b)]

    def macs(self):
        return self.right.numel() + self.left.numel()


class BTT(Structured):
    """Two-core Block Tensor-Train of rank r: x (m1, m0) -> core 1 maps each of the m1 rows m0 -> (n0, r) ->
    transpose -> core 2 maps each of the n0 rows (m1, r) -> n1 -> y (n0, n1)."""

    def __init__(self, d_in, d_out, rank=1):
        super().__init__()
        self.d_in, self.d_out, self.rank = d_in, d_out, rank
        (self.m1, self.m0), (self.n0, self.n1) = split(d_in), split(d_out)
        self.core1 = nn.Parameter(torch.empty(self.m1, self.m0, self.n0 * rank))
        self.core2 = nn.Parameter(torch.empty(self.n0, self.m1 * rank, self.n1))

    def forward(self, x):
        lead, r = x.shape[:-1], self.rank
        x = x.reshape(-1, self.m1, self.m0).transpose(0, 1)  # (m1, B, m0)
        x = x @ self.core1  # (m1, B, n0 r)
        x = x.reshape(self.m1, -1, self.n0, r).permute(2, 1, 0, 3).reshape(self.n0, -1, self.m1 * r)
        x = x @ self.core2  # (n0, B, n1)
        return x.transpose(0, 1).reshape(*lead, self.d_out)

    def factors(self):
        r = self.rank
        return [("core1", self.core1, self.m0, self.n0 * r), ("core2", self.core2, self.m1 * r, self.n1)]

    def macs(self):
        return self.core1.numel() + self.core2.numel()


STRUCTURES = {"dense": Dense, "low_rank": LowRank, "kronecker": Kronecker, "monarch": Monarch, "btt": BTT}


def build(structure, d_in, d_out, **options):
    """STRUCTURES[structure](d_in, d_out, **options), e.g. build("btt", 64, 256, rank=2)."""
    if structure not in STRUCTURES:
        raise ValueError(f"structure {structure!r}: choose from {sorted(STRUCTURES)}")
    return STRUCTURES[structure](d_in, d_out, **options)


def macs_of(structure, d_in, d_out, **options):
    """The forward multiply-adds of a layer without building it (meta tensors: no memory, no init)."""
    with torch.device("meta"):
        return build(structure, d_in, d_out, **options).macs()


def matched_width(structure, target_macs, widths, expansion=1, **options):
    """The width w in `widths` whose hidden layer pair w -> expansion*w -> w has multiply-adds closest (in log) to
    target_macs: how a sweep matches a structured model's compute to a dense one's."""
    def cost(w):
        return macs_of(structure, w, expansion * w, **options) + macs_of(structure, expansion * w, w, **options)
    return min(widths, key=lambda w: abs(math.log(cost(w) / target_macs)))
