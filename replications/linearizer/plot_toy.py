"""2-D toy: the data, samples from 100 Euler steps, from the one collapsed matrix B, from the A = I control, and from
a Gaussian fitted to the data, one scatter panel each on the same axes."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
panels = [
    ("data", "data"),
    ("many_steps", "100 Euler steps"),
    ("one_step", "one step (B)"),
    ("identity_control", "control A = I"),
    ("gaussian_fit", "Gaussian fit to data"),
]
panels = [(key, title) for key, title in panels if key in arrays]
low, high = np.percentile(arrays["data"], [0.5, 99.5], axis=0)
pad = 0.25 * (high - low)
fig, axes = subplots(1, len(panels), size=2.4)
for ax, (key, title) in zip(axes[0], panels):
    points = arrays[key]
    ax.scatter(points[:, 0], points[:, 1], s=1.5, alpha=0.3, lw=0)
    ax.set_xlim(low[0] - pad[0], high[0] + pad[0])
    ax.set_ylim(low[1] - pad[1], high[1] + pad[1])
    ax.set_aspect("equal")
    ax.tick_params(labelsize=6)
    ax.set_xlabel("x[0]", fontsize=7)
    ax.set_ylabel("x[1]", fontsize=7)
    ax.set_title(f"{title} (n={len(points)})", fontsize=8)
fig.suptitle(f"{args.title}: samples in the plane (same axes in every panel)", fontsize=9)
save(fig, args.out)
