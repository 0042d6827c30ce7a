"""Learned step eta (mean diagonal of Gamma) against n, over n / (n + d + 1 + sigma^2), per (d, sigma)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
rows = arrays["eta_rows"]  # d, n, sigma, seed, learned eta, eta*, relative Gamma error
fig, axes = subplots(1, 2, size=3.6)
ax, par = axes[0, 0], axes[0, 1]
for d, sigma in sorted({(r[0], r[2]) for r in rows}):
    sel = rows[(rows[:, 0] == d) & (rows[:, 2] == sigma)]
    grid = np.linspace(sel[:, 1].min(), sel[:, 1].max(), 100)
    line = ax.plot(grid, grid / (grid + d + 1 + sigma**2), lw=1, label=f"theory d={d:g}, sigma={sigma:g}")
    ax.plot(sel[:, 1], sel[:, 4], "o", color=line[0].get_color(), ms=4)
    par.plot(sel[:, 5], sel[:, 4], "o", color=line[0].get_color(), ms=4)
ax.set_xscale("log")
ax.set_xlabel("context length n")
ax.set_ylabel("learned eta (dots)")
ax.legend(fontsize=6)
lim = [0, max(1.0, float(rows[:, 4].max()))]
par.plot(lim, lim, "k--", lw=0.8)
par.set_xlabel("eta* = n / (n + d + 1 + sigma^2)")
par.set_ylabel("learned eta")
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
