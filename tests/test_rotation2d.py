"""Tests of the chapter 3 widget (rope_edu.widgets.rotation2d), without a browser."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rope_edu import rotation_matrix  # noqa: E402
from rope_edu.widgets import Demo  # noqa: E402
from rope_edu.widgets import rotation2d as r2d  # noqa: E402

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


def test_state_zero_vector_has_no_angle_but_draws():
    s = r2d.state(2, 1, 0.5, q=[0.0, 0.0])
    assert np.isnan(s["angle_between"]) and s["dot"] == 0.0 and s["g"] == 0.0
    fig = r2d.DEMO.figure(q=np.zeros(2), k=np.zeros(2))
    try:
        fig.canvas.draw()
    finally:
        plt.close(fig)


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


# --- frames, figure, controls ---------------------------------------------------------------


def test_frames_together_then_apart():
    frames = r2d.frames()
    assert 12 <= len(frames) <= 30
    half = len(frames) // 2
    together, apart = frames[:half], frames[half:]
    dots_together = [r2d.state(f["m"], f["n"], f["theta"])["dot"] for f in together]
    dots_apart = [r2d.state(f["m"], f["n"], f["theta"])["dot"] for f in apart]
    # m and n shifted together: the same relative position, the same dot product ...
    assert len({f["m"] - f["n"] for f in together}) == 1
    assert len({(f["m"], f["n"]) for f in together}) == len(together)
    np.testing.assert_allclose(dots_together, dots_together[0], atol=1e-12)
    # ... then one position moves: the dot product changes from frame to frame.
    assert len({f["m"] for f in apart}) == 1
    assert np.all(np.abs(np.diff(dots_apart)) > 1e-3)
    for f in frames:
        assert set(f) <= {"m", "n", "theta", "q", "k", "note"}


def test_demo_is_a_demo_and_figure_draws_title():
    assert isinstance(r2d.DEMO, Demo)
    fig = r2d.DEMO.figure(m=5, n=2, theta=0.25)
    try:
        (ax,) = fig.axes
        s = r2d.state(5, 2, 0.25)
        title = ax.get_title()
        assert "m − n = 3" in title
        assert f"{s['dot']:+.4f}" in title
        assert "θ = 0.25 rad" in title
        assert ax.get_xlabel() and ax.get_ylabel()
        # two faded originals and two rotated arrows
        assert len(ax.collections) == 4
        fig.canvas.draw()
    finally:
        plt.close(fig)


def test_figure_with_note_and_zero_theta():
    fig = r2d.DEMO.figure(**{**r2d.frames()[0], "theta": 0.0})
    try:
        assert r2d.frames()[0]["note"] in fig.axes[0].get_title()
        fig.canvas.draw()
    finally:
        plt.close(fig)


def test_controls_have_m_n_theta_sliders():
    import ipywidgets as w

    ctl = r2d.controls()
    assert set(ctl) == {"m", "n", "theta"}
    assert isinstance(ctl["m"], w.IntSlider) and isinstance(ctl["n"], w.IntSlider)
    assert isinstance(ctl["theta"], w.FloatSlider)
    assert ctl["theta"].min == 0.0 and ctl["theta"].max == pytest.approx(np.pi)
    # the default slider values draw the same figure as the function defaults
    assert (ctl["m"].value, ctl["n"].value, ctl["theta"].value) == (3, 1, 0.5)


def test_live_widget_builds_with_its_sliders():
    # (the kernel-free animation is rendered and checked by the book build and browser test)
    box = r2d.DEMO.widget()
    assert "rope-edu-demo" in box._dom_classes
    sliders = box.children[0].children
    assert [s.description.split()[0] for s in sliders] == ["m", "n", "θ"]
    plt.close("all")
