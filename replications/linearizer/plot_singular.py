"""The generator's SVD seen in data space: g_x^-1(+c u_i) and g_x^-1(-c u_i) along its top left singular vectors u_i
(titled with sigma_i), the induced origin g_x^-1(0), and the whole singular value spectrum on a log scale.

Thumbnails keep one size whatever the number of singular vectors: at most 8 per row, further ones wrap to a new
pair of rows."""
import math

import matplotlib.pyplot as plt
import numpy as np

from shared.pipeline.plots import figure_args, save

from .images import as_images, show_row

PER_ROW = 8
CELL = 1.35  # inches per thumbnail

args, arrays = figure_args()
plus, minus = (as_images(arrays[k], arrays.get("shape")) for k in ("singular_plus", "singular_minus"))
values = np.asarray(arrays["singular_values"], float)
k = len(plus)
cols = max(min(k, PER_ROW), 5)
groups = max(1, math.ceil(k / PER_ROW))
fig = plt.figure(figsize=(cols * CELL + 0.8, 2 * groups * CELL + 2.4))
grid = fig.add_gridspec(2 * groups + 1, cols, height_ratios=[1] * (2 * groups) + [1.5])
for g in range(groups):
    idx = range(g * PER_ROW, min(k, (g + 1) * PER_ROW))
    top = [fig.add_subplot(grid[2 * g, j]) for j in range(len(idx))]
    bottom = [fig.add_subplot(grid[2 * g + 1, j]) for j in range(len(idx))]
    show_row(top, plus[idx.start:idx.stop], r"$+c\,u_i$")
    show_row(bottom, minus[idx.start:idx.stop], r"$-c\,u_i$")
    for ax in (top[0], bottom[0]):  # readable row labels, clear of the thumbnails
        ax.yaxis.label.set_fontsize(9)
        ax.yaxis.labelpad = 8
    for i, ax in zip(idx, top):
        ax.set_title(f"σ{i + 1} = {values[i]:.3g}", fontsize=8)
origin = fig.add_subplot(grid[-1, 0])
show_row([origin], as_images(arrays["zero"], arrays.get("shape")), "origin\n" + r"$g_x^{-1}(0)$")
origin.yaxis.label.set_fontsize(9)
origin.yaxis.labelpad = 8
ax = fig.add_subplot(grid[-1, 1:])
ax.semilogy(np.arange(1, len(values) + 1), values, ".-", ms=3, lw=0.8)
ax.axvline(k + 0.5, color="grey", ls=":", lw=0.8)
ax.set_xlabel("index i", fontsize=8)
ax.set_ylabel("σ_i (log scale)", fontsize=8)
ax.tick_params(labelsize=7)
ax.set_title(f"all {len(values)} singular values (left of the dotted line: the {k} shown above)", fontsize=8)
fig.suptitle(f"{args.title}: top singular directions in data space (images clipped to [0, 1])", fontsize=10)
save(fig, args.out, dpi=130)  # thumbnails about 100 px wide
