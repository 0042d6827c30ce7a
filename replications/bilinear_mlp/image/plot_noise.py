"""Fig 4: digit 0's top positive eigenvector at each training-noise level, with test accuracy, and the
share of eigenvector mass on rarely active pixels."""
from shared.pipeline.plots import figure_args, save, show_vector, subplots

args, arrays = figure_args()
sigmas, accs, masses, ranks = arrays["sigmas"], arrays["accs"], arrays["masses"], arrays["ranks"]
n = len(sigmas)
fig, axes = subplots(1, n + 1, size=1.9)
for i in range(n):
    show_vector(axes[0, i], arrays["digit0_top"][i], title=f"noise {sigmas[i]:g}\nacc {accs[i]:.1f}%")
ax = axes[0, n]
ax.plot(sigmas, masses, marker="o", label="rare-pixel mass")
ax.set_xlabel("noise std", fontsize=7)
ax.tick_params(labelsize=6)
ax2 = ax.twinx()
ax2.plot(sigmas, ranks, marker="s", color="C1", label="eff. rank")
ax2.tick_params(labelsize=6)
ax.set_title("mass (o) / rank (s)", fontsize=7)
save(fig, args.out)
