"""App D: singular values of the reshaped class tensor, the class contributions of the top three directions,
and the leading eigenvectors of each direction's interaction matrix."""
import numpy as np

from shared.pipeline.plots import figure_args, save, show_vector, subplots

args, arrays = figure_args()
s, u, vecs, vals = arrays["singular_values"], arrays["contributions"], arrays["eigvecs"], arrays["eigvals"]
fig, axes = subplots(3, 6, size=1.6)
for r in range(3):
    ax = axes[r, 0]
    ax.bar(np.arange(len(u)), u[:, r], color=["C0" if abs(v) > 0.3 else "0.7" for v in u[:, r]])
    ax.set_xticks(range(len(u)))
    ax.tick_params(labelsize=5)
    ax.set_title(f"direction {r + 1}: s={s[r]:.2f}", fontsize=6)
    ax.set_xlabel("output class", fontsize=5)
    ax.set_ylabel("weight", fontsize=5)
    for k in range(4):
        show_vector(axes[r, k + 1], vecs[r, k], title=f"λ={vals[r, k]:+.2f}")
    axes[r, 5].axis("off")
ax = axes[0, 5]
ax.axis("on")
ax.bar(np.arange(len(s)), s)
ax.set_title("singular values", fontsize=6)
ax.set_xlabel("direction", fontsize=5)
ax.set_ylabel("singular value", fontsize=5)
ax.tick_params(labelsize=5)
save(fig, args.out)
