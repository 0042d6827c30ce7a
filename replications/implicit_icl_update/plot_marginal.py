"""Marginal implicit updates ||dW_{i+1} - dW_i||_F against the context tokens consumed (arrays of analyze_dynamics)."""
import matplotlib.pyplot as plt
import numpy as np

from shared.pipeline.plots import figure_args, save

args, arrays = figure_args()
fig, ax = plt.subplots(figsize=(5, 3.6))
styles = {"linear": ("C3", "-"), "linear_untrained": ("C3", ":"), "attn": ("C0", "-"), "attn_untrained": ("C0", ":"), "attn_skip": ("C1", "-"),
          "attn_skip_untrained": ("C1", ":"), "gru": ("C2", "-"), "gru_untrained": ("C2", ":")}
for key, curve in arrays.items():
    color, ls = styles.get(key, ("k", "-"))
    ax.plot(np.arange(len(curve)), curve, color=color, ls=ls, label=key.replace("_", " "))
ax.set_yscale("log")
ax.set_xlabel("context tokens consumed i")
ax.set_ylabel("mean ||W_{i+1} - W_i||_F")
ax.legend(fontsize=7)
ax.set_title(args.title, fontsize=9)
save(fig, args.out)
