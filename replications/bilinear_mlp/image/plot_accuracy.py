"""Test accuracy per epoch of bilinear, ReGLU, ReLU and biased bilinear models at equal width."""
from shared.pipeline.plots import figure_args, plot_curves

args, arrays = figure_args()
plot_curves(arrays, args.out, title=args.title)
