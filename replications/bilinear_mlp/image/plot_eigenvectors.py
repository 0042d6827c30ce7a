"""Fig 2 / App A: the top positive and top negative eigenvector of every class, projected to pixels."""
from shared.pipeline.plots import figure_args, save, show_vector, subplots

args, arrays = figure_args()
pos, neg, vals = arrays["top_positive"], arrays["top_negative"], arrays["signed_vals"]
classes = pos.shape[0]
fig, axes = subplots(2, classes, size=1.3)
for c in range(classes):
    show_vector(axes[0, c], pos[c, 0], title=f"{c}: {vals[c, 0]:+.2f}")
    show_vector(axes[1, c], neg[c, 0], title=f"{vals[c, -1]:+.2f}")
axes[0, 0].set_ylabel("top +")
axes[1, 0].set_ylabel("top -")
fig.suptitle(f"{args.title}: top eigenvectors per class (title: class and eigenvalue)", fontsize=9)
save(fig, args.out)
