"""Final train loss and test error against the hidden layers' forward MACs per example, per structure; solid: the
structure-aware learning rate, dashed: the naive (dense-multiplier) one."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=4.2)
colors = {"dense": "k", "btt": "C0", "monarch": "C1", "kronecker": "C2", "low_rank": "C3"}
for col, (key, label) in enumerate((("loss", "final train loss"), ("test_error", "test error (1,000 images)"))):
    ax = axes[0, col]
    for structure, color in colors.items():
        for arm, style in (("aware", "o-"), ("naive", "x--")):
            if f"{arm}/{structure}/macs" in arrays:
                ax.plot(arrays[f"{arm}/{structure}/macs"], arrays[f"{arm}/{structure}/{key}"], style, color=color,
                        ms=4, lw=1, label=f"{structure} ({arm})" if col == 0 else None)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("hidden-layer forward MACs per example")
    ax.set_ylabel(label)
axes[0, 0].legend(fontsize=6)
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
