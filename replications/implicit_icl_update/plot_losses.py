"""E1: in-context validation loss and validation loss via dW (query only, patched W) over training."""
import matplotlib.pyplot as plt

from shared.pipeline.plots import figure_args, save

args, arrays = figure_args()
fig, ax = plt.subplots(figsize=(5, 3.6))
for i, model in enumerate(("attn", "attn_skip", "linear", "gru")):
    if f"{model}_step" not in arrays:
        continue
    step = arrays[f"{model}_step"]
    ax.plot(step, arrays[f"{model}_in_context"], color=f"C{i}", lw=3, alpha=0.4, label=f"{model}: in context")
    ax.plot(step, arrays[f"{model}_via_dw"], color=f"C{i}", ls="--", marker=".", label=f"{model}: via dW, no context")
ax.set_yscale("log")
ax.set_xlabel("training step")
ax.set_ylabel("validation loss (L2, query)")
ax.legend(fontsize=7)
ax.set_title(args.title, fontsize=9)
save(fig, args.out)
