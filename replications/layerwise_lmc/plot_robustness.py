"""Per layer of the depth-sweep pairs: the barrier along the averaging direction (into A) against a random Gaussian
direction of the same norm (mean of the draws), train loss."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
labels = [str(s) for s in arrays["labels"]]
x = np.arange(len(labels))
fig, axes = subplots(1, 1, size=6.0)
ax = axes[0, 0]
ax.bar(x - 0.2, arrays["averaging"], 0.4, label="averaging direction")
ax.bar(x + 0.2, arrays["random"], 0.4, label="random, same norm")
ax.set_xticks(x, labels, rotation=90, fontsize=6)
ax.set_xlabel("model and layer")
ax.set_ylabel("barrier (nats, train loss)")
ax.legend(fontsize=7)
ax.set_title(args.title, fontsize=9)
save(fig, args.out)
