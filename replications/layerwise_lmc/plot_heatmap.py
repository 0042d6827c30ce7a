"""Midpoint barriers of the whole model (top row) and of each single layer, per depth of the MLP pair: train and
test loss, into A and into B (the paper's Fig. 1 at small scale, over depth instead of epochs)."""
from shared.pipeline.plots import figure_args, save, subplots

from .heatmaps import panel

args, arrays = figure_args()
rows, cols = [str(r) for r in arrays["rows"]], [f"{d} hidden" for d in arrays["depths"]]
fig, axes = subplots(2, 2, size=3.4)
for i, measure in enumerate(("train_loss", "test_loss")):
    for j, direction in enumerate(("a", "b")):
        panel(axes[i, j], arrays[f"{measure}_{direction}"], rows, cols,
              f"{measure.replace('_', ' ')} barrier, into {direction.upper()}", "network depth")
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
