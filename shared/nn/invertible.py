"""Invertible layers with exact inverses and log-determinants (RealNVP, Dinh et al. 2017; Glow, Kingma & Dhariwal 2018).

Tensors are (batch, channels, *spatial): a flat vector is (batch, channels), an image (batch, channels, H, W).
Every layer maps x -> (y, log|det dy/dx|) per sample and inverts y -> x exactly (up to float rounding); `cond`
is an optional per-sample embedding that only the coupling conditioners read.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


def _positions(x):
    """Elements per channel: a per-channel map's log-determinant counts once per position."""
    return math.prod(x.shape[2:])


class ActNorm(nn.Module):
    """y = (x + loc) * exp(log_scale) per channel; loc and scale are set from the first training batch so that
    batch's output has zero mean and unit variance per channel. `initialized` is a buffer: a loaded checkpoint
    is never re-initialized from whatever batch comes first. `min_std` floors the std used: a feature that is
    constant in that batch (an always-black border pixel) would otherwise be scaled by 1e6."""

    def __init__(self, channels, min_std=1e-6):
        super().__init__()
        self.min_std = min_std
        self.loc = nn.Parameter(torch.zeros(channels))
        self.log_scale = nn.Parameter(torch.zeros(channels))
        self.register_buffer("initialized", torch.tensor(False))

    def _view(self, p, x):
        return p.view(1, -1, *([1] * (x.dim() - 2)))

    @torch.no_grad()
    def _initialize(self, x):
        per_channel = x.transpose(0, 1).reshape(x.shape[1], -1)
        self.loc.copy_(-per_channel.mean(1))
        self.log_scale.copy_(-torch.log(per_channel.std(1, correction=0).clamp_min(self.min_std)))
        self.initialized.fill_(True)

    def forward(self, x, cond=None):
        if self.training and not self.initialized:
            self._initialize(x)
        y = (x + self._view(self.loc, x)) * self._view(self.log_scale, x).exp()
        return y, self.log_scale.sum().expand(x.shape[0]) * _positions(x)

    def inverse(self, y, cond=None):
        if self.training and not self.initialized:
            raise RuntimeError("ActNorm is fitted by the first forward pass in training mode; run one before inverting")
        return y * self._view(-self.log_scale, y).exp() - self._view(self.loc, y)


class InvertibleLinear(nn.Module):
    """Glow's invertible 1x1 convolution: one C x C matrix mixes the channels at every position (for a flat
    vector it is a dense invertible matrix, O(C^3) per call: for wide flat vectors use Permutation). Initialized
    to a random orthogonal matrix (QR of a Gaussian)."""

    def __init__(self, channels):
        super().__init__()
        q, r = torch.linalg.qr(torch.randn(channels, channels))
        self.weight = nn.Parameter(q * torch.sign(torch.diagonal(r)))  # sign fix: Haar-distributed

    def forward(self, x, cond=None):
        logdet = torch.linalg.slogdet(self.weight)[1] * _positions(x)
        return torch.einsum("ij,bj...->bi...", self.weight, x), logdet.expand(x.shape[0])

    def inverse(self, y, cond=None):
        # solve rather than multiply by an explicit inverse: one LU, backward-stable
        rows = y.movedim(1, -1).reshape(-1, y.shape[1]).T
        x = torch.linalg.solve(self.weight, rows).T
        return x.reshape(*y.movedim(1, -1).shape).movedim(-1, 1)


class Permutation(nn.Module):
    """A fixed random reordering of the channels (RealNVP): mixes which half each coupling sees at no cost and
    with log-determinant 0; the cheap alternative to InvertibleLinear for wide flat vectors."""

    def __init__(self, channels):
        super().__init__()
        order = torch.randperm(channels)
        self.register_buffer("order", order)
        self.register_buffer("undo", torch.argsort(order))

    def forward(self, x, cond=None):
        return x[:, self.order], x.new_zeros(x.shape[0])

    def inverse(self, y, cond=None):
        return y[:, self.undo]


class Squeeze(nn.Module):
    """Space-to-depth: (B, C, H, W) -> (B, 4C, H/2, W/2), volume preserving (log-determinant 0).
    `reverse=True` makes it depth-to-space, so a flow can end in the shape it started with."""

    def __init__(self, reverse=False):
        super().__init__()
        self.reverse = reverse

    def forward(self, x, cond=None):
        y = F.pixel_unshuffle(x, 2) if not self.reverse else F.pixel_shuffle(x, 2)
        return y, x.new_zeros(x.shape[0])

    def inverse(self, y, cond=None):
        return F.pixel_shuffle(y, 2) if not self.reverse else F.pixel_unshuffle(y, 2)


class MLPConditioner(nn.Module):
    """(half of a flat vector, cond) -> (shift, raw log-scale) for the other half."""

    def __init__(self, d_in, d_out, hidden, cond_dim=0):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in + cond_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
                                 nn.Linear(hidden, 2 * d_out))
        nn.init.zeros_(self.net[-1].weight)  # every coupling starts as the identity
        nn.init.zeros_(self.net[-1].bias)

    def forward(self, h, cond=None):
        if cond is not None:
            h = torch.cat([h, cond], dim=1)
        return self.net(h).chunk(2, dim=1)


class ConvConditioner(nn.Module):
    """(half of an image's channels, cond) -> (shift, raw log-scale) for the other half; cond enters as a
    per-channel bias after the first convolution (as a noise-level embedding does in a diffusion UNet)."""

    def __init__(self, c_in, c_out, hidden, cond_dim=0):
        super().__init__()
        self.inp = nn.Conv2d(c_in, hidden, 3, padding=1)
        self.cond = nn.Linear(cond_dim, hidden) if cond_dim else None
        self.mid = nn.Conv2d(hidden, hidden, 3, padding=1)
        self.out = nn.Conv2d(hidden, 2 * c_out, 3, padding=1)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, h, cond=None):
        h = self.inp(h)
        if self.cond is not None:
            h = h + self.cond(cond)[:, :, None, None]
        h = self.mid(F.gelu(h))
        return self.out(F.gelu(h)).chunk(2, dim=1)


class AffineCoupling(nn.Module):
    """Transforms one half of the channels given the other: a <- (a + shift(b)) * exp(s(b)), in that order
    (shift before scale, as the Linearizer's released flow). s = bound * tanh(raw / bound): a smooth bound on the
    log-scale keeps the inverse well conditioned (a hard clamp has zero gradient outside it)."""

    def __init__(self, channels, conditioner, transform_first=True, scale_bound=2.0):
        super().__init__()
        self.split = channels // 2
        self.transform_first, self.scale_bound = transform_first, scale_bound
        self.conditioner = conditioner

    def _halves(self, x):
        a, b = x[:, : self.split], x[:, self.split :]
        return (a, b) if self.transform_first else (b, a)

    def _join(self, changed, kept):
        return torch.cat([changed, kept] if self.transform_first else [kept, changed], dim=1)

    def _shift_scale(self, kept, cond):
        shift, raw = self.conditioner(kept, cond)
        return shift, self.scale_bound * torch.tanh(raw / self.scale_bound)

    def forward(self, x, cond=None):
        a, b = self._halves(x)
        shift, log_scale = self._shift_scale(b, cond)
        return self._join((a + shift) * log_scale.exp(), b), log_scale.flatten(1).sum(1)

    def inverse(self, y, cond=None):
        a, b = self._halves(y)
        shift, log_scale = self._shift_scale(b, cond)
        return self._join(a * (-log_scale).exp() - shift, b)


class Flow(nn.Module):
    """A sequence of invertible layers. With `modes`, one set of weights serves several invertible maps that
    differ only through a learned embedding of the mode fed to every conditioner (the Linearizer shares one g
    between its data side and its noise side this way)."""

    def __init__(self, layers, modes=0, cond_dim=0):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.modes = nn.Embedding(modes, cond_dim) if modes else None

    def _cond(self, x, mode):
        if self.modes is None:
            if mode is not None:
                raise ValueError("this flow has no modes; call it with mode=None")
            return None
        if mode not in range(self.modes.num_embeddings):
            raise ValueError(f"this flow has {self.modes.num_embeddings} modes; pass mode=0..{self.modes.num_embeddings - 1}, not {mode!r}")
        index = torch.full((x.shape[0],), mode, dtype=torch.long, device=x.device)
        return self.modes(index).to(x.dtype)

    def forward(self, x, mode=None):
        cond, logdet = self._cond(x, mode), x.new_zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x, cond)
            logdet = logdet + ld
        return x, logdet

    def inverse(self, y, mode=None):
        cond = self._cond(y, mode)
        for layer in reversed(self.layers):
            y = layer.inverse(y, cond)
        return y


def glow(channels, blocks, hidden, *, image=False, squeeze=False, modes=0, cond_dim=0, scale_bound=2.0, min_std=1e-6,
         mixing="linear"):
    """Glow-style flow: `blocks` x [ActNorm, coupling of the first half, coupling of the second half, channel
    mixing ("linear": InvertibleLinear, "permutation": Permutation)]. Flat vectors get MLP conditioners, images convolutional ones; `squeeze` wraps the blocks in
    space-to-depth and back, so the output has the input's shape (odd channel counts cannot be split)."""
    if mixing not in ("linear", "permutation"):
        raise ValueError(f"mixing must be 'linear' or 'permutation', not {mixing!r}")
    if modes and not cond_dim:
        raise ValueError("a flow with modes needs cond_dim > 0: the mode reaches the conditioners only through it")
    width = channels * 4 if squeeze else channels
    cond_dim = cond_dim if modes else 0
    conditioner = ConvConditioner if image else MLPConditioner
    layers = [Squeeze()] if squeeze else []
    for _ in range(blocks):
        first, second = width // 2, width - width // 2
        layers += [ActNorm(width, min_std),
                   AffineCoupling(width, conditioner(second, first, hidden, cond_dim), True, scale_bound),
                   AffineCoupling(width, conditioner(first, second, hidden, cond_dim), False, scale_bound),
                   InvertibleLinear(width) if mixing == "linear" else Permutation(width)]
    if squeeze:
        layers.append(Squeeze(reverse=True))
    return Flow(layers, modes=modes, cond_dim=cond_dim)


def perturbed(module, seed, scale):
    """For exactness tests: a fresh flow is nearly the identity (zero-initialised coupling outputs), so an inversion
    or linearity check on it proves little. Add N(0, scale^2) noise to every parameter, mark every ActNorm fitted (so nothing is re-fit from the next
    batch) and switch to eval; returns the module."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(scale * torch.randn(p.shape, generator=g, dtype=p.dtype))
    for m in module.modules():
        if isinstance(m, ActNorm):
            m.initialized.fill_(True)
    return module.eval()
