"""Train and test loss along the path from A to pi(B), per width, for naive, activation and weight matching."""
from shared.pipeline.plots import figure_args, save, subplots

COLORS = {"naive": "tab:gray", "am": "tab:blue", "wm": "tab:orange"}
LABELS = {"naive": "naive", "am": "activation matching", "wm": "weight matching"}

args, arrays = figure_args()
lams, widths = arrays["lambdas"], [int(w) for w in arrays["widths"]]
fig, axes = subplots(2, len(widths), size=3.0)
for j, width in enumerate(widths):
    for i, split in enumerate(("train", "test")):
        ax = axes[i][j]
        for method in ("naive", "am", "wm"):
            ax.plot(lams, arrays[f"{method}_h{width}_{split}_loss"], color=COLORS[method], label=LABELS[method])
        ax.set_title(f"h = {width}, {split}", fontsize=9)
        ax.set_xlabel("lambda")
        ax.set_ylabel(f"{split} loss")
axes[0][0].legend(fontsize=7)
save(fig, args.out)
