"""What this paper's scripts share: the prepared data as tensors, and the trained models."""
import model
import torch

from shared import scripts
from shared.data import read_prepared


def load_data(path):
    """The file prepare_data.py wrote -> float32 inputs (N, 64) in [0, 1] and int64 labels."""
    arrays, _ = read_prepared(path)
    return {
        "x_train": torch.from_numpy(arrays["x_train"]).float(), "y_train": torch.from_numpy(arrays["y_train"]).long(),
        "x_test": torch.from_numpy(arrays["x_test"]).float(), "y_test": torch.from_numpy(arrays["y_test"]).long(),
    }


def load_models(path):
    """{run name: model}, {name: run spec} and the checkpoint's metadata (safetensors: no pickle)."""
    return scripts.load_models(path, model.build)
