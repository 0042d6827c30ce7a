"""Self-similarity of the trained heads: the fraction of tokens scored below zero by themselves (s_ii < 0) and below
another token (s_ii < max_j s_ij), per arm, with the untrained full block."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=4.6)
ax = axes[0, 0]
names = [str(a) for a in arrays["selfsim_arms"]]
pos = np.arange(len(names))
ax.bar(pos - 0.2, arrays["self_negative"], width=0.4, label="s_ii < 0")
ax.bar(pos + 0.2, arrays["self_below"], width=0.4, label="s_ii < max_j s_ij")
ax.set_xticks(pos, names, rotation=30, ha="right", fontsize=7)
ax.set_xlabel("arm")
ax.set_ylabel("fraction of tokens")
ax.legend(fontsize=7)
save(fig, args.out)
