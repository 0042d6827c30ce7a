"""Layers: the bilinear layer (and its gated GLU relatives), MLP blocks, RMSNorm.

Bilinear(x) = act(W x + b1) * (V x + b2); act = identity gives the bilinear layer of Pearce et al. (2025) and
Sharkey (2023); act = relu / gelu / silu gives ReGLU / GEGLU / SwiGLU (Shazeer, 2020).
"""
import torch
import torch.nn.functional as F
from torch import nn

GATES = {None: None, "relu": F.relu, "gelu": F.gelu, "silu": F.silu}


class Bilinear(nn.Module):
    """One matmul produces both halves; `left`/`right` are views of the weight for analysis."""

    def __init__(self, d_in, d_out, bias=False, gate=None):
        super().__init__()
        if gate not in GATES:
            raise ValueError(f"gate must be one of {list(GATES)}, got {gate!r}")
        self.d_in, self.d_out, self.gate = d_in, d_out, gate
        self.proj = nn.Linear(d_in, 2 * d_out, bias=bias)

    @property
    def left(self):
        return self.proj.weight[: self.d_out]

    @property
    def right(self):
        return self.proj.weight[self.d_out :]

    @property
    def left_bias(self):
        return None if self.proj.bias is None else self.proj.bias[: self.d_out]

    @property
    def right_bias(self):
        return None if self.proj.bias is None else self.proj.bias[self.d_out :]

    def forward(self, x):
        left, right = self.proj(x).chunk(2, dim=-1)
        act = GATES[self.gate]
        return (left if act is None else act(left)) * right

    def extra_repr(self):
        return f"d_in={self.d_in}, d_out={self.d_out}, bias={self.proj.bias is not None}, gate={self.gate}"


class BilinearMLP(nn.Module):
    """down(Bilinear(x)): the MLP block of a bilinear (or GLU) transformer."""

    def __init__(self, d_model, d_hidden, bias=False, gate=None):
        super().__init__()
        self.bilinear = Bilinear(d_model, d_hidden, bias=bias, gate=gate)
        self.down = nn.Linear(d_hidden, d_model, bias=bias)

    def forward(self, x):
        return self.down(self.bilinear(x))


class ActivationMLP(nn.Module):
    """down(act(up(x))): the elementwise-activation baseline."""

    ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu, "silu": F.silu}

    def __init__(self, d_model, d_hidden, activation="relu", bias=False):
        super().__init__()
        if activation not in self.ACTIVATIONS:
            raise ValueError(f"activation must be one of {list(self.ACTIVATIONS)}, got {activation!r}")
        self.activation = activation
        self.up = nn.Linear(d_model, d_hidden, bias=bias)
        self.down = nn.Linear(d_hidden, d_model, bias=bias)

    def forward(self, x):
        return self.down(self.ACTIVATIONS[self.activation](self.up(x)))


class RMSNorm(nn.Module):
    """x / rms(x); the paper's transformer uses it without a learnable weight (affine=False)."""

    def __init__(self, dim, eps=1e-8, affine=False):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim)) if affine else None

    def forward(self, x):
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x if self.weight is None else x * self.weight
