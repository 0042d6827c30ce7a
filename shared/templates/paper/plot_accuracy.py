"""Test accuracy per epoch, one curve per trained model (arrays written by analyze.py)."""
from shared.pipeline.plots import figure_args, plot_curves

args, arrays = figure_args()
plot_curves(arrays, args.out, title=args.title)
