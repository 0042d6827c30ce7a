"""Relative test MSE of the quadratic net and the conventional ReLU net with at least as many parameters, per task
and seed (log scale)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=3.8)
ax = axes[0, 0]
for i, task in enumerate(arrays["tasks"]):
    for j, (kind, colour) in enumerate((("quadratic", "C0"), ("conventional", "C1"))):
        values = np.maximum(arrays[kind][i], 1e-16)
        ax.plot(np.full(len(values), 2 * i + 0.6 * j), values, "o", color=colour, ms=5,
                label=f"{kind} neurons" if i == 0 else None)
ax.set_xticks([2 * i + 0.3 for i in range(len(arrays["tasks"]))], [str(t) for t in arrays["tasks"]])
ax.set_xlabel("target function")
ax.set_yscale("log")
ax.set_ylabel("test MSE / Var(y)")
ax.legend(fontsize=7)
save(fig, args.out)
