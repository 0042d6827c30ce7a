"""What this paper's scripts share: the prepared images as float tensors, and the trained classifiers."""
import torch

from shared.data import read_prepared
from shared.pipeline.run import load_models as load_checkpoint

from . import target_task
from .model import build


def load_images(path, task=None):
    """Prepared dataset -> float32 tensors: pixels in [0, 1] flattened (no mean/std normalization, as the paper).

    `task` (an experiment's `task` config, section 4.3) relabels the images into two classes by their similarity to
    a target image (target_task.relabel); without it the labels are the digits.
    """
    arrays, _ = read_prepared(path)
    as_x = lambda a: torch.from_numpy(a).reshape(len(a), -1).float() / 255.0
    data = {
        "x_train": as_x(arrays["x_train"]), "y_train": torch.from_numpy(arrays["y_train"]).long(),
        "x_test": as_x(arrays["x_test"]), "y_test": torch.from_numpy(arrays["y_test"]).long(),
    }
    return data if task is None else target_task.relabel(data, task)


def load_models(path):
    """{run name: ImageClassifier}, {name: run spec} and the checkpoint's metadata (safetensors: no pickle)."""
    return load_checkpoint(path, build)
