"""What this paper's scripts share: prepared data as float tensors, models from checkpoints, error measures."""
import json
import math

import numpy as np
import torch
from model import OneStepModel, ProjectiveModel

from shared.data import read_prepared
from shared.io.checkpoints import load_state_dicts

MODELS = {"onestep": OneStepModel, "projective": ProjectiveModel}


def load_data(path):
    """{x_train, x_test: stored dtype (uint8 images stay uint8), y_train, y_test}, element shape, pixel scale."""
    arrays, meta = read_prepared(path)
    data = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in arrays.items()}
    return data, tuple(json.loads(meta["shape"])), float(meta["scale"])


def spread(x, count):
    """`count` rows evenly spaced through x (MNIST-5k's splits are sorted by class: the first rows are all zeros)."""
    return x[torch.linspace(0, len(x) - 1, min(count, len(x))).long()]


def as_float(x, scale):
    """A batch in [0, 1] (images) or data units (toy points), float32."""
    return x.float() / scale


def build(kind, shape, cfg):
    return MODELS[kind](shape, cfg)


def load_model(path, device="cpu"):
    """(model in eval mode with frozen weights, checkpoint metadata); safetensors, so no pickle runs."""
    states, meta = load_state_dicts(path)
    model = build(meta["kind"], meta["shape"], meta["model"])
    model.load_state_dict(states["model"])
    return model.requires_grad_(False).eval().to(device), meta


def relative_errors(a, b):
    """||a - b|| / ||b|| per element of a batch (flattened), as a float64 numpy array."""
    a, b = a.flatten(1).double(), b.flatten(1).double()
    return ((a - b).norm(dim=1) / b.norm(dim=1).clamp_min(1e-300)).cpu().numpy()


def psnr(a, b, data_range=1.0):
    """Peak signal-to-noise ratio in dB over the whole batch (mean squared error over all pixels)."""
    mse = float(((a.double() - b.double()) ** 2).mean())
    return math.inf if mse == 0 else 10 * math.log10(data_range**2 / mse)


def summary(errors, precision):
    """fp64: median and max; fp32: median and 99th percentile (a few badly conditioned points dominate a max)."""
    errors = np.asarray(errors, float)
    top = float(errors.max()) if precision == "fp64" else float(np.quantile(errors, 0.99))
    return {"median": float(np.median(errors)), "max" if precision == "fp64" else "p99": top}
