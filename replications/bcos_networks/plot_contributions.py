"""Contribution maps W_y(x) ⊙ x of the true class for a few test images (rows: B-cos per B, then gradient x input of
the ReLU net), and the maps of one localisation grid for the class of each cell."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots


def show(ax, image, title=None):
    scale = np.abs(image).max() or 1.0
    ax.imshow(image / scale, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=7)


args, a = figure_args()
arms = [f"B{b:g}".replace(".", "p") for b in a["b_values"]] + ["relu"]
images, cells = a["map_images"], len(a["grid_classes"])
fig, axes = subplots(len(arms) + 1, len(images) + cells, size=1.2)
for j, image in enumerate(images):
    axes[0][j].imshow(image, cmap="gray")
for j in range(cells):
    axes[0][len(images) + j].imshow(a["grid_image"], cmap="gray")
    axes[0][len(images) + j].set_title(f"grid, class {a['grid_classes'][j]}", fontsize=7)
for i, arm in enumerate(arms, start=1):
    for j in range(len(images)):
        show(axes[i][j], a[f"maps_{arm}"][j], arm if j == 0 else None)
    for j in range(cells):
        show(axes[i][len(images) + j], a[f"grid_maps_{arm}"][j])
for ax in axes[0]:
    ax.set_xticks([])
    ax.set_yticks([])
save(fig, args.out)
