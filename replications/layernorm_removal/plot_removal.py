"""Left: validation cross-entropy during fine-tuning (first seed) for the three arms, with the gradual arm's removal
events; right: sigma_avg per LN site at position 0 (BOS) and at the other positions."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=4.2)
ax = axes[0, 0]
for k, arm in enumerate(arrays["arms"]):
    ax.plot(arrays["curve_steps"][k], arrays["curve_vals"][k], color=f"C{k}", label=str(arm))
for s in arrays["event_steps"]:
    ax.axvline(s, color="0.8", lw=0.6, zorder=0)
ax.set_xlabel("fine-tuning step")
ax.set_ylabel("validation cross-entropy")
ax.legend(fontsize=7)
ax = axes[0, 1]
x = np.arange(len(arrays["sites"]))
ax.bar(x - 0.2, arrays["sigma"][:, 0], 0.4, label="position 0 (BOS)")
ax.bar(x + 0.2, arrays["sigma"][:, 1], 0.4, label="other positions")
ax.set_xticks(x, [str(s) for s in arrays["sites"]], rotation=45, ha="right", fontsize=6)
ax.set_xlabel("LayerNorm site (input of)")
ax.set_ylabel("sigma_avg")
ax.legend(fontsize=7)
save(fig, args.out)
