"""Mean relative layer error t^2 of each data-free quantizer at 3 and 4 bits (left) and its measured cross-entropy
increase against the linear model's prediction (right)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

METHODS = ("rtn", "nf", "norot", "higgs", "higgs_p2")
args, arrays = figure_args()
bits = sorted({int(k.rsplit("_", 1)[1]) for k in arrays if k.startswith("t2_")})
fig, axes = subplots(1, 2, size=4.2)
ax = axes[0, 0]
width = 0.8 / len(bits)
for i, b in enumerate(bits):
    ax.bar(np.arange(len(METHODS)) + i * width, [float(np.mean(arrays[f"t2_{m}_{b}"])) for m in METHODS],
           width, label=f"{b} bits", color=f"C{i}")
ax.set_xticks(np.arange(len(METHODS)) + width * (len(bits) - 1) / 2, METHODS, fontsize=7)
ax.set_yscale("log")
ax.set_xlabel("method")
ax.set_ylabel("mean relative error t^2")
ax.legend(fontsize=7)
ax = axes[0, 1]
pred, meas = arrays["quant_pred"], arrays["quant_meas"]
ax.loglog(pred, np.abs(meas), "o", ms=4, color="C0")
grid = np.geomspace(float(min(pred.min(), np.abs(meas).min())) + 1e-12, float(max(pred.max(), np.abs(meas).max())), 10)
ax.plot(grid, grid, "k-", lw=1)
ax.set_xlabel("predicted sum alpha_l t_l^2")
ax.set_ylabel("measured CE increase")
save(fig, args.out)
