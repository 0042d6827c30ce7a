"""In-context regression prompts (Garg et al.; von Oswald et al.; Ahn et al.; Mahankali et al.), generated.

A prompt is n context pairs (x_i, y_i) and a query x_q with its target y_q, for a task drawn per prompt:

    covariates  "normal":  x ~ N(0, cov)                                  (cov = I when None)
                "sphere":  x / ||x||, uniform on the unit sphere           (a light-tailed norm)
                "gamma":   x / ||x|| * sqrt(r), r ~ Gamma(shape, scale sqrt(10 / shape))   (Ahn et al.'s heavy
                           tail; E||x||^2 = sqrt(10 shape), equal to d = 5 only at shape 2.5)
    task        "linear":   y = w^T x,  w ~ N(0, w_cov)                   (w_cov = I when None)
                "relu_net": y = v^T relu(U x) / sqrt(width), U ~ N(0, 1/d), v ~ N(0, 1): a random one-hidden-layer
                            ReLU network per prompt, rotation-invariant in law
    noise       y += sigma * N(0, 1), on the context and the query targets alike.

`embed` stacks a prompt into the rows the linear-attention layer reads: (x_i, y_i), then (x_q, 0).
Everything is drawn from one torch.Generator (the gamma radii from a NumPy generator seeded by it), on the
generator's device: a CPU generator gives the same prompts whatever the model's device; a CUDA generator draws the
prompts on the GPU (for large batches), and they differ from the CPU ones.
"""
from dataclasses import dataclass

import numpy as np
import torch

COVARIATES = ("normal", "sphere", "gamma")
TASKS = ("linear", "relu_net")


@dataclass
class Prompts:
    x: torch.Tensor  # (batch, n + 1, d): the context covariates, then the query
    y: torch.Tensor  # (batch, n + 1): the targets, the query's last (never shown to the model)
    w: torch.Tensor | None  # (batch, d) for linear tasks

    @property
    def n(self):
        return self.x.shape[1] - 1


def sample_prompts(batch, n, d, generator, covariates="normal", cov=None, w_cov=None, sigma=0.0, task="linear",
                   gamma_shape=0.1, width=16, dtype=torch.float32):
    """`batch` prompts of `n` context examples in `d` dimensions (see the module docstring for the options)."""
    if covariates not in COVARIATES or task not in TASKS:
        raise ValueError(f"covariates must be one of {COVARIATES} and task one of {TASKS}")
    dev = generator.device
    x = torch.randn(batch, n + 1, d, generator=generator, dtype=torch.float64, device=dev)
    if covariates == "normal" and cov is not None:
        x = x @ torch.linalg.cholesky(torch.as_tensor(cov, dtype=torch.float64, device=dev)).T
    elif covariates == "sphere":
        x = x / x.norm(dim=-1, keepdim=True)
    elif covariates == "gamma":
        rng = np.random.default_rng(int(torch.randint(2**62, (1,), generator=generator, device=dev)))
        radius2 = rng.gamma(gamma_shape, np.sqrt(10 / gamma_shape), size=(batch, n + 1, 1))
        x = x / x.norm(dim=-1, keepdim=True) * torch.from_numpy(np.sqrt(radius2)).to(dev)
    w = None
    if task == "linear":
        w = torch.randn(batch, d, generator=generator, dtype=torch.float64, device=dev)
        if w_cov is not None:
            w = w @ torch.linalg.cholesky(torch.as_tensor(w_cov, dtype=torch.float64, device=dev)).T
        y = torch.einsum("bnd,bd->bn", x, w)
    else:
        hidden = torch.randn(batch, width, d, generator=generator, dtype=torch.float64, device=dev) / np.sqrt(d)
        out = torch.randn(batch, width, generator=generator, dtype=torch.float64, device=dev)
        y = torch.einsum("bnk,bk->bn", torch.relu(torch.einsum("bkd,bnd->bnk", hidden, x)), out) / np.sqrt(width)
    if sigma:
        y = y + sigma * torch.randn(y.shape, generator=generator, dtype=torch.float64, device=dev)
    return Prompts(x.to(dtype), y.to(dtype), None if w is None else w.to(dtype))


def embed(prompts):
    """Rows (x_i, y_i) for the context and (x_q, 0) for the query: (batch, n + 1, d + 1)."""
    labels = prompts.y.clone()
    labels[:, -1] = 0.0
    return torch.cat([prompts.x, labels.unsqueeze(-1)], dim=-1)
