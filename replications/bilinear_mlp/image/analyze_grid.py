"""Effective rank and eigenvector sparsity over the weight-decay x noise grid (App E, Fig 19).

effective rank = (L1/L2)^2 of a class's eigenvalues, mean over classes; pixel count = (L1/L2)^2 of an
eigenvector's 784 pixel weights, mean over the 5 selected eigenvectors and classes, for three selections:
top-5 by |lambda| (ours), top-5 most positive, and the 5 most negative (what the authors' code indexes).
An axis's effect on a metric is its range along that axis, averaged over the other axis.
"""
import numpy as np

from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import spearman


def main():
    run = start_run("checkpoint", "metrics", "arrays")
    args = run.args
    models, specs, meta = load_models(args.checkpoint)
    wds = sorted({s["weight_decay"] for s in specs.values()})
    sigmas = sorted({s["noise_std"] for s in specs.values()})
    shape = (len(wds), len(sigmas))
    rank, pix_abs, pix_pos, pix_neg = (np.zeros(shape) for _ in range(4))
    for spec in specs.values():
        i, j = wds.index(spec["weight_decay"]), sigmas.index(spec["noise_std"])
        model = models[spec["name"]]
        vals, vecs = model.eigen(order="magnitude")
        _, signed = analysis.reorder(vals, vecs, "signed")
        rank[i, j] = analysis.effective_rank(vals).mean().item()
        pix_abs[i, j] = analysis.effective_rank(vecs[:, :5]).mean().item()
        pix_pos[i, j] = analysis.effective_rank(signed[:, :5]).mean().item()
        pix_neg[i, j] = analysis.effective_rank(signed[:, -5:]).mean().item()

    effect = lambda m, axis: float(np.mean(np.ptp(m, axis=axis)))  # axis 1: along noise, axis 0: along wd
    metrics = {
        "rank_noise_spearman": float(np.mean([spearman(sigmas, rank[i]) for i in range(len(wds))])),
        "rank_wd_spearman": float(np.mean([spearman(wds, rank[:, j]) for j in range(len(sigmas))])),
        "pixel_count_noise_effect": effect(pix_abs, 1),
        "pixel_count_wd_effect": effect(pix_abs, 0),
        "pixel_count_noise_over_wd": effect(pix_abs, 1) / max(effect(pix_abs, 0), 1e-12),
        "pixel_count_noise_over_wd_paper_code": effect(pix_neg, 1) / max(effect(pix_neg, 0), 1e-12),
        "pixel_count_noise_over_wd_positive": effect(pix_pos, 1) / max(effect(pix_pos, 0), 1e-12),
        "rank_noise_effect": effect(rank, 1),
        "rank_wd_effect": effect(rank, 0),
    }
    arrays = {"wds": np.array(wds), "sigmas": np.array(sigmas), "rank": rank,
              "pixel_abs": pix_abs, "pixel_pos": pix_pos, "pixel_neg": pix_neg}
    write_metrics(args.metrics, metrics, meta, arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
