"""Four test images beside their harmless, random and adversarial versions, with the MLP's prediction on each."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

COLUMNS = [("clean", "clean"), ("harmless_visible", "harmless 1x"), ("harmless_big", "harmless 10x"),
           ("random_visible", "random 1x"), ("pgd", "PGD"), ("target", "other image"), ("morph", "harmless morph")]

args, arrays = figure_args()
rows = len(arrays["img_clean"])
side = round(np.sqrt(arrays["img_clean"].shape[1]))
fig, axes = subplots(rows, len(COLUMNS), size=1.3)
for j, (key, title) in enumerate(COLUMNS):
    for i in range(rows):
        ax = axes[i][j]
        img = arrays[f"img_{key}"][i]
        if img.size == side * side:
            ax.imshow(img.reshape(side, side), cmap="gray", vmin=img.min(), vmax=img.max())
        else:  # colour images, channels first: each shown in its own range
            s = round(np.sqrt(img.size / 3))
            img = img.reshape(3, s, s).transpose(1, 2, 0)
            ax.imshow((img - img.min()) / (np.ptp(img) or 1.0))
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel(f"pred {arrays[f'pred_{key}'][i]}", fontsize=7)
        if i == 0:
            ax.set_title(title, fontsize=7)
save(fig, args.out)
