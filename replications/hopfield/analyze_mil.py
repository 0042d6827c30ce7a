"""MNIST bags (claims M1-M3, control K3): test AUC of each trained learner, per pooling over seeds, and of the
untrained Hopfield-pooling learner of each seed (what the architecture scores before any training)."""
import statistics

import numpy as np

from shared.io.runtime import seed_everything
from shared.pipeline.run import derive_seed, load_models, start_run, write_metrics

from .common import auc, bag_scores, load_digits, mil_bags
from .model import POOLINGS, build


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    m = run.params["mil"]
    models, specs, meta = load_models(run.args.checkpoint)
    data = load_digits(run.args.data)
    x = data["x_test"]
    per_model, untrained = {}, {}
    for name, model in models.items():
        spec = specs[name]
        test = mil_bags(data, m, spec["seed"])["test"]
        per_model[name] = auc(bag_scores(model, x, test), test[2])
        if spec["pooling"] == "hopfield":
            seed_everything(derive_seed(spec["seed"], "init"))
            fresh = build(spec).eval()
            a = auc(bag_scores(fresh, x, test), test[2])
            untrained[name] = max(a, 1 - a)
    by_pool = {p: [per_model[n] for n in per_model if specs[n]["pooling"] == p] for p in POOLINGS
               if any(specs[n]["pooling"] == p for n in per_model)}
    mean = {p: statistics.fmean(v) for p, v in by_pool.items()}
    metrics = {
        **{f"auc_{p}_mean": v for p, v in mean.items()},
        **{f"auc_{p}_min": min(v) for p, v in by_pool.items()},
        **{f"auc_{n}": v for n, v in per_model.items()},
        "hopfield_minus_mean": mean["hopfield"] - mean["mean"],
        "hopfield_minus_best_baseline": mean["hopfield"] - max(mean[p] for p in ("max", "attention")),
        "untrained_auc_max": max(untrained.values()),
    }
    info = {"test_bags": m["test_bags"], "seeds": m["seeds"], "target": m["target"],
            "auc_spread": {p: [min(v), max(v)] for p, v in by_pool.items()}}
    arrays = {f"auc_{p}": np.array(v) for p, v in by_pool.items()}
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
