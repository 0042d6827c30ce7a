"""What this paper's scripts share: prepared data as float tensors, the trained model of a checkpoint, what every
analysis starts with, and error measures."""
import json
from typing import Any, NamedTuple

import numpy as np
import torch

from shared.data import read_prepared
from shared.pipeline.run import load_models, start_run
from shared.stats import rel_err

from .model import build


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


def load_model(path, device="cpu"):
    """The one model of a checkpoint train.py wrote (eval mode, weights frozen) on `device`, its run spec and the
    checkpoint's metadata; safetensors, so no pickle runs."""
    models, specs, meta = load_models(path, build)
    (name, model), = models.items()
    return model.to(device), specs[name], meta


class Opened(NamedTuple):
    run: Any  # the run contract's context (start_run)
    model: torch.nn.Module  # float32, on run.device
    spec: dict  # the model's run spec: kind, dataset, shape, model, train, seed
    meta: dict  # the checkpoint's metadata (write_metrics reports its provenance)
    data: dict
    shape: tuple
    scale: float


def start_analysis():
    """What every analysis starts with: the run (--checkpoint, --data, --metrics, --arrays), TF32 off (it would
    change matmul precision on a GPU), the trained model on the run's device and the data."""
    run = start_run("checkpoint", "data", "metrics", "arrays")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model, spec, meta = load_model(run.args.checkpoint, run.device)
    return Opened(run, model, spec, meta, *load_data(run.args.data))


def relative_errors(a, b):
    """||a - b|| / ||b|| per element of a batch (flattened), in float64, as a numpy array."""
    return rel_err(a.double(), b.double(), "l2", per_sample=True).cpu().numpy()


def summary(errors, precision):
    """fp64: median and max; fp32: median and 99th percentile (a few badly conditioned points dominate a max)."""
    errors = np.asarray(errors, float)
    top = float(errors.max()) if precision == "fp64" else float(np.quantile(errors, 0.99))
    return {"median": float(np.median(errors)), "max" if precision == "fp64" else "p99": top}
