"""Plotting helpers: a figure script's arguments, eigenvector images, atomic PNG + vector PDF writes."""
import argparse

import matplotlib

matplotlib.use("Agg")  # figures are written to files; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from shared.io.files import atomic_path  # noqa: E402


def figure_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arrays", required=True, help=".npz written by the analysis")
    parser.add_argument("--out", required=True, help="PNG to write (save() writes the same figure as a PDF beside it)")
    parser.add_argument("--title", default="", help="which analysis the arrays come from")
    args = parser.parse_args()
    with np.load(args.arrays) as f:
        arrays = dict(f)
    return args, arrays


def show_vector(ax, vec, side=28, title=None):
    """A pixel-space vector as an image, blue positive / red negative, scaled by its max |value| (as the paper)."""
    vec = np.asarray(vec, float)
    scale = np.abs(vec).max() or 1.0
    ax.imshow((vec / scale).reshape(side, side), cmap="RdBu", vmin=-1, vmax=1)
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=8)


def pdf_path(path):
    """The vector PDF written beside a figure's PNG: same folder, same basename."""
    path = str(path)
    return (path[:-4] if path.lower().endswith(".png") else path) + ".pdf"


def save(fig, path, dpi=110):
    """Write the figure as a PNG at `path` and as a vector PDF beside it (same basename), each atomically. The saved
    area grows to hold every label and title (bbox_inches="tight"), so none is clipped at the figure's edge."""
    fig.tight_layout()
    kw = {"bbox_inches": "tight", "pad_inches": 0.08}
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, **kw)
    with atomic_path(pdf_path(path)) as tmp:
        fig.savefig(tmp, format="pdf", metadata={"CreationDate": None}, **kw)  # no date: same figure, same bytes
    plt.close(fig)


def subplots(rows, cols, size=1.6, **kw):
    fig, axes = plt.subplots(rows, cols, figsize=(cols * size, rows * size), squeeze=False, **kw)
    return fig, axes


def plot_curves(arrays, out, title="", prefix="test_acc_", ylabel="test accuracy (%)"):
    """One line per array (a per-epoch metric in [0, 1]), labelled by its name without `prefix`."""
    fig, axes = subplots(1, 1, size=4.2)
    ax = axes[0, 0]
    for key, curve in arrays.items():
        ax.plot(np.arange(1, len(curve) + 1), 100 * curve, label=key.removeprefix(prefix))
    ax.set_xlabel("epoch")
    ax.set_ylabel(ylabel)
    ax.set_ylim(max(0, 100 * min(np.nanmin(c[len(c) // 4 :]) for c in arrays.values()) - 2), 100)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=9)
    save(fig, out)
