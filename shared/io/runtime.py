"""Device choice and seeding. CUDA when present, else CPU; MPS only when asked for by name."""
import random

import numpy as np
import torch


def pick_device(requested="auto"):
    """'auto' -> cuda if available else cpu. An explicit 'cpu', 'cuda', 'cuda:1' or 'mps' is honoured (or refused)."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(requested)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {requested!r} requested but CUDA is not available")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise RuntimeError("device 'mps' requested but MPS is not available")
    return device


def seed_everything(seed):
    """Seed Python, NumPy and torch (all devices); used before building a model so its init is fixed by the seed."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def generator(seed, device="cpu"):
    """An explicit RNG stream, so data order and noise do not depend on what else drew random numbers."""
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    return g


def describe(device):
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return f"{device.type} ({torch.get_num_threads()} threads)"
