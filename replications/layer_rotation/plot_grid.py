"""Section 4's exploration on MNIST-5k: test accuracy against the mean final rotation of the layers, one point per
Layca configuration (colour: alpha; size: rho(0), larger = faster), and the best run's layer-rotation curves."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.8)
ax = axes[0, 0]
alphas = np.unique(arrays["alpha"])
colours = {a: f"C{i}" for i, a in enumerate(alphas)}
for a in alphas:
    sel = arrays["alpha"] == a
    ax.scatter(arrays["mean_rotation"][sel], 100 * arrays["acc"][sel], s=60 / arrays["exponent"][sel],
               color=colours[a], label=f"alpha {a:+g}")
ax.set_xlabel("mean final rotation (cosine distance)")
ax.set_ylabel("test accuracy (%)")
ax.legend(fontsize=6)
ax = axes[0, 1]
curves = arrays["best_curves"]
for layer in range(curves.shape[1]):
    ax.plot(np.arange(1, len(curves) + 1), curves[:, layer], color=(layer / max(curves.shape[1] - 1, 1), 0.2, 0.6),
            label=f"layer {layer + 1}")
ax.set_xlabel("epoch")
ax.set_ylabel("rotation (cosine distance)")
ax.set_title("best configuration", fontsize=8)
ax.legend(fontsize=6)
save(fig, args.out)
