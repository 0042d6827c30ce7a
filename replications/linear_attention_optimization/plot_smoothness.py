"""Directional smoothness along Adam's updates against the gradient norm, log-log."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
names = sorted({k.split("__")[0] for k in arrays if k.endswith("__smoothness")})
fig, axes = subplots(1, len(names), size=3.4)
for ax, name in zip(axes[0], names):
    g, s = arrays[f"{name}__grad_norm"], arrays[f"{name}__smoothness"]
    ax.scatter(g, s, s=8, color="tab:blue")
    fit = np.polyfit(np.log(g), np.log(s), 1)
    xs = np.geomspace(g.min(), g.max(), 20)
    ax.plot(xs, np.exp(np.polyval(fit, np.log(xs))), color="k", lw=1, label=f"slope {fit[0]:.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("gradient norm")
    ax.set_ylabel("directional smoothness")
    ax.set_title(f"{name}, Adam", fontsize=9)
    ax.legend(fontsize=7)
save(fig, args.out)
