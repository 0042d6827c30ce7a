"""What the image and theory parts share: the prepared images as float tensors, and the trained classifiers."""
import torch

from shared.data import read_prepared
from shared.pipeline.run import load_models as load_checkpoint

from .model import build


def load_images(path):
    """Prepared dataset -> float32 tensors: pixels in [0, 1] flattened (no mean/std normalization, as the paper);
    the labels are the digits (image/target_task.relabel turns them into section 4.3's two classes)."""
    arrays, _ = read_prepared(path)
    as_x = lambda a: torch.from_numpy(a).reshape(len(a), -1).float() / 255.0
    return {
        "x_train": as_x(arrays["x_train"]), "y_train": torch.from_numpy(arrays["y_train"]).long(),
        "x_test": as_x(arrays["x_test"]), "y_test": torch.from_numpy(arrays["y_test"]).long(),
    }


def load_models(path):
    """{run name: ImageClassifier}, {name: run spec} and the checkpoint's metadata (safetensors: no pickle)."""
    return load_checkpoint(path, build)
