"""The random-features control at one dimension d (the kernel regime): ridge regression on frozen random ReLU
features of a fixed width, on the first n points of the same pools as the network sweep, for each n of the grid;
the test error of each. No model is kept (the readout is a solve); the history holds the curves."""
from shared.io.files import write_json
from shared.pipeline.run import start_run

from .common import random_features_curve, sample_sizes, test_set


def main():
    run = start_run("history")
    p = run.params
    d, rf, task = p["d"], p["features"], p["task"]
    ns = sample_sizes(d, rf["grid"])
    x_test, y_test = test_set(d, task["test_points"], task["support"], run.generator(0, f"test_d{d}"))
    curves = []
    for seed in rf["seeds"]:
        x, y = test_set(d, max(ns), task["support"], run.generator(seed, f"pool_d{d}"))
        curves.append(random_features_curve(x, y, x_test, y_test, ns, rf["width"], rf["ridge"],
                                            run.generator(seed, f"features_d{d}"), stop_below=rf["stop_below"]))
    runs = [{"name": f"rf_d{d}_s{seed}", "seed": seed} for seed in rf["seeds"]]
    write_json(run.args.history, {**run.meta(runs), "d": d, "ns": ns, "seeds": rf["seeds"], "test_error": curves})
    print(f"d={d}: random features, {len(curves)} seeds, {run.wall():.1f} s")


if __name__ == "__main__":
    main()
