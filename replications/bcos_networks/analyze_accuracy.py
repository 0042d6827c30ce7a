"""CIFAR-10 test accuracy per arm (full tier): the last epoch of each training history, the mean over seeds."""
import numpy as np

from shared.io.files import read_json
from shared.pipeline.run import start_run, write_metrics


def main():
    run = start_run("metrics", "arrays", many=("histories",))
    per_arm = {}
    for path in run.args.histories:
        history = read_json(path)
        per_arm.setdefault(history["runs"][0]["arm"], []).append(history["history"][-1]["test_acc"])
    metrics = {f"acc_{arm}": float(np.mean(accs)) for arm, accs in per_arm.items()}
    write_metrics(run.args.metrics, metrics, info={"seeds": {a: len(v) for a, v in per_arm.items()}},
                  arrays={"acc": np.array(list(metrics.values()))}, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
