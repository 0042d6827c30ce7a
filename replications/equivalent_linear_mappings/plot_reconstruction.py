"""Every coordinate of the output embedding y against its reconstruction sum_t J_t x_t: detached (J+, the paper's
equivalent linear map) and ordinary (J) Jacobians."""
from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
fig, axes = subplots(1, 2, size=3.6)
for ax, key, label in ((axes[0, 0], "detached", "detached J+"), (axes[0, 1], "ordinary", "ordinary J")):
    ax.scatter(a["y"], a[key], s=2, alpha=0.5)
    lo, hi = min(a["y"].min(), a[key].min()), max(a["y"].max(), a[key].max())
    ax.plot([lo, hi], [lo, hi], color="k", lw=0.6)
    ax.set_xlabel("output embedding y")
    ax.set_ylabel(f"sum_t J_t x_t ({label})")
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
