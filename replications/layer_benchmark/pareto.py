"""The Pareto figures: per task, each family's test metric (seed mean ± std) against a cost (block parameters,
multiply-adds, or measured forward+backward time per example), with each family's Pareto front (its points no other
of its points beats on both axes) drawn as a line and the front over all families dashed."""
import matplotlib.pyplot as plt
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

MARKERS = "os^Dv<>p*hX"

XLABEL = {"params": "block parameters", "macs": "block multiply-adds / example",
          "fwdbwd_us": "fwd+bwd µs / example (measured)"}


def front(x, y, lower_is_better):
    """Indices of the points no other point beats on both axes (less x, better y), sorted by x."""
    better = (lambda a, b: a <= b) if lower_is_better else (lambda a, b: a >= b)
    keep = [i for i in range(len(x)) if not any(x[j] <= x[i] and better(y[j], y[i]) and (x[j], y[j]) != (x[i], y[i])
                                                for j in range(len(x)))]
    return sorted(keep, key=lambda i: x[i])


def draw(cost):
    args, arrays = figure_args()
    tasks = sorted({k.split("__")[0] for k in arrays})
    fig, axes = subplots(1, len(tasks), size=3.8)
    for ax, task in zip(axes[0], tasks):
        fam, x = arrays[f"{task}__family"], arrays[f"{task}__{cost}"]
        y, err = arrays[f"{task}__mean"], arrays[f"{task}__std"]
        lower = bool(arrays[f"{task}__lower_is_better"])
        for i, name in enumerate(dict.fromkeys(fam)):
            idx = np.flatnonzero(fam == name)
            colour = plt.get_cmap("tab20")(i % 20)
            ax.errorbar(x[idx], y[idx], yerr=err[idx], fmt=MARKERS[i % len(MARKERS)], ms=3, color=colour, label=name)
            best = idx[front(x[idx], y[idx], lower)]
            ax.plot(x[best], y[best], "-", color=colour, lw=1)
        overall = front(x, y, lower)
        ax.plot(x[overall], y[overall], "k--", lw=0.8)
        ax.set_xscale("log")
        if lower:  # an MSE or a loss: a family that failed to train would flatten the others on a linear axis
            ax.set_yscale("log")
        ax.set_xlabel(XLABEL[cost])
        ax.set_ylabel(str(arrays[f"{task}__metric"]))
        ax.set_title(task, fontsize=9)
    axes[0, -1].legend(fontsize=6, loc="best")
    save(fig, args.out)
