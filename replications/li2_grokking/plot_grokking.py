"""Fig. 3 analogue: train and test accuracy and ||G_F|| / ||Y|| against step, one line per (eta, seed)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
fig, axes = subplots(1, 2, size=4.0)
colors = {e: c for e, c in zip(sorted(set(a["etas"].tolist())), ("tab:red", "tab:blue", "tab:green", "tab:purple"))}
for i, (eta, seed) in enumerate(zip(a["etas"], a["seeds"])):
    c = colors[float(eta)]
    label = f"eta={eta:g}" if seed == a["seeds"].min() else None
    axes[0, 0].plot(a["steps"], a["test_acc"][:, i], "-", color=c, lw=1, label=label)
    axes[0, 0].plot(a["steps"], a["train_acc"][:, i], ":", color=c, lw=1)
    axes[0, 1].plot(a["steps"], np.maximum(a["gf_ridge"][:, i], 1e-16), "-", color=c, lw=1, label=label)
axes[0, 0].set_xlabel("step")
axes[0, 0].set_ylabel("accuracy (solid test, dotted train)")
axes[0, 0].legend(fontsize=7)
axes[0, 1].set_yscale("log")
axes[0, 1].set_xlabel("step")
axes[0, 1].set_ylabel("||G_F|| / ||Y|| (ridge top layer)")
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
