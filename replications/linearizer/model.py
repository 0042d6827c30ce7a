"""The Linearizer's two generative models (Berman, Hallak, Shocher 2025).

One-step flow matching: one invertible flow g shared by the data side (mode 1) and the noise side (mode 0), and a
time-dependent matrix A_t = A1(t) A2(t)^T of rank <= r from two small MLPs of t. Data x1 and noise x0 are encoded
to z1 = g(x1; data), z0 = g(x0; noise); A_t predicts z1 from the latent interpolant z_t = (1 - t) z0 + t z1, so the
flow ODE dz/dt = (A_t z - z) / (1 - t) is linear in z and any solver collapses into one matrix (sampling.py).

Projective model (the paper's "linear IGN"): one flow g (no modes) and a fixed-rank orthogonal projector
P = Q Q^T, so f(x) = g^-1(P g(x)) satisfies f(f(x)) = f(x) for every x by construction.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.invertible import glow
from shared.nn.linearizer import InducedSpace, Linearizer

NOISE, DATA = 0, 1  # the shared flow's two modes


def build_flow(shape, cfg, modes):
    """Flat inputs (shape (D,)) get MLP couplings; images (C, H, W) convolutional ones after a 2x2 squeeze."""
    image = len(shape) == 3
    return glow(shape[0], cfg["blocks"], cfg["hidden"], image=image, squeeze=image, modes=modes,
                cond_dim=cfg["cond_dim"], scale_bound=cfg["scale_bound"], min_std=cfg["min_std"], mixing=cfg["mixing"])


def time_embedding(t, dim):
    """Sinusoidal features of t in [0, 1] (frequencies 1 .. 1000, as a diffusion noise-level embedding)."""
    freqs = torch.exp(torch.linspace(0.0, math.log(1000.0), dim // 2, device=t.device, dtype=t.dtype))
    angles = t[:, None] * freqs[None]
    return torch.cat([angles.sin(), angles.cos()], dim=1)


class TimeMatrix(nn.Module):
    """A_t = A1(t) A2(t)^T with A1, A2 (n x rank) each from an MLP of t's sinusoidal embedding."""

    def __init__(self, n, rank, hidden, embed_dim):
        super().__init__()
        self.n, self.rank, self.embed_dim = n, rank, embed_dim

        def mlp():
            net = nn.Sequential(nn.Linear(embed_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
                                nn.Linear(hidden, n * rank))
            nn.init.normal_(net[-1].weight, std=1e-3)  # starts near A_t = 0; trained to predict z1
            return net

        self.left, self.right = mlp(), mlp()

    def factors(self, t):
        e = time_embedding(t, self.embed_dim)
        return self.left(e).view(-1, self.n, self.rank), self.right(e).view(-1, self.n, self.rank)

    def apply(self, t, z):
        """A_t z for a batch of latents, without forming the n x n matrices; t holds one time per latent, or one
        time for all of them (its factors are then computed once and broadcast)."""
        left, right = self.factors(t)
        if len(t) == 1:
            left, right = left.expand(len(z), -1, -1), right.expand(len(z), -1, -1)
        return torch.einsum("bnr,br->bn", left, torch.einsum("bnr,bn->br", right, z))

    def matrix(self, t):
        """The n x n matrix A_t at one time t (a float)."""
        left, right = self.factors(torch.tensor([t], dtype=self.left[0].weight.dtype, device=self.left[0].weight.device))
        return left[0] @ right[0].T


class OneStepModel(nn.Module):
    def __init__(self, shape, cfg):
        super().__init__()
        self.shape = tuple(shape)
        self.flow = build_flow(self.shape, cfg["flow"], modes=2)
        self.n = math.prod(self.shape)
        self.time_matrix = TimeMatrix(self.n, min(cfg["rank"], self.n), cfg["time_hidden"], cfg["time_embed"])

    @property
    def data_space(self):
        return InducedSpace(self.flow, self.shape, DATA)

    @property
    def noise_space(self):
        return InducedSpace(self.flow, self.shape, NOISE)

    def step(self, t):
        """The Linearizer x0 -> g_data^-1(A_t g_noise(x0)) at time t: the model's prediction of x1 from z_t = z0."""
        return Linearizer(self.time_matrix.matrix(t), self.noise_space, self.data_space)

    def loss(self, x1, x0, t, latent_noise, sigma):
        """The released objective with LPIPS replaced by MSE (LPIPS needs downloaded VGG weights): latent
        flow matching + noise-side and data-side reconstruction from latents perturbed by sigma + decoding the
        prediction. Returns (total, {term: value})."""
        # noise first, as released: ActNorm initializes from the noise batch (loc ~ 0, scale ~ 1). Fitted on data
        # instead, it scales MNIST's near-constant border pixels by up to 1 / min_std, so noise latents there were
        # 10x larger than the data's and the flow-matching loss kept A_t from being learned (B ~ I / T)
        z0, _ = self.flow(x0, NOISE)
        z1, _ = self.flow(x1, DATA)
        z1, z0 = z1.flatten(1), z0.flatten(1)
        zt = (1 - t[:, None]) * z0 + t[:, None] * z1
        z1_hat = self.time_matrix.apply(t, zt)
        n0, n1 = latent_noise  # (batch, n) each
        terms = {
            "flow_matching": F.mse_loss(z1_hat, z1),
            "noise_reconstruction": F.mse_loss(self.noise_space.decode(z0 + sigma * n0), x0),
            "data_reconstruction": F.mse_loss(self.data_space.decode(z1 + sigma * n1), x1),
            "prediction": F.mse_loss(self.data_space.decode(z1_hat), x1),
        }
        return sum(terms.values()), terms


class ProjectiveModel(nn.Module):
    """f(x) = g^-1(P g(x)), P = Q Q^T with Q the orthonormalized columns of a learned (n x rank) basis."""

    def __init__(self, shape, cfg):
        super().__init__()
        self.shape = tuple(shape)
        self.flow = build_flow(self.shape, cfg["flow"], modes=0)
        self.n = math.prod(self.shape)
        self.basis = nn.Parameter(torch.randn(self.n, cfg["rank"]) / math.sqrt(self.n))

    @property
    def space(self):
        return InducedSpace(self.flow, self.shape)

    def linearizer(self):
        return Linearizer(Linearizer.projector(self.basis), self.space)

    def loss(self, x, noise=None, noise_weight=0.0):
        """Data are fixed points, ||f(x) - x||^2, plus (when noise is given) a term that acts on off-data inputs:
        noise must be mapped onto the data. With P a projector, IGN's idempotence and tightness terms are
        identically zero, so the fixed-point loss alone says nothing about where f sends noise. The noise term is
        IMLE's (Li & Malik 2018; the non-adversarial IGN of Al-Jaff et al. 2025 pairs it with reconstruction):
        each data point pulls the nearest of f(noise draws) onto itself. Returns (total, {term: value})."""
        f = self.linearizer()
        terms = {"fixed_point": F.mse_loss(f(x), x)}
        if noise is not None and noise_weight > 0:
            projected = f(noise).flatten(1)
            nearest = torch.cdist(x.flatten(1), projected.detach()).argmin(dim=1)
            terms["noise_to_data"] = F.mse_loss(projected[nearest], x.flatten(1))
            return terms["fixed_point"] + noise_weight * terms["noise_to_data"], terms
        return terms["fixed_point"], terms


MODELS = {"onestep": OneStepModel, "projective": ProjectiveModel}


def build(spec):
    """The untrained model of one run spec ({"kind", "shape", "model": its config, ...}, as train.py saves it);
    the caller seeds torch first."""
    return MODELS[spec["kind"]](spec["shape"], spec["model"])
