"""XOR: fraction of seeds solved per feature-bank size K (trained and untrained), and the class-1 probability of a
solved Tversky layer and of a linear layer over the plane, with the four points."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 3, size=3.2)
ax = axes[0, 0]
k = arrays["features"]
pos = np.arange(len(k))
ax.bar(pos - 0.2, arrays["solved"], 0.4, label="trained")
ax.bar(pos + 0.2, arrays["untrained_solved"], 0.4, label="at init")
ax.set_xticks(pos, [str(int(v)) for v in k])
ax.set_xlabel("features K")
ax.set_ylabel("seeds solving XOR")
ax.set_ylim(0, 1.05)
ax.legend(fontsize=7)
g = arrays["grid"]
for ax, key, title in ((axes[0, 1], "map_tversky", "Tversky projection"), (axes[0, 2], "map_linear", "linear")):
    im = ax.imshow(arrays[key], origin="lower", extent=(g[0], g[-1], g[0], g[-1]), vmin=0, vmax=1, cmap="coolwarm")
    ax.scatter([0, 1], [0, 1], c="k", marker="o", label="class 0")
    ax.scatter([0, 1], [1, 0], c="w", edgecolors="k", marker="s", label="class 1")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("x1")
    ax.set_ylabel("x2")
fig.colorbar(im, ax=axes[0, 2], fraction=0.046)
save(fig, args.out)
