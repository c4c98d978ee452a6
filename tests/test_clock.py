"""The chapter 5 clock widget: its pure state function, drawing, controls and animation frames."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
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


def test_figure_draws_one_dial_per_pair():
    fig = clock.DEMO.figure(m=7, base=100.0)
    try:
        ax = fig.axes[0]
        texts = [t.get_text() for t in ax.texts]
        assert sum(t.startswith("pair ") for t in texts) == 8
        assert "position m = 7" in ax.get_title() and "base b = 100" in ax.get_title()
        assert len(ax.patches) == 8  # one dial per pair
    finally:
        plt.close(fig)


def test_draw_other_dims():
    for dim in (2, 4, 12):
        fig = plt.figure()
        clock.draw(fig, m=2.5, dim=dim)
        assert sum(t.get_text().startswith("pair ") for t in fig.axes[0].texts) == dim // 2
        plt.close(fig)


def test_frames_and_controls():
    frames = clock.DEMO.frames()
    assert 12 <= len(frames) <= 30
    assert [f["m"] for f in frames] == sorted(f["m"] for f in frames)
    controls = clock.DEMO.controls()
    assert set(controls) == {"m", "base"}
    assert controls["m"].max == clock.POSITION_MAX
    assert set(controls["base"].options) == {(f"{b:,.0f}", b) for b in clock.BASES}
    fig = clock.DEMO.figure(**frames[-1])
    plt.close(fig)
