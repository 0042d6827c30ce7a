"""Flat or (C, H, W) elements as displayable images, and a row of them on a grid of axes."""
import numpy as np


def as_images(x, shape=None):
    """(N, ...) elements of element `shape` -> (N, H, W) greyscale or (N, H, W, 3) RGB; flat length L is sqrt(L)^2."""
    x = np.asarray(x, float)
    shape = tuple(int(s) for s in (x.shape[1:] if shape is None else shape))
    x = x.reshape(len(x), *shape)
    if len(shape) == 1:
        side = int(round(np.sqrt(shape[0])))
        assert side * side == shape[0], f"flat length {shape[0]} is not a square"
        return x.reshape(len(x), side, side)
    return x[:, 0] if shape[0] == 1 else x.transpose(0, 2, 3, 1)


def show_row(axes, images, label=None):
    """One image per axis, clipped to [0, 1], grey or RGB, no ticks; `label` on the left of the first axis."""
    for ax, image in zip(axes, images):
        ax.imshow(np.clip(image, 0, 1), cmap="gray", vmin=0, vmax=1)
    for ax in axes:
        ax.set_xticks([])
        ax.set_yticks([])
    if label:
        axes[0].set_ylabel(label, fontsize=7, rotation=0, ha="right", va="center")
