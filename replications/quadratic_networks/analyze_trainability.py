"""Trainability (claims T1-T4, identities I1-I2, control K2), from the saved weights of every image run.

A run collapses when its loss turned non-finite or its final test accuracy is below `collapse_acc` (the dossier's
definition, fixed before the first run). The grid counts collapses per arm over every lr and seed; the sweep reads
the mean test accuracy of ReLinear per gamma (the learning rate of the quadratic terms) against the conventional
network at the main lr, over the sweep seeds.
"""
import statistics

import numpy as np
import torch

from shared.io.files import read_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import derive_seed, load_models, start_run, write_metrics

from .common import ARMS, accuracy, image_name, load_image_data
from .model import build


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    p = run.params
    e, a = p["images"], p["analysis"]
    data = load_image_data(run.args.data, e["arch"])
    x, y = data["x_test"], data["y_test"]
    models, specs, meta = load_models(run.args.checkpoint)
    diverged = read_json(run.args.history)["diverged"]
    acc = {name: accuracy(model, x, y) for name, model in models.items()}
    collapsed = {name: diverged[name] is not None or acc[name] < a["collapse_acc"] for name in models}

    m = {}
    grid = [(arm, lr, seed) for arm in ARMS for lr in e["lrs"] for seed in e["seeds"]]

    def grid_name(arm, lr, seed):
        return image_name(arm, lr, seed, e["relinear_gamma"] if arm == "relinear" else None)
    for arm in ARMS:
        m[f"collapses_{arm}"] = sum(collapsed[grid_name(*g)] for g in grid if g[0] == arm)
        m[f"collapses_{arm}_main_lr"] = sum(collapsed[grid_name(arm, e["main_lr"], s)] for s in e["seeds"])
        m[f"acc_{arm}_main_lr_mean"] = statistics.fmean(acc[grid_name(arm, e["main_lr"], s)] for s in e["seeds"])
    m["grid_runs_per_arm"] = len(e["lrs"]) * len(e["seeds"])
    m["collapse_gap_random_minus_relinear"] = m["collapses_random"] - m["collapses_relinear"]

    lr, seeds = e["main_lr"], e["sweep"]["seeds"]
    sweep = {g: statistics.fmean(acc[image_name("relinear", lr, s, g)] for s in seeds) for g in e["sweep"]["gammas"]}
    conventional = statistics.fmean(acc[image_name("conventional", lr, s)] for s in seeds)
    positive = {g: v for g, v in sweep.items() if g > 0}
    best = max(positive, key=positive.get)
    interior = {g: v for g, v in sweep.items() if 0 < g < max(sweep)}
    m["sweep_conventional_acc"] = conventional
    m["sweep_best_gamma"] = best
    m["sweep_best_acc"] = positive[best]
    m["sweep_best_minus_conventional"] = positive[best] - conventional
    m["sweep_interior_margin"] = max(interior.values()) - max(sweep[0.0], sweep[max(sweep)])
    for g, v in sweep.items():
        m[f"sweep_acc_gamma_{g:g}"] = v

    # I2: gamma = 0 freezes the quadratic terms at ReLinear's init, so training is the conventional network's
    diffs = []
    for s in seeds:
        with torch.no_grad():
            diffs.append(float((models[image_name("relinear", lr, s, 0.0)](x[:a["identity_inputs"]])
                                - models[image_name("conventional", lr, s)](x[:a["identity_inputs"]])).abs().max()))
    m["gamma0_vs_conventional_max_abs"] = max(diffs)
    # I1: at ReLinear's init the quadratic network is the conventional network of the same seed, float64
    init_diffs = []
    for s in seeds:
        spec = specs[image_name("relinear", lr, s, 0.0)]
        nets = {}
        for kind in ("relinear", "conventional"):
            seed_everything(derive_seed(s, "init"))
            nets[kind] = build({**spec, "init": "relinear" if kind == "relinear" else "kaiming",
                                "neuron": "quadratic" if kind == "relinear" else "conventional"}).double().eval()
        with torch.no_grad():
            xi = x[:a["identity_inputs"]].double()
            init_diffs.append(float((nets["relinear"](xi) - nets["conventional"](xi)).abs().max()))
    m["relinear_init_vs_conventional_max_abs"] = max(init_diffs)

    arrays = {"lrs": np.array(e["lrs"], float),
              "collapse_rate": np.array([[statistics.fmean(collapsed[grid_name(arm, l, s)] for s in e["seeds"])
                                          for l in e["lrs"]] for arm in ARMS]),
              "arms": np.array(ARMS), "gammas": np.array(sorted(sweep), float),
              "sweep_acc": np.array([[acc[image_name("relinear", lr, s, g)] for s in seeds] for g in sorted(sweep)]),
              "conventional_acc": np.array([acc[image_name("conventional", lr, s)] for s in seeds])}
    info = {"test_images": len(x), "collapse_acc": a["collapse_acc"], "diverged": sorted(n for n in diverged
                                                                                        if diverged[n] is not None)}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
