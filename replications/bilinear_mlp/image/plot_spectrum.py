"""Fig 3: the 20 most positive and 20 most negative eigenvalues of each class."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
vals = arrays["signed_vals"]  # (classes, d), most positive first
fig, axes = subplots(1, 1, size=4.5)
ax = axes[0, 0]
shown = np.concatenate([vals[:, :20], vals[:, -20:]], axis=1)
for c, row in enumerate(shown):
    ax.plot(np.arange(40), row, marker=".", lw=0.6, label=str(c))
ax.axhline(0, color="k", lw=0.5)
ax.set_xticks([0, 19, 20, 39], ["1st +", "20th +", "20th -", "1st -"])
ax.set_xlabel("eigenvalue rank (top positive, then top negative)")
ax.set_ylabel("eigenvalue")
ax.set_title(f"{args.title}: 20 + 20 of {vals.shape[1]} eigenvalues per class", fontsize=9)
ax.legend(fontsize=6, ncol=5)
save(fig, args.out)
