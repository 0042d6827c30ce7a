"""Projective model f = g^-1(P g(x)) with P^2 = P: for held-out data, Gaussian noise, uniform noise and inverted
digits, the input, f(x), f(f(x)), and |f(f(x)) - f(x)| divided by its largest entry in the family, one row each."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

from .images import as_images, show_row

args, arrays = figure_args()
families = ["data", "gaussian", "uniform", "inverted"]
families = [name for name in families if f"{name}_input" in arrays]
cols = len(arrays[f"{families[0]}_input"])
fig, axes = subplots(4 * len(families), cols, size=0.62)
for i, name in enumerate(families):
    once, twice = arrays[f"{name}_once"], arrays[f"{name}_twice"]
    gap = np.abs(twice - once).max()
    rows = [
        (arrays[f"{name}_input"], f"{name}: input"),
        (once, "f(x)"),
        (twice, "f(f(x))"),
        (np.abs(twice - once) / max(gap, 1e-30), f"|f(f(x))-f(x)|\n/ {gap:.1e} (its max)"),
    ]
    for r, (images, label) in enumerate(rows):
        show_row(axes[4 * i + r], as_images(images, arrays.get("shape")), label)
fig.suptitle(f"{args.title}: f(f(x)) = f(x) (every image clipped to [0, 1] for display)", fontsize=9)
save(fig, args.out)
