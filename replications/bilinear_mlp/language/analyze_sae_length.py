"""Longer SAE training, same reconstruction, better low-rank features (App H, Table 5, Fig 24).

For each SAE of the sweep (each trained twice as long as the previous): normalized MSE on the evaluation
tokens, the fraction of dead latents (at most `min_active` activations) and the mean rank-2 correlation of the
live latents (as analyze_lowrank)."""
import numpy as np

from shared.data.tokens import load_tokens
from shared.io.smoke import capped
from shared.nn import bilinear_analysis as analysis
from shared.nn.sae import normalized_mse
from shared.pipeline.run import start_run, write_metrics

from .common import eval_activations, load_lm, load_sae
from .features import active_tokens, feature_interactions, studied_latents


def main():
    run = start_run("lm", "data", "metrics", "arrays", many=("saes",))
    args = run.args
    p = args.params
    device = run.device
    lm, lm_meta = load_lm(args.lm, device)
    layer, a = p["sae"]["layer"], p["analysis"]
    _, val_tokens, _ = load_tokens(args.data)
    x, y, _ = eval_activations(lm, val_tokens, a["eval_windows"], layer)
    rows = []
    for path in args.saes:
        sae, meta = load_sae(path, device)
        pre, active = active_tokens(sae, y)
        counts = active.sum(0)
        live = studied_latents(pre, active, a["min_active"])
        corr2 = []
        sampled = [live[i] for i in capped(range(len(live)), len(live), "live_latents")]  # a smoke run: a few
        for f, q in feature_interactions(lm, layer, sae, sampled):
            vals, vecs = analysis.eigendecompose(q)
            on = active[:, f]
            corr2.append(analysis.low_rank_correlations(vals, vecs, x[on], pre[on, f], [2])[0])
        rows.append({"steps": meta["steps"], "nmse": normalized_mse(y, sae.double()(y)),
                     "dead_fraction": 1 - len(live) / len(counts), "mean_corr_k2": float(np.mean(corr2)),
                     "train_seconds": meta["wall_seconds"]})
        print(rows[-1])
    rows.sort(key=lambda r: r["steps"])
    first, last = rows[0], rows[-1]
    metrics = {
        "sweep": rows, "doublings": len(rows) - 1,
        "mean_corr_k2_first": first["mean_corr_k2"], "mean_corr_k2_last": last["mean_corr_k2"],
        "mean_corr_k2_gain": last["mean_corr_k2"] - first["mean_corr_k2"],
        "nmse_first": first["nmse"], "nmse_last": last["nmse"], "nmse_ratio_last_to_first": last["nmse"] / first["nmse"],
    }
    arrays = {k: np.array([r[k] for r in rows]) for k in ("steps", "nmse", "dead_fraction", "mean_corr_k2")}
    write_metrics(args.metrics, metrics, lm_meta, info={"layer": layer, "device": lm_meta["device"]},
                  arrays=arrays, arrays_path=args.arrays)


if __name__ == "__main__":
    main()
