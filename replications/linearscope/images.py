"""Drawing flat channel-first vectors (numpy only: the figure jobs do not import torch)."""
import numpy as np


def show_image(ax, vec, shape, signed):
    """A flat channel-first vector as an image: signed ones summed over channels, blue positive / red negative."""
    c, h, w = (int(v) for v in shape)
    img = np.asarray(vec, float).reshape(c, h, w)
    if signed:
        img = img.sum(0)  # colour rows: the vote summed over channels
        scale = np.abs(img).max() or 1.0
        ax.imshow(img / scale, cmap="RdBu", vmin=-1, vmax=1)
    else:
        ax.imshow(img[0] if c == 1 else img.transpose(1, 2, 0), cmap="gray" if c == 1 else None)
    ax.set_xticks([])
    ax.set_yticks([])
