"""Predicted (sum_l alpha_l t_l^2) against measured cross-entropy increase of random multi-layer noise injections, in
the small and the large regime (left), and the fitted alpha_l per layer (right)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=4.2)
ax = axes[0, 0]
top = 1e-12
for regime, colour in (("small", "C0"), ("large", "C3")):
    pred, meas = arrays[f"lin_pred_{regime}"], arrays[f"lin_meas_{regime}"]
    ax.loglog(pred, np.abs(meas), "o", ms=3, color=colour, label=f"{regime} scale")
    top = max(top, float(np.max(pred)), float(np.max(np.abs(meas))))
low = min(float(np.min(arrays["lin_pred_small"])), float(np.min(np.abs(arrays["lin_meas_small"])))) + 1e-12
grid = np.geomspace(low, top, 10)
ax.plot(grid, grid, "k-", lw=1, label="y = x")
ax.set_xlabel("predicted increase sum alpha_l t_l^2")
ax.set_ylabel("measured CE increase")
ax.legend(fontsize=7)
ax = axes[0, 1]
alpha = arrays["alpha"]
ax.bar(np.arange(len(alpha)), alpha, color="C2")
ax.set_yscale("log")
ax.set_xlabel("layer (forward order)")
ax.set_ylabel("alpha_l (CE per unit t^2)")
save(fig, args.out)
