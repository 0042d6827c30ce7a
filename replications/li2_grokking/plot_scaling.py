"""Fig. 5 analogue: success rate against p / p* per M, and the boundary p_b against ln M / M on log axes with
the fitted line and the code's p* = 2.7482 ln M / M."""
import numpy as np
from matplotlib.ticker import NullFormatter

from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
fig, axes = subplots(1, 2, size=4.0)
for k, m in enumerate(a["orders"]):
    axes[0, 0].plot(a["multipliers"], a["rates"][k], "o-", ms=4, label=f"M={m}")
axes[0, 0].axvline(1.0, color="k", lw=0.6, ls="--")
axes[0, 0].set_xlabel("p / p*")
axes[0, 0].set_ylabel("success rate (test >= 0.9)")
axes[0, 0].legend(fontsize=7)
x = np.log(a["orders"]) / a["orders"]
axes[0, 1].loglog(x, a["boundaries"], "o", label="boundary p_b (rate 1/2)")
xs = np.linspace(x.min() * 0.9, x.max() * 1.1, 20)
if np.isfinite(a["slope"]):
    axes[0, 1].loglog(xs, np.exp(a["intercept"]) * xs ** a["slope"], "-", lw=1, label=f"fit slope {float(a['slope']):.2f}")
axes[0, 1].loglog(xs, float(a["c"]) * xs, "k--", lw=0.8, label=f"p* = {float(a['c']):g} ln M / M")
axes[0, 1].xaxis.set_minor_formatter(NullFormatter())
axes[0, 1].set_xlabel("ln M / M")
axes[0, 1].set_ylabel("training fraction")
axes[0, 1].legend(fontsize=7)
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
