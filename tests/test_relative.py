"""rope_edu.relative: T5 buckets against transformers, Shaw et al.'s logits, RoPE in linear attention."""

from __future__ import annotations

import numpy as np
import pytest
pytest.importorskip("torch")  # make check skips this file where torch is missing
pytest.importorskip("transformers")  # make check skips this file where transformers is missing
import torch
from transformers.models.t5.modeling_t5 import T5Attention

from rope_edu import apply_rope
from rope_edu.relative import linear_attention, shaw_relative_logits, t5_relative_bucket


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets, max_distance", [(32, 128), (16, 64), (8, 20), (64, 512), (10, 37)])
def test_t5_buckets_match_transformers(bidirectional, num_buckets, max_distance):
    rel = np.arange(-3000, 3001)
    hf = T5Attention._relative_position_bucket(torch.tensor(rel), bidirectional=bidirectional,
                                               num_buckets=num_buckets, max_distance=max_distance).numpy()
    ours = t5_relative_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    np.testing.assert_array_equal(ours, hf)


def test_t5_buckets_exact_then_log_then_saturate():
    b = t5_relative_bucket(-np.arange(300), bidirectional=False)  # keys before the query
    np.testing.assert_array_equal(b[:16], np.arange(16))  # exact for small offsets
    assert (np.diff(b) >= 0).all() and b.max() == 31
    first_last = int(np.argmax(b == 31))  # the last bucket starts before max_distance and never ends
    assert 16 < first_last <= 128 and (b[first_last:] == 31).all()
    assert (t5_relative_bucket(np.arange(1, 50), bidirectional=False) == 0).all()  # future keys: bucket 0


def test_shaw_logits_by_hand_and_shift_invariant_relative_part():
    rng = np.random.default_rng(0)
    n, d, K = 7, 4, 2
    q, k = rng.standard_normal((2, n, d))
    a = rng.standard_normal((2 * K + 1, d))
    out = shaw_relative_logits(q, k, a, max_distance=K)
    for i in range(n):
        for j in range(n):
            r = min(max(j - i, -K), K)
            np.testing.assert_allclose(out[i, j], q[i] @ (k[j] + a[r + K]))
    # with k = 0 only the relative part is left; equal queries give a Toeplitz (offset-only) matrix
    rel = shaw_relative_logits(np.tile(q[:1], (n, 1)), np.zeros((n, d)), a, max_distance=K)
    for off in range(-n + 1, n):
        diag = np.diagonal(rel, off)
        np.testing.assert_allclose(diag, diag[0])


@pytest.mark.parametrize("causal", [True, False])
def test_linear_attention_forms_agree_and_are_shift_invariant(causal):
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, 3, 10, 8))
    v = rng.standard_normal((3, 10, 5))
    par = linear_attention(q, k, v, causal=causal)
    rec = linear_attention(q, k, v, causal=causal, form="recurrent")
    np.testing.assert_allclose(par, rec, atol=1e-12)
    np.testing.assert_allclose(linear_attention(q, k, v, np.arange(10) + 37.0, causal=causal), par, atol=1e-12)


def test_linear_attention_definition():
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((2, 6, 4))
    v = rng.standard_normal((6, 3))
    phi = lambda x: np.where(x > 0, x + 1, np.exp(x))  # noqa: E731
    qr, kr = apply_rope(phi(q), np.arange(6)), apply_rope(phi(k), np.arange(6))
    i = 4
    num = sum((qr[i] @ kr[j]) * v[j] for j in range(i + 1))
    den = sum(phi(q[i]) @ phi(k[j]) for j in range(i + 1))
    np.testing.assert_allclose(linear_attention(q, k, v)[i], num / den, atol=1e-12)
    # positions all zero: plain linear attention, weights positive and summing to one
    plain = linear_attention(q, k, v, np.zeros(6))
    w = phi(q) @ phi(k).T * np.tri(6)
    np.testing.assert_allclose(plain, (w / w.sum(1, keepdims=True)) @ v, atol=1e-12)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: t5_relative_bucket(np.arange(3.0)), TypeError, "relative_position"),
    (lambda: t5_relative_bucket(np.arange(3), num_buckets=2), ValueError, "num_buckets"),
    (lambda: t5_relative_bucket(np.arange(3), bidirectional=1), TypeError, "bidirectional"),
    (lambda: t5_relative_bucket(np.arange(3), max_distance=4), ValueError, "max_distance"),
    (lambda: shaw_relative_logits(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((4, 4)), max_distance=2), ValueError, "rel_keys"),
    (lambda: shaw_relative_logits(np.zeros((3, 4)), np.zeros((2, 4)), np.zeros((5, 4)), max_distance=2), ValueError, "q and k"),
    (lambda: shaw_relative_logits(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((5, 4)), max_distance=-1), ValueError, "max_distance"),
    (lambda: linear_attention(np.zeros((3, 5)), np.zeros((3, 5)), np.zeros((3, 2))), ValueError, "q.shape"),
    (lambda: linear_attention(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((2, 2))), ValueError, "v must have"),
    (lambda: linear_attention(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((3, 2)), form="fast"), ValueError, "form"),
    (lambda: linear_attention(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((3, 2)), causal="yes"), TypeError, "causal"),
    (lambda: linear_attention(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((3, 2)), np.zeros(5)), ValueError, "positions"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
