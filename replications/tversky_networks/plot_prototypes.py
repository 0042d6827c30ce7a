"""MNIST: the ten Tversky prototypes (trained, first seed) and at their init, the linear classifier's rows, the
class-mean images, and the first features of the Tversky bank, each as a 28 x 28 image."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
rows = (("prototypes", "Tversky prototypes"), ("untrained", "prototypes at init"), ("linear", "linear rows"),
        ("means", "class means"), ("features", "Tversky features"))
fig, axes = subplots(len(rows), 10, size=0.9)
for r, (key, label) in enumerate(rows):
    for c in range(10):
        ax = axes[r, c]
        if c < len(arrays[key]):
            ax.imshow(arrays[key][c], cmap="gray")
        ax.set_xticks([]), ax.set_yticks([])
    axes[r, 0].set_ylabel(label, fontsize=6)
save(fig, args.out)
