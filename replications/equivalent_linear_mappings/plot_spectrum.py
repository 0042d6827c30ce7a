"""Singular values of the stacked detached Jacobian, relative to the largest (median over prompts): the trained
model against its own initial weights."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
fig, axes = subplots(1, 1, size=4.0)
ax = axes[0, 0]
for key, label in (("singular_values", "trained"), ("init_singular_values", "random init")):
    if key in a:
        s = a[key]
        ax.semilogy(np.arange(1, len(s) + 1), s, marker=".", lw=1, label=label)
ax.set_xlabel("singular value index")
ax.set_ylabel("s_k / s_1 (median over prompts)")
ax.legend(fontsize=7)
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
