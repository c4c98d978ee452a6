"""Tests of the chapter 6 widget (rope_edu.widgets.layouts), without a browser."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rope_edu import apply_rope  # noqa: E402
from rope_edu.widgets import Demo  # noqa: E402
from rope_edu.widgets import layouts as wl  # noqa: E402

layouts = st.sampled_from(["half", "interleaved"])
FAST = settings(max_examples=30, deadline=None)


@FAST
@given(m=st.integers(0, 40), layout=layouts)
def test_matching_tables_are_the_rope_rotation(m, layout):
    s = wl.state(m, layout, layout)
    assert s["matched"]
    np.testing.assert_allclose(s["x_rot"], apply_rope(wl.X, float(m), base=wl.BASE, layout=layout), atol=1e-12)
    assert s["norm_ratio"] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(s["norm_curve"], 1.0, atol=1e-12)
    np.testing.assert_allclose(s["score_curve"], s["score_ref"], atol=1e-12)
    expected_ref = apply_rope(wl.X, float(wl.DISTANCE), base=wl.BASE, layout=layout) @ wl.K
    assert s["score_ref"] == pytest.approx(expected_ref, abs=1e-12)


@pytest.mark.parametrize("rotation, table", [("half", "interleaved"), ("interleaved", "half")])
def test_mixed_tables_break_norms_and_scores(rotation, table):
    s = wl.state(12, rotation, table)
    assert not s["matched"]
    assert abs(s["norm_ratio"] - 1) > 1e-2
    assert np.ptp(s["norm_curve"]) > 0.1
    assert np.ptp(s["score_curve"]) > 0.1
    assert s["norm_curve"][0] == pytest.approx(1.0)  # position 0: every angle is 0, the bug hides


def test_pairs_and_frequency_labels():
    s = wl.state(0, "half", "interleaved")
    a, b = s["pairs"]
    np.testing.assert_array_equal(a, [0, 1, 2, 3])
    np.testing.assert_array_equal(b, [4, 5, 6, 7])
    np.testing.assert_array_equal(s["freq_index"], [0, 0, 1, 1, 2, 2, 3, 3])
    s = wl.state(0, "interleaved", "half")
    np.testing.assert_array_equal(s["pairs"][0], [0, 2, 4, 6])
    np.testing.assert_array_equal(s["freq_index"], [0, 1, 2, 3, 0, 1, 2, 3])
    assert s["positions"][0] == 0 and len(s["norm_curve"]) == len(s["positions"]) == len(s["score_curve"])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"m": "3"}, TypeError, "m"),
        ({"m": np.nan}, ValueError, "m"),
        ({"m": 1, "rotation": "neox"}, ValueError, "rotation"),
        ({"m": 1, "table": 3}, ValueError, "table"),
        ({"m": 1, "x": np.zeros(4)}, ValueError, "x"),
        ({"m": 1, "k": np.zeros(8, dtype=complex)}, TypeError, "k"),
    ],
)
def test_state_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        wl.state(**kwargs)


def test_frames_show_correct_then_bug():
    frames = wl.frames()
    assert 12 <= len(frames) <= 30
    half = len(frames) // 2
    assert all(wl.state(f["m"], f["rotation"], f["table"])["matched"] for f in frames[:half])
    assert not any(wl.state(f["m"], f["rotation"], f["table"])["matched"] for f in frames[half:])
    assert len({f["m"] for f in frames[half:]}) == half  # the position moves
    for f in frames:
        assert set(f) <= {"m", "rotation", "table", "note"}


def test_demo_figure_draws():
    assert isinstance(wl.DEMO, Demo)
    fig = wl.DEMO.figure(m=7, rotation="half", table="interleaved", note="a note")
    try:
        top, norm_ax, score_ax = fig.axes
        assert "MIX-UP" in top.get_title() and "a note" in top.get_title()
        assert score_ax.get_xlabel() and norm_ax.get_ylabel() and top.get_ylabel()
        assert len(top.patches) >= 2 * wl.DIM + wl.DIM // 2  # two bar sets and one arc per pair
        fig.canvas.draw()
    finally:
        plt.close(fig)
    fig = wl.DEMO.figure()
    try:
        assert "a rotation" in fig.axes[0].get_title()
    finally:
        plt.close(fig)


def test_controls_and_live_widget():
    import ipywidgets as w

    ctl = wl.controls()
    assert set(ctl) == {"m", "rotation", "table"}
    assert isinstance(ctl["m"], w.IntSlider)
    assert {v for _, v in ctl["rotation"].options} == {"half", "interleaved"}
    assert {v for _, v in ctl["table"].options} == {"half", "interleaved"}
    box = wl.DEMO.widget()
    assert "rope-edu-demo" in box._dom_classes
    plt.close("all")


def test_frame_draws_without_layout_engine_and_without_warnings():
    """The kernel-free animation draws on a figure with no layout engine: no overlap warnings."""
    import warnings

    import matplotlib as mpl

    from rope_edu.plots import STYLE

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with mpl.rc_context({**STYLE, "figure.constrained_layout.use": False}):
            fig = plt.figure(figsize=wl.DEMO.figsize, dpi=wl.DEMO.dpi)
        try:
            with mpl.rc_context(STYLE):
                wl.draw(fig, **wl.frames()[-1])
            fig.canvas.draw()
            top, middle, bottom = fig.axes
            # panels stacked without overlap: each one ends above the next one's top
            assert top.get_position().y0 > middle.get_position().y1 > middle.get_position().y0 > bottom.get_position().y1
        finally:
            plt.close(fig)
