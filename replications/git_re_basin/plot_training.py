"""Loss barrier (mean form) between the two seeds' models at each training epoch, naive and after weight matching."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
rows = arrays["rows"]  # epoch, naive train, naive test, wm train, wm test
fig, axes = subplots(1, 1, size=4.0)
ax = axes[0][0]
for col, label, style in ((1, "naive, train", "--"), (2, "naive, test", ":"), (3, "weight matching, train", "-"),
                          (4, "weight matching, test", "-.")):
    ax.plot(rows[:, 0], rows[:, col], style, marker="o", label=label,
            color="tab:gray" if col < 3 else "tab:orange")
ax.set_xscale("symlog", linthresh=1)
ax.set_xlabel("epoch (0 = initialisation)")
ax.set_ylabel("loss barrier (nats)")
ax.legend(fontsize=7)
save(fig, args.out)
