"""Test loss of SGD (momentum) and Adam per setting: mean over seeds with a +-std band, log y-axis."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
names = sorted({k.split("__")[0] for k in arrays if k.endswith("__sgd_loss")})
fig, axes = subplots(1, len(names), size=3.0)
for ax, name in zip(axes[0], names):
    step = arrays[f"{name}__step"]
    for opt, colour in (("sgd", "tab:red"), ("adam", "tab:blue")):
        curves = arrays[f"{name}__{opt}_loss"]
        mean, std = curves.mean(0), curves.std(0)
        ax.plot(step, mean, color=colour, label="SGD (momentum)" if opt == "sgd" else "Adam")
        ax.fill_between(step, np.maximum(mean - std, 1e-12), mean + std, color=colour, alpha=0.2)
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_title(name, fontsize=9)
axes[0, 0].set_ylabel("test loss")
axes[0, 0].legend(fontsize=7)
save(fig, args.out)
