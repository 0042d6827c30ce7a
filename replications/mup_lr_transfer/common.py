"""What this paper's scripts share: the fixed regression data, eta*_inf in closed form, the stored sweep results."""
import numpy as np
import torch
from torch import nn

from shared.io.checkpoints import load_state_dicts

EXPERIMENTS = ("onestep", "multistep")


def make_data(data):
    """Fixed float64 data: x ~ N(0, I_d) (m rows), w* ~ N(0, I/d), y = x.w* + noise N(0, noise^2), from data.seed."""
    gen = torch.Generator().manual_seed(data["seed"])
    m, d = data["m"], data["d"]
    x = torch.randn(m, d, generator=gen, dtype=torch.float64)
    w = torch.randn(d, generator=gen, dtype=torch.float64) / d ** 0.5
    y = x @ w + data["noise"] * torch.randn(m, generator=gen, dtype=torch.float64)
    return x, y


def kernel(x):
    """K = X X^T / d, the infinite-width first-order kernel of the muP one-step output."""
    return x @ x.T / x.shape[1]


def eta_inf(x, y, depth):
    """The paper's t = 1 limit under muP: eta*_inf = (m / L) y^T K y / ||K y||^2 (loss (1/2m) sum (f - y)^2)."""
    k, m = kernel(x), x.shape[0]
    ky = k @ y
    return float(m / depth * (y @ ky) / (ky @ ky))


class Results(nn.Module):
    """Named result arrays held as buffers, so that the pipeline's safetensors checkpoint stores them (no pickle)."""

    def __init__(self, arrays):
        super().__init__()
        for name, value in arrays.items():
            self.register_buffer(name, torch.as_tensor(np.asarray(value, dtype=np.float64)))


def load_results(path):
    """({array name: np.ndarray}, metadata) of a checkpoint written by train.py."""
    states, meta = load_state_dicts(path)
    return {k: v.numpy() for k, v in states["results"].items()}, meta
