"""Test accuracy of each kind of mixing block (dots: seeds; bars: mean)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=3.8)
ax = axes[0, 0]
acc = 100 * arrays["acc"]
pos = np.arange(len(acc))
ax.bar(pos, acc.mean(1), color="C0", alpha=0.5)
for k in range(acc.shape[1]):
    ax.plot(pos, acc[:, k], "o", color="C0", ms=3)
ax.set_xticks(pos, [str(k) for k in arrays["kinds"]])
ax.set_ylim(acc.min() - 5, min(100, acc.max() + 2))
ax.set_xlabel("mixing block")
ax.set_ylabel("test accuracy (%)")
save(fig, args.out)
