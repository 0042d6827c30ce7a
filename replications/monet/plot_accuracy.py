"""Test accuracy of every model, one dot per seed, the bar at the mean (MONet variants, then the flat models of equal
parameters)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
labels, acc = arrays["labels"], 100 * arrays["acc"]
names = list(dict.fromkeys(labels))
fig, axes = subplots(1, 1, size=5.0)
ax = axes[0, 0]
for i, name in enumerate(names):
    values = acc[labels == name]
    ax.barh(i, values.mean(), color="tab:blue" if name.startswith("monet") else "tab:gray", alpha=0.6)
    ax.plot(values, np.full(len(values), i), "k.", ms=4)
ax.set_yticks(range(len(names)), names, fontsize=8)
ax.set_xlim(max(0, acc.min() - 5), 100)
ax.set_xlabel("test accuracy (%)")
ax.set_ylabel("model")
save(fig, args.out)
