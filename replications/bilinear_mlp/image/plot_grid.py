"""App E / Fig 19: effective rank of the eigenvalues and pixel count of the top eigenvectors over the grid."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
wds, sigmas = arrays["wds"], arrays["sigmas"]
panels = [("rank", "eigenvalue effective rank"), ("pixel_abs", "pixel count, top-5 |λ|"),
          ("pixel_neg", "pixel count, 5 most negative (authors' code)")]
fig, axes = subplots(1, 3, size=3.0)
for ax, (key, title) in zip(axes[0], panels):
    m = arrays[key]
    im = ax.imshow(m, cmap="viridis", origin="lower")
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            ax.text(j, i, f"{m[i, j]:.0f}", ha="center", va="center", fontsize=6, color="w")
    ax.set_xticks(range(len(sigmas)), [f"{s:g}" for s in sigmas], fontsize=6)
    ax.set_yticks(range(len(wds)), [f"{w:g}" for w in wds], fontsize=6)
    ax.set_xlabel("input noise std", fontsize=7)
    ax.set_ylabel("weight decay", fontsize=7)
    ax.set_title(title, fontsize=7)
    fig.colorbar(im, ax=ax, shrink=0.7)
save(fig, args.out)
