"""rope_edu.plots: how a notebook's plot is displayed (SVG or 2x PNG, caption and alt text inside)."""

from __future__ import annotations

import io
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from PIL import Image

from rope_edu import plots


def _line_figure():
    fig, ax = plots.new_figure()
    ax.plot(np.arange(10), np.arange(10.0) ** 2, label=r"$\theta_i$")
    ax.set(xlabel="position $m$", ylabel="angle (rad)", title="Angles grow")
    ax.legend()
    return fig


def test_caption_and_alt_text_come_from_the_axes():
    fig = _line_figure()
    assert plots.caption_text(fig) == "Angles grow"
    alt = plots.alt_text(fig)
    assert alt.startswith("Plot (Angles grow): 1 line, angle (rad) against position m")
    assert "legend: θ_i" in alt and "$" not in alt and "\\" not in alt


def test_describe_overrides_both_and_checks_its_arguments():
    fig = plots.describe(_line_figure(), caption="Angle of pair 0.", alt="A rising line.")
    assert (plots.caption_text(fig), plots.alt_text(fig)) == ("Angle of pair 0.", "A rising line.")
    with pytest.raises(TypeError, match="fig"):
        plots.describe("not a figure", caption="x")
    with pytest.raises(ValueError, match="caption"):
        plots.describe(_line_figure(), caption="  ")
    with pytest.raises(ValueError, match="alt"):
        plots.describe(_line_figure(), alt=3)


def test_small_plot_is_svg_with_title_and_description():
    kind, data = plots.figure_image(plots.describe(_line_figure(), caption="C & D", alt="A < B"))
    assert kind == "image/svg+xml" and len(data) <= plots.SVG_LIMIT
    text = data.decode("utf-8")
    assert re.search(r"<dc:title>C &amp; D</dc:title>", text)
    assert re.search(r"<dc:description>A &lt; B</dc:description>", text)


def test_dense_plot_is_a_png_at_twice_the_display_size():
    fig, ax = plots.new_figure()
    x = np.arange(35_000)
    for base in (1e4, 5e5, 1e7):  # long-term decay curves: thousands of points, a few colours
        ax.plot(x, np.cos(np.outer(x, base ** (-np.arange(64) / 64))).sum(1), lw=1)
    kind, data = plots.figure_image(fig)
    assert kind == "image/png"
    image = Image.open(io.BytesIO(data))
    # bbox_inches="tight" trims the margins: still well over the 1x width
    assert image.size[0] > 1.6 * fig.get_size_inches()[0] * matplotlib.rcParams["figure.dpi"]
    assert image.text["Description"] == plots.alt_text(fig)
