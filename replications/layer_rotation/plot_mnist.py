"""Section 6: test accuracy and mean final rotation per Layca rate, and the first layer's filters (28 x 28) at the
largest (top row) and the smallest rate (bottom row)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
top, bottom = arrays["filters_largest"], arrays["filters_smallest"]
n = len(top)
fig, axes = subplots(2, n + 1, size=1.6)
ax = axes[0, 0]
labels = [f"3^-{k:g}" for k in arrays["exponents"]]
ax.plot(np.arange(len(labels)), 100 * arrays["acc"], "o-", color="C0")
ax.set_xticks(np.arange(len(labels)), labels, fontsize=6)
ax.set_ylabel("test acc. (%)", fontsize=7)
ax.set_xlabel("Layca rate", fontsize=7)
ax = axes[1, 0]
ax.plot(np.arange(len(labels)), arrays["rotation"], "o-", color="C1")
ax.set_xticks(np.arange(len(labels)), labels, fontsize=6)
ax.set_ylabel("rotation", fontsize=7)
ax.set_xlabel("Layca rate", fontsize=7)
for row, filters in ((0, top), (1, bottom)):
    for j in range(n):
        axes[row, j + 1].imshow(filters[j], cmap="gray")
        axes[row, j + 1].axis("off")
save(fig, args.out)
