"""Tests of the chapter 6 figure (rope_edu.widgets.layouts): state, data and readouts, without a browser."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rope_edu
from rope_edu import apply_rope
from rope_edu.widgets import layouts as wl
from rope_edu.widgets import snap_zero

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


# --- the figure ------------------------------------------------------------------------------


def test_figure_controls_and_defaults():
    assert wl.DEMO.name == "layouts"
    assert [c.name for c in wl.DEMO.controls] == ["m", "rotation", "table"]
    assert wl.DEMO.defaults == {"m": 5, "rotation": "half", "table": "half"}
    m, rotation, table = wl.DEMO.controls
    assert (m.min, m.max, m.step) == (0, 40, 1) and m.integer
    assert list(rotation.options) == list(table.options) == ["half", "interleaved"]


@pytest.mark.parametrize("rotation", ["half", "interleaved"])
@pytest.mark.parametrize("table", ["half", "interleaved"])
def test_data_is_the_state_at_every_plotted_position(rotation, table):
    c = wl.data()["combos"][f"{rotation}/{table}"]
    s = wl.state(0, rotation, table)
    np.testing.assert_array_equal(c["pairs"], np.stack(s["pairs"]))
    np.testing.assert_array_equal(c["freq_index"], s["freq_index"])
    assert c["matched"] == s["matched"] == (rotation == table)
    np.testing.assert_array_equal(c["norm_curve"], s["norm_curve"])
    np.testing.assert_array_equal(c["score_curve"], s["score_curve"])
    assert c["score_ref"] == s["score_ref"]
    assert c["x_rot"].shape == (len(wl.POSITIONS), wl.DIM)
    for m in (0, 7, 40):  # the bars: x turned at m by the state's own rotation, to 4 decimals
        np.testing.assert_allclose(c["x_rot"][m], wl.state(m, rotation, table)["x_rot"], atol=5e-5)
    # the spreads as computed; the browser prints them through snapZero(value, d.zero), as readouts()
    assert c["norm_error"] == np.max(np.abs(s["norm_curve"] - 1.0))
    assert c["score_spread"] == np.ptp(s["score_curve"])
    r = wl.readouts(m=0, rotation=rotation, table=table)
    zero = wl.data()["zero"]
    assert zero == wl.ZERO
    assert snap_zero(c["norm_error"], zero) == r["norm_error"]
    assert snap_zero(c["score_spread"], zero) == r["score_spread"]


@FAST
@given(m=st.integers(0, 40), rotation=layouts, table=layouts)
def test_readouts_against_the_package(m, rotation, table):
    r = wl.readouts(m=m, rotation=rotation, table=table)
    cos, sin = rope_edu.cos_sin_table(np.array([m + wl.DISTANCE, m, m], float), wl.DIM, base=wl.BASE, layout=table)
    q, k, x = rope_edu.rope_from_table(np.stack([wl.X, wl.K, wl.X]), cos, sin, layout=rotation)
    assert r["norm_ratio"] == pytest.approx(np.linalg.norm(x) / np.linalg.norm(wl.X), abs=1e-12)
    assert r["score"] == pytest.approx(q @ k, abs=1e-12)
    good = apply_rope(wl.X, float(wl.DISTANCE), base=wl.BASE, layout=rotation) @ wl.K
    assert r["score_ref"] == pytest.approx(good, abs=1e-12)
    if rotation == table:  # RoPE: the norm and the score do not move with the position
        assert r["norm_error"] == 0.0 and r["score_spread"] == 0.0
        assert r["norm_ratio"] == pytest.approx(1.0, abs=1e-12) and r["score"] == pytest.approx(good, abs=1e-12)
    else:
        assert r["norm_error"] > 0.2 and r["score_spread"] > 1.0


def test_readouts_bad_input():
    with pytest.raises(ValueError, match="m"):
        wl.readouts(m=2.5, rotation="half", table="half")
    with pytest.raises(ValueError, match="table"):
        wl.readouts(m=2, rotation="half", table="neox")


def test_live_widget_and_static_markup():
    w = wl.DEMO.widget(table="interleaved")
    assert (w.m, w.rotation, w.table) == (5, "half", "interleaved")
    assert w._name == "layouts" and set(w._data["combos"]) == {"half/half", "half/interleaved", "interleaved/half", "interleaved/interleaved"}
    html = wl.DEMO.html()
    assert 'data-figure="layouts"' in html and len(html) < 100_000
