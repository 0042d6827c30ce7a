"""Train and test accuracy against step for the members at the main training fraction (delayed generalisation)."""

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=4.2)
ax = axes[0, 0]
step = arrays["step"]
for i in range(arrays["main_test_acc"].shape[1]):
    ax.plot(step, 100 * arrays["main_train_acc"][:, i], color="tab:blue", alpha=0.6, label="train" if i == 0 else None)
    ax.plot(step, 100 * arrays["main_test_acc"][:, i], color="tab:red", alpha=0.8, label="test" if i == 0 else None)
ax.set_xlabel("full-batch step")
ax.set_ylabel("accuracy (%)")
ax.set_ylim(-2, 102)
ax.legend(fontsize=8)
ax.set_title(f"{args.title}: one line per seed", fontsize=9)
save(fig, args.out)
