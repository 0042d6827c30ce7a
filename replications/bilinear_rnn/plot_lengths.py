"""Chance-normalized accuracy against test length, one panel per task, one line per experiment and seed."""
from matplotlib import colormaps

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
lengths = arrays["lengths"]
curves = {tuple(k.split("__")[1:]): v for k, v in arrays.items() if k.startswith("curve__")}
tasks = sorted({t for _, t in curves})
cols = min(3, len(tasks))
fig, axes = subplots((len(tasks) + cols - 1) // cols, cols, size=3.4)
colors = {}
for ax, task in zip(axes.flat, tasks):
    for (experiment, t), seeds in sorted(curves.items()):
        if t != task:
            continue
        color = colors.setdefault(experiment, colormaps["tab20"](len(colors) % 20))
        for i, curve in enumerate(seeds):
            ax.plot(lengths, curve, marker="o", ms=3, color=color, alpha=0.8, label=experiment if i == 0 else None)
    ax.axvline(10, color="grey", lw=0.6, ls=":")  # longest training length
    ax.set_xscale("log")
    ax.set_ylim(-0.1, 1.05)
    ax.set_title(task, fontsize=9)
    ax.set_xlabel("test length")
    ax.set_ylabel("normalized accuracy")
    ax.legend(fontsize=6)
for ax in list(axes.flat)[len(tasks):]:
    ax.axis("off")
save(fig, args.out)
