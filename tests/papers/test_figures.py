"""Figures a reader understands: every figure a paper's plotting code draws has a title saying what it shows (its
caption's title line and the analysis, which the figure rule passes), each panel's axes with drawn tick labels
named, and no two tick labels overlapping. shared.pipeline.plots.save records this in each PNG (FIGURE_KEY); the
per-paper test reads it from the figures of the paper's tiny run (the conformance suite's `tiny_render`)."""
import json

import numpy as np
import pytest
from PIL import Image

from shared.pipeline import plots
from shared.pipeline.paper import discover_papers
from shared.pipeline.report import figure_title
from shared.pipeline.scratch import ROOT

PAPERS = discover_papers(ROOT / "replications")


def recorded(png):
    text = Image.open(png).text
    assert plots.FIGURE_KEY in text, f"{png}: not written by shared.pipeline.plots.save"
    return json.loads(text[plots.FIGURE_KEY])


@pytest.mark.parametrize("paper", PAPERS)
def test_every_figure_has_a_title_and_named_axes(tiny_render, paper):
    repo = tiny_render(paper)
    figures = sorted((repo / "reports" / paper / "quick" / "figures").glob("*.png"))
    assert figures, f"{paper}: the tiny run drew no figure"
    problems = {}
    for png in figures:
        fig, _, ns = png.stem.partition("--")
        summary = recorded(png)
        assert f"{figure_title(repo / 'replications' / paper, fig)} ({ns})" in summary["title"], png.name
        if summary["problems"]:
            problems[png.name] = summary["problems"]
    assert not problems, f"{paper}: figures a reader cannot read: {json.dumps(problems, indent=1)}"


def test_save_titles_the_figure_and_thins_overlapping_log_labels(tmp_path):
    fig, axes = plots.subplots(1, 2, size=2.0)
    left, right = axes[0]
    left.plot([0.15, 0.9], [1, 2])
    left.set_xscale("log")
    left.set_xlim(0.15, 0.9)  # less than a decade: matplotlib labels the minor ticks, which collide at this width
    fig.tight_layout()
    fig.canvas.draw()
    assert plots._overlaps(left.xaxis)
    left.set_xlabel("step size")
    left.set_ylabel("loss")
    right.plot(np.arange(3), np.arange(3))  # unnamed axes
    plots.save(fig, tmp_path / "f.png", title="What the figure shows (analysis)")
    summary = recorded(tmp_path / "f.png")
    assert summary["title"] == "What the figure shows (analysis)"
    assert not any("overlap" in p for p in summary["problems"]), summary
    assert any(p.startswith("panel 1") and "x axis" in p for p in summary["problems"]), summary
    assert (tmp_path / "f.pdf").is_file()
