"""Metrics of the trained classifiers: test accuracy (claim C1) and the exact tensor identity (claim C2).

The identity U (Wz * Vz) = z^T B z is checked in float64 on the trained weights, as a relative error
max|a - b| / max|b| over a batch of test inputs.
"""
import statistics

import numpy as np
import torch

from shared.io.files import read_json
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import rel_err
from shared.train.supervised import evaluate

from .common import load_data


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    args, p = run.args, run.params  # the `analysis` section of config.yaml
    models, _, meta = load_models(args.checkpoint)
    data = load_data(args.data)
    history = read_json(args.history)["history"]

    acc, contraction_err = {}, {}
    x = data["x_test"][: p["identity_inputs"]].double()
    for name, model in models.items():
        acc[name] = evaluate(model, data["x_test"], data["y_test"])[1]  # the saved weights, not the training log
        model = model.double()
        with torch.no_grad():
            z = model.layer_input(x)
            contraction = torch.einsum("cij,ni,nj->nc", model.tensor(torch.float64), z, z)
            contraction_err[name] = rel_err(contraction, model(x))

    metrics = {
        "test_acc_min": min(acc.values()),
        "test_acc_mean": statistics.fmean(acc.values()),
        **{f"test_acc_{name}": value for name, value in acc.items()},
        "contraction_rel_err": max(contraction_err.values()),
    }
    curves = {f"test_acc_{name}": np.array([row.get("test_acc", np.nan) for row in h]) for name, h in history.items()}
    info = {"test_images": len(data["x_test"]), "identity_inputs": len(x), "identity_dtype": "float64"}
    write_metrics(args.metrics, metrics, meta, info=info, arrays=curves, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
