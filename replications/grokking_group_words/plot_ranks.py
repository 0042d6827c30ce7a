"""Best CP-ALS relative error against rank for the multiplication tensors, with the block-sum bound marked."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
groups = [k.removesuffix("_rank") for k in arrays if k.endswith("_rank")]
fig, axes = subplots(1, 1, size=4.2)
ax = axes[0, 0]
for g in groups:
    bound = arrays[f"{g}_bound"][0]
    ax.semilogy(arrays[f"{g}_rank"] - bound, np.maximum(arrays[f"{g}_error"], 1e-12), "o-", label=f"{g} (bound {bound:.0f})")
ax.set_xlabel("rank - block-sum bound")
ax.set_ylabel("best relative error of CP-ALS")
ax.legend(fontsize=7)
ax.set_title(args.title, fontsize=9)
save(fig, args.out)
