"""Test accuracy of every arm against its parameter count (log scale; dots: seeds, labels: arms)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=4.6)
ax = axes[0, 0]
for k, (arm, params) in enumerate(zip(arrays["arms"], arrays["params"])):
    acc = 100 * arrays["acc"][k]
    ax.plot(np.full(len(acc), params), acc, "o", color=f"C{k}", ms=4, alpha=0.7)
    ax.annotate(str(arm), (params, acc.mean()), fontsize=6, xytext=(4, 0), textcoords="offset points")
ax.set_xscale("log")
ax.set_xlabel("trainable parameters")
ax.set_ylabel("test accuracy (%)")
save(fig, args.out)
