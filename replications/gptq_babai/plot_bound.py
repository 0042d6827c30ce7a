"""Per-row layer error of GPTQ (natural order, no clipping) against Babai's bound for each layer (left), and the mean
bound and mean error of each column order (right), at the middle bit width."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

ORDERS = ("natural", "reverse", "act", "greedy")
args, arrays = figure_args()
layers = sorted(k[len("err_"):] for k in arrays if k.startswith("err_"))
fig, axes = subplots(1, 2, size=4.2)
ax = axes[0, 0]
top = 0
for i, layer in enumerate(layers):
    b, e = arrays[f"bound_{layer}"], arrays[f"err_{layer}"]
    ax.loglog(b, e, ".", ms=3, color=f"C{i}", label=layer, alpha=0.6)
    top = max(top, float(np.max(b)))
grid = np.geomspace(1e-12 + min(float(np.min(arrays[f"bound_{lay}"])) for lay in layers), top, 10)
ax.plot(grid, grid, "k-", lw=1, label="bound")
ax.set_xlabel("Babai bound 1/4 sum s^2 d_i")
ax.set_ylabel("GPTQ layer error (w-q)^T H (w-q)")
ax.legend(fontsize=6)
ax = axes[0, 1]
for i, layer in enumerate(layers):
    pts = np.array([arrays[f"order_{kind}_{layer}"] for kind in ORDERS])
    pts = pts / pts[0]  # relative to the natural order
    ax.plot(pts[:, 0], pts[:, 1], "-", color=f"C{i}", lw=0.6)
    for j, kind in enumerate(ORDERS):
        ax.plot(pts[j, 0], pts[j, 1], "osD^"[j], color=f"C{i}", ms=4, label=kind if i == 0 else None)
ax.set_xlabel("mean bound / natural order's")
ax.set_ylabel("mean error / natural order's")
ax.legend(fontsize=6)
save(fig, args.out)
