"""Per test image: the input, the row A_c(x) of the predicted class (blue positive, red negative) and its pixel-wise
votes A_c(x) * x, with the pixel term A_c x and the bias b_c(x) of that logit."""
from replications.linearscope.images import show_image as image
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
shape, k = arrays["image_shape"], len(arrays["x"])
fig, axes = subplots(k, 3, size=1.8)
for i in range(k):
    x, row = arrays["x"][i], arrays["rows"][i]
    image(axes[i][0], x, shape, False)
    image(axes[i][1], row, shape, True)
    image(axes[i][2], row * x, shape, True)
    axes[i][0].set_title(f"label {arrays['labels'][i]}, pred {arrays['pred'][i]}", fontsize=7)
    axes[i][1].set_title("row A_c(x)", fontsize=7)
    axes[i][2].set_title(f"votes: {arrays['pixel'][i]:.1f} + b {arrays['bias'][i]:.1f}", fontsize=7)
save(fig, args.out)
