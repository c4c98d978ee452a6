"""Absolute encodings (chapter 2): the four tables, the sinusoidal shift matrix, the logit terms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rope_edu
from rope_edu import (
    ENCODINGS,
    additive_logit_terms,
    binary_encoding,
    frequencies,
    integer_encoding,
    learned_encoding,
    normalised_encoding,
    rotation_matrix,
    shift_matrix,
    sinusoidal_at,
    sinusoidal_encoding,
)

dims = st.sampled_from([2, 4, 8, 16, 64])
bases = st.sampled_from([10.0, 100.0, 10000.0, 500000.0])
shifts = st.integers(-300, 300)


# --- the sinusoidal table --------------------------------------------------------------------


def test_sinusoidal_matches_vaswani_formula_elementwise():
    """PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d)), written out."""
    n, d = 20, 10
    pe = sinusoidal_encoding(n, d)
    assert pe.shape == (n, d) and pe.dtype == np.float64
    for p in range(n):
        for i in range(d // 2):
            assert pe[p, 2 * i] == pytest.approx(np.sin(p / 10000 ** (2 * i / d)), abs=1e-12)
            assert pe[p, 2 * i + 1] == pytest.approx(np.cos(p / 10000 ** (2 * i / d)), abs=1e-12)


def test_sinusoidal_uses_the_book_frequencies_and_base():
    pe = sinusoidal_encoding(7, 8, base=50.0)
    theta = frequencies(8, 50.0)
    p = np.arange(7)[:, None]
    np.testing.assert_allclose(pe[:, 0::2], np.sin(p * theta), atol=1e-15)
    np.testing.assert_allclose(pe[:, 1::2], np.cos(p * theta), atol=1e-15)


def test_sinusoidal_row_zero_bounded_and_norm():
    pe = sinusoidal_encoding(500, 32)
    np.testing.assert_array_equal(pe[0, 0::2], 0.0)
    np.testing.assert_array_equal(pe[0, 1::2], 1.0)
    assert np.abs(pe).max() <= 1.0
    np.testing.assert_allclose(np.sum(pe**2, axis=1), 32 / 2, rtol=1e-12)


def test_sinusoidal_rows_distinct_and_constant_step():
    pe = sinusoidal_encoding(300, 16)
    gram = np.sum((pe[:, None, :] - pe[None, :, :]) ** 2, axis=-1)
    np.fill_diagonal(gram, np.inf)
    assert gram.min() > 1e-3, "every position has its own code"
    step = np.linalg.norm(np.diff(pe, axis=0), axis=1)
    expected = np.sqrt(np.sum(4 * np.sin(frequencies(16) / 2) ** 2))
    np.testing.assert_allclose(step, expected, rtol=1e-10)


def test_sinusoidal_at_agrees_with_table_and_takes_any_shape():
    d = 12
    table = sinusoidal_encoding(40, d, base=30.0)
    np.testing.assert_allclose(sinusoidal_at(np.arange(40), d, 30.0), table, atol=0)
    grid = np.arange(40).reshape(5, 8)
    assert sinusoidal_at(grid, d, 30.0).shape == (5, 8, d)
    np.testing.assert_allclose(sinusoidal_at(grid, d, 30.0).reshape(40, d), table)
    np.testing.assert_allclose(sinusoidal_at(3, d, 30.0), table[3])
    # negative and fractional positions follow the same formula
    neg = sinusoidal_at(-2.5, d, 30.0)
    np.testing.assert_allclose(neg[0::2], np.sin(-2.5 * frequencies(d, 30.0)))
    np.testing.assert_allclose(neg[1::2], np.cos(-2.5 * frequencies(d, 30.0)))


def test_empty_tables():
    assert sinusoidal_encoding(0, 4).shape == (0, 4)
    assert integer_encoding(0).shape == (0, 1)
    assert normalised_encoding(0, 3).shape == (0, 3)
    assert binary_encoding(0).shape == (0, 1)


# --- the shift matrix ------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(dim=dims, base=bases, k=shifts)
def test_shift_matrix_moves_every_row_by_k(dim, base, k):
    """PE(p + k) = M(k) PE(p) for every p, with one matrix."""
    n = 400
    pe = sinusoidal_encoding(n, dim, base)
    p = np.arange(max(0, -k), n - max(0, k))
    np.testing.assert_allclose(pe[p] @ shift_matrix(k, dim, base).T, pe[p + k], atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(dim=dims, base=bases, k=st.floats(-1e3, 1e3), p=st.floats(-1e3, 1e3))
def test_shift_matrix_real_shifts(dim, base, k, p):
    np.testing.assert_allclose(
        shift_matrix(k, dim, base) @ sinusoidal_at(p, dim, base), sinusoidal_at(p + k, dim, base), atol=1e-9
    )


def test_shift_matrix_blocks_written_out():
    """The 2x2 block of pair i is [[cos kθ, sin kθ], [-sin kθ, cos kθ]]: the sign the book uses."""
    k, d = 3.0, 6
    m = shift_matrix(k, d)
    for i, theta in enumerate(frequencies(d)):
        c, s = np.cos(k * theta), np.sin(k * theta)
        np.testing.assert_allclose(m[2 * i: 2 * i + 2, 2 * i: 2 * i + 2], [[c, s], [-s, c]])
    off = m.copy()
    for i in range(d // 2):
        off[2 * i: 2 * i + 2, 2 * i: 2 * i + 2] = 0
    np.testing.assert_array_equal(off, 0.0)


def test_wrong_sign_fails():
    """The counter-clockwise block [[c, -s], [s, c]] (a common mistake) does not shift the table."""
    k, d = 5, 8
    pe = sinusoidal_encoding(50, d)
    wrong = shift_matrix(k, d).T
    assert np.abs(pe[:-k] @ wrong.T - pe[k:]).max() > 0.5


@settings(max_examples=40, deadline=None)
@given(dim=dims, base=bases, k=st.floats(-1e3, 1e3))
def test_shift_matrix_is_rope_rotation_turned_back(dim, base, k):
    """M(k) = R_{-k} = R_k^T: clockwise, the opposite of RoPE's counter-clockwise R_k."""
    m = shift_matrix(k, dim, base)
    np.testing.assert_allclose(m, rotation_matrix(-k, dim, base=base), atol=1e-12)
    np.testing.assert_allclose(m, rotation_matrix(k, dim, base=base).T, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(dim=dims, base=bases, a=shifts, b=shifts)
def test_shift_matrix_group_laws(dim, base, a, b):
    ma, mb = shift_matrix(a, dim, base), shift_matrix(b, dim, base)
    np.testing.assert_allclose(ma @ mb, shift_matrix(a + b, dim, base), atol=1e-9)
    np.testing.assert_allclose(ma.T @ ma, np.eye(dim), atol=1e-12)
    np.testing.assert_allclose(shift_matrix(-a, dim, base), ma.T, atol=1e-12)
    np.testing.assert_array_equal(shift_matrix(0, dim, base), np.eye(dim))


def test_shift_matrix_is_the_least_squares_fit():
    """Fitting PE(p+1) ≈ M PE(p) over the table recovers shift_matrix(1) with zero residual."""
    d = 8
    pe = sinusoidal_encoding(200, d, base=100.0)
    sol, res, rank, _ = np.linalg.lstsq(pe[:-1], pe[1:], rcond=None)
    assert rank == d
    np.testing.assert_allclose(sol.T, shift_matrix(1, d, 100.0), atol=1e-9)


def test_dot_product_depends_on_k_only_and_is_symmetric():
    d = 32
    pe = sinusoidal_encoding(300, d)
    theta = frequencies(d)
    for k in (0, 1, 7, 50, 120):
        dots = np.sum(pe[: 300 - k] * pe[k:], axis=1)
        np.testing.assert_allclose(dots, np.sum(np.cos(k * theta)), atol=1e-9)
    p = sinusoidal_at(np.arange(100, 200), d)
    for k in (3, 40):
        fwd = np.sum(p * sinusoidal_at(np.arange(100, 200) + k, d), axis=1)
        back = np.sum(p * sinusoidal_at(np.arange(100, 200) - k, d), axis=1)
        np.testing.assert_allclose(fwd, back, atol=1e-9)


# --- integer, normalised, binary -------------------------------------------------------------


def test_integer_and_normalised():
    np.testing.assert_array_equal(integer_encoding(5, 3), np.repeat(np.arange(5.0)[:, None], 3, axis=1))
    np.testing.assert_allclose(normalised_encoding(5)[:, 0], [0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(normalised_encoding(1), [[0.0]])
    # the same position gets different codes in sequences of different lengths
    assert normalised_encoding(5)[3, 0] != normalised_encoding(10)[3, 0]
    assert integer_encoding(1000)[-1, 0] == 999.0


def test_binary_bits_and_uniqueness():
    b = binary_encoding(16)
    assert b.shape == (16, 4)
    np.testing.assert_array_equal(b[5], [1, 0, 1, 0])  # 5 = 0b0101, least significant first
    np.testing.assert_array_equal(b @ (2 ** np.arange(4)), np.arange(16))
    assert len({tuple(r) for r in b}) == 16
    assert binary_encoding(17).shape == (17, 5)
    assert binary_encoding(1).shape == (1, 1)
    assert binary_encoding(2).shape == (2, 1)
    assert binary_encoding(3, n_bits=8).shape == (3, 8)


def test_binary_is_a_square_wave_of_the_sinusoid():
    """bit j of p is 1 exactly when sin(π(2p+1)/2^(j+1)) < 0."""
    b = binary_encoding(256, 8)
    p = np.arange(256)[:, None]
    j = np.arange(8)[None, :]
    np.testing.assert_array_equal(b, (np.sin(np.pi * (2 * p + 1) / 2.0 ** (j + 1)) < 0).astype(float))


def test_binary_has_no_affine_shift_map():
    """No (M, c) gives b(p+1) = M b(p) + c for every p: the least-squares residual is not zero."""
    b = binary_encoding(64, 6)
    x = np.hstack([b[:-1], np.ones((63, 1))])
    sol, *_ = np.linalg.lstsq(x, b[1:], rcond=None)
    assert np.abs(x @ sol - b[1:]).max() > 0.1


def test_registry():
    assert list(ENCODINGS) == ["integer", "normalised", "binary", "learned", "sinusoidal"]
    for name, enc in ENCODINGS.items():
        assert enc.name == name
        table = enc.table(16, 4)
        assert table.shape == (16, 4)
        assert (enc.problem == "") == (name == "sinusoidal")
        assert (enc.max_positions is not None) == (name == "learned")
    limit = ENCODINGS["learned"].max_positions
    assert ENCODINGS["learned"].table(limit, 4).shape == (limit, 4)
    with pytest.raises(ValueError, match="max_positions"):
        ENCODINGS["learned"].table(limit + 1, 4)
    np.testing.assert_array_equal(ENCODINGS["sinusoidal"].table(16, 4), sinusoidal_encoding(16, 4))


def test_learned_table_is_one_fixed_table_with_a_hard_limit():
    full = learned_encoding(1024, 6, max_positions=1024)
    assert full.shape == (1024, 6) and full.dtype == np.float64
    np.testing.assert_array_equal(learned_encoding(100, 6, max_positions=1024), full[:100])
    np.testing.assert_array_equal(learned_encoding(1024, 6, max_positions=1024, seed=0), full)
    assert not np.array_equal(learned_encoding(1024, 6, max_positions=1024, seed=1), full)
    assert len(np.unique(full, axis=0)) == 1024 and 0.015 < full.std() < 0.025
    assert learned_encoding(0, 3).shape == (0, 3)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_positions": 513, "dim": 4}, ValueError, "max_positions"),
        ({"n_positions": -1, "dim": 4}, ValueError, "n_positions"),
        ({"n_positions": 2.0, "dim": 4}, TypeError, "n_positions"),
        ({"n_positions": 4, "dim": 0}, ValueError, "dim"),
        ({"n_positions": 4, "dim": "4"}, TypeError, "dim"),
        ({"n_positions": 4, "dim": 4, "max_positions": 0}, ValueError, "max_positions"),
        ({"n_positions": 4, "dim": 4, "seed": -1}, ValueError, "seed"),
        ({"n_positions": 4, "dim": 4, "seed": 0.5}, TypeError, "seed"),
    ],
)
def test_learned_rejects_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        learned_encoding(**kwargs)


def test_exported():
    for name in ("sinusoidal_encoding", "sinusoidal_at", "integer_encoding", "learned_encoding",
                 "normalised_encoding", "binary_encoding", "shift_matrix", "additive_logit_terms", "ENCODINGS"):
        assert name in rope_edu.__all__


# --- the four terms of an additive logit -----------------------------------------------------


def _weights(seed=0, d_head=4, d_model=8):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((d_head, d_model)), rng.standard_normal((d_head, d_model))


def test_logit_terms_sum_to_the_full_logit():
    rng = np.random.default_rng(1)
    w_q, w_k = _weights()
    x_q, x_k = rng.standard_normal((2, 10, 8))
    pe = sinusoidal_encoding(30, 8)
    t = additive_logit_terms(x_q, x_k, pe[:10], pe[20:], w_q, w_k)
    full = np.einsum("nd,nd->n", (x_q + pe[:10]) @ w_q.T, (x_k + pe[20:]) @ w_k.T)
    np.testing.assert_allclose(t["total"], full, rtol=1e-12)
    parts = t["content"] + t["content_position"] + t["position_content"] + t["position"]
    np.testing.assert_allclose(parts, full, rtol=1e-10, atol=1e-10)
    a = w_q.T @ w_k
    np.testing.assert_allclose(t["content_position"], np.einsum("nd,de,ne->n", x_q, a, pe[20:]))
    np.testing.assert_allclose(t["position_content"], np.einsum("nd,de,ne->n", pe[:10], a, x_k))


def test_logit_terms_all_have_the_broadcast_shape():
    w_q, w_k = _weights()
    x = np.ones(8)
    t = additive_logit_terms(x, x, sinusoidal_encoding(5, 8), sinusoidal_encoding(5, 8), w_q, w_k)
    assert {v.shape for v in t.values()} == {(5,)}
    np.testing.assert_allclose(t["content"], t["content"][0])


def test_logit_terms_broadcast_to_a_score_matrix():
    rng = np.random.default_rng(2)
    w_q, w_k = _weights()
    x = rng.standard_normal((6, 8))
    pe = sinusoidal_encoding(6, 8)
    t = additive_logit_terms(x[:, None], x[None, :], pe[:, None], pe[None, :], w_q, w_k)
    h = x + pe
    np.testing.assert_allclose(t["total"], (h @ w_q.T) @ (h @ w_k.T).T, rtol=1e-12)


def test_absolute_position_leaks_into_cross_terms():
    """Shift both positions by s: content stays, the cross terms and (for a generic A) the
    position-position term change; with A = I the position term depends on m - n only."""
    rng = np.random.default_rng(3)
    w_q, w_k = _weights(d_head=8)
    x_q, x_k = rng.standard_normal((2, 8))
    m, n, s = 4, 9, 25
    before = additive_logit_terms(x_q, x_k, sinusoidal_at(m, 8), sinusoidal_at(n, 8), w_q, w_k)
    after = additive_logit_terms(x_q, x_k, sinusoidal_at(m + s, 8), sinusoidal_at(n + s, 8), w_q, w_k)
    assert before["content"] == pytest.approx(after["content"], rel=1e-12)
    for key in ("content_position", "position_content", "position", "total"):
        assert abs(before[key] - after[key]) > 1e-3, key
    eye = np.eye(8)
    b = additive_logit_terms(x_q, x_k, sinusoidal_at(m, 8), sinusoidal_at(n, 8), eye, eye)
    a = additive_logit_terms(x_q, x_k, sinusoidal_at(m + s, 8), sinusoidal_at(n + s, 8), eye, eye)
    assert b["position"] == pytest.approx(a["position"], rel=1e-12)


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [integer_encoding, normalised_encoding, binary_encoding])
@pytest.mark.parametrize("n,exc", [(-1, ValueError), (2.0, TypeError), (True, TypeError), ("3", TypeError)])
def test_bad_n_positions_simple(fn, n, exc):
    with pytest.raises(exc, match="n_positions"):
        fn(n)


@pytest.mark.parametrize("n,exc", [(-1, ValueError), (2.5, TypeError), (None, TypeError)])
def test_bad_n_positions_sinusoidal(n, exc):
    with pytest.raises(exc, match="n_positions"):
        sinusoidal_encoding(n, 4)


@pytest.mark.parametrize("dim,exc", [(3, ValueError), (0, ValueError), (-2, ValueError), (4.0, TypeError)])
def test_bad_dim(dim, exc):
    with pytest.raises(exc, match="dim"):
        sinusoidal_encoding(4, dim)
    with pytest.raises(exc, match="dim"):
        shift_matrix(1, dim)
    with pytest.raises(exc, match="dim"):
        sinusoidal_at([0, 1], dim)


@pytest.mark.parametrize("fn", [integer_encoding, normalised_encoding])
def test_bad_dim_simple(fn):
    with pytest.raises(ValueError, match="dim"):
        fn(3, 0)
    with pytest.raises(TypeError, match="dim"):
        fn(3, 1.5)


@pytest.mark.parametrize("base,exc", [(1.0, ValueError), (0.5, ValueError), (float("inf"), ValueError), ("10", TypeError)])
def test_bad_base(base, exc):
    with pytest.raises(exc, match="base"):
        sinusoidal_encoding(4, 4, base)
    with pytest.raises(exc, match="base"):
        shift_matrix(1, 4, base)


def test_bad_n_bits():
    with pytest.raises(ValueError, match="n_bits"):
        binary_encoding(9, n_bits=3)
    with pytest.raises(ValueError, match="n_bits"):
        binary_encoding(1, n_bits=0)
    with pytest.raises(TypeError, match="n_bits"):
        binary_encoding(4, n_bits=2.0)


@pytest.mark.parametrize("k,exc", [(float("nan"), ValueError), (float("inf"), ValueError), ("1", TypeError),
                                   (True, TypeError), (np.array([1, 2]), TypeError)])
def test_bad_shift(k, exc):
    with pytest.raises(exc, match="k"):
        shift_matrix(k, 4)


def test_bad_positions_for_sinusoidal_at():
    with pytest.raises(ValueError, match="positions"):
        sinusoidal_at([0.0, np.nan], 4)
    with pytest.raises(TypeError, match="positions"):
        sinusoidal_at(np.array([1 + 1j]), 4)
    with pytest.raises(TypeError, match="positions"):
        sinusoidal_at([True, False], 4)


def test_bad_logit_inputs():
    w_q, w_k = _weights()
    x = np.zeros(8)
    with pytest.raises(ValueError, match="x_k"):
        additive_logit_terms(x, np.zeros(7), x, x, w_q, w_k)
    with pytest.raises(ValueError, match="w_q and w_k"):
        additive_logit_terms(x, x, x, x, w_q, w_k[:3])
    with pytest.raises(ValueError, match="w_q"):
        additive_logit_terms(x, x, x, x, np.zeros((2, 4, 8)), w_k)
    with pytest.raises(ValueError, match="w_k"):
        additive_logit_terms(x, x, x, x, w_q, np.zeros(8))
    with pytest.raises(TypeError, match="pe_q"):
        additive_logit_terms(x, x, x.astype(complex), x, w_q, w_k)
    with pytest.raises(ValueError, match="broadcast"):
        additive_logit_terms(np.zeros((3, 8)), np.zeros((4, 8)), x, x, w_q, w_k)


# --- shift_gap: the shift test of chapter 3 ---------------------------------------------------


def test_shift_gap_is_zero_for_rotations_and_positive_for_an_additive_table():
    from rope_edu import apply_rope, shift_gap

    def rope(x, pos):
        return apply_rope(x, pos, inv_freq=[0.3])

    def additive(x, pos):
        return x + np.stack([np.sin(0.3 * pos), np.cos(0.3 * pos)], axis=-1)

    assert shift_gap(rope, rope) < 1e-12
    assert shift_gap(additive, additive) > 0.5
    assert shift_gap(additive, additive, seed=1) == shift_gap(additive, additive)
    assert shift_gap(additive, additive, max_position=0) == 0.0   # no shift drawn: nothing moves


def test_shift_gap_matches_the_definition_by_hand():
    from rope_edu import shift_gap

    def scaled(x, pos):
        return (1 + pos[:, None] / 10) * x

    r = np.random.default_rng(4)
    q, k = r.normal(size=(2, 20, 2))
    m, n, s = r.integers(-5, 6, size=(3, 20))
    by_hand = np.max(np.abs(np.sum(scaled(q, m + s) * scaled(k, n + s), -1) - np.sum(scaled(q, m) * scaled(k, n), -1)))
    assert shift_gap(scaled, scaled, trials=20, seed=4, max_position=5) == pytest.approx(by_hand, rel=1e-12)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"f_q": 3}, TypeError, "f_q"),
    ({"f_k": None}, TypeError, "f_k"),
    ({"trials": 0}, ValueError, "trials"),
    ({"trials": 2.5}, TypeError, "trials"),
    ({"seed": -1}, ValueError, "seed"),
    ({"max_position": -1}, ValueError, "max_position"),
    ({"f_q": lambda x, p: x[:, :1]}, ValueError, "f_q must return"),
])
def test_shift_gap_rejects_bad_arguments(kwargs, error, match):
    from rope_edu import shift_gap

    args = {"f_q": lambda x, p: x, "f_k": lambda x, p: x, **kwargs}
    with pytest.raises(error, match=match):
        shift_gap(args.pop("f_q"), args.pop("f_k"), **args)
