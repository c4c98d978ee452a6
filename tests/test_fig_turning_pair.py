"""Tests of the landing page's figure (rope_edu.widgets.turning_pair), without a browser."""

from __future__ import annotations

import numpy as np
import pytest

from rope_edu import apply_rope
from rope_edu.widgets import turning_pair as tp


def _turned(v, position):
    return apply_rope(np.asarray(v, float), position, inv_freq=[tp.THETA])


@pytest.mark.parametrize("gap", range(0, 7))
def test_moving_both_tokens_keeps_the_angle_and_the_score(gap):
    first = tp.readouts(p=0, gap=gap)
    for p in range(0, 31):
        r = tp.readouts(p=p, gap=gap)
        assert r["angle"] == pytest.approx(first["angle"], abs=1e-9)
        assert r["score"] == pytest.approx(first["score"], abs=1e-12)


def test_readouts_are_the_turned_vectors():
    r = tp.readouts(p=7, gap=3)
    q, k = _turned(tp.Q, 10), _turned(tp.K, 7)
    assert (r["m"], r["n"]) == (10, 7)
    assert r["score"] == pytest.approx(float(q @ k), abs=1e-12)
    angle = np.degrees(np.arctan2(q[1], q[0]) - np.arctan2(k[1], k[0]))
    assert r["angle"] == pytest.approx((angle + 180) % 360 - 180, abs=1e-9)
    assert r["turn_q"] == pytest.approx(np.degrees(10 * tp.THETA) % 360)
    assert r["turn_k"] == pytest.approx(np.degrees(7 * tp.THETA) % 360)


def test_turns_are_shown_modulo_a_full_turn():
    """Issue 45: a turn of 36θ printed as 825°; it prints where the arrow points, 105°."""
    r = tp.readouts(p=30, gap=6)
    assert np.degrees(36 * tp.THETA) > 360
    assert r["turn_q"] == pytest.approx(np.degrees(36 * tp.THETA) - 720)
    assert all(0 <= tp.readouts(p=p, gap=g)[k] < 360 for p in range(31) for g in range(7) for k in ("turn_q", "turn_k"))


def test_the_distance_changes_the_angle():
    angles = {tp.readouts(p=0, gap=g)["angle"] for g in range(0, 7)}
    assert len(angles) == 7


def test_data_and_controls():
    d = tp.data()
    assert d["theta"] == tp.THETA and np.shape(d["q"]) == (2,) and np.shape(d["k"]) == (2,)
    assert tp.DEMO.state(p=30, gap=6) == {"p": 30, "gap": 6}
    with pytest.raises(ValueError, match="gap"):
        tp.DEMO.state(gap=7)


@pytest.mark.parametrize("p, gap", [(0, 4), (0, 0), (12, 5), (30, 6)])
def test_the_note_on_where_the_arrows_start(p, gap):
    """The figure's note (turning_pair.js): q and k start at different angles, q at a smaller one,
    so the angle between them is the turn of q, minus the turn of k, minus that difference, modulo
    360° (issue 45: a reader asked why 92° and 0° give 55.2°)."""
    start_q, start_k = (float(np.degrees(np.arctan2(v[1], v[0]))) for v in (tp.Q, tp.K))
    assert start_k > start_q   # the note says "minus" that difference
    assert (round(start_q, 1), round(start_k, 1), round(start_k - start_q, 1)) == (16.7, 53.1, 36.4)
    r = tp.readouts(p=p, gap=gap)
    left = (r["turn_q"] - r["turn_k"] - (start_k - start_q) - r["angle"]) % 360
    assert min(left, 360 - left) == pytest.approx(0, abs=1e-9)
