"""LM: validation loss against training steps for each unembedding."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=4.0)
ax = axes[0, 0]
for head, loss in zip(arrays["heads"], arrays["val_loss"]):
    ax.plot(arrays["steps"], loss, "o-", ms=3, label=str(head))
ax.set_xlabel("step")
ax.set_ylabel("validation loss (nats / token)")
ax.legend(fontsize=8)
save(fig, args.out)
