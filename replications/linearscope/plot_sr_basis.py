"""SR interpreter of one test image: low-res input, output, bias image b(x), four columns (impulse responses), and
the top left singular vectors of A_x (high-res images) with their singular values."""
from replications.linearscope.images import show_image as image
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
c, side = (int(v) for v in arrays["shape"])
hi, lo = (c, side, side), (c, side // 2, side // 2)
top, cols, sv = arrays["top"], arrays["columns"], arrays["singular_values"]
n = max(len(top), 7)
fig, axes = subplots(2, n, size=1.5)
for ax in axes.flat:
    ax.axis("off")
panels = [(arrays["lr"], lo, False, "low-res input"), (arrays["sr"], hi, False, "output"),
          (arrays["bias"], hi, True, "bias b(x)")] + [(col, hi, True, "column") for col in cols]
for ax, (vec, shape, signed, title) in zip(axes[0], panels):
    image(ax, vec, shape, signed)
    ax.set_title(title, fontsize=7)
for i, vec in enumerate(top):
    image(axes[1][i], vec, hi, True)
    axes[1][i].set_title(f"u{i + 1}, s={sv[i]:.2f}", fontsize=7)
save(fig, args.out)
