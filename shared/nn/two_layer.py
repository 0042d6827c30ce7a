"""Many independent two-layer ReLU networks trained as one tensor program (Glasgow 2023's network):

    f_r(x) = sum_k a_{r,k} relu(w_{r,k} . x)        r = 0..runs-1, k = 0..width-1, no biases

Parameters W (runs, width, d) and a (runs, width). The runs share no parameter, so the gradient of the sum of the
runs' losses is each run's own gradient, and plain SGD on the sum takes every run's own step: a sweep over seeds and
sample sizes costs a few batched matmuls a step instead of one small launch per run. `freeze_first` trains only
a (the random-features model). Initialisation (small, symmetric): w ~ N(0, scale^2 I / d), a = +-scale.
"""
import torch
from torch import nn


class StackedTwoLayerReLU(nn.Module):
    def __init__(self, runs, d, width, scale, generator=None, freeze_first=False, first_scale=None):
        super().__init__()
        first = scale if first_scale is None else first_scale
        w = torch.randn(runs, width, d, generator=generator) * first / d ** 0.5
        signs = torch.randint(0, 2, (runs, width), generator=generator).float() * 2 - 1
        self.W = nn.Parameter(w, requires_grad=not freeze_first)
        self.a = nn.Parameter(signs * scale)

    def hidden(self, x):
        """relu(W x) per run: x (runs, batch, d) or (batch, d) shared by every run -> (runs, batch, width)."""
        pre = torch.einsum("rbd,rkd->rbk", x, self.W) if x.dim() == 3 else torch.einsum("bd,rkd->rbk", x, self.W)
        return torch.relu(pre)

    def forward(self, x):
        return torch.einsum("rbk,rk->rb", self.hidden(x), self.a)
