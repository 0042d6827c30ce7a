"""What this paper's scripts share: the prepared data as image tensors, and the trained models."""
import torch

from shared.data import read_prepared
from shared.pipeline.run import load_models as load_checkpoint

from .model import build


def as_images(x):
    """digits (N, 64) floats in [0, 1] -> (N, 1, 8, 8); a registry image set (N, H, W, C) uint8 -> (N, C, H, W) in [0, 1]."""
    x = torch.from_numpy(x)
    if x.dim() == 2:
        side = round(x.shape[1] ** 0.5)
        return x.float().view(-1, 1, side, side)
    return x.permute(0, 3, 1, 2).float() / 255.0


def load_data(path):
    arrays, _ = read_prepared(path)
    return {"x_train": as_images(arrays["x_train"]), "y_train": torch.from_numpy(arrays["y_train"]).long(),
            "x_test": as_images(arrays["x_test"]), "y_test": torch.from_numpy(arrays["y_test"]).long()}


def load_models(path):
    """{run name: model}, {name: run spec} and the checkpoint's metadata (safetensors: no pickle)."""
    return load_checkpoint(path, build)


@torch.no_grad()
def accuracy(model, x, y, chunk=1000):
    correct = sum((model(x[i:i + chunk]).argmax(1) == y[i:i + chunk]).sum().item() for i in range(0, len(x), chunk))
    return correct / len(x)
