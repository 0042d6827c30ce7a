"""Certified (margin rule) and PGD accuracy against the l2 radius, each classifier (the radius 0 point is clean)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
eps = np.concatenate([[0.0], arrays["eps"]])
fig, axes = subplots(1, 2, size=3.4)
colours = {}
for i, name in enumerate(str(n) for n in arrays["names"]):
    label = name.rsplit("-seed", 1)[0]
    colour = colours.setdefault(label, f"C{len(colours)}")
    for ax, key in zip(axes[0], ("cert", "pgd")):
        ax.plot(eps, np.concatenate([[arrays["clean"][i]], arrays[key][i]]), "o-", color=colour, ms=3,
                label=label if label not in [t.get_label() for t in ax.lines] else None)
for ax, title in zip(axes[0], ("certified accuracy", "accuracy under l2 PGD")):
    ax.set_title(title)
    ax.set_xlabel("l2 radius eps")
    ax.set_ylabel("test accuracy")
    ax.set_ylim(0, 1)
axes[0][1].legend(fontsize=6)
save(fig, args.out)
