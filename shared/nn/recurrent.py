"""Recurrent bilinear layers: hidden states updated multiplicatively, h_t = A(x_t) h_{t-1}, with A linear in x_t.

The variants of Ebrahimi & Memisevic (NeurIPS 2025), from most to least expressive:

    full      A(x) = sum_k x_k W_k                          W: (D, H, H)            any finite-state machine
    cp        A(x) = L diag(M^T x) R^T                      L, R: (H, rank), M: (D, rank)
    block     A(x) = blockdiag(A_1(x), ..., A_{H/b}(x))     each A_j(x) = sum_k x_k W_jk, W_jk: (b, b)
    rotation  2x2 blocks [[cos t, -sin t], [sin t, cos t]], t = x . w_j    commuting: abelian tasks only
    diagonal  A(x) = diag(x . w_i), real, so signs can flip                 parity, not mod-m addition
    positive  A(x) = diag(sigmoid(x . w_i)), in (0, 1): Mamba-like gates    not even parity

`additive=True` is the ablation h_t = A(x_t) h_{t-1} + B x_t + b (the usual affine RNN/SSM update).

Without the additive term h_T is homogeneous of degree 1 in h_0 and in every step's scale, so only its direction
carries information. The layer therefore returns unit states u_t = h_t / |h_t| and log|h_t|, computed by
renormalizing at every step: exactly the same function as the unnormalized recurrence (the readout sees only the
direction), but it neither overflows nor underflows at length 500. With the additive term the input is scaled by
1/|h_{t-1}| before it is added, which again is the same function as the unnormalized recurrence. `forward(mode=)`
also offers the two inexact evaluations the additive ablation is sensitive to (see there).
"""
import math

import torch
from torch import nn

VARIANTS = ("full", "cp", "block", "rotation", "diagonal", "positive")


class BilinearRNN(nn.Module):
    def __init__(self, d_input, d_hidden, variant="full", rank=None, block=None, additive=False, init_std=0.3):
        super().__init__()
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        if variant == "cp" and not rank:
            raise ValueError("variant 'cp' needs a rank")
        if variant == "block" and (not block or d_hidden % block):
            raise ValueError(f"variant 'block' needs a block size that divides d_hidden={d_hidden}, got {block!r}")
        if variant == "rotation" and d_hidden % 2:
            raise ValueError(f"variant 'rotation' needs an even d_hidden, got {d_hidden}")
        self.d_input, self.d_hidden, self.variant = d_input, d_hidden, variant
        self.rank, self.block, self.additive = rank, block, additive
        H, D = d_hidden, d_input
        # Each input's transition starts near the identity (or near keeping the state), so gradients flow through
        # the first steps; init_std sets how far from it.
        if variant == "full":
            self.weight = nn.Parameter(torch.eye(H).expand(D, H, H) + init_std / math.sqrt(H) * torch.randn(D, H, H))
        elif variant == "cp":
            self.left = nn.Parameter(torch.randn(H, rank) / math.sqrt(rank))
            self.right = nn.Parameter(torch.randn(H, rank) / math.sqrt(H))
            self.mix = nn.Parameter(1.0 + init_std * torch.randn(D, rank))
        elif variant == "block":
            n, b = H // block, block
            self.weight = nn.Parameter(torch.eye(b).expand(D, n, b, b) + init_std / math.sqrt(b) * torch.randn(D, n, b, b))
        elif variant == "rotation":
            self.angle = nn.Parameter(math.pi * (2 * torch.rand(D, H // 2) - 1))
        elif variant == "diagonal":
            self.weight = nn.Parameter(1.0 + init_std * torch.randn(D, H))
        else:  # positive: sigmoid(2 + ...) ~ 0.88 keeps most of the state at first
            self.weight = nn.Parameter(2.0 + 0.5 * torch.randn(D, H))
        self.h0 = nn.Parameter(torch.randn(H) / math.sqrt(H))
        self.input = nn.Linear(D, H) if additive else None

    def transition(self, x, h):
        """A(x) h for a batch: x (B, D), h (B, H) -> (B, H), without forming A(x) where the variant need not."""
        v = self.variant
        if v == "full":  # one GEMM: every input's matrix applied to h, then mixed by x
            D, H = self.d_input, self.d_hidden
            return torch.einsum("bk,bki->bi", x, (h @ self.weight.reshape(D * H, H).T).view(-1, D, H))
        if v == "cp":
            return ((h @ self.right) * (x @ self.mix)) @ self.left.T
        if v == "block":
            n, b = self.d_hidden // self.block, self.block
            per_input = torch.einsum("knij,bnj->bkni", self.weight, h.view(-1, n, b))
            return torch.einsum("bk,bkni->bni", x, per_input).reshape(h.shape)
        if v == "rotation":
            theta = x @ self.angle
            cos, sin = theta.cos(), theta.sin()
            even, odd = h[:, 0::2], h[:, 1::2]
            return torch.stack((cos * even - sin * odd, sin * even + cos * odd), -1).reshape(h.shape)
        if v == "diagonal":
            return (x @ self.weight) * h
        return torch.sigmoid(x @ self.weight) * h

    @torch.no_grad()
    def matrices(self, x):
        """The dense transition matrices A(x): x (N, D) -> (N, H, H) (columns are A applied to basis vectors)."""
        eye = torch.eye(self.d_hidden, dtype=x.dtype, device=x.device)
        return torch.stack([self.transition(x, eye.expand(len(x), -1, -1)[:, :, j]) for j in range(self.d_hidden)], -1)

    def forward(self, x, mode="exact"):
        """x (B, T, D) -> unit states u (B, T, H) and log|h_t| (B, T); h_0 is learned.

        mode "exact" computes the recurrence as defined (the scale carried in log space). The two others matter
        only for the additive ablation, where they differ from it: "renormalize" divides the state by its norm
        after every step and drops that scale (the inference-time renormalization of the pure model applied as
        is), "plain" runs the unnormalized recurrence in the input's dtype (float32 overflows to inf/NaN once
        |h| > 3e38, which the log-norm then shows).
        """
        if mode not in ("exact", "renormalize", "plain"):
            raise ValueError(f"mode must be exact, renormalize or plain, got {mode!r}")
        h0 = self.h0.expand(x.shape[0], -1)
        norm = h0.norm(dim=-1, keepdim=True)
        u, log_norm = (h0, norm.log()) if mode == "plain" else (h0 / norm, norm.log())
        units, log_norms = [], []
        for t in range(x.shape[1]):
            h = self.transition(x[:, t], u)
            if self.input is not None:
                drive = self.input(x[:, t])
                if mode == "exact":
                    # h_t / |h_{t-1}| = A u_{t-1} + (B x_t + b) / |h_{t-1}|, clamped only where exp would overflow
                    limit = 0.95 * math.log(torch.finfo(log_norm.dtype).max)
                    drive = drive * torch.exp(-log_norm.clamp(-limit, limit))
                h = h + drive
            norm = h.norm(dim=-1, keepdim=True)
            if mode == "plain":
                u, log_norm = h, norm.log()
                units.append(h / norm)
            else:
                norm = norm.clamp_min(1e-30)
                u = h / norm
                log_norm = norm.log() if mode == "renormalize" else log_norm + norm.log()
                units.append(u)
            log_norms.append(log_norm)
        return torch.stack(units, 1), torch.cat(log_norms, -1)
