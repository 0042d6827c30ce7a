"""Layer-rotation curves of standard training: SGD at its largest rate without and with weight decay, Adam, and
Adam + Layca (first seed), one line per layer from input (red) to output (blue)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
arms = arrays["arms"]
fig, axes = subplots(1, len(arms), size=3.0, sharey=True)
for i, arm in enumerate(arms):
    ax, curves = axes[0, i], arrays[f"curve_{i}"]
    for layer in range(curves.shape[1]):
        ax.plot(np.arange(1, len(curves) + 1), curves[:, layer],
                color=(1 - layer / max(curves.shape[1] - 1, 1), 0.2, layer / max(curves.shape[1] - 1, 1)))
    ax.set_title(str(arm).rsplit("-seed", 1)[0], fontsize=8)
    ax.set_xlabel("epoch")
axes[0, 0].set_ylabel("rotation (cosine distance)")
save(fig, args.out)
