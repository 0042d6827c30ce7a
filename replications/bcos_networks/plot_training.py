"""Test accuracy per epoch of every trained network."""
from shared.pipeline.plots import figure_args, plot_curves

args, arrays = figure_args()
plot_curves({k: v for k, v in arrays.items() if k.startswith("test_acc_")}, args.out, title=args.title)
