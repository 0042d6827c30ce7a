"""Diagnostic (not a claim): the heat map of plot_heatmap after B's hidden units are permuted onto A's by weight
matching, train loss, into A and into B."""
from shared.pipeline.plots import figure_args, save, subplots

from .heatmaps import panel

args, arrays = figure_args()
rows, cols = [str(r) for r in arrays["rows"]], [f"{d} hidden" for d in arrays["depths"]]
fig, axes = subplots(1, 2, size=3.4)
for j, direction in enumerate(("a", "b")):
    panel(axes[0, j], arrays[f"aligned_train_loss_{direction}"], rows, cols,
          f"train loss barrier after weight matching, into {direction.upper()}", "network depth")
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
