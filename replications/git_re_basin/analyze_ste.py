"""Straight-through estimator matching (Algorithm 2) at one width, against weight matching and naive (G7).

Free parameters start at theta_A; each minibatch re-runs weight matching of B onto them (warm-started), the
forward pass uses 1/2 (theta_A + pi(theta_B)) and the gradient passes straight through (shared.nn.permutation.
ste_matching); SGD with momentum; the permutation of the lowest minibatch loss is kept, as the paper's code.
Minibatches: `epochs` passes over the training set in a seeded shuffled order, `batch_size` images each.
"""
import torch
import torch.nn.functional as F

from shared.nn.interpolation import copy_state
from shared.nn.permutation import apply_permutation, ste_matching
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.io.smoke import capped

from .common import SPLITS, curves, lambdas, load_data, match, pair, ratio, summarise


def minibatches(data, epochs, batch_size, generator):
    x, y = data["x_train"], data["y_train"]
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=generator)
        for i in range(0, len(x) - batch_size + 1, batch_size):
            idx = order[i:i + batch_size]
            yield x[idx], y[idx]


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    p = run.params
    data = load_data(run.args.data)
    lams = lambdas(p["lambdas"])
    models, specs, meta = load_models(run.args.checkpoint)
    a, b = pair(models, specs, p["width"])
    spec, state_a, state_b = a.spec(), copy_state(a), copy_state(b)
    m, arrays = {}, {"lambdas": lams.numpy()}
    for method in ("naive", "wm"):
        matched, _ = match(method, a, spec, state_a, state_b, data, p)
        curve = curves(a, state_a, matched, lams, data)
        m.update(summarise(curve, lams, method))
        arrays.update({f"{method}_{k}": v for k, v in curve.items()})
    per_epoch = len(data["x_train"]) // p["batch_size"]
    batches = capped(minibatches(data, p["epochs"], p["batch_size"], run.generator(0, "ste/order")),
                     p["epochs"] * per_epoch, "ste_matching")
    perm, losses = ste_matching(a, spec, state_a, state_b, batches, F.cross_entropy, lr=p["lr"],
                                momentum=p["momentum"], seed=p["match_seed"])
    curve = curves(a, state_a, apply_permutation(spec, perm, state_b), lams, data)
    m.update(summarise(curve, lams, "ste"))
    arrays.update({f"ste_{k}": v for k, v in curve.items()})
    arrays["ste_batch_loss"] = torch.tensor(losses).numpy()
    for split in SPLITS:
        m[f"ste_minus_wm_{split}"] = m[f"ste_{split}_barrier"] - m[f"wm_{split}_barrier"]
        m[f"ste_over_naive_{split}"] = ratio(m[f"ste_{split}_barrier"], m[f"naive_{split}_barrier"])
    m["ste_steps"] = len(losses)
    info = {"width": p["width"], "steps": len(losses), "epochs": p["epochs"], "batch_size": p["batch_size"],
            "optimizer": f"SGD lr {p['lr']} momentum {p['momentum']}", "init": "theta_A"}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
