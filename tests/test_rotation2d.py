"""Tests of the chapter 3 widget (rope_edu.widgets.rotation2d), without a browser."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from rope_edu import rotation_matrix
from rope_edu.widgets import rotation2d as r2d

positions = st.integers(min_value=-1000, max_value=1000)
thetas = st.floats(min_value=-2 * np.pi, max_value=2 * np.pi, allow_nan=False)
coords = st.floats(min_value=-10, max_value=10, allow_nan=False)
vectors = st.tuples(coords, coords).map(np.array)

FAST = settings(max_examples=60, deadline=None)


def as_complex(v: np.ndarray) -> complex:
    return complex(v[0], v[1])


# --- rotate2d -------------------------------------------------------------------------------


@FAST
@given(v=vectors, m=positions, theta=thetas)
def test_rotate2d_is_complex_multiplication(v, m, theta):
    expected = as_complex(v) * np.exp(1j * m * theta)
    got = r2d.rotate2d(v, m, theta)
    np.testing.assert_allclose(got, [expected.real, expected.imag], atol=1e-9, rtol=1e-9)


@FAST
@given(v=vectors, m=positions, theta=thetas)
def test_rotate2d_is_counter_clockwise_rotation_matrix(v, m, theta):
    c, s = np.cos(m * theta), np.sin(m * theta)
    by_hand = np.array([[c, -s], [s, c]])
    np.testing.assert_allclose(r2d.rotate2d(v, m, theta), by_hand @ v, atol=1e-9, rtol=1e-9)
    np.testing.assert_allclose(
        r2d.rotate2d(v, m, theta), rotation_matrix(m, 2, inv_freq=[theta]) @ v, atol=1e-9, rtol=1e-9
    )


@FAST
@given(v=vectors, m=positions, theta=thetas)
def test_rotate2d_preserves_norm(v, m, theta):
    np.testing.assert_allclose(np.linalg.norm(r2d.rotate2d(v, m, theta)), np.linalg.norm(v), atol=1e-9, rtol=1e-9)


def test_rotate2d_direction_small_positive_angle_turns_x_axis_up():
    out = r2d.rotate2d([1.0, 0.0], 1, 1e-3)
    assert out[1] > 0 and out[0] > 0
    np.testing.assert_allclose(r2d.rotate2d([1.0, 0.0], 1, np.pi / 2), [0.0, 1.0], atol=1e-15)


def test_rotate2d_is_vectorised_over_vectors_and_positions():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(5, 2))
    pos = np.arange(5)
    out = r2d.rotate2d(v, pos, 0.3)
    assert out.shape == (5, 2)
    for i in range(5):
        np.testing.assert_allclose(out[i], r2d.rotate2d(v[i], pos[i], 0.3))


def test_rotate2d_keeps_input_unchanged_and_converts_integers():
    v = np.array([1, 2])
    out = r2d.rotate2d(v, 0, 0.7)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(v, [1, 2])
    np.testing.assert_allclose(out, [1.0, 2.0])


@pytest.mark.parametrize(
    "args, error, match",
    [
        (([1.0, 0.0, 0.0], 1, 0.5), ValueError, "v"),
        (([[1.0, 0.0, 0.0]], 1, 0.5), ValueError, "v"),
        (([1 + 1j, 0.0], 1, 0.5), TypeError, "v"),
        ((["a", "b"], 1, 0.5), TypeError, "v"),
        (([1.0, 0.0], np.nan, 0.5), ValueError, "position"),
        (([1.0, 0.0], [1, 2], 0.5), ValueError, "position"),
        (([1.0, 0.0], "1", 0.5), TypeError, "position"),
        (([1.0, 0.0], 1, np.inf), ValueError, "theta"),
        (([1.0, 0.0], 1, "0.5"), TypeError, "theta"),
        (([1.0, 0.0], 1, [0.5, 0.2]), TypeError, "theta"),
        (([1.0, 0.0], 1, True), TypeError, "theta"),
    ],
)
def test_rotate2d_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        r2d.rotate2d(*args)


# --- state ----------------------------------------------------------------------------------


@FAST
@given(m=positions, n=positions, theta=thetas, q=vectors, k=vectors)
def test_state_dot_equals_g_of_relative_position(m, n, theta, q, k):
    s = r2d.state(m, n, theta, q, k)
    scale = 1 + np.linalg.norm(q) * np.linalg.norm(k)
    np.testing.assert_allclose(s["dot"], s["g"], atol=1e-9 * scale)
    assert s["relative"] == m - n
    # g is Re[q conj(k) e^{i(m-n)θ}]: the complex form of the same number.
    complex_form = (as_complex(q) * np.conj(as_complex(k)) * np.exp(1j * (m - n) * theta)).real
    np.testing.assert_allclose(s["dot"], complex_form, atol=1e-9 * scale)


@FAST
@given(m=positions, n=positions, shift=positions, theta=thetas, q=vectors, k=vectors)
def test_state_dot_depends_on_m_minus_n_only(m, n, shift, theta, q, k):
    assume(np.linalg.norm(q) > 1e-3 and np.linalg.norm(k) > 1e-3)  # directions are defined
    a = r2d.state(m, n, theta, q, k)
    b = r2d.state(m + shift, n + shift, theta, q, k)
    scale = 1 + np.linalg.norm(q) * np.linalg.norm(k)
    np.testing.assert_allclose(a["dot"], b["dot"], atol=1e-9 * scale)
    np.testing.assert_allclose(np.exp(1j * a["angle_between"]), np.exp(1j * b["angle_between"]), atol=1e-7)


@FAST
@given(m=positions, n=positions, theta=thetas, q=vectors, k=vectors)
# antiparallel: (π - angle) % 2π rounded up to 2π and gave -π (found by hypothesis, 2026-12)
@example(m=39, n=39, theta=1.90234375, q=np.array([0.0, 1.9375]), k=np.array([0.0, -1.0]))
def test_state_angle_between_gives_dot(m, n, theta, q, k):
    assume(np.linalg.norm(q) > 1e-3 and np.linalg.norm(k) > 1e-3)
    s = r2d.state(m, n, theta, q, k)
    assert -np.pi < s["angle_between"] <= np.pi
    scale = 1 + np.linalg.norm(q) * np.linalg.norm(k)
    expected = np.linalg.norm(q) * np.linalg.norm(k) * np.cos(s["angle_between"])
    np.testing.assert_allclose(s["dot"], expected, atol=1e-9 * scale)


def test_state_defaults_and_values():
    s = r2d.state(3, 1, 0.5)
    np.testing.assert_allclose(s["q_m"], r2d.rotate2d(r2d.Q, 3, 0.5))
    np.testing.assert_allclose(s["k_n"], r2d.rotate2d(r2d.K, 1, 0.5))
    assert s["angle_q"] == pytest.approx(1.5) and s["angle_k"] == pytest.approx(0.5)
    # angle from k_n to q_m = (angle of q - angle of k) + (m - n) θ
    expected = np.arctan2(0.3, 1.0) - np.arctan2(0.8, 0.6) + 2 * 0.5
    assert s["angle_between"] == pytest.approx(expected)


def test_state_zero_vector_has_no_angle():
    s = r2d.state(2, 1, 0.5, q=[0.0, 0.0])
    assert np.isnan(s["angle_between"]) and s["dot"] == 0.0 and s["g"] == 0.0


def test_state_changes_when_only_one_position_moves():
    assert abs(r2d.state(3, 1, 0.5)["dot"] - r2d.state(3, 2, 0.5)["dot"]) > 1e-3


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(m="3", n=1, theta=0.5), TypeError, "m"),
        (dict(m=3, n=np.nan, theta=0.5), ValueError, "n"),
        (dict(m=3, n=1, theta=None), TypeError, "theta"),
        (dict(m=3, n=1, theta=0.5, q=[1.0, 2.0, 3.0]), ValueError, "q"),
        (dict(m=3, n=1, theta=0.5, k=[1j, 2.0]), TypeError, "k"),
    ],
)
def test_state_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        r2d.state(**kwargs)


# --- the figure ------------------------------------------------------------------------------


def test_figure_controls_and_defaults():
    assert r2d.DEMO.name == "rotation2d"
    assert [c.name for c in r2d.DEMO.controls] == ["m", "n", "s", "theta"]
    assert r2d.DEMO.defaults == {"m": 3, "n": 1, "s": 0, "theta": 0.5}


@FAST
@given(m=st.integers(0, 24), n=st.integers(0, 24), s=st.integers(0, 40), theta=st.floats(0, 3.14))
def test_readouts_shift_changes_positions_not_the_dot_product(m, n, s, theta):
    r = r2d.readouts(m=m, n=n, s=s, theta=theta)
    r0 = r2d.readouts(m=m, n=n, s=0, theta=theta)
    assert (r["m_total"], r["n_total"]) == (m + s, n + s)
    np.testing.assert_allclose(r["dot"], r0["dot"], atol=1e-12)
    np.testing.assert_allclose(r["dot"], r["g"], atol=1e-12)
    np.testing.assert_allclose(r["angle_q"], (m + s) * theta)


def test_live_widget_has_one_trait_per_control():
    w = r2d.DEMO.widget(m=7)
    assert (w.m, w.n, w.s, w.theta) == (7, 1, 0, 0.5)
    assert w._name == "rotation2d" and [c["name"] for c in w._controls] == ["m", "n", "s", "theta"]
    np.testing.assert_allclose(w._data["q"], r2d.Q)
