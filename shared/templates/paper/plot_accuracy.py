"""Test accuracy per epoch, one curve per trained model (arrays written by analyze.py)."""
import numpy as np

from shared.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=4.2)
ax = axes[0, 0]
for key, curve in arrays.items():
    ax.plot(np.arange(1, len(curve) + 1), 100 * curve, label=key.removeprefix("test_acc_"))
ax.set_xlabel("epoch")
ax.set_ylabel("test accuracy (%)")
ax.set_ylim(max(0, 100 * min(np.nanmin(c[len(c) // 4 :]) for c in arrays.values()) - 2), 100)
ax.legend(fontsize=8)
ax.set_title(args.title, fontsize=9)
save(fig, args.out)
