"""Over one-pass SGD steps: the median neuron's signal / orthogonal norm ratio, the median |a_k| of all neurons and
of the top neurons, and the test error, for XOR labels (solid) and random labels (dashed); t25 marked."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.8)
left, right = axes[0, 0], axes[0, 1]
step = arrays["step"]
for j, style in enumerate(("-", "--")):
    left.plot(step, arrays["ratio"][:, j], style, color="C0", label="signal / orthogonal (median neuron)" if j == 0
              else None)
    left.plot(step, arrays["abs_a"][:, j], style, color="C1", label="|a| (median neuron)" if j == 0 else None)
    left.plot(step, arrays["top_abs_a"][:, j], style, color="C2", label="|a| (top neurons)" if j == 0 else None)
    right.plot(step, arrays["error"][:, j], style, color="C3", label=("XOR labels" if j == 0 else "random labels"))
for ax in (left, right):
    if np.isfinite(arrays["t25"]):
        ax.axvline(float(arrays["t25"]), color="grey", lw=0.8)
    ax.set_xlabel("SGD step (solid: XOR labels, dashed: random labels)")
left.set_yscale("log")
left.legend(fontsize=7)
right.set_ylabel("test error (median over seeds)")
right.legend(fontsize=7)
save(fig, args.out)
