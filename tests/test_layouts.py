"""Chapter 6 package code: rope_edu.layouts (implementations, tables, weight conversion, the check)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rope_edu
from rope_edu import (
    apply_rope,
    buggy_rope_mixed_layouts,
    check_rotation,
    cos_sin_table,
    dense_rope,
    freqs_cis,
    frequencies,
    half_to_interleaved,
    interleaved_to_half,
    is_rope_consistent,
    layout_permutation,
    rope_complex,
    rope_from_table,
    rope_half_split,
    rope_rotate_half,
    rotate_every_two,
    rotate_half,
    rotation_matrix,
    time_implementations,
)
from rope_edu.layouts import TABLE_LAYOUTS

FAST = settings(max_examples=40, deadline=None)
seeds = st.integers(0, 2**32 - 1)
dims = st.sampled_from([2, 4, 6, 8, 16, 64])
big_dims = st.sampled_from([4, 6, 8, 16, 64])


def rand(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


# --- the three implementations agree with apply_rope ----------------------------------------


@FAST
@given(seed=seeds, dim=dims)
def test_complex_form_equals_interleaved_apply_rope(seed, dim):
    x = rand(seed, 2, 3, 7, dim)
    pos = np.random.default_rng(seed).uniform(-5000, 5000, 7)
    np.testing.assert_allclose(rope_complex(x, pos), apply_rope(x, pos, layout="interleaved"), atol=1e-12)


def test_complex_form_by_hand_dim_2():
    # (1, 0) read as 1 + 0i, times e^{i pi/2} = i: (0, 1), a counter-clockwise quarter turn.
    np.testing.assert_allclose(rope_complex([[1.0, 0.0]], [1], inv_freq=[np.pi / 2]), [[0.0, 1.0]], atol=1e-15)
    np.testing.assert_allclose(rope_complex([[1.0, 0.0, 0.0, 1.0]], [2], base=4.0),
                               [[np.cos(2), np.sin(2), -np.sin(1), np.cos(1)]], atol=1e-15)


@FAST
@given(seed=seeds, dim=dims)
def test_freqs_cis_is_unit_complex_at_the_rope_angles(seed, dim):
    pos = np.random.default_rng(seed).uniform(-100, 100, (3, 4))
    z = freqs_cis(pos, dim, base=500.0)
    assert z.shape == (3, 4, dim // 2) and z.dtype == np.complex128
    np.testing.assert_allclose(np.abs(z), 1.0, rtol=1e-14)
    np.testing.assert_allclose(z, np.exp(1j * pos[..., None] * frequencies(dim, 500.0)))


@FAST
@given(seed=seeds, dim=dims)
def test_rotate_half_style_equals_half_apply_rope(seed, dim):
    x = rand(seed, 4, 6, dim)
    pos = np.random.default_rng(seed).uniform(-5000, 5000, 6)
    cos, sin = cos_sin_table(pos, dim, layout="half")
    np.testing.assert_allclose(rope_rotate_half(x, cos, sin), apply_rope(x, pos, layout="half"), atol=1e-12)
    np.testing.assert_allclose(rope_half_split(x, pos), apply_rope(x, pos, layout="half"), atol=1e-12)


@FAST
@given(seed=seeds, dim=dims)
def test_rotate_every_two_style_equals_interleaved_apply_rope(seed, dim):
    x = rand(seed, 6, dim)
    pos = np.arange(6) * 37.0
    cos, sin = cos_sin_table(pos, dim, layout="interleaved")
    out = rope_from_table(x, cos, sin, layout="interleaved")
    np.testing.assert_allclose(out, apply_rope(x, pos, layout="interleaved"), atol=1e-12)


@FAST
@given(seed=seeds, dim=st.sampled_from([2, 4, 8, 16]), layout=st.sampled_from(["interleaved", "half"]))
def test_dense_equals_rotation_matrix_and_apply_rope(seed, dim, layout):
    x = rand(seed, 2, 5, dim)
    pos = np.random.default_rng(seed).uniform(-1000, 1000, 5)
    out = dense_rope(x, pos, layout=layout)
    np.testing.assert_allclose(out, apply_rope(x, pos, layout=layout), atol=1e-12)
    for t in range(5):
        np.testing.assert_allclose(out[:, t], x[:, t] @ rotation_matrix(pos[t], dim, layout=layout).T, atol=1e-12)


def test_implementations_keep_dtype_and_do_not_modify_input():
    x32 = rand(0, 3, 8).astype(np.float32)
    before = x32.copy()
    cos, sin = cos_sin_table(np.arange(3), 8)
    for out in (rope_complex(x32, np.arange(3)), rope_rotate_half(x32, cos, sin), dense_rope(x32, np.arange(3)),
                rope_half_split(x32, np.arange(3)), buggy_rope_mixed_layouts(x32, np.arange(3))):
        assert out.dtype == np.float32 and out.shape == x32.shape
    np.testing.assert_array_equal(x32, before)
    assert rope_complex(np.ones((2, 4), dtype=int), [0, 1]).dtype == np.float64


def test_implementations_accept_leading_axes_and_scalar_position():
    x = rand(1, 2, 3, 4, 8)
    for fn in (rope_complex, rope_half_split, dense_rope):
        assert fn(x, np.arange(4)).shape == x.shape
        np.testing.assert_allclose(fn(x[0, 0, 0], 3.0), fn(x[0, 0, :1], [3.0])[0], atol=1e-12)


# --- rotate_half, rotate_every_two and the tables --------------------------------------------


def test_rotate_half_pairs_i_with_i_plus_half_not_neighbours():
    x = np.arange(1.0, 9.0)  # 1..8
    np.testing.assert_array_equal(rotate_half(x), [-5, -6, -7, -8, 1, 2, 3, 4])
    np.testing.assert_array_equal(rotate_every_two(x), [-2, 1, -4, 3, -6, 5, -8, 7])
    # rotate_half moves coordinate j to j ± d/2: the basis vector e_1 lands on e_5, not e_0.
    e1 = np.eye(8)[1]
    np.testing.assert_array_equal(np.flatnonzero(rotate_half(e1)), [5])
    np.testing.assert_array_equal(np.flatnonzero(rotate_every_two(e1)), [0])


def test_partners_negate_unsigned_integers_exactly():
    x = np.array([1, 2, 3, 4], dtype=np.uint8)
    np.testing.assert_array_equal(rotate_half(x), [-3, -4, 1, 2])
    np.testing.assert_array_equal(rotate_every_two(x), [-2, 1, -4, 3])


@FAST
@given(seed=seeds, dim=dims)
def test_partners_are_quarter_turns(seed, dim):
    x = rand(seed, 3, dim)
    for layout, partner in (("half", rotate_half), ("interleaved", rotate_every_two)):
        np.testing.assert_allclose(partner(x), apply_rope(x, 1.0, layout=layout, inv_freq=np.full(dim // 2, np.pi / 2)),
                                   atol=1e-12)
        np.testing.assert_allclose(partner(partner(x)), -x)


def test_cos_sin_table_orders():
    pos = np.array([0.0, 1.0, 3.0])
    theta = frequencies(8)
    cos_i, sin_i = cos_sin_table(pos, 8, layout="interleaved")
    cos_h, sin_h = cos_sin_table(pos, 8, layout="half")
    assert cos_i.shape == cos_h.shape == (3, 8)
    np.testing.assert_allclose(cos_i[2], np.cos(3 * np.array([theta[0], theta[0], theta[1], theta[1],
                                                              theta[2], theta[2], theta[3], theta[3]])))
    np.testing.assert_allclose(sin_h[2], np.sin(3 * np.concatenate([theta, theta])))
    np.testing.assert_array_equal(cos_i[0], 1.0)
    np.testing.assert_array_equal(sin_h[0], 0.0)
    # the two tables hold the same numbers, in the order of layout_permutation
    P = layout_permutation(8)
    np.testing.assert_allclose(cos_i[..., P], cos_h)
    np.testing.assert_allclose(sin_i[..., P], sin_h)
    # inv_freq and base are honoured
    np.testing.assert_allclose(cos_sin_table([2.0], 4, layout="half", inv_freq=[0.5, 0.25])[0],
                               np.cos([[1.0, 0.5, 1.0, 0.5]]))
    np.testing.assert_allclose(cos_sin_table([1.0], 4, base=100.0, layout="half")[1], np.sin([[1, 0.1, 1, 0.1]]))


@pytest.mark.parametrize("layout", sorted(TABLE_LAYOUTS))
def test_freq_index_matches_the_table(layout):
    cos, _ = cos_sin_table([1.0], 8, layout=layout)
    np.testing.assert_allclose(cos[0], np.cos(frequencies(8)[TABLE_LAYOUTS[layout].freq_index(8)]))


# --- layouts differ by the permutation P -----------------------------------------------------


@FAST
@given(seed=seeds, dim=dims)
def test_half_matrix_is_permuted_interleaved_matrix(seed, dim):
    m = np.random.default_rng(seed).uniform(-1000, 1000)
    Pi = np.eye(dim)[layout_permutation(dim)]  # (Pi x)_j = x_{P[j]}
    np.testing.assert_allclose(rotation_matrix(m, dim, layout="half"), Pi @ rotation_matrix(m, dim) @ Pi.T, atol=1e-14)


# --- converting weights: a small random attention layer --------------------------------------


def per_head_scores(x, wq, wk, n_heads, layout, positions):
    """Scores <R_m q_m, R_n k_n> for every head: shape (n_heads, seq, seq)."""
    seq = x.shape[0]
    q = (x @ wq.T).reshape(seq, n_heads, -1).transpose(1, 0, 2)  # (heads, seq, head_dim)
    k = (x @ wk.T).reshape(seq, n_heads, -1).transpose(1, 0, 2)
    q = apply_rope(q, positions, layout=layout)
    k = apply_rope(k, positions, layout=layout)
    return q @ k.transpose(0, 2, 1)


@FAST
@given(seed=seeds, n_heads=st.sampled_from([1, 2, 3, 4]), head_dim=st.sampled_from([2, 4, 8, 16]))
def test_converted_weights_give_identical_scores_under_half_layout(seed, n_heads, head_dim):
    rng = np.random.default_rng(seed)
    d_model, seq = 12, 9
    x = rng.standard_normal((seq, d_model))
    wq = rng.standard_normal((n_heads * head_dim, d_model))
    wk = rng.standard_normal((n_heads * head_dim, d_model))
    pos = rng.integers(0, 4000, seq)
    reference = per_head_scores(x, wq, wk, n_heads, "interleaved", pos)
    converted = per_head_scores(x, interleaved_to_half(wq, n_heads), interleaved_to_half(wk, n_heads),
                                n_heads, "half", pos)
    np.testing.assert_allclose(converted, reference, atol=1e-9 * np.abs(reference).max())
    # the same weights without conversion give different scores (d >= 4: the layouts differ)
    if head_dim >= 4:
        unconverted = per_head_scores(x, wq, wk, n_heads, "half", pos)
        assert np.abs(unconverted - reference).max() > 1e-3


@FAST
@given(seed=seeds, n_heads=st.sampled_from([1, 2, 4]), head_dim=st.sampled_from([2, 4, 8]))
def test_converted_q_is_the_permuted_q(seed, n_heads, head_dim):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((5, 6))
    wq = rng.standard_normal((n_heads * head_dim, 6))
    q = (x @ wq.T).reshape(5, n_heads, head_dim)
    q_conv = (x @ interleaved_to_half(wq, n_heads).T).reshape(5, n_heads, head_dim)
    np.testing.assert_allclose(q_conv, q[..., layout_permutation(head_dim)], atol=1e-12)


@FAST
@given(seed=seeds, n_heads=st.sampled_from([1, 2, 3, 5]), head_dim=st.sampled_from([2, 4, 6, 8]))
def test_round_trip_and_inverse(seed, n_heads, head_dim):
    w = rand(seed, n_heads * head_dim, 7)
    np.testing.assert_array_equal(half_to_interleaved(interleaved_to_half(w, n_heads), n_heads), w)
    np.testing.assert_array_equal(interleaved_to_half(half_to_interleaved(w, n_heads), n_heads), w)
    # half_to_interleaved makes a half-split model run under the interleaved layout
    x = rand(seed + 1, 4, 7)
    pos = np.arange(4) * 11
    half = per_head_scores(x, w, w[::-1], n_heads, "half", pos)
    inter = per_head_scores(x, half_to_interleaved(w, n_heads), half_to_interleaved(w[::-1], n_heads),
                            n_heads, "interleaved", pos)
    np.testing.assert_allclose(inter, half, atol=1e-9 * np.abs(half).max())


def test_conversion_by_hand_and_per_head():
    w = np.arange(16).reshape(8, 2)  # 2 heads of head_dim 4; row r = [2r, 2r + 1]
    out = interleaved_to_half(w, 2)
    np.testing.assert_array_equal(out[:, 0] // 2, [0, 2, 1, 3, 4, 6, 5, 7])
    assert out.dtype == w.dtype
    assert out is not w and not np.shares_memory(out, w)
    # one head of head_dim 8 is not two heads of 4
    assert not np.array_equal(interleaved_to_half(w, 1), out)


def test_grouped_query_attention_conversion():
    """W_q and W_k are converted with their own head counts (8 query heads, 2 key/value heads)."""
    rng = np.random.default_rng(3)
    head_dim, n_q, n_kv, d_model, seq = 8, 8, 2, 16, 6
    x = rng.standard_normal((seq, d_model))
    wq = rng.standard_normal((n_q * head_dim, d_model))
    wk = rng.standard_normal((n_kv * head_dim, d_model))
    pos = np.arange(seq) + 100

    def scores(wq_, wk_, layout):
        q = apply_rope((x @ wq_.T).reshape(seq, n_q, head_dim).transpose(1, 0, 2), pos, layout=layout)
        k = apply_rope((x @ wk_.T).reshape(seq, n_kv, head_dim).transpose(1, 0, 2), pos, layout=layout)
        k = np.repeat(k, n_q // n_kv, axis=0)
        return q @ k.transpose(0, 2, 1)

    ref = scores(wq, wk, "interleaved")
    got = scores(interleaved_to_half(wq, n_q), interleaved_to_half(wk, n_kv), "half")
    np.testing.assert_allclose(got, ref, atol=1e-9 * np.abs(ref).max())


@pytest.mark.parametrize("fn", [interleaved_to_half, half_to_interleaved])
@pytest.mark.parametrize(
    "w, n_heads, error, match",
    [
        (np.zeros(8), 1, ValueError, "w"),
        (np.zeros((2, 4, 3)), 1, ValueError, "w"),
        (np.zeros((8, 3), dtype=complex), 1, TypeError, "w"),
        ([["a"] * 3] * 8, 1, TypeError, "w"),
        (np.zeros((8, 3)), 0, ValueError, "n_heads"),
        (np.zeros((8, 3)), -2, ValueError, "n_heads"),
        (np.zeros((8, 3)), 2.0, TypeError, "n_heads"),
        (np.zeros((8, 3)), True, TypeError, "n_heads"),
        (np.zeros((8, 3)), "2", TypeError, "n_heads"),
        (np.zeros((8, 3)), 3, ValueError, "n_heads"),
        (np.zeros((6, 3)), 2, ValueError, "head_dim"),
        (np.zeros((8, 3)), 8, ValueError, "head_dim"),
    ],
)
def test_conversion_bad_input(fn, w, n_heads, error, match):
    with pytest.raises(error, match=match):
        fn(w, n_heads)


# --- the bug and the check --------------------------------------------------------------------


@FAST
@given(seed=seeds, dim=big_dims, rotation=st.sampled_from(["half", "interleaved"]))
def test_mixed_layouts_break_norms(seed, dim, rotation):
    """Each pair reads two angles α, β: its 2x2 block has singular values sqrt(1 ± |sin(α - β)|)."""
    m = float(np.random.default_rng(seed).integers(1, 10_000))
    eye = np.eye(dim)
    bug = buggy_rope_mixed_layouts(eye, np.full(dim, m), rotation=rotation).T  # columns: images of e_j
    other = "interleaved" if rotation == "half" else "half"
    a, b = rope_edu.LAYOUTS[rotation].pairs(dim)
    angles = m * frequencies(dim)[TABLE_LAYOUTS[other].freq_index(dim)]
    delta = np.abs(np.sin(angles[a] - angles[b]))
    predicted = np.sort(np.concatenate([np.sqrt(1 + delta), np.sqrt(np.maximum(1 - delta, 0))]))
    np.testing.assert_allclose(np.sort(np.linalg.svd(bug, compute_uv=False)), predicted, atol=1e-7)


def test_mixed_layouts_is_harmless_only_in_two_dims_or_at_position_zero():
    x = rand(0, 5, 2)
    np.testing.assert_allclose(buggy_rope_mixed_layouts(x, np.arange(5)), apply_rope(x, np.arange(5), layout="half"))
    x = rand(0, 3, 8)
    np.testing.assert_allclose(buggy_rope_mixed_layouts(x, 0.0), x)
    y = buggy_rope_mixed_layouts(x, 5.0)
    assert np.abs(np.linalg.norm(y, axis=-1) / np.linalg.norm(x, axis=-1) - 1).max() > 1e-2


def test_mixed_layouts_scores_depend_on_more_than_distance():
    q, k = rand(1, 16), rand(2, 16)
    same_distance = [buggy_rope_mixed_layouts(q, m + 3.0) @ buggy_rope_mixed_layouts(k, float(m)) for m in range(20)]
    assert np.ptp(same_distance) > 1e-2
    good = [apply_rope(q, m + 3.0, layout="half") @ apply_rope(k, float(m), layout="half") for m in range(20)]
    assert np.ptp(good) < 1e-12


CORRECT = {
    "apply_rope interleaved": lambda x, p: apply_rope(x, p),
    "apply_rope half": lambda x, p: apply_rope(x, p, layout="half"),
    "complex": rope_complex,
    "rotate_half": rope_half_split,
    "dense interleaved": dense_rope,
    "dense half": lambda x, p: dense_rope(x, p, layout="half"),
    "rotate_every_two": lambda x, p: rope_from_table(x, *cos_sin_table(p, x.shape[-1], layout="interleaved"),
                                                     layout="interleaved"),
}
WRONG = {
    "mix-up half": buggy_rope_mixed_layouts,
    "mix-up interleaved": lambda x, p: buggy_rope_mixed_layouts(x, p, rotation="interleaved"),
    "identity": lambda x, p: x,
    "scale": lambda x, p: 1.01 * apply_rope(x, p),
    "angle m^2": lambda x, p: apply_rope(x, p * p),  # angle m^2 θ: a rotation, not relative
}


@pytest.mark.parametrize("name", sorted(CORRECT))
@pytest.mark.parametrize("dim", [4, 8, 64])
def test_check_passes_correct_implementations(name, dim):
    report = check_rotation(CORRECT[name], dim)
    assert report.ok, report
    assert report.norm_error < 1e-12 and report.shift_error < 1e-11 and report.position_effect > 1e-3
    assert is_rope_consistent(CORRECT[name], dim)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_check_fails_wrong_implementations(name):
    report = check_rotation(WRONG[name])
    assert not report.ok
    assert not is_rope_consistent(WRONG[name])


def test_check_reports_which_property_fails():
    bug = check_rotation(buggy_rope_mixed_layouts)
    assert bug.norm_error > 0.05 and bug.shift_error > 0.05
    squared = check_rotation(WRONG["angle m^2"])
    assert squared.norm_error < 1e-12 and squared.shift_error > 0.05
    ident = check_rotation(WRONG["identity"])
    assert ident.norm_error == 0 and ident.shift_error == 0 and ident.position_effect == 0
    assert 0 < check_rotation(CORRECT["complex"], tol=1e-3).tol == 1e-3


def test_check_is_necessary_not_sufficient():
    """A rotation with the wrong frequencies (exponent sign dropped) still passes: compare to apply_rope."""
    wrong_freq = lambda x, p: apply_rope(x, p, inv_freq=10000.0 ** (np.arange(0, x.shape[-1], 2) / x.shape[-1]))  # noqa: E731
    assert is_rope_consistent(wrong_freq)
    x = rand(0, 4, 8)
    assert not np.allclose(wrong_freq(x, np.arange(4)), apply_rope(x, np.arange(4)))


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        (("not callable",), {}, TypeError, "fn"),
        ((rope_complex, 2), {}, ValueError, "dim"),
        ((rope_complex, 7), {}, ValueError, "dim"),
        ((rope_complex, 8.0), {}, TypeError, "dim"),
        ((rope_complex,), {"n_positions": 1}, ValueError, "n_positions"),
        ((rope_complex,), {"n_positions": 2.5}, TypeError, "n_positions"),
        ((rope_complex,), {"shift": 0}, ValueError, "shift"),
        ((rope_complex,), {"shift": "1"}, TypeError, "shift"),
        ((rope_complex,), {"seed": -1}, ValueError, "seed"),
        ((rope_complex,), {"tol": 0.0}, ValueError, "tol"),
        ((rope_complex,), {"tol": "1e-8"}, TypeError, "tol"),
        ((rope_complex,), {"tol": 2.0}, ValueError, "tol"),
        ((lambda x, p: x[:, :2],), {}, ValueError, "fn"),
        ((lambda x, p: x * np.nan,), {}, ValueError, "fn"),
        ((lambda x, p: x + 0j,), {}, ValueError, "fn"),
    ],
)
def test_check_bad_input(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        check_rotation(*args, **kwargs)


# --- bad inputs of the implementations and tables ---------------------------------------------


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: rope_complex(np.zeros((3, 5)), np.arange(3)), ValueError, "dim"),
        (lambda: rope_complex(np.zeros((3, 4), dtype=complex), np.arange(3)), TypeError, "x"),
        (lambda: rope_complex(np.zeros((3, 4)), np.arange(4)), ValueError, "positions"),
        (lambda: rope_complex(np.zeros((3, 4)), [np.nan] * 3), ValueError, "positions"),
        (lambda: rope_complex(np.zeros((3, 4)), np.arange(3), base=1.0), ValueError, "base"),
        (lambda: rope_complex(np.zeros((3, 4)), np.arange(3), inv_freq=[1.0]), ValueError, "inv_freq"),
        (lambda: freqs_cis([1.0], 3), ValueError, "dim"),
        (lambda: freqs_cis(["a"], 4), TypeError, "positions"),
        (lambda: rotate_half(np.zeros(5)), ValueError, "dim"),
        (lambda: rotate_half(np.float64(1.0)), ValueError, "x"),
        (lambda: rotate_every_two(np.zeros(3)), ValueError, "dim"),
        (lambda: rotate_every_two(["a", "b"]), TypeError, "x"),
        (lambda: cos_sin_table([1.0], 4, layout="neox"), ValueError, "layout"),
        (lambda: cos_sin_table([1.0], 0), ValueError, "dim"),
        (lambda: cos_sin_table([np.inf], 4), ValueError, "positions"),
        (lambda: cos_sin_table([1.0], 4, base="10000"), TypeError, "base"),
        (lambda: rope_rotate_half(np.zeros((3, 4)), np.zeros((3, 2)), np.zeros((3, 2))), ValueError, "cos"),
        (lambda: rope_rotate_half(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((2, 4))), ValueError, "sin"),
        (lambda: rope_rotate_half(np.zeros((3, 4)), np.zeros((5, 4)), np.zeros((5, 4))), ValueError, "cos"),
        (lambda: rope_rotate_half(np.zeros((3, 4)), np.zeros((2, 3, 4)), np.zeros((2, 3, 4))), ValueError, "cos"),
        (lambda: rope_rotate_half(np.zeros((3, 4)), np.zeros((3, 4), dtype=complex), np.zeros((3, 4))), TypeError, "cos"),
        (lambda: rope_from_table(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((3, 4)), layout="x"), ValueError, "layout"),
        (lambda: rope_half_split(np.zeros((3, 6)), np.arange(2)), ValueError, "positions"),
        (lambda: dense_rope(np.zeros((3, 4)), np.arange(3), layout="neox"), ValueError, "layout"),
        (lambda: dense_rope(np.zeros((3, 3)), np.arange(3)), ValueError, "dim"),
        (lambda: buggy_rope_mixed_layouts(np.zeros((3, 4)), np.arange(3), rotation="x"), ValueError, "rotation"),
        (lambda: buggy_rope_mixed_layouts(np.zeros((3, 4)), "abc"), TypeError, "positions"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- timing -------------------------------------------------------------------------------------


def test_time_implementations_table_shape():
    rows = time_implementations((4, 8), n_tokens=4, n_heads=2, repeats=1)
    assert [r["dim"] for r in rows] == [4, 8]
    for r in rows:
        assert set(r) == {"dim", *rope_edu.IMPLEMENTATIONS}
        assert all(v > 0 for k, v in r.items() if k != "dim")


def test_implementations_registry_agrees_up_to_layout():
    x = rand(5, 2, 6, 16)
    pos = np.arange(6)
    outs = {name: fn(x, pos, base=10000.0) for name, fn in rope_edu.IMPLEMENTATIONS.items()}
    np.testing.assert_allclose(outs["dense matrix"], outs["complex (interleaved)"], atol=1e-12)
    # the half-split result is the interleaved one with its coordinates permuted, on permuted input
    np.testing.assert_allclose(
        rope_half_split(x[..., layout_permutation(16)], pos), outs["complex (interleaved)"][..., layout_permutation(16)],
        atol=1e-12,
    )


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"dims": ()}, ValueError, "dims"),
        ({"dims": (3,)}, ValueError, "dims"),
        ({"dims": (4.0,)}, TypeError, "dims"),
        ({"n_tokens": 0}, ValueError, "n_tokens"),
        ({"n_heads": -1}, ValueError, "n_heads"),
        ({"repeats": 1.5}, ValueError, "repeats"),
        ({"base": 0.5}, ValueError, "base"),
    ],
)
def test_time_implementations_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        time_implementations(**{"dims": (4,), "n_tokens": 2, "n_heads": 1, "repeats": 1, **kwargs})


# --- an independent reference: Meta's complex form in torch (skipped without torch) -------------


def test_complex_form_matches_torch_polar_reference():
    torch = pytest.importorskip("torch")
    dim, seq = 16, 9
    x = rand(7, 2, seq, dim)
    theta = torch.tensor(frequencies(dim), dtype=torch.float64)
    angles = torch.outer(torch.arange(seq, dtype=torch.float64), theta)
    cis = torch.polar(torch.ones_like(angles), angles)
    xc = torch.view_as_complex(torch.from_numpy(x).reshape(2, seq, dim // 2, 2).contiguous())
    ref = torch.view_as_real(xc * cis).reshape(2, seq, dim).numpy()
    np.testing.assert_allclose(rope_complex(x, np.arange(seq)), ref, atol=1e-12)
