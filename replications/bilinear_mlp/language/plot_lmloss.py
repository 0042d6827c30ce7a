"""App I: validation loss of the same transformer with bilinear, ReGLU and SwiGLU MLPs, by step and by time."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
names = [str(n) for n in arrays["names"]]
seconds = dict(zip(names, arrays["step_seconds"]))
fig, axes = subplots(1, 2, size=3.6)
for name in names:
    steps, loss = arrays[f"{name}_step"], arrays[f"{name}_val_loss"]
    axes[0, 0].plot(steps, loss, label=name)
    axes[0, 1].plot(steps * seconds[name], loss, label=f"{name} ({1000 * seconds[name]:.0f} ms/step)")
axes[0, 0].set_xlabel("step")
axes[0, 1].set_xlabel("training time (s; step times measured here)")
for ax in axes[0]:
    ax.set_ylabel("validation loss (nats)")
    ax.set_ylim(top=min(arrays[f"{n}_val_loss"][0] for n in names))
    ax.legend(fontsize=7)
fig.suptitle(f"{args.title}: equal steps (left) and equal time (right)", fontsize=9)
save(fig, args.out)
