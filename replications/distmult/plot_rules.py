"""EmbedRule on Kinships: mean confidence of the k best-ranked rules against k, per model, with the baselines."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=4.0)
ax = axes[0][0]
for name, style in (("distmult", "o-"), ("bilinear", "s-"), ("transe", "^-"), ("path_count", "k--")):
    curve = arrays[f"{name}_curve"]
    ax.plot(np.arange(1, len(curve) + 1), curve, style, markersize=2, label=name.replace("_", " "))
ax.axhline(float(arrays["random_conf"]), color="gray", linestyle=":", label="random rule")
ax.set_xlabel("number of mined rules k")
ax.set_ylabel("mean confidence of the top k")
ax.legend(fontsize=7)
save(fig, args.out)
