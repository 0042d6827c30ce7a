"""The parameterised hypercomplex multiplication (PHM) layer of Zhang et al. (ICLR 2021, "Beyond Fully-Connected
Layers with Quaternions: Parameterization of Hypercomplex Multiplications with 1/n Parameters"), Eq. 3.2:

    y = H x,   H = sum_{i=1..n} A_i (x) S_i,   A_i (n, n),   S_i (d_out/n, d_in/n)

a structured layer beside shared.nn.structured's Kronecker (one A (x) B): a sum of n Kronecker products whose left
factors are learned "multiplication rules". Parameters n^3 + d_in d_out / n (about 1/n of a dense layer when
d_in d_out >> n^4). Forward without materialising H: x viewed row-major as X (n, d_in/n), (A (x) S) vec(X) =
vec(A X S^T), so y = vec(sum_i A_i X S_i^T); computed A first, n^2 d_in + d_in d_out multiply-adds (PHM saves
parameters, not multiply-adds).

The quaternion (Hamilton product) layer is the special case n = 4 with A_i fixed to `hamilton_matrices()`: the
matrices of left multiplication by 1, i, j, k on quaternion coordinates (r, i, j, k), with x and y laid out
component-major ([x_r; x_i; x_j; x_k]) and S_i the weight's components W_r, W_i, W_j, W_k. `quaternion_linear` is that
layer written from the Hamilton product table, independently of the Kronecker form (the reference of the tests).
"""
import math

import torch
from torch import nn

from shared.nn.layer_registry import ACTIVATIONS, Activated, register
from shared.nn.structured import Structured


def hamilton_matrices(dtype=torch.float64):
    """(4, 4, 4): L(1), L(i), L(j), L(k), with L(q) p = q p (the Hamilton product) on coordinates (r, i, j, k)."""
    table = [  # L(a + b i + c j + d k) = [[a, -b, -c, -d], [b, a, -d, c], [c, d, a, -b], [d, -c, b, a]]
        [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
        [[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 0, -1], [0, 0, 1, 0]],
        [[0, 0, -1, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, -1, 0, 0]],
        [[0, 0, 0, -1], [0, 0, -1, 0], [0, 1, 0, 0], [1, 0, 0, 0]],
    ]
    return torch.tensor(table, dtype=dtype)


def quaternion_linear(x, w):
    """The quaternion linear layer y = W (x) x (Hamilton product) of Parcollet et al. / Tay et al., from the product
    table: w (4, d_out/4, d_in/4) holds W_r, W_i, W_j, W_k; x (..., d_in) and y (..., d_out) are component-major."""
    xr, xi, xj, xk = x.unflatten(-1, (4, -1)).unbind(-2)
    wr, wi, wj, wk = (c.T for c in w)
    return torch.cat([xr @ wr - xi @ wi - xj @ wj - xk @ wk,
                      xi @ wr + xr @ wi + xk @ wj - xj @ wk,
                      xj @ wr - xk @ wi + xr @ wj + xi @ wk,
                      xk @ wr + xj @ wi - xi @ wj + xr @ wk], dim=-1)


class PHM(Structured):
    """(..., d_in) -> (..., d_out) as x H^T, H = sum_i A_i (x) S_i; no bias (like the other structured layers).
    fixed_a: a (n, n, n) tensor kept as a buffer instead of learned A (e.g. hamilton_matrices(): the quaternion
    layer), so only S is trained and n_params() is d_in d_out / n. Call reset_parameters() for the init below."""

    def __init__(self, d_in, d_out, n=4, fixed_a=None):
        super().__init__()
        if d_in % n or d_out % n:
            raise ValueError(f"PHM needs d_in ({d_in}) and d_out ({d_out}) divisible by n ({n})")
        self.d_in, self.d_out, self.n = d_in, d_out, n
        self.s = nn.Parameter(torch.empty(n, d_out // n, d_in // n))
        if fixed_a is None:
            self.a = nn.Parameter(torch.empty(n, n, n))
        else:
            if tuple(fixed_a.shape) != (n, n, n):
                raise ValueError(f"PHM fixed_a must have shape ({n}, {n}, {n}), got {tuple(fixed_a.shape)}")
            self.register_buffer("a", fixed_a.clone().to(self.s.dtype))

    @torch.no_grad()
    def reset_parameters(self, generator=None):
        """A_i ~ N(0, 1/n) (when learned) and S ~ U(+-1/sqrt(d_in)): H's entries then have nn.Linear's default
        variance 1/(3 d_in) (n terms of variance 1/n x 1/(3 d_in)). The paper's init is not known (dossier 7)."""
        if isinstance(self.a, nn.Parameter):
            self.a.normal_(0, 1 / math.sqrt(self.n), generator=generator)
        bound = 1 / math.sqrt(self.d_in)
        self.s.uniform_(-bound, bound, generator=generator)
        return self

    def forward(self, x):
        lead = x.shape[:-1]
        x = x.reshape(-1, self.n, self.d_in // self.n)  # X (B, n, d_in/n), row-major
        ax = torch.einsum("ipq,bqs->bips", self.a.to(x.dtype), x)  # A_i X: (B, n_i, n, d_in/n)
        y = torch.einsum("bips,irs->bpr", ax, self.s)  # sum_i A_i X S_i^T: (B, n, d_out/n)
        return y.reshape(*lead, self.d_out)

    def factors(self):
        learned = [("a", self.a, self.n, self.n)] if isinstance(self.a, nn.Parameter) else []
        return learned + [("s", self.s, self.d_in // self.n, self.d_out // self.n)]

    def macs(self):
        return self.n * self.n * self.d_in + self.d_in * self.d_out

    def kron_matrix(self):
        """H = sum_i kron(A_i, S_i) materialised from the factors (matrix() gets it from the forward pass)."""
        return sum(torch.kron(self.a[i].to(self.s.dtype), self.s[i]) for i in range(self.n))

    def extra_repr(self):
        return f"d_in={self.d_in}, d_out={self.d_out}, n={self.n}, learned_a={isinstance(self.a, nn.Parameter)}"


def phm_params(d_in, d_out, n):
    """Trainable numbers of PHM(d_in, d_out, n): n^3 (the A_i) + d_in d_out / n (the S_i)."""
    return n ** 3 + d_in * d_out // n


def _block(d, h, n, activation):
    return nn.Sequential(Activated(PHM(d, h, n).reset_parameters(), ACTIVATIONS[activation]),
                         PHM(h, d, n).reset_parameters())


register("phm", layer=lambda d_in, d_out, n, activation: PHM(d_in, d_out, n).reset_parameters(),
         params=lambda d_in, d_out, n, activation: phm_params(d_in, d_out, n),
         macs=lambda d_in, d_out, n, activation: n * n * d_in + d_in * d_out,
         block=_block,
         block_params=lambda d, h, n, activation: phm_params(d, h, n) + phm_params(h, d, n),
         block_macs=lambda d, h, n, activation: n * n * (d + h) + 2 * d * h,
         hyper={"n": 4, "activation": "relu"}, cite="Zhang et al. 2021 (PHM)")
