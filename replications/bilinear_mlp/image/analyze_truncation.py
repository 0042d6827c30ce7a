"""Accuracy when each class keeps only its top-k eigenvectors (by |lambda|), across widths and seeds (Fig 5B, App F).

logits_c^(k) = sum_{i<k} lambda_ci (v~_ci . x)^2 on the clean test set; drop = full-model accuracy - truncated.
"Similar across sizes" (I7) is scored on the drop, each model against its own full accuracy (App F: "the first few
eigenvectors result in a similar drop across sizes"): the spread of the truncated accuracy itself (spread_at_k5,
reported) mixes in how accurate the full models of each width are.
"""
import numpy as np
import torch

from shared.data.images import load_images
from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import load_models, start_run, write_metrics


@torch.no_grad()
def truncated_accuracy(model, x, y, ks):
    vals, vecs = model.eigen(order="magnitude")
    out = []
    for k in ks:
        kv, kvec = analysis.truncate(vals, vecs, k)
        logits = analysis.quadratic_form(kv, kvec, x)
        out.append(100.0 * (logits.argmax(-1) == y).double().mean().item())  # k = 0: all-zero logits
    return out


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    args = run.args
    models, specs, meta = load_models(args.checkpoint)
    data = load_images(args.data, layout="hwc_flat")
    x, y = data["x_test"].double(), data["y_test"]
    ks = args.params["truncation_k"]
    sizes = sorted({s["d_hidden"] for s in specs.values()})
    seeds = sorted({s["seed"] for s in specs.values()})
    trunc = np.zeros((len(sizes), len(seeds), len(ks)))
    full = np.zeros((len(sizes), len(seeds)))
    for spec in specs.values():
        i, j = sizes.index(spec["d_hidden"]), seeds.index(spec["seed"])
        model = models[spec["name"]].double()
        with torch.no_grad():
            full[i, j] = 100.0 * (model(x).argmax(-1) == y).double().mean().item()
        trunc[i, j] = truncated_accuracy(model, x, y, ks)
    drop = full[:, :, None] - trunc  # (sizes, seeds, ks)
    at = lambda k: ks.index(k)
    metrics = {
        "max_drop_at_k10": float(drop[:, :, at(10)].mean(1).max()),
        "max_drop_at_k5": float(drop[:, :, at(5)].mean(1).max()),
        "spread_at_k5": float(np.ptp(trunc[:, :, at(5)].mean(1))),
        "spread_at_k10": float(np.ptp(trunc[:, :, at(10)].mean(1))),
        "drop_spread_at_k5": float(np.ptp(drop[:, :, at(5)].mean(1))),
        "min_full_acc": float(full.mean(1).min()),
    }
    for i, d in enumerate(sizes):
        metrics[f"full_acc_d{d}"] = float(full[i].mean())
        metrics[f"drop_k5_d{d}"] = float(drop[i, :, at(5)].mean())
        metrics[f"drop_k10_d{d}"] = float(drop[i, :, at(10)].mean())
    arrays = {"ks": np.array(ks), "sizes": np.array(sizes), "trunc": trunc, "full": full}
    write_metrics(args.metrics, metrics, meta, arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
