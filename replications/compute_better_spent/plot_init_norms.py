"""The muP init's spectral norm of every structured factor, over its target sqrt(fan_out / fan_in)."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=4.2)
ax = axes[0, 0]
ax.hist(arrays["init_norm_ratio"], bins=30, color="C0")
ax.axvline(1, color="k", lw=0.8)
ax.set_xlabel("spectral norm / sqrt(fan_out / fan_in)")
ax.set_ylabel("factors")
ax.set_title(args.title, fontsize=9)
save(fig, args.out)
