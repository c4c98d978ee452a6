"""Chapter 4's figure (rope_edu.widgets.relative_planes): its data and readouts against rope_edu's
rotations, and its JavaScript ``compute`` under Node.js (tests/node_figure.py), without a browser
(the browser tests compare the page with ``readouts``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rope_edu import apply_rope, frequencies, rotation_matrix
from rope_edu.widgets import JS_DIR, Figure
from rope_edu.widgets import relative_planes as fig
from node_figure import call_js

FAST = settings(max_examples=60, deadline=None)
CONTROLS = {c.name: c for c in fig.CONTROLS}
in_range = {name: st.integers(int(c.min), int(c.max)) for name, c in CONTROLS.items()}
THETA = frequencies(fig.DIM, fig.BASE)


def test_data_is_the_package_frequencies_and_vectors():
    d = fig.data()
    np.testing.assert_array_equal(d["theta"], THETA)
    np.testing.assert_array_equal(d["q"], fig.Q)
    np.testing.assert_array_equal(d["k"], fig.K)
    assert fig.DIM == 8 and len(d["theta"]) == 4


def test_bound_is_the_largest_partial_sum_over_every_reachable_state():
    bound = fig.data()["bound"]
    worst = 0.0
    for r in range(-24, 25):  # every m − n the sliders reach
        partial = np.cumsum(fig.contributions(r + 24, 24))
        worst = max(worst, np.abs(partial).max())
    assert bound == pytest.approx(worst, rel=1e-12)
    # and never more than the Cauchy–Schwarz limit plane by plane
    norms = np.linalg.norm(fig.Q.reshape(4, 2), axis=1) @ np.linalg.norm(fig.K.reshape(4, 2), axis=1)
    assert bound <= norms


@FAST
@given(m=st.integers(-500, 500), n=st.integers(-500, 500))
def test_contributions_are_the_plane_dot_products(m, n):
    c = fig.contributions(m, n)
    for i, t in enumerate(THETA):
        pair = slice(2 * i, 2 * i + 2)
        q_i = rotation_matrix(m, 2, inv_freq=[t]) @ fig.Q[pair]
        k_i = rotation_matrix(n, 2, inv_freq=[t]) @ fig.K[pair]
        assert c[i] == pytest.approx(q_i @ k_i, abs=1e-12)
        # block i of R_{n−m}: the contribution sees the relative position only
        block = rotation_matrix(n - m, fig.DIM, base=fig.BASE)[pair, pair]
        assert c[i] == pytest.approx(fig.Q[pair] @ block @ fig.K[pair], abs=1e-12)
        # the complex form: Re(q̃ conj(k̃) e^{i(m−n)θ})
        qc, kc = complex(*fig.Q[pair]), complex(*fig.K[pair])
        assert c[i] == pytest.approx((qc * np.conj(kc) * np.exp(1j * (m - n) * t)).real, abs=1e-12)
    score = apply_rope(fig.Q, m, base=fig.BASE) @ apply_rope(fig.K, n, base=fig.BASE)
    assert c.sum() == pytest.approx(score, abs=1e-12)


@FAST
@given(**in_range)
def test_readouts_sum_to_the_score_which_the_shift_keeps(m, n, s):
    r = fig.readouts(m=m, n=n, s=s)
    r0 = fig.readouts(m=m, n=n, s=0)
    assert (r["m_total"], r["n_total"], r["relative"]) == (m + s, n + s, m - n)
    parts = [r[f"c_{i}"] for i in range(fig.DIM // 2)]
    assert sum(parts) == pytest.approx(r["score"], abs=1e-12)
    assert r["score"] == pytest.approx(r["g"], abs=1e-12)
    for i in range(fig.DIM // 2):  # every plane keeps its share, not only the total
        assert r[f"c_{i}"] == pytest.approx(r0[f"c_{i}"], abs=1e-12)
    g = fig.Q @ rotation_matrix(n - m, fig.DIM, base=fig.BASE) @ fig.K
    assert r["g"] == pytest.approx(g, abs=1e-12)


def test_moving_one_position_changes_every_plane_by_its_own_speed():
    a, b = fig.readouts(m=3, n=1, s=0), fig.readouts(m=4, n=1, s=0)
    assert abs(a["score"] - b["score"]) > 0.05
    for i, t in enumerate(THETA):  # the angle from k to q in plane i grows by θ_i
        pair = slice(2 * i, 2 * i + 2)
        norms = np.linalg.norm(fig.Q[pair]) * np.linalg.norm(fig.K[pair])
        def angle(r, pair=pair, t=t):
            return np.angle(complex(*fig.Q[pair]) * np.conj(complex(*fig.K[pair])) * np.exp(1j * r["relative"] * t))

        assert np.cos(angle(a)) * norms == pytest.approx(a[f"c_{i}"], abs=1e-12)
        np.testing.assert_allclose(np.exp(1j * (angle(b) - angle(a))), np.exp(1j * t), atol=1e-12)
        assert a[f"c_{i}"] != pytest.approx(b[f"c_{i}"], abs=1e-4)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: fig.readouts(m=1.5, n=0, s=0), TypeError, "m"),
        (lambda: fig.readouts(m=1, n="0", s=0), TypeError, "n"),
        (lambda: fig.readouts(m=1, n=0, s=True), TypeError, "s"),
        (lambda: fig.contributions(1, 0, q=np.ones(6)), ValueError, "q"),
        (lambda: fig.contributions(1, 0, k=np.ones((2, 8))), ValueError, "k"),
        (lambda: fig.contributions(1, 0, q=np.ones(8) * 1j), TypeError, "x"),
        (lambda: fig.DEMO.state(s=61), ValueError, "s"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_figure_wiring_and_live_widget():
    assert isinstance(fig.DEMO, Figure) and fig.DEMO.name == "relative_planes"
    assert (JS_DIR / "relative_planes.js").is_file()
    assert fig.DEMO.defaults == {"m": 3, "n": 1, "s": 0}
    w = fig.DEMO.widget(s=10)
    assert (w.m, w.n, w.s) == (3, 1, 10)
    assert [c["name"] for c in w._controls] == ["m", "n", "s"]
    np.testing.assert_allclose(w._data["theta"], THETA)


def test_javascript_compute_agrees_with_readouts():
    # what the browser draws and prints, over many states (the browser tests try only a few)
    rng = np.random.default_rng(0)
    states = [dict(m=int(a), n=int(b), s=int(c)) for a, b, c in
              zip(rng.integers(0, 25, 200), rng.integers(0, 25, 200), rng.integers(0, 61, 200))]
    out = call_js("relative_planes", "compute", [[state] for state in states], extra=[fig.data()])
    for state, got in zip(states, out):
        want = fig.readouts(**state)
        assert (got["mt"], got["nt"]) == (want["m_total"], want["n_total"])
        assert [p["c"] for p in got["planes"]] == pytest.approx([want[f"c_{i}"] for i in range(4)], abs=1e-12)
        assert got["score"] == pytest.approx(want["score"], abs=1e-12)
        assert got["g"] == pytest.approx(want["g"], abs=1e-12)
