"""Left: each student's test MSE over the noise floor (dots: seeds) on the quaternion and dense teachers. Right: the
training loss over the floor per step (first seed)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.8)
students, ratio = arrays["students"], arrays["ratio"]
pos = np.arange(len(students))
for k in range(ratio.shape[1]):
    axes[0, 0].plot(pos, ratio[:, k], "o", color="C0", ms=4, alpha=0.7)
axes[0, 0].axhline(2.0, color="k", ls="--", lw=0.8, label="2 x noise^2 (F1 gate)")
axes[0, 0].set_yscale("log")
axes[0, 0].set_xticks(pos, [str(s).replace("-", "\n") for s in students], fontsize=6)
axes[0, 0].set_xlabel("teacher, student")
axes[0, 0].set_ylabel("test MSE / noise^2")
axes[0, 0].legend(fontsize=7)
for name, curve in zip(students, arrays["curves"]):
    axes[0, 1].plot(curve, label=str(name), lw=1)
axes[0, 1].set_yscale("log")
axes[0, 1].set_xlabel("Adam step (full batch)")
axes[0, 1].set_ylabel("train MSE / noise^2")
axes[0, 1].legend(fontsize=6)
save(fig, args.out)
