"""Histogram over test images of the bias share |b_c| / (|A_c x| + |b_c|): the predicted logit, and every logit."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=3.6)
ax = axes[0][0]
bins = np.linspace(0, 1, 26)
ax.hist(arrays["share_all"], bins=bins, density=True, alpha=0.5, color="tab:gray", label="every logit")
ax.hist(arrays["share"], bins=bins, density=True, alpha=0.7, color="tab:blue", label="predicted class")
ax.axvline(np.median(arrays["share"]), color="tab:blue", ls="--", lw=1)
ax.set_xlabel("bias share |b| / (|A x| + |b|)")
ax.set_ylabel("density")
ax.legend(fontsize=7)
save(fig, args.out)
