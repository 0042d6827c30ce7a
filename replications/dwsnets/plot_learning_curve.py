"""Test MSE of the frequency against the number of training INRs, one line per model (log-log, as the paper)."""
from shared.pipeline.plots import figure_args, save, subplots

LABELS = {"dws": "DWSNet", "mlp": "MLP", "mlp_aug": "MLP + perm. aug.", "mlp_align": "MLP + alignment", "stats": "MLP on weight statistics"}

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=4.2)
ax = axes[0][0]
for key in sorted(k for k in arrays if k.startswith("mse_")):
    kind = key[len("mse_"):]
    ax.plot(arrays["n_train"], arrays[key], marker="o", label=LABELS.get(kind, kind), lw=2 if kind == "dws" else 1)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("training INRs")
ax.set_ylabel("test MSE of the frequency")
ax.set_title(args.title, fontsize=9)
ax.legend(fontsize=7)
save(fig, args.out)
