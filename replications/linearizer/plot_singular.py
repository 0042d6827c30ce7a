"""The generator's SVD seen in data space: g_x^-1(+c u_i) and g_x^-1(-c u_i) along its top left singular vectors u_i
(titled with sigma_i), the induced origin g_x^-1(0), and the whole singular value spectrum on a log scale."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

from .images import as_images, show_row

args, arrays = figure_args()
plus, minus = (as_images(arrays[k], arrays.get("shape")) for k in ("singular_plus", "singular_minus"))
values = np.asarray(arrays["singular_values"], float)
k = len(plus)
cols = max(k, 4)
fig, axes = subplots(3, cols, size=1.1, gridspec_kw={"height_ratios": [1, 1, 1.5]})
show_row(axes[0], plus, "+c u_i")
show_row(axes[1], minus, "-c u_i")
for i, ax in enumerate(axes[0, :k]):
    ax.set_title(f"σ{i + 1} = {values[i]:.3g}", fontsize=7)
for ax in axes[:2, k:].ravel():
    ax.set_visible(False)
show_row(axes[2, :1], as_images(arrays["zero"], arrays.get("shape")), "origin\ng_x^-1(0)")
for ax in axes[2, 1:]:
    ax.remove()
ax = fig.add_subplot(axes[0, 0].get_gridspec()[2, 2:])
ax.semilogy(np.arange(1, len(values) + 1), values, ".-", ms=3, lw=0.8)
ax.axvline(k + 0.5, color="grey", ls=":", lw=0.8)
ax.set_xlabel("index i", fontsize=7)
ax.set_ylabel("σ_i", fontsize=7)
ax.tick_params(labelsize=6)
ax.set_title(f"all {len(values)} singular values (left of dotted line: shown above)", fontsize=7)
fig.suptitle(f"{args.title}: top singular directions in data space (images clipped to [0, 1])", fontsize=9)
save(fig, args.out)
