"""Bilinear MLP, per test image: the input, the exact frozen-left row B_c^T x of the predicted class, and the top
eigenvector of that class's symmetric quadratic form (input-independent)."""
from replications.linearscope.images import show_image as image
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
shape, k = arrays["image_shape"], len(arrays["x"])
fig, axes = subplots(k, 3, size=1.8)
for i in range(k):
    image(axes[i][0], arrays["x"][i], shape, False)
    image(axes[i][1], arrays["rows"][i], shape, True)
    image(axes[i][2], arrays["eigvec"][i], shape, True)
    axes[i][0].set_title(f"pred {arrays['pred'][i]}", fontsize=7)
    axes[i][1].set_title("row B_c^T x", fontsize=7)
    axes[i][2].set_title("top eigenvector of B_c", fontsize=7)
save(fig, args.out)
