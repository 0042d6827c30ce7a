"""What this paper's scripts share: the prepared images as float tensors, and the trained classifiers."""
import model
import torch

from shared import scripts
from shared.data import read_prepared


def load_images(path):
    """Prepared dataset -> float32 tensors: pixels in [0, 1] flattened (no mean/std normalization, as the paper)."""
    arrays, _ = read_prepared(path)
    as_x = lambda a: torch.from_numpy(a).reshape(len(a), -1).float() / 255.0
    return {
        "x_train": as_x(arrays["x_train"]), "y_train": torch.from_numpy(arrays["y_train"]).long(),
        "x_test": as_x(arrays["x_test"]), "y_test": torch.from_numpy(arrays["y_test"]).long(),
    }


def load_models(path):
    """{run name: ImageClassifier}, {name: run spec} and the checkpoint's metadata."""
    return scripts.load_models(path, model.build)
