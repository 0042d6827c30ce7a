"""Dimension of the harmless space per test image: null(W1) (input-independent) against the span of the exact local
harmless set behind the ReLU (null of W1's active rows) and the Jacobian's null space of one image."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 1, size=4.0)
ax = axes[0][0]
ax.hist(arrays["local_dims"], bins=20, color="tab:blue", label="null(W1[active]) per image")
ax.axvline(int(arrays["first_null_dim"]), color="k", ls="--", label="null(W1)")
ax.axvline(int(arrays["jac_null"]), color="tab:red", ls=":", label="null(Jacobian), image 0")
ax.set_xlabel("dimension of the harmless span")
ax.set_ylabel("test images")
ax.legend(fontsize=7)
save(fig, args.out)
