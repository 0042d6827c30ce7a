"""Eigenvectors and accuracy across input-noise levels (Fig 4) and the overfitting signature (I3, I17).

rare-pixel mass: the share of each class's top positive eigenvector (squared, in pixel space) that lies on pixels
whose mean training value is below `rare_pixel_threshold` (the outer edge); mean over classes.
"""
import numpy as np

from shared.data.images import load_images
from shared.io.files import read_json
from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import spearman


def rare_pixel_mask(x_train, threshold):
    return x_train.double().mean(0) < threshold


def rare_pixel_mass(top_vecs, rare):
    """Share of sum(v^2) on rare pixels, averaged over the leading axis."""
    sq = top_vecs.pow(2)
    return (sq[..., rare].sum(-1) / sq.sum(-1)).mean().item()


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    args = run.args
    models, specs, meta = load_models(args.checkpoint)
    data = load_images(args.data, layout="hwc_flat")
    rare = rare_pixel_mask(data["x_train"], args.params["rare_pixel_threshold"])
    history = read_json(args.history)["history"]
    rows = sorted(specs.values(), key=lambda s: s["noise_std"])
    sigmas, ranks, masses, accs, digit0 = [], [], [], [], []
    for spec in rows:
        model = models[spec["name"]]
        vals, vecs = model.eigen(order="magnitude")
        _, signed = analysis.reorder(vals, vecs, "signed")
        sigmas.append(spec["noise_std"])
        ranks.append(analysis.effective_rank(vals).mean().item())
        masses.append(rare_pixel_mass(signed[:, 0], rare))
        accs.append(100.0 * history[spec["name"]][-1]["test_acc"])
        digit0.append(signed[0, 0].numpy())
    metrics = {
        "rank_noise_spearman": spearman(sigmas, ranks),
        "rare_pixel_mass_clean": masses[0],
        "rare_pixel_mass_noisiest": masses[-1],
        "rare_pixel_mass_ratio": masses[0] / max(masses[-1], 1e-12),
        "acc_clean": accs[0],
        "acc_noisiest": accs[-1],
        "rare_pixels": int(rare.sum()),
    }
    for s, r, m, a in zip(sigmas, ranks, masses, accs):
        metrics[f"effective_rank_noise{s}"], metrics[f"rare_pixel_mass_noise{s}"], metrics[f"acc_noise{s}"] = r, m, a
    arrays = {"sigmas": np.array(sigmas), "ranks": np.array(ranks), "masses": np.array(masses),
              "accs": np.array(accs), "digit0_top": np.stack(digit0), "rare": rare.numpy()}
    write_metrics(args.metrics, metrics, meta, arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
