"""Section 4 on MNIST-5k: Layca-SGD over the layer-rate profile alpha and the rate rho(0). Claims R1 (rotation
predicts accuracy), R2 (the best run turns every layer to cosine distance ~1; equal rates beat profiles that slow
the first or the last layers) and the identities of Layca and of the rotation measure.

Accuracy and rotation are those of the saved weights, against the initialisation rebuilt from the seed; over
several seeds a configuration's values are the means.
"""
import math
import statistics

import numpy as np
import torch
from scipy.spatial.distance import cosine
from scipy.stats import spearmanr

from shared.io.files import read_json
from shared.nn.layer_rotation import kernels
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import final_state, load_data, optimizer


def layca_invariants(model, spec, data, steps, batch):
    """Re-run `steps` Layca steps on a float64 copy of a trained model: the largest relative change of a kernel's
    norm, and the largest relative error of a kernel's turn against arctan(its rate)."""
    model = model.double().train().requires_grad_(True)
    opt = optimizer(model, spec)
    rates = {id(p): g["lr"] for g in opt.param_groups for p in g["params"]}
    x, y = data["x_train"][:batch].double(), data["y_train"][:batch]
    norm_err = angle_err = 0.0
    for _ in range(steps):
        before = {name: p.detach().clone() for name, p in kernels(model)}
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        for name, p in kernels(model):
            old, new = before[name].flatten(), p.detach().flatten()
            u, v = old / old.norm(), new / new.norm()
            turn = math.atan2(float((v - (v @ u) * u).norm()), float(v @ u))
            want = math.atan(rates[id(p)])
            norm_err = max(norm_err, abs(float(new.norm() / old.norm()) - 1))
            angle_err = max(angle_err, abs(turn - want) / want)
    return norm_err, angle_err


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    p = run.params
    g, a = p["grid"], p["analysis"]
    data = load_data(run.args.data, p["per_class"])
    models, specs, meta = load_models(run.args.checkpoint)
    history = read_json(run.args.history)["history"]
    acc, rotation, inits = final_state(models, specs, data)

    configs = [(al, k) for al in g["alphas"] for k in g["exponents"]]

    def runs(al, k):
        return [n for n, s in specs.items() if s["alpha"] == al and s["exponent"] == k]
    c_acc = {c: statistics.fmean(acc[n] for n in runs(*c)) for c in configs}
    c_mean = {c: statistics.fmean(statistics.fmean(rotation[n]) for n in runs(*c)) for c in configs}
    c_min = {c: statistics.fmean(min(rotation[n]) for n in runs(*c)) for c in configs}
    best, worst = max(configs, key=c_acc.get), min(configs, key=c_acc.get)
    per_alpha = {al: max(c_acc[(al, k)] for k in g["exponents"]) for al in g["alphas"]}
    extremes = (min(g["alphas"]), max(g["alphas"]))

    m = {"spearman_rotation_accuracy": round(float(spearmanr([c_mean[c] for c in configs],
                                                            [c_acc[c] for c in configs])[0]), 12),
         "best_acc": c_acc[best], "best_alpha": best[0], "best_exponent": best[1],
         "best_min_rotation": c_min[best], "best_mean_rotation": c_mean[best],
         "worst_acc": c_acc[worst], "gap_best_minus_worst": c_acc[best] - c_acc[worst],
         "balanced_minus_extremes": per_alpha[0.0] - max(per_alpha[al] for al in extremes)}
    for al in g["alphas"]:
        m[f"best_acc_alpha_{al:+g}"] = per_alpha[al]

    # identities: the rotation against scipy's cosine distance; Layca keeps norms, turns by arctan(rate), freezes
    # every non-kernel parameter
    scipy_err = frozen = end_norm = 0.0
    for name, model in models.items():
        init = dict(inits[name].named_parameters())
        for (kname, w), r in zip(kernels(model), rotation[name]):
            w0 = init[kname].detach()
            scipy_err = max(scipy_err, abs(r - cosine(w.double().flatten().numpy(), w0.double().flatten().numpy())))
            end_norm = max(end_norm, abs(float(w.double().norm() / w0.double().norm()) - 1))
        for pname, q in model.named_parameters():
            if q.ndim < 2:
                frozen = max(frozen, float((q - init[pname]).abs().max()))
    norm_err = angle_err = 0.0
    for name, spec in specs.items():
        if spec["alpha"] == 0.0 and spec["seed"] == g["seeds"][0]:
            ne, ae = layca_invariants(models[name], spec, data, a["identity_steps"], a["identity_batch"])
            norm_err, angle_err = max(norm_err, ne), max(angle_err, ae)
    m.update(rotation_vs_scipy_max_abs=scipy_err, layca_step_norm_rel_err=norm_err,
             layca_step_angle_rel_err=angle_err, layca_frozen_max_abs=frozen, layca_end_norm_rel_err=end_norm)

    arrays = {"alpha": np.array([c[0] for c in configs]), "exponent": np.array([c[1] for c in configs]),
              "acc": np.array([c_acc[c] for c in configs]), "mean_rotation": np.array([c_mean[c] for c in configs]),
              "min_rotation": np.array([c_min[c] for c in configs]),
              "best_curves": np.array(history[runs(*best)[0]]["rotation"])}
    info = {"test_images": len(data["x_test"]), "train_images": len(data["x_train"]),
            "best": runs(*best)[0], "worst": runs(*worst)[0]}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
