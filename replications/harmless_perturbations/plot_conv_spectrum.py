"""Singular values of the two convolutions' operators on their input shapes: the strided conv has as many zero
directions as inputs exceed outputs; the stride-1 conv's smallest singular value is small but not zero."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.6)
for ax, key, title in ((axes[0][0], "1", "conv1 (stride = kernel)"), (axes[0][1], "2", "conv2 (stride 1)")):
    s = arrays[f"s{key}"]
    n = int(arrays[f"n{key}"])
    full = np.concatenate([s, np.zeros(max(n - len(s), 0))])  # inputs beyond the outputs: zero singular values
    ax.semilogy(np.arange(1, n + 1), np.maximum(full / s[0], 1e-18), ".", ms=2)
    ax.set_title(f"{title}: {n} inputs", fontsize=8)
    ax.set_xlabel("index (input directions)")
    ax.set_ylabel("singular value / largest (zeros at 1e-18)")
save(fig, args.out)
