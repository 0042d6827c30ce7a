"""Seed-mean loss after t GD steps against eta / eta*_inf under muP, one line per width, one panel per t."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
steps, widths, grid, eta_inf = a["steps"], a["widths"], a["grid"], float(a["eta_inf"])
fig, axes = subplots(1, len(steps), size=3.2)
for i, t in enumerate(steps):
    ax = axes[0, i]
    for j, n in enumerate(widths):
        curve = a["mean_loss"][i, j]
        # GD diverges at the grid's top for t >= 5 (full tier, losses to 1e290 and inf): a log axis cannot span them,
        # so losses above 1e6 are left undrawn
        line = ax.plot(grid / eta_inf, np.where(curve < 1e6, curve, np.nan), lw=1, label=f"n={int(n)}")
        k = int(np.argmin(curve))
        ax.plot(grid[k] / eta_inf, curve[k], "o", color=line[0].get_color(), ms=4)
    ax.set_yscale("log")
    ax.set_xlabel("eta / eta*_inf")
    ax.set_title(f"t = {int(t)}", fontsize=8)
    ax.legend(fontsize=6)
axes[0, 0].set_ylabel("training loss (seed mean)")
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
