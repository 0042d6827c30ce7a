"""The top eigenvector (by |lambda|) of each class's interaction matrix of the flat Mu-layer, seed 0, in pixels
(colour images averaged over their channels); title: the class and its eigenvalue."""
import numpy as np

from shared.pipeline.plots import figure_args, save, show_vector, subplots

args, arrays = figure_args()
channels, side, _ = arrays["image_shape"]
vecs, vals = arrays["top_eigenvectors"], arrays["top_eigenvalues"]
fig, axes = subplots(1, len(vecs), size=1.3)
for c, (vec, val) in enumerate(zip(vecs, vals)):
    show_vector(axes[0, c], np.asarray(vec).reshape(channels, -1).mean(0), side=side, title=f"{c}: {val:+.2f}")
save(fig, args.out)
