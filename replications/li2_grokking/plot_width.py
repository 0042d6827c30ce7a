"""The eta = 0 width test: test accuracy against step for K around n, and the final ||G_F|| / ||Y||."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
fig, axes = subplots(1, 2, size=4.0)
n = int(a["n_train"])
for k, width in enumerate(a["widths"]):
    for s in range(a["width_test"].shape[2]):
        axes[0, 0].plot(a["width_steps"], a["width_test"][k, :, s], lw=1, color=f"C{k}",
                        label=f"K={width} ({width / n:.2g} n)" if s == 0 else None)
        axes[0, 1].plot(a["width_steps"], np.maximum(a["width_gf"][k, :, s], 1e-16), lw=1, color=f"C{k}")
axes[0, 0].set_xlabel("step")
axes[0, 0].set_ylabel(f"test accuracy (eta = 0, n = {n})")
axes[0, 0].legend(fontsize=7)
axes[0, 1].set_yscale("log")
axes[0, 1].set_xlabel("step")
axes[0, 1].set_ylabel("||G_F|| / ||Y|| (ridge, eta = 0)")
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
