"""The chapter 5 clock figure: its pure state function, data and readouts (no browser)."""

from __future__ import annotations

import numpy as np
import pytest

from rope_edu import frequencies, wavelengths
from rope_edu.widgets import clock


def test_state_hands_turn_counter_clockwise_by_m_theta():
    s = clock.state(3, dim=16, base=10000.0)
    theta = frequencies(16)
    np.testing.assert_allclose(s["theta"], theta)
    np.testing.assert_allclose(s["angle"], 3 * theta)
    np.testing.assert_allclose(s["hand"], np.stack([np.cos(3 * theta), np.sin(3 * theta)], axis=1), atol=1e-15)
    np.testing.assert_allclose(s["turns"], 3 * theta / (2 * np.pi))
    np.testing.assert_allclose(s["wavelength"], wavelengths(16))
    assert s["hand"].shape == (8, 2)
    # pair 0 turns one radian per position, counter-clockwise: at m = pi/2 it points straight up
    np.testing.assert_allclose(clock.state(np.pi / 2)["hand"][0], [0.0, 1.0], atol=1e-15)


def test_state_full_turns():
    s = clock.state(100, dim=16, base=100.0)
    np.testing.assert_array_equal(s["full_turn"], s["wavelength"] <= 100)
    assert s["full_turn"][:5].all() and not s["full_turn"][5:].any()
    assert not clock.state(0)["full_turn"].any()
    np.testing.assert_allclose(clock.state(0)["hand"], np.tile([1.0, 0.0], (8, 1)))


def test_state_base_slows_the_slow_hands():
    slow, fast = clock.state(50, base=500000.0), clock.state(50, base=10.0)
    assert slow["turns"][0] == fast["turns"][0]  # pair 0 always turns at 1 rad/position
    assert np.all(slow["turns"][1:] < fast["turns"][1:])


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"position": "3"}, TypeError, "position"),
        ({"position": True}, TypeError, "position"),
        ({"position": np.nan}, ValueError, "position"),
        ({"position": 1, "dim": 7}, ValueError, "dim"),
        ({"position": 1, "base": 1.0}, ValueError, "base"),
    ],
)
def test_state_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        clock.state(**kwargs)


# --- the figure ------------------------------------------------------------------------------


def test_data_is_the_package_frequencies_for_every_base_option():
    d = clock.data()
    assert d["dim"] == clock.DIM == 16
    assert list(d["bases"]) == list(clock.BASE_OPTIONS) == ["10", "100", "1000", "10000", "500000"]
    for option, b in zip(clock.BASE_OPTIONS, clock.BASES):
        np.testing.assert_array_equal(d["bases"][option]["theta"], frequencies(16, b))
        np.testing.assert_array_equal(d["bases"][option]["wavelength"], wavelengths(16, b))


@pytest.mark.parametrize("m", [0, 3, 47, 1024, clock.POSITION_MAX])
@pytest.mark.parametrize("option", clock.BASE_OPTIONS)
def test_readouts_are_turns_and_wavelengths(m, option):
    r = clock.readouts(m=m, base=option)
    theta = frequencies(16, float(option))
    turns = m * theta / (2 * np.pi)
    assert set(r) == {f"turns_{i}" for i in range(8)} | {f"wavelength_{i}" for i in range(8)} | {"full_turns"}
    np.testing.assert_allclose([r[f"turns_{i}"] for i in range(8)], turns, rtol=1e-12)
    np.testing.assert_allclose([r[f"wavelength_{i}"] for i in range(8)], 2 * np.pi / theta, rtol=1e-12)
    assert r["full_turns"] == int(np.sum(turns >= 1))
    assert clock.readouts(m=m, base=float(option)) == r  # a number or the drop-down's string


def test_readouts_full_turns_at_the_ends_of_the_slider():
    # at m = 1024: base 10,000 five hands have made a full turn, base 500,000 four (chapter 5)
    assert clock.readouts(m=1024, base="10000")["full_turns"] == 5
    assert clock.readouts(m=1024, base="500000")["full_turns"] == 4
    # at the slider's end (a 32k context): all eight at base 10,000, all but two at 500,000
    assert clock.readouts(m=clock.POSITION_MAX, base="10000")["full_turns"] == 8
    assert clock.readouts(m=clock.POSITION_MAX, base="500000")["full_turns"] == 6
    assert clock.readouts(m=0, base="10")["full_turns"] == 0


def test_figure_controls_defaults_and_numeric_base():
    assert clock.DEMO.name == "clock"
    assert [c.name for c in clock.DEMO.controls] == ["m", "base"]
    assert clock.DEMO.defaults == {"m": 3, "base": "10000"}
    m = clock.DEMO.controls[0]
    assert (m.min, m.max, m.step) == (0, clock.POSITION_MAX, 1) and m.integer
    assert clock.POSITION_MAX >= 1024
    # chapter 5 calls DEMO.show(m=1024, base=500000.0): a number picks the matching option
    assert clock.DEMO.state(m=1024, base=500000.0) == {"m": 1024, "base": "500000"}
    assert clock.DEMO.state(base="100") == {"m": 3, "base": "100"}
    html = clock.DEMO.html(m=1024, base=500000.0)
    assert 'data-figure="clock"' in html and "&quot;base&quot;:&quot;500000&quot;" in html
    assert len(html) < 10_000


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"base": 20000.0}, ValueError, "base"),
        ({"base": "2"}, ValueError, "base"),
        ({"base": True}, ValueError, "base"),
        ({"m": clock.POSITION_MAX + 1}, ValueError, "m"),
        ({"m": "3"}, TypeError, "m"),
    ],
)
def test_figure_bad_state(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        clock.DEMO.state(**kwargs)
    if "base" in kwargs:
        with pytest.raises(exc, match=match):
            clock.readouts(m=3, **kwargs)


def test_live_widget_has_one_trait_per_control():
    w = clock.DEMO.widget(m=1024, base=500000.0)
    assert (w.m, w.base) == (1024, "500000")
    assert w._name == "clock" and [c["name"] for c in w._controls] == ["m", "base"]
    np.testing.assert_allclose(w._data["bases"]["500000"]["theta"], frequencies(16, 500000.0))


def test_a_dials_turn_count_reads_as_a_decimal():
    """The dials print small turn counts as decimals ("0.0048 turns"), never as 4.8e−3 (issue 45)."""
    from node_figure import call_js

    out = call_js("clock", "turnsLabel", [[0.0048, False], [0.004837, True], [0.00003, False], [0.5, False], [0, False],
                                          [1234.5, True], [1234.5, False]])
    assert out == ["0.0048", "0.0048", "< 0.0001", "0.50", "0.00", "1235", "1234.50"], out
