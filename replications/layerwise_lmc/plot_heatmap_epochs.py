"""Midpoint barriers of the whole model (top row) and of each single layer at every checkpoint of one pair (the
paper's Fig. 1 layout): train loss into A and into B, and train error into A."""
from shared.pipeline.plots import figure_args, save, subplots

from .heatmaps import panel

args, arrays = figure_args()
rows, cols = [str(r) for r in arrays["rows"]], [str(e) for e in arrays["epochs"]]
fig, axes = subplots(1, 3, size=3.6)
for ax, (key, title) in zip(axes[0], (("train_loss_a", "train loss barrier, into A"),
                                      ("train_loss_b", "train loss barrier, into B"),
                                      ("train_err_a", "train error barrier (%), into A"))):
    panel(ax, arrays[key], rows, cols, title, "epoch")
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
