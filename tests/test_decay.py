"""Wavelengths and RoFormer's long-term decay analysis (rope_edu.decay, chapter 5)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rope_edu
from rope_edu import (
    LAYOUTS,
    apply_rope,
    expected_score,
    frequencies,
    pair_products,
    pair_score,
    partial_sums,
    relative_upper_bound,
    rotation_matrix,
    score_upper_bound,
    wavelengths,
)

LAYOUT_NAMES = sorted(LAYOUTS)
dims = st.sampled_from([2, 4, 8, 16, 64, 128])
bases = st.sampled_from([2.0, 100.0, 10000.0, 500000.0])
seeds = st.integers(0, 2**32 - 1)


def test_exported():
    for name in ("wavelengths", "partial_sums", "relative_upper_bound", "pair_products",
                 "pair_score", "score_upper_bound", "expected_score"):
        assert name in rope_edu.__all__
        assert getattr(rope_edu, name) is not None


# --- wavelengths -----------------------------------------------------------------------------


def test_wavelengths_formula_and_endpoints():
    d, b = 128, 10000.0
    lam = wavelengths(d, b)
    np.testing.assert_allclose(lam, [2 * np.pi * b ** (2 * i / d) for i in range(d // 2)], rtol=1e-13)
    np.testing.assert_allclose(lam * frequencies(d, b), 2 * np.pi, rtol=1e-15)
    assert lam[0] == pytest.approx(2 * np.pi)
    assert lam[-1] == pytest.approx(2 * np.pi * b ** ((d - 2) / d))
    assert lam[-1] == pytest.approx(54410.14, abs=0.01)  # not 2*pi*b = 62831.85
    assert 2 * np.pi * b / lam[-1] == pytest.approx(b ** (2 / d))


# --- partial sums and the relative upper bound -----------------------------------------------


def test_partial_sums_against_a_loop():
    d, b = 16, 100.0
    theta = frequencies(d, b)
    for delta in (0.0, 1.0, -7.0, 2.5, 250.0):
        expected = [sum(np.exp(1j * delta * theta[i]) for i in range(j)) for j in range(1, d // 2 + 1)]
        np.testing.assert_allclose(partial_sums(delta, d, b), expected, rtol=1e-13, atol=1e-13)


def test_relative_upper_bound_shape_and_vectorised():
    dist = np.arange(12.0).reshape(3, 4)
    out = relative_upper_bound(dist, 32)
    assert out.shape == (3, 4) and out.dtype == np.float64
    for idx in np.ndindex(dist.shape):
        assert out[idx] == pytest.approx(float(relative_upper_bound(dist[idx], 32)))
    assert relative_upper_bound(5, 32).shape == ()
    assert relative_upper_bound([], 32).shape == (0,)


@settings(max_examples=30, deadline=None)
@given(dim=dims, base=bases)
def test_relative_upper_bound_at_zero(dim, base):
    """S_j(0) = j, so the bound at distance 0 is (1/(d/2)) * sum_j j = (d/2 + 1) / 2."""
    assert relative_upper_bound(0, dim, base) == pytest.approx((dim // 2 + 1) / 2)


@settings(max_examples=30, deadline=None)
@given(dim=dims, base=bases, delta=st.floats(-1e4, 1e4, allow_nan=False))
def test_relative_upper_bound_even_and_at_most_its_value_at_zero(dim, base, delta):
    b = relative_upper_bound([delta, -delta], dim, base)
    assert b[0] == pytest.approx(b[1], rel=1e-12)
    assert b[0] <= (dim // 2 + 1) / 2 + 1e-9  # |S_j| <= j


def test_relative_upper_bound_roformer_figure_2():
    """d = 128, base 10000, distances 0..250: it shrinks overall but is not monotone."""
    dist = np.arange(251)
    curve = relative_upper_bound(dist, 128)
    assert curve[0] == pytest.approx(32.5)
    assert curve[250] < curve[0] / 4
    assert np.any(np.diff(curve) > 0), "the curve oscillates: it increases somewhere"
    first_rise = int(np.argmax(np.diff(curve) > 0))
    assert 0 < first_rise < 50


# --- the complex form of the score and the Abel-summation bound ------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=seeds, dim=st.sampled_from([2, 4, 8, 16, 64]), layout=st.sampled_from(LAYOUT_NAMES))
def test_pair_score_is_the_rope_score(seed, dim, layout):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 6, dim))
    m, n = rng.uniform(-500, 500, (2, 6))
    score = np.sum(apply_rope(q, m, layout=layout) * apply_rope(k, n, layout=layout), axis=-1)
    h = pair_products(q, k, layout=layout)
    assert h.shape == (6, dim // 2) and h.dtype == np.complex128
    np.testing.assert_allclose(pair_score(h, m - n).real, score, rtol=1e-10, atol=1e-10)


def test_pair_products_interleaved_by_hand():
    q = np.array([1.0, 2.0, 3.0, 4.0])
    k = np.array([0.5, -1.0, 2.0, 0.0])
    expected = [(1 + 2j) * np.conj(0.5 - 1j), (3 + 4j) * np.conj(2 + 0j)]
    np.testing.assert_allclose(pair_products(q, k), expected)
    # half layout pairs (0, 2) and (1, 3)
    np.testing.assert_allclose(pair_products(q, k, "half"), [(1 + 3j) * np.conj(0.5 + 2j), (2 + 4j) * np.conj(-1 + 0j)])


def test_abel_summation_identity():
    """sum_i h_i e^{i delta theta_i} = -sum_i (h_{i+1} - h_i) S_{i+1}, with h_{d/2} = 0."""
    rng = np.random.default_rng(1)
    h = rng.standard_normal(32) + 1j * rng.standard_normal(32)
    for delta in (0.0, 3.0, 41.5, -200.0):
        S = partial_sums(delta, 64)
        steps = np.diff(np.append(h, 0.0))
        np.testing.assert_allclose(pair_score(h, delta), -np.sum(steps * S), rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=seeds, dim=st.sampled_from([2, 4, 16, 128]), base=bases)
def test_score_upper_bound_holds(seed, dim, base):
    rng = np.random.default_rng(seed)
    h = rng.standard_normal((5, dim // 2)) + 1j * rng.standard_normal((5, dim // 2))
    delta = rng.uniform(-300, 300, (7, 1))
    bound = score_upper_bound(h, delta, base)
    assert bound.shape == (7, 5)
    assert np.all(np.abs(pair_score(h, delta, base)) <= bound * (1 + 1e-12))


def test_score_upper_bound_by_hand():
    h = np.array([3.0, 1.0])  # steps: |1 - 3| = 2, |0 - 1| = 1
    np.testing.assert_allclose(score_upper_bound(h, 0.0), 2 * (1 + 2))
    np.testing.assert_allclose(score_upper_bound(h, [0.0, 0.0]), [6.0, 6.0])


# --- expected score of random correlated vectors ---------------------------------------------


def test_expected_score_is_the_trace():
    for delta in (0.0, 1.0, 17.5, -40.0):
        for rho in (-0.5, 0.0, 1.0):
            np.testing.assert_allclose(
                expected_score(delta, 16, 100.0, correlation=rho),
                rho * np.trace(rotation_matrix(delta, 16, base=100.0)), atol=1e-12,
            )
    np.testing.assert_allclose(expected_score([0, 0], 64), [64.0, 64.0])
    np.testing.assert_allclose(expected_score(np.arange(5), 64, correlation=1.0),
                               2 * partial_sums(np.arange(5), 64)[:, -1].real)


def test_expected_score_monte_carlo():
    """Sample q ~ N(0, I), k = rho q + sqrt(1 - rho^2) eps and compare the mean score."""
    rng = np.random.default_rng(0)
    d, n, rho = 16, 20000, 0.6
    q = rng.standard_normal((n, d))
    k = rho * q + np.sqrt(1 - rho**2) * rng.standard_normal((n, d))
    dist = np.array([0.0, 3.0, 30.0])
    scores = np.einsum("nd,tnd->tn", q, apply_rope(np.broadcast_to(k, (3, n, d)), dist[:, None]))
    se = scores.std(axis=1) / np.sqrt(n)
    assert np.all(np.abs(scores.mean(axis=1) - expected_score(dist, d, correlation=rho)) < 5 * se)


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [wavelengths, lambda d, b=10000.0: relative_upper_bound([1.0], d, b),
                                lambda d, b=10000.0: partial_sums([1.0], d, b),
                                lambda d, b=10000.0: expected_score([1.0], d, b)])
def test_bad_dim_and_base(fn):
    with pytest.raises(ValueError, match="dim"):
        fn(7)
    with pytest.raises(ValueError, match="dim"):
        fn(0)
    with pytest.raises(TypeError, match="dim"):
        fn(8.0)
    with pytest.raises(ValueError, match="base"):
        fn(8, 1.0)
    with pytest.raises(TypeError, match="base"):
        fn(8, "10000")


@pytest.mark.parametrize("fn", [relative_upper_bound, partial_sums, expected_score])
def test_bad_distance(fn):
    with pytest.raises(ValueError, match="distance"):
        fn([0.0, np.nan], 8)
    with pytest.raises(ValueError, match="distance"):
        fn(np.inf, 8)
    with pytest.raises(TypeError, match="distance"):
        fn([1j], 8)
    with pytest.raises(TypeError, match="distance"):
        fn(["a"], 8)


def test_bad_correlation():
    with pytest.raises(ValueError, match="correlation"):
        expected_score(1.0, 8, correlation=1.5)
    with pytest.raises(TypeError, match="correlation"):
        expected_score(1.0, 8, correlation="high")
    with pytest.raises(TypeError, match="correlation"):
        expected_score(1.0, 8, correlation=True)


def test_bad_pair_products():
    with pytest.raises(ValueError, match="same last dimension"):
        pair_products(np.ones(4), np.ones(6))
    with pytest.raises(ValueError, match="dim"):
        pair_products(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="q"):
        pair_products(np.ones(4, dtype=complex), np.ones(4))
    with pytest.raises(TypeError, match="k"):
        pair_products(np.ones(4), ["a"] * 4)
    with pytest.raises(ValueError, match="layout"):
        pair_products(np.ones(4), np.ones(4), layout="pairs")
    with pytest.raises(ValueError, match="broadcast"):
        pair_products(np.ones((2, 4)), np.ones((3, 4)))


@pytest.mark.parametrize("fn", [pair_score, score_upper_bound])
def test_bad_h_and_distance(fn):
    with pytest.raises(TypeError, match="h"):
        fn(["a", "b"], 0.0)
    with pytest.raises(ValueError, match="h"):
        fn(np.ones(0), 0.0)
    with pytest.raises(ValueError, match="h"):
        fn(5.0, 0.0)
    with pytest.raises(ValueError, match="h"):
        fn([1.0, np.nan], 0.0)
    with pytest.raises(ValueError, match="distance"):
        fn(np.ones((3, 4)), [0.0, 1.0])
    with pytest.raises(ValueError, match="distance"):
        fn(np.ones(4), np.nan)
    with pytest.raises(ValueError, match="base"):
        fn(np.ones(4), 1.0, base=0.5)
