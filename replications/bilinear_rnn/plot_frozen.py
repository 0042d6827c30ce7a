"""Prop. 3: success rate of frozen random +-1 diagonal transitions with a trained readout, against 1 - 2^-H."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.6)
ax = axes[0, 0]
H = np.arange(1, arrays["sizes"].max() + 1)
ax.plot(H, 1 - 2.0 ** -H, color="grey", label="1 - 2^-H")
ax.plot(arrays["sizes"], arrays["rates"], "o", label="measured")
ax.set_xlabel("hidden size H")
ax.set_ylabel("success rate")
ax.legend(fontsize=7)
ax = axes[0, 1]
ax.hist([arrays["sign_acc"], arrays["gauss_acc"]], bins=np.linspace(0.4, 1.0, 13), label=["+-1 entries", "Gaussian"])
ax.set_xlabel("accuracy at the test length")
ax.set_ylabel("seeds")
ax.legend(fontsize=7)
save(fig, args.out)
