"""Planted circles and triangle read from the weights: held-out points projected on the top eigenvectors of each
component's composite quadratic form, coloured by the planted phase."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
names = sorted(key.removesuffix("_xy") for key in arrays if key.endswith("_xy"))
fig, axes = subplots(1, len(names), size=3.2)
for ax, name in zip(axes[0], names):
    xy, phase = arrays[f"{name}_xy"], arrays[f"{name}_phase"]
    circle = name.startswith("circle")
    points = ax.scatter(xy[:, 0], xy[:, 1], c=phase, s=3, lw=0, cmap="twilight" if circle else "viridis",
                        vmin=0, vmax=2 * np.pi if circle else 3)
    cbar = fig.colorbar(points, ax=ax, shrink=0.7, pad=0.02)
    cbar.set_label("planted angle (rad)" if circle else "position along edges", fontsize=6)
    cbar.ax.tick_params(labelsize=5)
    ax.set_aspect("equal")
    ax.tick_params(labelsize=6)
    ax.set_xlabel("top eigenvector 1", fontsize=7)
    ax.set_ylabel("top eigenvector 2", fontsize=7)
    values = ", ".join(f"{v:#.2g}" for v in arrays[f"{name}_eigenvalues"])
    ax.set_title(f"{name} (n={len(xy)})\neigenvalues {values}", fontsize=7)
fig.suptitle(f"{args.title}: held-out points on the weights' top eigenvectors", fontsize=9)
save(fig, args.out)
