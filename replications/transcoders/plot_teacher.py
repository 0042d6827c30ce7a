"""Left: edge AUROC against the planted G per method (dots: seeds). Right: feature recovery (mean max cosine)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.8)
for ax, key, labels, xlabel, ylabel in (
        (axes[0, 0], "auroc", arrays["methods"], "edge score", "edge AUROC vs planted G"),
        (axes[0, 1], "recovery", arrays["recovery_labels"], "learned directions", "mean max cosine to true")):
    values = arrays[key]
    pos = np.arange(len(labels))
    ax.bar(pos, values.mean(1), color="C0", alpha=0.5)
    for k in range(values.shape[1]):
        ax.plot(pos, values[:, k], "o", color="C1", ms=3)
    ax.set_xticks(pos, [str(s) for s in labels], rotation=30, fontsize=6, ha="right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.02)
axes[0, 0].axhline(0.5, color="k", ls="--", lw=0.8)
save(fig, args.out)
