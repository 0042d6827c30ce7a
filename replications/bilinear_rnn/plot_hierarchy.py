"""The variant x task table of out-of-distribution accuracy (length 500, best seed): this run beside the paper's."""
import numpy as np
from matplotlib import colormaps

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
exps, tasks = [str(e) for e in arrays["table_experiments"]], [str(t) for t in arrays["table_tasks"]]
fig, axes = subplots(1, 2, size=max(3.5, 0.7 * len(tasks) + 1.5))
for ax, key, title in zip(axes[0], ("table_run", "table_paper"), ("this run", "paper (secondary, unconfirmed)")):
    table = arrays[key]
    cmap = colormaps["RdYlGn"].copy()
    cmap.set_bad("white")  # not run here / not reported by the paper
    ax.imshow(np.ma.masked_invalid(table), cmap=cmap, vmin=-0.2, vmax=1.0)
    for i in range(len(exps)):
        for j in range(len(tasks)):
            text = "-" if np.isnan(table[i, j]) else f"{table[i, j]:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(tasks)), tasks, rotation=60, fontsize=7)
    ax.set_yticks(range(len(exps)), exps, fontsize=7)
    ax.set_xlabel("task")
    ax.set_ylabel("transition (variant)")
    ax.set_title(title, fontsize=9)
save(fig, args.out)
