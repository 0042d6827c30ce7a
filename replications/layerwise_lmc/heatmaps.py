"""The heat-map panel both heat-map figures draw: barrier per (row = full model or layer group, column)."""
import numpy as np


def panel(ax, grid, rows, cols, title, xlabel):
    finite = grid[np.isfinite(grid)]
    top = float(np.abs(finite).max()) if finite.size else 1.0
    ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu_r", vmin=-top, vmax=top, aspect="auto")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=6)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.set_xticks(range(len(cols)), cols, fontsize=7)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel("interpolated: whole model or layer", fontsize=7)
    ax.set_title(title, fontsize=8)
