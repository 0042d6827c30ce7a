"""Lipschitz-bounded layers by direct parameterisation (Wang & Manchester, ICML 2023, "Direct Parameterization of
Lipschitz-Bounded Deep Networks"; official code acfr/LBDN, layer.py), and the checks of a Lipschitz bound.

Sandwich layer (1-Lipschitz in l2 from R^n to R^m, for any parameters; `SandwichLinear`):
    h' = sqrt(2) A^T Psi relu(sqrt(2) Psi^-1 B h + b),   Psi = diag(exp(psi)),   A A^T + B B^T = I_m
[A B] comes from the Cayley transform of a free (m, m + n) weight W (`cayley`), scaled first to alpha W / ||W||_F
with a learnable alpha (initialised to ||W||_F), as in the official SandwichFc. The readout `SandwichReadout` is
y = B h + b (||B|| <= 1), `OrthogonalLinear` the Cayley orthogonal layer y = Q h + b (the paper's "Orthogon"
baseline, followed by ReLU in a network). A network scales its input and its readout by sqrt(gamma), so it is
gamma-Lipschitz (`lipschitz_mlp`).

The weights are formed from the parameters at every forward in training mode; in eval mode they are formed once per
parameter update (keyed on the parameters' version counters) and without a graph, as the official code caches Q:
gradients then reach the input but not the parameters.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


def cayley(W):
    """Orthonormal rows (cout <= cin) or columns from a free matrix W (cout, cin): the Cayley transform of the
    official code. For a tall W = [U; V] (U: cin x cin, V: rest x cin), Z = U - U^T + V^T V and
    Q = [(I + Z)^-1 (I - Z); -2 V (I + Z)^-1]; a wide W is transposed first."""
    cout, cin = W.shape
    if cin > cout:
        return cayley(W.T).T
    U, V = W[:cin], W[cin:]
    eye = torch.eye(cin, dtype=W.dtype, device=W.device)
    Z = U - U.T + V.T @ V
    inverse = torch.linalg.inv(eye + Z)  # I + Z is invertible: its symmetric part I + V^T V is positive definite
    return torch.cat((inverse @ (eye - Z), -2 * V @ inverse))


class _Cayley(nn.Module):
    """A free weight (rows, cols), its learnable Frobenius scale alpha, and the Cayley matrix it stands for."""

    def __init__(self, rows, cols, bias_size):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(rows, cols))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))  # nn.Linear's init, as the official layers inherit
        self.alpha = nn.Parameter(self.weight.detach().norm().reshape(1))
        self.bias = nn.Parameter(torch.empty(bias_size).uniform_(-1 / math.sqrt(cols), 1 / math.sqrt(cols)))
        self._cache = (None, None)

    def q(self):
        if self.training:
            return cayley(self.alpha * self.weight / self.weight.norm())
        key = tuple(p._version for p in (self.weight, self.alpha)) + (self.weight.dtype, self.weight.device)
        if self._cache[0] != key:
            with torch.no_grad():
                self._cache = (key, cayley(self.alpha * self.weight / self.weight.norm()))
        return self._cache[1]


class SandwichLinear(_Cayley):
    """The 1-Lipschitz sandwich layer d_in -> d_out (ReLU inside), times `scale` on its input (so scale-Lipschitz)."""

    def __init__(self, d_in, d_out, scale=1.0):
        super().__init__(d_out, d_out + d_in, d_out)
        self.psi = nn.Parameter(torch.zeros(d_out))
        self.d_out, self.scale = d_out, scale

    def forward(self, x):
        Q = self.q()
        A, B = Q[:, :self.d_out], Q[:, self.d_out:]
        z = math.sqrt(2) * F.linear(self.scale * x, B) * torch.exp(-self.psi) + self.bias
        return math.sqrt(2) * F.linear(F.relu(z) * torch.exp(self.psi), A.T)


class SandwichReadout(_Cayley):
    """y = scale B x + b with [A B] orthonormal (||B|| <= 1): the official SandwichLin without its AB option."""

    def __init__(self, d_in, d_out, scale=1.0):
        super().__init__(d_out, d_out + d_in, d_out)
        self.d_out, self.scale = d_out, scale

    def forward(self, x):
        return F.linear(self.scale * x, self.q()[:, self.d_out:], self.bias)


class OrthogonalLinear(_Cayley):
    """y = scale Q x + b with Q (d_out, d_in) of orthonormal rows or columns (||Q|| = 1): the paper's Orthogon."""

    def __init__(self, d_in, d_out, scale=1.0):
        super().__init__(d_out, d_in, d_out)
        self.scale = scale

    def forward(self, x):
        return F.linear(self.scale * x, self.q(), self.bias)


class LipschitzMLP(nn.Module):
    """d_in -> widths -> d_out, gamma-Lipschitz in l2 for kind 'sandwich' (sandwich layers, a sandwich readout) and
    'orthogonal' (Cayley orthogonal layers with ReLU); input and readout each scaled by sqrt(gamma). 'plain' is the
    unconstrained ReLU MLP (nn.Linear), gamma unused."""

    KINDS = ("sandwich", "orthogonal", "plain")

    def __init__(self, d_in, widths, d_out, gamma=1.0, kind="sandwich"):
        super().__init__()
        if kind not in self.KINDS:
            raise ValueError(f"kind {kind!r}: choose from {self.KINDS}")
        sizes, root = [d_in, *widths], math.sqrt(gamma)
        scales = [root] + [1.0] * (len(widths) - 1)
        if kind == "sandwich":
            hidden = [SandwichLinear(a, b, s) for a, b, s in zip(sizes, sizes[1:], scales)]
            self.readout = SandwichReadout(sizes[-1], d_out, root if widths else gamma)
        elif kind == "orthogonal":
            hidden = [OrthogonalLinear(a, b, s) for a, b, s in zip(sizes, sizes[1:], scales)]
            self.readout = OrthogonalLinear(sizes[-1], d_out, root if widths else gamma)
        else:
            hidden = [nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])]
            self.readout = nn.Linear(sizes[-1], d_out)
        self.hidden = nn.ModuleList(hidden)
        self.activate = kind != "sandwich"  # a sandwich layer has its ReLU inside

    def forward(self, x):
        for layer in self.hidden:
            x = F.relu(layer(x)) if self.activate else layer(x)
        return self.readout(x)


def jacobian_spectral_norms(model, x):
    """||df/dx(x_i)||_2 at each row of x (autograd Jacobians, the largest singular value of each)."""
    jac = torch.func.vmap(torch.func.jacrev(lambda row: model(row[None])[0]))(x)
    return torch.linalg.matrix_norm(jac, ord=2)


def empirical_lipschitz(model, x, steps=200, lr=0.01, generator=None):
    """A lower bound of the l2 Lipschitz constant: gradient ascent on ||f(a) - f(b)|| / ||a - b|| over pairs started
    at the rows of x and x + small noise (the official utils.empirical_lipschitz's search, Adam on both points);
    returns the largest ratio seen."""
    a = x.clone().requires_grad_(True)
    b = (x + 0.1 * torch.randn(x.shape, generator=generator, dtype=x.dtype)).requires_grad_(True)
    optimizer = torch.optim.Adam([a, b], lr=lr)
    best = 0.0
    for _ in range(steps):
        ratio = (model(a) - model(b)).norm(dim=-1) / (a - b).norm(dim=-1).clamp_min(1e-12)
        best = max(best, ratio.max().item())
        optimizer.zero_grad()
        (-ratio.sum()).backward()
        optimizer.step()
    return best


def _register():
    """The sandwich layer as a family of shared.nn.layer_registry (a 1-Lipschitz layer with its own ReLU; the block
    d -> h -> d is a sandwich layer and a readout, 1-Lipschitz too). Its
    multiply-adds are the eval-mode forward's per example (B: d_in d_out, A^T: d_out^2); forming the weights by the
    Cayley transform is once per update, not per example."""
    from shared.nn.layer_registry import register

    def params(d_in, d_out):
        return d_out * (d_out + d_in) + 2 * d_out + 1

    register("sandwich", layer=lambda d_in, d_out: SandwichLinear(d_in, d_out), params=params,
             macs=lambda d_in, d_out: d_out * (d_in + d_out),
             block=lambda d, h: nn.Sequential(SandwichLinear(d, h), SandwichReadout(h, d)),
             block_params=lambda d, h: params(d, h) + params(h, d) - d,  # the readout has no psi
             block_macs=lambda d, h: h * (d + h) + h * d,
             nonlinear=True, cite="Wang & Manchester 2023 (sandwich layer)")


_register()
