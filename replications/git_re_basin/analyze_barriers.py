"""Barriers between the two models of each width: naive interpolation, activation matching (AM) and weight
matching (WM) (Fig. 2's MNIST MLP panel at small scale, and the width trend of G4).

At each width: pi(B) by each method, then train/test loss and accuracy along (1 - lam) A + lam pi(B) on the
25-point lambda grid; barriers in the mean form (the paper's definition, the one the claims read) and the chord
form. Aggregates the claims read: the worst (largest) AM/naive and WM/naive ratio over widths, the smallest
midpoint-accuracy gain over naive, and the WM/naive ratio at the widest minus that at the narrowest width. The same
ratios for B under a random permutation are G1's control (a re-basin that aligns nothing).
"""
import numpy as np
import torch

from shared.nn.interpolation import copy_state
from shared.nn.permutation import apply_permutation, random_permutation
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import SPLITS, curves, lambdas, load_data, match, pair, ratio, summarise

METHODS = ("naive", "am", "wm")


def main():
    run = start_run("data", "metrics", "arrays", many=("checkpoints",))
    p = run.params
    data = load_data(run.args.data)
    lams = lambdas(p["lambdas"])
    m, arrays, sweeps, meta = {}, {"lambdas": lams.numpy(), "widths": np.array(p["widths"])}, {}, None
    for path in run.args.checkpoints:
        models, specs, meta = load_models(path)
        a, b = pair(models, specs, next(s["d_hidden"] for s in specs.values()))
        width = a.fc[0].out_features
        spec, state_a, state_b = a.spec(), copy_state(a), copy_state(b)
        for method in METHODS:
            matched, info = match(method, a, spec, state_a, state_b, data, p)
            curve = curves(a, state_a, matched, lams, data)
            m.update(summarise(curve, lams, f"{method}_h{width}"))
            for key, values in curve.items():
                arrays[f"{method}_h{width}_{key}"] = values
            if method == "wm":
                sweeps[width] = info["sweeps"]
        # control for G1: B under a random permutation, a generic re-basin that aligns nothing (ratio to naive ~1)
        shuffled = apply_permutation(spec, random_permutation(spec, state_b, torch.Generator().manual_seed(
            p["match_seed"])), state_b)
        m.update(summarise(curves(a, state_a, shuffled, lams, data), lams, f"random_h{width}"))
        for split in SPLITS:
            naive = m[f"naive_h{width}_{split}_barrier"]
            for method in ("am", "wm", "random"):
                m[f"{method}_over_naive_{split}_h{width}"] = ratio(m[f"{method}_h{width}_{split}_barrier"], naive)
        for method in ("am", "wm"):
            m[f"{method}_mid_acc_gain_h{width}"] = (m[f"{method}_h{width}_test_mid_acc"]
                                                   - m[f"naive_h{width}_test_mid_acc"])
        m[f"wm_sweeps_h{width}"] = sweeps[width]
        print(width, {k: round(v, 4) for k, v in m.items() if f"_h{width}" in k and "barrier" in k}, flush=True)
    widths = sorted(sweeps)
    for method in ("am", "wm", "random"):
        for split in SPLITS:
            m[f"{method}_over_naive_{split}_max"] = max(m[f"{method}_over_naive_{split}_h{w}"] for w in widths)
    for method in ("am", "wm"):
        m[f"{method}_mid_acc_gain_min"] = min(m[f"{method}_mid_acc_gain_h{w}"] for w in widths)
    m["wm_ratio_widest_minus_narrowest"] = (m[f"wm_over_naive_train_h{widths[-1]}"]
                                           - m[f"wm_over_naive_train_h{widths[0]}"])
    m["wm_train_barrier_widest"] = m[f"wm_h{widths[-1]}_train_barrier"]
    m["wm_over_naive_train_widest"] = m[f"wm_over_naive_train_h{widths[-1]}"]
    for method in METHODS:
        for split in SPLITS:
            arrays[f"width_{method}_{split}_barrier"] = np.array([m[f"{method}_h{w}_{split}_barrier"] for w in widths])
    info = {"widths": widths, "lambdas": p["lambdas"], "barrier_form_scored": "mean",
            "am_statistic": "uncentred cross-moment of post-ReLU activations",
            "am_samples": p["am_samples"] or len(data["x_train"]), "wm_sweeps": sweeps}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)


if __name__ == "__main__":
    main()
