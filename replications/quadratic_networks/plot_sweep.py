"""Test accuracy of ReLinear against gamma, the learning rate of the quadratic terms (dots: seeds; line: mean), and
the conventional network (dashed) at the same learning rate."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=3.8)
ax = axes[0, 0]
gammas = arrays["gammas"]
pos = np.arange(len(gammas))  # 0 cannot sit on a log axis: equal spacing, labelled
acc = 100 * arrays["sweep_acc"]
for k in range(acc.shape[1]):
    ax.plot(pos, acc[:, k], "o", color="C0", ms=3, alpha=0.6)
ax.plot(pos, acc.mean(1), "-", color="C0", label="ReLinear (mean)")
ax.axhline(100 * arrays["conventional_acc"].mean(), color="C1", ls="--", label="conventional (mean)")
ax.set_xticks(pos, [f"{g:g}" for g in gammas])
ax.set_xlabel("gamma (lr of W_g, b_g, W_b, c)")
ax.set_ylabel("test accuracy (%)")
ax.legend(fontsize=7)
save(fig, args.out)
