"""Robust condition number R_med of the Hessian diagonal along the SGD and Adam trajectories (mean +- std over seeds)."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
names = sorted({k.split("__")[0] for k in arrays if k.endswith("__sgd_rmed")})
fig, axes = subplots(1, len(names), size=3.4)
for ax, name in zip(axes[0], names):
    step = arrays[f"{name}__rmed_step"]
    for opt, colour in (("sgd", "tab:red"), ("adam", "tab:blue")):
        r = arrays[f"{name}__{opt}_rmed"]
        ax.errorbar(step, r.mean(0), yerr=r.std(0), color=colour, marker="o", capsize=2,
                    label="SGD (momentum)" if opt == "sgd" else "Adam")
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("R_med = max|H_ii| / median|H_ii|")
    ax.set_title(name, fontsize=9)
    ax.legend(fontsize=7)
save(fig, args.out)
