"""The Linearizer (Berman, Hallak, Shocher 2025): f(x) = g_y^-1(A g_x(x)) with invertible g_x, g_y and a matrix A.

An invertible g: X -> R^N makes X a vector space by transport of structure:
    a (+) b = g^-1(g(a) + g(b)),   c (.) a = g^-1(c g(a)),   zero = g^-1(0),   <a, b> = <g(a), g(b)>.
In those operations f is exactly linear, with matrix A in the coordinates g gives, so linear algebra on A carries
over to f: composition (A2 A1), powers (A^n), the adjoint (A^T), the pseudo-inverse (A^+), the SVD and projections.
Elements are batches shaped (batch, *shape); the matrix acts on the flattened g-coordinates (column convention).
"""
import math

import torch


class InducedSpace:
    """The vector space an invertible flow induces on its inputs. `mode` picks one of a shared flow's maps; two
    spaces are the same space only if they use the same flow object and the same mode."""

    def __init__(self, flow, shape, mode=None):
        self.flow, self.shape, self.mode = flow, tuple(shape), mode

    def __eq__(self, other):
        return isinstance(other, InducedSpace) and self.flow is other.flow and self.mode == other.mode

    def __hash__(self):
        return hash((id(self.flow), self.mode))

    @property
    def dim(self):
        return math.prod(self.shape)

    def encode(self, x):
        """Coordinates g(x), flattened to (batch, dim)."""
        return self.flow(x, self.mode)[0].flatten(1)

    def decode(self, z):
        """The element g^-1(z) with coordinates z (batch, dim)."""
        return self.flow.inverse(z.reshape(z.shape[0], *self.shape), self.mode)

    def add(self, a, b):
        return self.decode(self.encode(a) + self.encode(b))

    def scale(self, c, a):
        """c (.) a; c is a number or one number per element."""
        c = torch.as_tensor(c, dtype=a.dtype, device=a.device).reshape(-1, 1)
        return self.decode(c * self.encode(a))

    def neg(self, a):
        return self.scale(-1.0, a)

    def zero(self, batch=1, dtype=None, device=None):
        param = next(self.flow.parameters())
        return self.decode(torch.zeros(batch, self.dim, dtype=dtype or param.dtype, device=device or param.device))

    def inner(self, a, b):
        return (self.encode(a) * self.encode(b)).sum(1)

    def norm(self, a):
        return self.encode(a).norm(dim=1)


class Linearizer:
    """f(x) = g_out^-1(A g_in(x)), A of shape (dim out, dim in)."""

    def __init__(self, matrix, space_in, space_out=None):
        self.matrix, self.space_in = matrix, space_in
        self.space_out = space_in if space_out is None else space_out
        if matrix.shape != (self.space_out.dim, space_in.dim):
            raise ValueError(f"matrix shape {tuple(matrix.shape)} does not map dim {space_in.dim} to dim {self.space_out.dim}")

    def __call__(self, x):
        return self.space_out.decode(self.space_in.encode(x) @ self.matrix.T)

    def compose(self, inner):
        """self o inner, itself a Linearizer (matrix A_self A_inner) when inner's output space is self's input space."""
        if inner.space_out != self.space_in:
            raise ValueError("compose needs inner's output space to be this Linearizer's input space (same flow and mode)")
        return Linearizer(self.matrix @ inner.matrix, inner.space_in, self.space_out)

    def power(self, n):
        """f applied n times: g^-1(A^n g(x)); needs one space on both sides."""
        if self.space_in != self.space_out:
            raise ValueError("power needs the same space on both sides")
        return Linearizer(torch.linalg.matrix_power(self.matrix, n), self.space_in)

    def transpose(self):
        """The adjoint under the induced inner products: <f(x), y>_out = <x, f^T(y)>_in."""
        return Linearizer(self.matrix.T, self.space_out, self.space_in)

    def pinv(self, rtol=None):
        """The Moore-Penrose pseudo-inverse, in the induced spaces."""
        return Linearizer(torch.linalg.pinv(self.matrix, rtol=rtol), self.space_out, self.space_in)

    def svd(self):
        """(left singular vectors in the output space, singular values, right singular vectors in the input space):
        f(right[i]) = values[i] (.) left[i]. The vectors are the elements whose coordinates are unit vectors."""
        u, values, vh = torch.linalg.svd(self.matrix, full_matrices=False)
        return self.space_out.decode(u.T), values, self.space_in.decode(vh)

    @staticmethod
    def projector(basis):
        """P = Q Q^T for Q the orthonormalized columns of `basis` (dim, rank): P^2 = P = P^T exactly in exact
        arithmetic, and differentiable in `basis`."""
        q = torch.linalg.qr(basis)[0]
        return q @ q.T
