"""The mixing Gram matrix |G| between latents assigned to a component (planted) or digit (MNIST), sorted by label."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
labels = arrays["gram_labels"]
order = np.argsort(labels, kind="stable")
gram, labels = np.abs(arrays["gram"])[order][:, order], labels[order]
ids, starts, counts = np.unique(labels, return_index=True, return_counts=True)
fig, axes = subplots(1, 1, size=5.0)
ax = axes[0, 0]
image = ax.imshow(gram, cmap="magma", vmin=0, vmax=1, interpolation="nearest")
for edge in starts[1:] - 0.5:
    ax.axhline(edge, color="white", lw=0.5)
    ax.axvline(edge, color="white", lw=0.5)
centres = starts + counts / 2 - 0.5
ax.set_xticks(centres, [str(i) for i in ids], fontsize=6)
ax.set_yticks(centres, [str(i) for i in ids], fontsize=6)
ax.set_xlabel("latents sorted by assigned label", fontsize=8)
ax.set_ylabel("latents sorted by assigned label", fontsize=8)
cbar = fig.colorbar(image, ax=ax, shrink=0.8, pad=0.02)
cbar.set_label("|cos| between bottleneck columns", fontsize=7)
cbar.ax.tick_params(labelsize=6)
ax.set_title(f"{args.title}: mixing Gram matrix ({len(labels)} assigned latents)", fontsize=9)
save(fig, args.out)
