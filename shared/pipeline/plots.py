"""Plotting helpers: a figure script's arguments, eigenvector images, atomic PNG + vector PDF writes.

Every figure leaves through save(), which makes it readable before writing it: the title the figure rule passes
(its caption's title line, what the figure shows) heads the figure, wrapped to its width, where the script did not
put it there itself; tick labels that overlap (a log axis's minor labels first) are thinned; and what a reader
needs is recorded in the PNG's metadata (FIGURE_KEY: the title, each panel's title and axis names, and any
problem left), which tests/papers/test_figures.py reads from every committed figure.
"""
import argparse
import json
import textwrap

import matplotlib

matplotlib.use("Agg")  # figures are written to files; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from shared.io.files import atomic_path  # noqa: E402


FIGURE_KEY = "replicate:figure"  # the PNG text chunk save() records the figure's title and axes in
_title = {"text": ""}  # the title figure_args() was given, for save()


def figure_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arrays", required=True, help=".npz written by the analysis")
    parser.add_argument("--out", required=True, help="PNG to write (save() writes the same figure as a PDF beside it)")
    parser.add_argument("--title", default="", help="what the figure shows (the figure rule: its caption's title)")
    args = parser.parse_args()
    _title["text"] = args.title
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


def save(fig, path, dpi=110, title=None):
    """Write the figure as a PNG at `path` and as a vector PDF beside it (same basename), each atomically. `title`
    (default: the --title figure_args read) heads the figure unless a panel or the figure already shows it;
    overlapping tick labels are thinned; the PNG records readable_summary(). The saved area grows to hold every
    label and title (bbox_inches="tight"), so none is clipped at the figure's edge."""
    title = _title["text"] if title is None else title
    if title and not any(title in shown for shown in _titles(fig)):
        width = fig.get_figwidth() * 72 / (0.6 * 10)  # characters of a 10 pt title across the figure
        fig.suptitle(textwrap.fill(title, max(30, int(width))), fontsize=10)
    fig.tight_layout()
    fig.canvas.draw()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            _unclutter(fig, axis)
    summary = readable_summary(fig, title)
    kw = {"bbox_inches": "tight", "pad_inches": 0.08}
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, metadata={"Title": summary["title"], FIGURE_KEY: json.dumps(summary)},
                    **kw)
    with atomic_path(pdf_path(path)) as tmp:  # no date: same figure, same bytes
        fig.savefig(tmp, format="pdf", metadata={"CreationDate": None, "Title": summary["title"]}, **kw)
    plt.close(fig)


def _titles(fig):
    return [t.replace("\n", " ") for t in [fig.get_suptitle()] + [ax.get_title() for ax in fig.axes] if t]


def _labels(axis):
    """The tick labels of `axis` that are drawn (inside its view, visible, not empty), with their boxes."""
    renderer = axis.figure.canvas.get_renderer()
    lo, hi = sorted(axis.get_view_interval())
    slack = 1e-9 * max(abs(lo), abs(hi), 1e-300)
    ticks = (axis.get_major_ticks(len(axis.get_majorticklocs()))
             + axis.get_minor_ticks(len(axis.get_minorticklocs())))
    drawn = [(t.label1, t.label1.get_window_extent(renderer)) for t in ticks
             if lo - slack <= t.get_loc() <= hi + slack and t.label1.get_visible() and t.label1.get_text()]
    along = (lambda b: b.x0) if axis.axis_name == "x" else (lambda b: b.y0)
    return sorted(drawn, key=lambda label: along(label[1]))  # in order along the axis


def _overlaps(axis, gap_px=3):
    """How many neighbouring tick labels of `axis` touch: closer than `gap_px` reads as one label."""
    boxes = [box for _, box in _labels(axis)]
    return sum(a.padded(gap_px / 2).overlaps(b.padded(gap_px / 2)) for a, b in zip(boxes, boxes[1:]))


def _unclutter(fig, axis):
    """Thin the tick labels of an axis until none overlaps: a log axis's minor labels go first (where major ones
    are left), then all but every 2nd, 3rd, 4th, ... label."""
    if _overlaps(axis) and axis.get_scale() == "log":
        minor = axis.get_minor_formatter()
        axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        fig.canvas.draw()
        if len(_labels(axis)) < 2:  # less than a decade: the minor labels were all there was
            axis.set_minor_formatter(minor)
            fig.canvas.draw()
    labels = [text for text, _ in _labels(axis)]
    for step in (2, 3, 4, 6, 8, 12, 16):
        if not _overlaps(axis):
            return
        for i, text in enumerate(labels):
            text.set_visible(i % step == 0)


def readable_summary(fig, title=""):
    """What a reader of the figure gets: its title (the one showing `title`, else the first), each panel's title
    and axis names, and the problems: a panel whose x or y tick labels are drawn needs that axis named (on it, on a
    panel sharing the axis or its grid row / column, or as the figure's supxlabel / supylabel), and no two tick
    labels of an axis may touch."""
    titles = _titles(fig)
    sup = {"x": fig.get_supxlabel(), "y": fig.get_supylabel()}
    panels, problems = [], [] if titles else ["no title"]
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison or ax.get_label() == "<colorbar>":  # a colorbar's scale is the
            continue  # panel's colour, which the caption names
        panel = {"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel()}
        for name, axis, shared in (("x", ax.xaxis, ax.get_shared_x_axes()), ("y", ax.yaxis, ax.get_shared_y_axes())):
            if _overlaps(axis):
                problems.append(f"panel {i} ({panel['title'] or 'untitled'}): {name} tick labels overlap")
            if not _labels(axis) or panel[f"{name}label"] or sup[name]:
                continue
            siblings = [o for o in shared.get_siblings(ax) if o is not ax]
            named = [getattr(o, f"get_{name}label")() for o in siblings] + _row_or_column_labels(fig, ax, name)
            if not any(named):
                problems.append(f"panel {i} ({panel['title'] or 'untitled'}): {name} axis has tick labels, no name")
        panels.append(panel)
    shown = [t for t in titles if title and title in t] or titles or [""]
    return {"title": shown[0], "panels": panels, "problems": problems}


def _row_or_column_labels(fig, ax, name):
    """The names other panels of the same grid column (x) or row (y) give that axis: a grid names it once."""
    spec = ax.get_subplotspec()
    if spec is None:
        return []
    mine = spec.colspan if name == "x" else spec.rowspan
    found = []
    for other in fig.axes:
        o = other.get_subplotspec()
        if other is not ax and o is not None and (o.colspan if name == "x" else o.rowspan) == mine:
            found.append(getattr(other, f"get_{name}label")())
    return found


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
