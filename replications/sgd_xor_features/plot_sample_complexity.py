"""Left: median test error over seeds against the sample size n, per d, network (solid) and random features
(dashed). Right: n*(d) of each learner on log-log axes, with d log2 d for reference."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.8)
left, right = axes[0, 0], axes[0, 1]
for i, d in enumerate(arrays["net_dims"]):
    left.plot(arrays["net_ns"][i], arrays["net_median"][i], "-", color=f"C{i}", label=f"d = {d}")
for i, d in enumerate(arrays["rf_dims"]):
    j = int(np.flatnonzero(arrays["net_dims"] == d)[0])
    left.plot(arrays["rf_ns"][i], arrays["rf_median"][i], "--", color=f"C{j}")
left.axhline(float(arrays["threshold"]), color="grey", lw=0.8)
left.set_xscale("log")
left.set_xlabel("training samples n (dashed: random features)")
left.set_ylabel("test error (median over seeds)")
left.legend(fontsize=7)
dims = arrays["net_dims"].astype(float)
right.plot(dims, arrays["net_nstar"], "o-", label="network (SGD, both layers)")
right.plot(arrays["rf_dims"], arrays["rf_nstar"], "s--", label="random features (ridge)")
right.plot(dims, dims * np.log2(dims), ":", color="grey", label="d log2 d")
right.set_xscale("log", base=2)
right.set_yscale("log", base=2)
right.set_xlabel("dimension d")
right.set_ylabel("n* (error < threshold)")
right.legend(fontsize=7)
save(fig, args.out)
