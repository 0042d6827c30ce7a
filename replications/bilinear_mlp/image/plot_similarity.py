"""Fig 5A: |cos| between seeds' eigenvectors of the same rank, per width: corrected (distinct pairs, most
positive first) and as the authors' code computes it (self-pairs included, most negative eigenvectors)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
sizes, corrected, paper = arrays["sizes"], arrays["corrected"], arrays["paper_code"]
fig, axes = subplots(1, 2, size=3.6, sharey=True)
for ax, data, title in ((axes[0, 0], corrected, "corrected"), (axes[0, 1], paper, "authors' code")):
    for i, d in enumerate(sizes):
        ax.plot(np.arange(1, data.shape[1] + 1), data[i], marker=".", label=f"d={d}")
    ax.set_xlabel("eigenvector rank")
    ax.set_title(title, fontsize=9)
axes[0, 0].set_ylabel("|cos| across seeds")
axes[0, 0].legend(fontsize=7)
save(fig, args.out)
