"""Exactness of the Linearizer's algebra: the relative error of every identity per input, one panel per precision,
on a log10 axis, with the controls (ordinary + and *, and a map that is not a Linearizer) that must fail."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
precisions = {"fp64": 2.2e-16, "fp32": 1.2e-7}
checks = list(dict.fromkeys(key.split(".", 1)[1] for key in arrays))
checks = [c for c in checks if not c.startswith("control_")] + [c for c in checks if c.startswith("control_")]
fig, axes = subplots(1, 2, size=4.4)
for ax, (precision, eps) in zip(axes[0], precisions.items()):
    rng = np.random.default_rng(0)
    for row, check in enumerate(checks):
        errors = np.log10(np.clip(np.asarray(arrays[f"{precision}.{check}"], float), 1e-18, None))
        color = "C3" if check.startswith("control_") else "C0"
        ax.scatter(errors, row + rng.uniform(-0.2, 0.2, len(errors)), s=7, alpha=0.6, color=color, lw=0, zorder=2)
        ax.plot([np.median(errors)] * 2, [row - 0.35, row + 0.35], color="k", lw=1.2, zorder=1)
    ax.axvline(np.log10(eps), color="grey", ls="--", lw=0.8)
    ax.text(np.log10(eps), len(checks) - 0.4, " machine eps", fontsize=6, color="grey", va="bottom")
    labels = [f"{c.removeprefix('control_')} (control, must fail)" if c.startswith("control_") else c for c in checks]
    ax.set_yticks(range(len(checks)), labels, fontsize=7)
    for tick, check in zip(ax.get_yticklabels(), checks):
        tick.set_color("C3" if check.startswith("control_") else "k")
    ax.set_ylim(len(checks) - 0.5, -0.5)
    ax.set_xlim(-18.5, 1)
    ax.set_xlabel("log10 relative error (0 shown at -18)", fontsize=8)
    ax.set_ylabel("identity checked", fontsize=8)
    ax.set_title(precision, fontsize=9)
    ax.grid(axis="x", lw=0.3)
fig.suptitle(f"{args.title}: relative error per input (black bar: median)", fontsize=9)
save(fig, args.out)
