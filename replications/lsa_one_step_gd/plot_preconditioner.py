"""Heat maps of the learned preconditioner Gamma beside its theoretical optimum, one pair per experiment."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
pairs = [(k, f"{k}_gamma", f"{k}_star") for k in ("iso", "noniso", "relu") if f"{k}_gamma" in arrays]
titles = {"iso": ("isotropic: learned", "eta* I"), "noniso": ("Sigma: learned", "eta* Sigma^-1"),
          "relu": ("ReLU targets: learned", "eta_f I")}
fig, axes = subplots(2, len(pairs), size=2.6)
for col, (key, learned, star) in enumerate(pairs):
    scale = np.abs(arrays[star]).max()
    for row, (name, title) in enumerate(zip((learned, star), titles[key])):
        ax = axes[row, col]
        im = ax.imshow(arrays[name], cmap="RdBu_r", vmin=-scale, vmax=scale)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(title, fontsize=8)
    fig.colorbar(im, ax=axes[1, col], orientation="horizontal", fraction=0.08, pad=0.04)
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
