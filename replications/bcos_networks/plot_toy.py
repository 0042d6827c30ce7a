"""Fig. 2 toy: BCE loss of one B-cos unit against its weight direction, per B, and the data (positive class blue)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
fig, axes = subplots(1, 2, size=3.0)
ax = axes[0][0]
for key in sorted(k for k in a if k.startswith("toy_loss_")):
    loss = a[key]
    ax.plot(a["toy_angles"], loss, label=key.removeprefix("toy_loss_"))
    ax.axvline(a["toy_angles"][np.argmin(loss)], color=ax.lines[-1].get_color(), ls=":")
ax.set_xlabel("weight direction (degrees)")
ax.set_ylabel("BCE loss")
ax.legend(fontsize=7)
ax = axes[0][1]
x, y = a["toy_x"], a["toy_y"]
ax.scatter(x[y == 1, 0], x[y == 1, 1], color="tab:blue", s=8, label="positive")
ax.scatter(x[y == 0, 0], x[y == 0, 1], color="tab:red", s=8, label="negative")
ax.set_aspect("equal")
ax.set_xlabel("input x[0]")
ax.set_ylabel("input x[1]")
ax.legend(fontsize=7)
save(fig, args.out)
