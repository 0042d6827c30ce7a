"""Held-out lifted error of the first k latents: ordered, vanilla in index order, vanilla reordered by an oracle."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
curves = [("ordered", "ordered"), ("vanilla", "vanilla (index order)"),
          ("oracle", "vanilla, reordered by an oracle (greedy chunks)")]
fig, axes = subplots(1, 1, size=4.4)
ax = axes[0, 0]
for key, label in curves:
    if key in arrays:
        ax.plot(arrays["k"], arrays[key], "o-", ms=3, lw=1.2, label=label)
ax.set_xlabel("number of latents k")
ax.set_ylabel("held-out lifted error")
ax.set_xlim(0, arrays["k"].max() * 1.02)
ax.set_ylim(0, 1.02)
ax.tick_params(labelsize=7)
ax.legend(fontsize=7)
ax.set_title(f"{args.title}: error of the first k latents", fontsize=9)
save(fig, args.out)
