"""INR classification (MNIST / Fashion-MNIST INRs, full tier): test accuracy (%) of every model kind at the largest
training-set size, and the orderings of the paper's table."""
import numpy as np

from shared.io.files import read_json
from shared.pipeline.run import start_run, write_metrics


def main():
    run = start_run("metrics", "arrays", many=("histories",))  # every analysis rule writes both
    kinds = run.params["kinds"]
    acc, meta = {}, None
    for path, kind in zip(run.args.histories, kinds):
        doc = read_json(path)
        meta = meta or doc
        row = max(doc["history"].values(), key=lambda r: r["n_train"])
        acc[kind] = 100 * row["test"]
    metrics = {f"acc_{k}": v for k, v in acc.items()}
    if "mlp_aug" in acc:
        metrics["mlp_aug_minus_mlp"] = acc["mlp_aug"] - acc["mlp"]
    metrics["dws_minus_best_baseline"] = acc["dws"] - max(v for k, v in acc.items() if k in ("mlp", "mlp_aug"))
    arrays = {"test_accuracy": np.array([acc[k] for k in kinds])}  # in the order of info["kinds"]
    write_metrics(run.args.metrics, metrics, meta, info={"kinds": kinds}, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
