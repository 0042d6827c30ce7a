"""Write the dataset of this paper as one safetensors file (the layout shared.data.prepare writes).

scikit-learn's bundled 8x8 digits ship inside the package (installed with mlxtend), so nothing is downloaded.
The split is by position within each class, never by RNG, so it does not depend on a seed.
"""
import numpy as np
from safetensors.numpy import save_file
from sklearn.datasets import load_digits

from shared.io.files import atomic_path
from shared.pipeline.run import start_run


def split_by_class(x, y, test_fraction):
    train_idx, test_idx = [], []
    for label in np.unique(y):
        rows = np.flatnonzero(y == label)
        n_test = round(test_fraction * len(rows))
        train_idx.append(rows[: len(rows) - n_test])
        test_idx.append(rows[len(rows) - n_test :])
    train_idx, test_idx = np.concatenate(train_idx), np.concatenate(test_idx)
    return {"x_train": x[train_idx], "y_train": y[train_idx], "x_test": x[test_idx], "y_test": y[test_idx]}


def main():
    run = start_run("out")
    args = run.args  # params: {"dataset": ..., "test_fraction": ...}
    if run.params["dataset"] != "digits":
        raise SystemExit(f"unknown dataset {run.params['dataset']!r}")
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)  # 16 grey levels -> [0, 1]
    arrays = split_by_class(x, digits.target.astype(np.int64), run.params["test_fraction"])
    meta = {"dataset": "digits", "source": "sklearn.datasets.load_digits", "test_fraction": str(run.params["test_fraction"])}
    with atomic_path(args.out) as tmp:
        save_file({k: np.ascontiguousarray(v) for k, v in arrays.items()}, str(tmp), metadata=meta)
    print({k: v.shape for k, v in arrays.items()})


if __name__ == "__main__":
    main()
