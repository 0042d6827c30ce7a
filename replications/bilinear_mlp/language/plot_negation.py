"""Fig 8: the negation feature found from activations: its spectrum against the random-matrix edge, its top
interactions in the input-SAE basis (named from data), and its top activations."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 3, size=4.0)
ax = axes[0, 0]
vals, edge = np.sort(arrays["spectrum"])[::-1], float(arrays["edge"])
ax.plot(vals, marker=".", lw=0.5)
for e in (edge, -edge):
    ax.axhline(e, color="gray", ls="--", lw=0.8)
ax.set_xlabel("eigenvalue rank")
ax.set_ylabel("eigenvalue")
ax.set_title("spectrum (dashed: random-matrix edge)", fontsize=8)
ax = axes[0, 1]
sub = arrays["submatrix"]
scale = np.abs(sub).max() or 1.0
ax.imshow(sub / scale, cmap="RdBu", vmin=-1, vmax=1)
labels = [str(s) for s in arrays["labels"]]
ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=5)
ax.set_yticks(range(len(labels)), labels, fontsize=5)
ax.set_xlabel("input latent", fontsize=7)
ax.set_ylabel("input latent", fontsize=7)
ax.set_title("top interactions (input latents)", fontsize=8)
ax = axes[0, 2]
ax.axis("off")
ax.text(0, 1, "top activations\n" + "\n".join(str(e) for e in arrays["examples"]), va="top", fontsize=5.5, family="monospace")
fig.suptitle(f"{args.title}: {arrays['title']}", fontsize=9)
save(fig, args.out)
