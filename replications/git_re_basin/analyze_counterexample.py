"""The counterexample of App. A.6 (G12): two hand-set perfect solutions of y = 1[x1 <= 0 and x2 >= 0] that test
the two conditions in opposite order (counterexample.py). For each of the four hidden-unit permutations of B, the
accuracy along (1 - lam) A + lam pi(B) on one fixed sample of points; the accuracy barrier is the largest error on
the path minus the mean error of the endpoints (the mean form, on error). The claim reads the smallest barrier
over the four permutations."""
import numpy as np

from shared.nn.interpolation import barrier
from shared.pipeline.run import start_run, write_metrics

from .common import lambdas
from .counterexample import accuracy_curves


def main():
    run = start_run("metrics", "arrays")
    p = run.params
    lams = lambdas(p["lambdas"])
    acc = accuracy_curves(p["sharpness"], p["threshold"], p["points"], p["seed"], lams)
    m, arrays = {}, {"lambdas": lams.numpy()}
    for i, (label, row) in enumerate(acc.items()):
        m[f"acc_barrier_perm{i}"] = barrier([1 - v for v in row], lams, form="mean")
        m[f"min_acc_perm{i}"] = min(row)
        arrays[f"perm{i}"] = np.array(row)
    first = next(iter(acc.values()))
    m["min_acc_barrier"] = min(m[f"acc_barrier_perm{i}"] for i in range(len(acc)))
    m["endpoint_acc_min"] = min(first[0], first[-1])
    info = {"permutations": list(acc), "points": p["points"], "activation": "ReLU", "sharpness": p["sharpness"],
            "threshold": p["threshold"]}
    write_metrics(run.args.metrics, m, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
