"""Histogram of the gradient-noise norms ||g_B - g_full|| at init, with the Gaussian reference of the same covariance."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=4.0)
ax = axes[0, 0]
norms, ref = arrays["norms"], arrays["surrogate"]
bins = np.linspace(min(norms.min(), ref.min()), max(norms.max(), ref.max()), 40)
ax.hist(norms, bins=bins, density=True, alpha=0.6, color="tab:blue", label="linear Transformer")
ax.hist(ref, bins=bins, density=True, histtype="step", color="k", label="Gaussian, same covariance")
ax.set_xlabel("||g_B - g_full||")
ax.set_ylabel("density")
ax.legend(fontsize=7)
save(fig, args.out)
