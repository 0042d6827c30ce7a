"""Loss barrier (mean form) against width, naive vs activation vs weight matching, train and test."""
from shared.pipeline.plots import figure_args, save, subplots

COLORS = {"naive": "tab:gray", "am": "tab:blue", "wm": "tab:orange"}
LABELS = {"naive": "naive", "am": "activation matching", "wm": "weight matching"}

args, arrays = figure_args()
widths = arrays["widths"]
fig, axes = subplots(1, 2, size=3.4)
for ax, split in zip(axes[0], ("train", "test")):
    for method in ("naive", "am", "wm"):
        ax.plot(widths, arrays[f"width_{method}_{split}_barrier"], "o-", color=COLORS[method], label=LABELS[method])
    ax.set_xscale("log", base=2)
    ax.set_xlabel("hidden width h")
    ax.set_ylabel(f"{split} loss barrier (nats)")
axes[0][0].legend(fontsize=7)
save(fig, args.out)
