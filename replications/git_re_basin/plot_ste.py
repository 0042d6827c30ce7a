"""Train and test loss along the path for naive, weight matching and STE matching, and STE's per-batch loss."""
from shared.pipeline.plots import figure_args, save, subplots

COLORS = {"naive": "tab:gray", "wm": "tab:orange", "ste": "tab:green"}
LABELS = {"naive": "naive", "wm": "weight matching", "ste": "STE matching"}

args, arrays = figure_args()
lams = arrays["lambdas"]
fig, axes = subplots(1, 3, size=3.0)
for ax, split in zip(axes[0][:2], ("train", "test")):
    for method in ("naive", "wm", "ste"):
        ax.plot(lams, arrays[f"{method}_{split}_loss"], color=COLORS[method], label=LABELS[method])
    ax.set_xlabel("lambda")
    ax.set_ylabel(f"{split} loss")
axes[0][0].legend(fontsize=7)
axes[0][2].plot(arrays["ste_batch_loss"], color=COLORS["ste"])
axes[0][2].set_xlabel("STE step")
axes[0][2].set_ylabel("midpoint minibatch loss")
save(fig, args.out)
