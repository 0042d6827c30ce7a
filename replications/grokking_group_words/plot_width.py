"""Worst-pair error of the bilinear surrogate against width, per group, with the centred CP rank marked."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
groups = sorted(k.removesuffix("_widths") for k in arrays if k.endswith("_widths"))
fig, axes = subplots(1, len(groups), size=3.4)
for ax, g in zip(axes[0], groups):
    widths, errors = arrays[f"{g}_widths"], arrays[f"{g}_errors"]
    for j in range(errors.shape[1]):
        ax.semilogy(widths, np.maximum(errors[:, j], 1e-6), "o-", alpha=0.6, lw=1)
    rank = arrays[f"{g}_rank"][0]
    if np.isfinite(rank):
        ax.axvline(rank, color="k", ls="--", lw=1, label=f"CP rank (centred) {rank:.0f}")
    ax.axhline(0.1, color="gray", ls=":", lw=1, label="exact-fit tolerance")
    ax.set_xlabel("width K")
    ax.set_ylabel("max |error| over the table")
    ax.set_title(f"{g}, w = ab", fontsize=9)
    ax.legend(fontsize=7)
save(fig, args.out)
