"""Write the dataset of this paper as one safetensors file, through shared.data.write_safetensors (the layout
and content digest that shared.data.prepare writes and read_prepared checks).

scikit-learn's bundled 8x8 digits ship inside the package (installed with mlxtend), so nothing is downloaded.
The split is by position within each class, never by RNG, so it does not depend on a seed.
"""
import numpy as np
from sklearn.datasets import load_digits

from shared.data import split_by_class, write_safetensors
from shared.io.files import atomic_path
from shared.pipeline.run import start_run


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
        write_safetensors({k: np.ascontiguousarray(v) for k, v in arrays.items()}, tmp, meta)
    print({k: v.shape for k, v in arrays.items()})


if __name__ == "__main__":
    main()
