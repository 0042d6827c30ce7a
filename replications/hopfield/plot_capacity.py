"""N_max against d on a log axis: the modern Hopfield network's one-step capacity (dots: seeds; line: the fit of
log N_max against d) and the classical Hebbian network's on the same probes."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=3.8)
ax = axes[0, 0]
dims = arrays["dims"]
for key, color, label in (("nmax_modern", "C0", "modern (beta = 1)"), ("nmax_hebbian", "C1", "classical Hebbian")):
    table = arrays[key]
    for k in range(table.shape[1]):
        ax.plot(dims, table[:, k], "o", color=color, ms=3, alpha=0.6)
    ax.plot(dims, np.exp(np.log(table).mean(1)), "-", color=color, label=label)
slope, intercept = arrays["fit"]
ax.plot(dims, np.exp(slope * dims + intercept), "--", color="C0", lw=1, label=f"exp fit, c = {np.exp(4 * slope):.2f}")
ax.set_yscale("log")
ax.set_xlabel("dimension d")
ax.set_ylabel("N_max (>= 99% one-step retrieval)")
ax.legend(fontsize=7)
save(fig, args.out)
