"""Fig 6 (section 4.3): the spectrum of the similarity task's True - False interaction matrix and its top eigenvectors
projected to pixels, beside the target."""
import numpy as np

from shared.pipeline.plots import figure_args, plt, save, show_vector

args, arrays = figure_args()
key = "true_minus_false"
fig = plt.figure(figsize=(9.0, 4.6))
grid = fig.add_gridspec(2, 6)
ax = fig.add_subplot(grid[0, :])
for name, label in ((f"vals_{key}", "bias, True - False"), ("vals_true", "bias, True only (authors' code)"),
                    ("vals_nobias", "no bias, True - False")):
    vals = arrays[name]
    ax.plot(np.arange(len(vals)), vals, marker=".", lw=0.6, label=label)
ax.axhline(0, color="k", lw=0.5)
ax.set_xlabel("eigenvalue index (most positive first)")
ax.set_ylabel("eigenvalue")
ax.legend(fontsize=7)
ax.set_title(f"{args.title}: spectra of the interaction matrices", fontsize=9)
vals = arrays[f"vals_{key}"]
panels = [(arrays["target"], "target"), (arrays[f"top_{key}"][0], f"1st +: {vals[0]:+.2f}"),
          (arrays[f"top_{key}"][1], f"2nd +: {vals[1]:+.2f}"), (arrays[f"bottom_{key}"][0], f"1st -: {vals[-1]:+.2f}"),
          (arrays[f"linear_{key}"], "linear (bias) term"), (arrays["top_nobias"][0], "no bias: 1st +")]
for col, (vec, title) in enumerate(panels):
    show_vector(fig.add_subplot(grid[1, col]), vec, title=title)
save(fig, args.out)
