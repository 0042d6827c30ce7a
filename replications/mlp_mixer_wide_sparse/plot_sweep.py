"""Test accuracy of Mixers against their effective width S C at equal mixing-layer parameters (dots: seeds)."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=3.8)
ax = axes[0, 0]
for width, acc, label in zip(arrays["width"], 100 * arrays["acc"], arrays["labels"]):
    ax.plot([width] * len(acc), acc, "o", ms=4, label=str(label))
ax.set_xlabel("effective width S C")
ax.set_ylabel("test accuracy (%)")
ax.legend(fontsize=7)
save(fig, args.out)
