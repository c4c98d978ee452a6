"""The numpy core: frequencies, apply_rope, rotation_matrix, layout_permutation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rope_edu
from rope_edu import LAYOUTS, apply_rope, frequencies, layout_permutation, rotation_matrix

LAYOUT_NAMES = sorted(LAYOUTS)
dims = st.sampled_from([2, 4, 6, 8, 16, 64])
positions = st.floats(-1e4, 1e4, allow_nan=False)
layouts = st.sampled_from(LAYOUT_NAMES)
seeds = st.integers(0, 2**32 - 1)


def rand(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


# --- frequencies -----------------------------------------------------------------------------


def test_frequencies_formula_and_endpoints():
    d, b = 128, 10000.0
    theta = frequencies(d, b)
    assert theta.shape == (d // 2,)
    np.testing.assert_allclose(theta, [b ** (-2 * i / d) for i in range(d // 2)], rtol=1e-15)
    assert theta[0] == 1.0
    np.testing.assert_allclose(theta[-1], b ** (-(d - 2) / d))
    assert np.all(np.diff(theta) < 0), "frequencies decrease with the pair index"


def test_frequencies_base():
    assert np.all(frequencies(64, 500_000.0)[1:] < frequencies(64, 10_000.0)[1:])
    np.testing.assert_allclose(frequencies(2, 3.0), [1.0])


# --- apply_rope: the maths -------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(seed=seeds, dim=dims, layout=layouts)
def test_norm_preserved(seed, dim, layout):
    x = rand(seed, 3, 5, dim)
    pos = np.random.default_rng(seed).uniform(-1000, 1000, size=5)
    y = apply_rope(x, pos, layout=layout)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)


@settings(max_examples=50, deadline=None)
@given(seed=seeds, dim=dims, layout=layouts, m=positions, n=positions)
def test_relative_property(seed, dim, layout, m, n):
    """<R_m q, R_n k> = <q, R_{n-m} k>: the score depends on positions only through n - m."""
    q, k = rand(seed, dim), rand(seed + 1, dim)
    lhs = apply_rope(q, m, layout=layout) @ apply_rope(k, n, layout=layout)
    rhs = q @ apply_rope(k, n - m, layout=layout)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-7, atol=1e-7 * np.linalg.norm(q) * np.linalg.norm(k))


@settings(max_examples=50, deadline=None)
@given(dim=dims, layout=layouts, a=positions, b=positions)
def test_composition(dim, layout, a, b):
    """R_a R_b = R_{a+b}."""
    ra = rotation_matrix(a, dim, layout=layout)
    rb = rotation_matrix(b, dim, layout=layout)
    np.testing.assert_allclose(ra @ rb, rotation_matrix(a + b, dim, layout=layout), atol=1e-9)


@settings(max_examples=50, deadline=None)
@given(seed=seeds, dim=dims, layout=layouts, m=positions)
def test_matches_rotation_matrix(seed, dim, layout, m):
    v = rand(seed, dim)
    r = rotation_matrix(m, dim, layout=layout)
    np.testing.assert_allclose(r @ v, apply_rope(v, m, layout=layout), atol=1e-12)
    np.testing.assert_allclose(r.T @ r, np.eye(dim), atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(seed=seeds, dim=dims)
def test_layout_permutation_identity(seed, dim):
    x = rand(seed, 2, 7, dim)
    pos = np.arange(7) * 3.5
    p = layout_permutation(dim)
    np.testing.assert_allclose(
        apply_rope(x[..., p], pos, layout="half"), apply_rope(x, pos, layout="interleaved")[..., p], atol=1e-12
    )
    assert sorted(p) == list(range(dim))


def test_layout_pairs():
    """interleaved turns (2i, 2i+1); half turns (i, i + d/2): check on basis vectors."""
    d, theta = 8, frequencies(8)
    for i in range(d // 2):
        e = np.zeros(d)
        e[2 * i] = 1.0
        y = apply_rope(e, 1.0, layout="interleaved")
        np.testing.assert_allclose(y[[2 * i, 2 * i + 1]], [np.cos(theta[i]), np.sin(theta[i])], atol=1e-15)
        assert np.count_nonzero(np.abs(y) > 1e-15) <= 2
        e = np.zeros(d)
        e[i] = 1.0
        y = apply_rope(e, 1.0, layout="half")
        np.testing.assert_allclose(y[[i, i + d // 2]], [np.cos(theta[i]), np.sin(theta[i])], atol=1e-15)


def test_counter_clockwise_and_complex_form():
    """A pair read as a + ib is multiplied by e^{i m theta}."""
    x = rand(0, 5, 16)
    pos = np.arange(5)
    y = apply_rope(x, pos)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * pos[:, None] * frequencies(16))
    np.testing.assert_allclose(y[..., 0::2], z.real, atol=1e-12)
    np.testing.assert_allclose(y[..., 1::2], z.imag, atol=1e-12)
    np.testing.assert_allclose(apply_rope([[1.0, 0.0]], [0.1], inv_freq=[1.0])[0, 1], np.sin(0.1))


def test_position_zero_is_identity_and_inv_freq_override():
    x = rand(1, 4, 8)
    np.testing.assert_array_equal(apply_rope(x, np.zeros(4)), x)
    np.testing.assert_allclose(apply_rope(x, np.arange(4), inv_freq=frequencies(8, 500.0)), apply_rope(x, np.arange(4), base=500.0))


def test_broadcasting_positions():
    x = rand(2, 2, 3, 5, 8)  # batch, heads, seq, dim
    per_batch = np.array([[0, 1, 2, 3, 4], [10, 11, 12, 13, 14]])[:, None, :]  # (2, 1, 5)
    y = apply_rope(x, per_batch)
    for b in range(2):
        np.testing.assert_allclose(y[b], apply_rope(x[b], per_batch[b, 0]), atol=1e-12)
    full = np.broadcast_to(per_batch, x.shape[:-1])
    for layout in LAYOUT_NAMES:
        np.testing.assert_allclose(apply_rope(x, full, layout=layout), apply_rope(x, per_batch, layout=layout), atol=1e-12)


# --- apply_rope: dtypes, shapes, no mutation ------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dtype_and_shape_kept(layout, dtype):
    x = rand(3, 2, 6, 8).astype(dtype)
    before = x.copy()
    y = apply_rope(x, np.arange(6), layout=layout)
    assert y.dtype == dtype and y.shape == x.shape
    np.testing.assert_array_equal(x, before)  # x is never modified
    ref = apply_rope(x.astype(np.float64), np.arange(6), layout=layout)
    tol = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-14}[dtype]
    np.testing.assert_allclose(y.astype(np.float64), ref, atol=tol * 10, rtol=tol)


def test_integer_input_returns_float64():
    y = apply_rope(np.arange(8).reshape(1, 8), [2])
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, apply_rope(np.arange(8.0).reshape(1, 8), [2]))


def test_non_contiguous_input():
    x = rand(0, 4, 5, 32)[:, :, ::2]  # last axis strided, dim 16
    for layout in LAYOUT_NAMES:
        np.testing.assert_allclose(apply_rope(x, np.arange(5), layout=layout), apply_rope(x.copy(), np.arange(5), layout=layout))
        xt = rand(0, 5, 4, 3, 16).swapaxes(0, 1)  # leading axes transposed
        np.testing.assert_allclose(apply_rope(xt, np.arange(3), layout=layout), apply_rope(xt.copy(), np.arange(3), layout=layout))


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
def test_empty_inputs(layout):
    assert apply_rope(np.zeros((0, 8)), np.zeros(0), layout=layout).shape == (0, 8)
    assert apply_rope(np.zeros((3, 0, 8), np.float32), np.zeros(0), layout=layout).dtype == np.float32


def test_large_input_matches_small_blocks():
    """The half-split kernel works block by block: check a size spanning several blocks."""
    x = rand(5, 3, 700, 64).astype(np.float32)
    pos = np.arange(700)
    y = apply_rope(x, pos, layout="half")
    for h in range(3):
        np.testing.assert_allclose(y[h], apply_rope(x[h].astype(np.float64), pos, layout="half"), atol=1e-4)


def plain_formula(x: np.ndarray, positions, layout: str) -> np.ndarray:
    """The rotation written out directly: float64 angles and cos/sin, rounded once to x's dtype."""
    a, b = LAYOUTS[layout].pairs(x.shape[-1])
    ang = np.asarray(positions, dtype=np.float64)[..., None] * frequencies(x.shape[-1])
    cos, sin = np.cos(ang).astype(x.dtype), np.sin(ang).astype(x.dtype)
    out = np.empty(x.shape, x.dtype)
    out[..., a] = x[..., a] * cos - x[..., b] * sin
    out[..., b] = x[..., b] * cos + x[..., a] * sin
    return out


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
def test_apply_rope_equals_the_plain_formula(layout):
    """The formula written out here (float64 angles and cos/sin, rounded once to x's dtype): bit for
    bit for the half layout; within one rounding for the interleaved one (numpy's complex multiply
    may fuse a multiply and an add). Block sizes and table sharing: tests/test_kernels.py."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 37, 16)).astype(np.float32)
    pos = rng.integers(0, 5000, (2, 1, 37))
    got, want = apply_rope(x, pos, layout=layout), plain_formula(x, pos, layout)
    if layout == "half":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=2 * np.finfo(np.float32).eps * np.abs(x).max())


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dim, exc, match",
    [(7, ValueError, "dim must be a positive even integer"), (0, ValueError, "dim"), (-4, ValueError, "dim"),
     (8.0, TypeError, "dim"), ("8", TypeError, "dim"), (True, TypeError, "dim")],
)
def test_bad_dim(dim, exc, match):
    with pytest.raises(exc, match=match):
        frequencies(dim)
    with pytest.raises(exc, match=match):
        rotation_matrix(1, dim)
    with pytest.raises(exc, match=match):
        layout_permutation(dim)


@pytest.mark.parametrize(
    "base, exc", [(1.0, ValueError), (0.5, ValueError), (-10, ValueError), (float("inf"), ValueError),
                  (float("nan"), ValueError), ("10000", TypeError), (None, TypeError), (1 + 2j, TypeError)],
)
def test_bad_base(base, exc):
    with pytest.raises(exc, match="base must be a finite real number > 1"):
        frequencies(8, base)
    with pytest.raises(exc, match="base"):
        apply_rope(np.ones((2, 8)), [0, 1], base=base)


def test_odd_dimension_of_x():
    with pytest.raises(ValueError, match=r"x.shape\[-1\] \(dim\) must be a positive even integer.*got 7"):
        apply_rope(np.ones((3, 7)), np.arange(3))


def test_bad_x():
    with pytest.raises(TypeError, match="x must be a real-valued"):
        apply_rope(np.ones((2, 4), complex), [0, 1])
    with pytest.raises(TypeError, match="x must be a real-valued"):
        apply_rope(np.array([["a", "b"]]), [0])
    with pytest.raises(ValueError, match="x must have at least 1 axis"):
        apply_rope(np.float64(3.0), 0)


@pytest.mark.parametrize(
    "pos, exc, match",
    [(np.arange(4), ValueError, r"positions of shape \(4,\) does not broadcast to x.shape\[:-1\] = \(2, 3\)"),
     (np.zeros((3, 2)), ValueError, "does not broadcast"),
     (["a", "b", "c"], TypeError, "positions must be integers or real numbers"),
     (np.array([0, 1, 2j]), TypeError, "positions"),
     (np.array([True, False, True]), TypeError, "positions"),
     ([0, np.nan, 1], ValueError, "positions must be finite"),
     ([0, np.inf, 1], ValueError, "positions must be finite")],
)
def test_bad_positions(pos, exc, match):
    with pytest.raises(exc, match=match):
        apply_rope(np.ones((2, 3, 8)), pos)


def test_bad_layout():
    with pytest.raises(ValueError, match=r"unknown layout 'neox'; expected one of 'interleaved', 'half'"):
        apply_rope(np.ones((2, 8)), [0, 1], layout="neox")
    with pytest.raises(ValueError, match="layout"):
        rotation_matrix(0, 8, layout=None)


def test_bad_inv_freq():
    with pytest.raises(ValueError, match=r"inv_freq must have shape \(dim // 2,\) = \(4,\).*got shape \(3,\)"):
        apply_rope(np.ones((2, 8)), [0, 1], inv_freq=np.ones(3))
    with pytest.raises(ValueError, match="inv_freq must be finite"):
        apply_rope(np.ones((2, 8)), [0, 1], inv_freq=[1, 2, np.nan, 3])
    with pytest.raises(TypeError, match="inv_freq must be a real-valued"):
        apply_rope(np.ones((2, 8)), [0, 1], inv_freq=["a"] * 4)


def test_rotation_matrix_bad_position():
    with pytest.raises(ValueError, match="position"):
        rotation_matrix([1, 2], 4)
    with pytest.raises(ValueError, match="position must be finite"):
        rotation_matrix(np.nan, 4)


def test_public_names():
    for name in ["frequencies", "apply_rope", "rotation_matrix", "layout_permutation", "LAYOUTS"]:
        assert hasattr(rope_edu, name)
    assert set(LAYOUTS) == {"interleaved", "half"}
