"""Share of seeds that collapse (diverged, or test accuracy below the threshold) per arm and learning rate."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=3.8)
ax = axes[0, 0]
lrs, arms = arrays["lrs"], arrays["arms"]
width = 0.8 / len(arms)
for i, arm in enumerate(arms):
    ax.bar(np.arange(len(lrs)) + i * width, 100 * arrays["collapse_rate"][i], width, label=str(arm))
ax.set_xticks(np.arange(len(lrs)) + width * (len(arms) - 1) / 2, [f"{lr:g}" for lr in lrs])
ax.set_xlabel("learning rate")
ax.set_ylabel("runs collapsed (%)")
ax.set_ylim(0, 105)
ax.legend(fontsize=7)
save(fig, args.out)
