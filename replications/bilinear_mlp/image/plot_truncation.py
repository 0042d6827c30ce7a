"""Fig 5B / App F: test error when each class keeps only its top-k eigenvectors, per width (band: seed range)."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
ks, sizes, trunc, full = arrays["ks"], arrays["sizes"], arrays["trunc"], arrays["full"]
fig, axes = subplots(1, 1, size=4.5)
ax = axes[0, 0]
for i, d in enumerate(sizes):
    err = 100 - trunc[i]  # (seeds, ks)
    line, = ax.plot(ks, err.mean(0), marker=".", label=f"d={d}")
    ax.fill_between(ks, err.min(0), err.max(0), color=line.get_color(), alpha=0.2)
    ax.axhline(100 - full[i].mean(), color=line.get_color(), lw=0.6, ls="--")
ax.set_yscale("log")
ax.set_xlabel("eigenvectors kept per class")
ax.set_ylabel("test error (%)")
ax.legend(fontsize=8)
ax.set_title(f"{args.title}: truncation (dashed: full model)", fontsize=9)
save(fig, args.out)
