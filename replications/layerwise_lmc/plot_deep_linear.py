"""Deep linear network: squared loss (/ mean squared target) along the whole path and along each single-layer cut
(into A), for the constructed pair (B = A with W1 * c, W2 / c) and the trained pair (different inits)."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
alpha = arrays["alpha"]
fig, axes = subplots(1, 2, size=3.6)
for ax, name in zip(axes[0], ("constructed", "trained")):
    ax.plot(alpha, arrays[f"{name}_full"], "k-", lw=2, label="all layers")
    for k in (1, 2, 3):
        ax.plot(alpha, arrays[f"{name}_cut{k}_a"], label=f"layer {k} only")
    ax.set_xlabel("alpha")
    ax.set_ylabel("loss / mean squared target")
    ax.set_title(f"{name} pair", fontsize=9)
    ax.legend(fontsize=7)
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
