"""What this paper's scripts share: the prepared images as flat float tensors, and the trained models."""
import torch

from shared.data import read_prepared
from shared.pipeline.run import load_models as load_checkpoint

from .model import build


def load_data(path):
    """Prepared dataset -> float32 inputs (N, C*H*W) in [0, 1], channel-first, and int64 labels."""
    arrays, _ = read_prepared(path)

    def as_x(a):
        x = torch.from_numpy(a).float() / 255.0
        if x.dim() == 4:  # (N, H, W, C) colour images -> channel-first
            x = x.permute(0, 3, 1, 2)
        return x.reshape(len(x), -1).contiguous()
    return {"x_train": as_x(arrays["x_train"]), "y_train": torch.from_numpy(arrays["y_train"]).long(),
            "x_test": as_x(arrays["x_test"]), "y_test": torch.from_numpy(arrays["y_test"]).long()}


def load_models(path):
    """{run name: model}, {name: run spec} and the checkpoint's metadata (safetensors: no pickle)."""
    return load_checkpoint(path, build)

