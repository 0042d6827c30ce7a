"""The leaderboard figure: per task, each family's test metric at matched parameters relative to dense ReLU
(seed means; positive = better than dense: accuracy difference in points, or dense's loss minus the family's)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
tasks = sorted({k.split("__")[0] for k in arrays})
fig, axes = subplots(1, len(tasks), size=3.4, sharey=True)
for ax, task in zip(axes[0], tasks):
    fam, budget, mean, err = (arrays[f"{task}__{k}"] for k in ("family", "budget", "mean", "std"))
    at = budget == "params"
    names, values, errors = fam[at], mean[at], err[at]
    sign = -1 if bool(arrays[f"{task}__lower_is_better"]) else 1
    scale = 100 if not bool(arrays[f"{task}__lower_is_better"]) else 1
    gain = scale * sign * (values - values[names == "dense"][0])
    ax.barh(np.arange(len(names)), gain, xerr=scale * errors, color=["C3" if g < 0 else "C2" for g in gain])
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(np.arange(len(names)), names, fontsize=7)
    if ax is axes[0, 0]:
        ax.set_ylabel("layer family")
    ax.set_xlabel("acc. − dense (points)" if scale == 100 else "dense − family")
    ax.set_title(task, fontsize=9)
save(fig, args.out)
