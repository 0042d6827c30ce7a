"""Eigenvalue spectra and top eigenvectors per class (Fig 2, Fig 3, App A).

Proxies for 'the top positive eigenvector is specific to its class' (I1), fixed before running:
  selectivity: mean (v.x)^2 over test images of the class / mean over the other classes, per class;
  prototype match: |cos| of the top positive eigenvector with each class's mean-image contrast (mean_c - mean);
  a class 'matches' when its own contrast is the closest.
"""
import torch

from shared.data.images import load_images
from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import load_models, start_run, write_metrics

SHOWN = 40  # Fig 3 shows the 20 most positive and 20 most negative of the d eigenvalues


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    args = run.args
    models, _, meta = load_models(args.checkpoint)
    data = load_images(args.data, layout="hwc_flat")
    model = models["bilinear"]
    vals, vecs = model.eigen(order="magnitude")  # (10, d), (10, d, 784)
    energy = vals.pow(2)
    top_energy = (energy[:, :SHOWN].sum(-1) / energy.sum(-1)).mean().item()
    signed_vals, signed_vecs = analysis.reorder(vals, vecs, "signed")  # most positive first
    top_pos = signed_vecs[:, 0]  # (10, 784)

    x, y = data["x_test"].double(), data["y_test"]
    act = (x @ top_pos.T) ** 2  # (n, 10)
    classes = range(vals.shape[0])
    selectivity = torch.stack([act[y == c, c].mean() / act[y != c, c].mean() for c in classes])
    xt, yt = data["x_train"].double(), data["y_train"]
    contrast = torch.stack([xt[yt == c].mean(0) for c in classes]) - xt.mean(0)
    cos = (analysis.top_eigenvector_similarity(top_pos[:, None, :], contrast[None, :, :]))  # (10, 10)
    matches = int((cos.argmax(-1) == torch.arange(len(cos))).sum())

    metrics = {
        "top40_energy_fraction": top_energy,
        "effective_rank": analysis.effective_rank(vals).mean().item(),
        "d_hidden": vals.shape[-1],
        "top_eigvec_selectivity_median": selectivity.median().item(),
        "top_eigvec_selectivity_min": selectivity.min().item(),
        "prototype_matches": matches,
    }
    arrays = {
        "signed_vals": signed_vals.numpy(), "top_positive": signed_vecs[:, :3].numpy(),
        "top_negative": signed_vecs[:, -3:].flip(1).numpy(), "selectivity": selectivity.numpy(),
    }
    write_metrics(args.metrics, metrics, meta, info={"model": "bilinear"},
                  arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
