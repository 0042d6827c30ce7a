"""What this paper's scripts share: the prepared data as tensors, and the trained models."""
import torch

from shared.data import read_prepared


def load_data(path):
    """The file prepare_data.py wrote -> float32 inputs (N, 64) in [0, 1] and int64 labels."""
    arrays, _ = read_prepared(path, keys=("x_train", "y_train", "x_test", "y_test"))
    return {
        "x_train": torch.from_numpy(arrays["x_train"]).float(), "y_train": torch.from_numpy(arrays["y_train"]).long(),
        "x_test": torch.from_numpy(arrays["x_test"]).float(), "y_test": torch.from_numpy(arrays["y_test"]).long(),
    }

