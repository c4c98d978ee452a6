"""rope_edu.alibi against the ALiBi code of BLOOM and MPT in transformers, and every bad input."""

from __future__ import annotations

import numpy as np
import pytest
pytest.importorskip("torch")  # make check skips this file where torch is missing
pytest.importorskip("transformers")  # make check skips this file where transformers is missing
import torch
from transformers.models.bloom.modeling_bloom import build_alibi_tensor
from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

import rope_edu
from rope_edu import alibi_bias, alibi_slopes, causal_mask, softmax


@pytest.mark.parametrize("heads", list(range(1, 41)) + [64, 71, 96, 112])
def test_slopes_match_bloom_and_mpt(heads):
    ours = alibi_slopes(heads)
    bloom = build_alibi_tensor(torch.ones(1, 3), heads, torch.float32)[:, 0, 1].numpy()  # slope * key index 1
    mpt = -build_mpt_alibi_tensor(heads, 2)[:, 0, 0].numpy()  # slope * (1 - seq) with seq = 2
    np.testing.assert_allclose(ours, bloom, rtol=1e-6)
    np.testing.assert_allclose(ours, mpt, rtol=1e-6)


def test_power_of_two_slopes_are_geometric():
    for heads in (1, 2, 4, 8, 16, 32):
        m = alibi_slopes(heads)
        np.testing.assert_allclose(m[1:] / m[:-1], 2.0 ** (-8 / heads))
        np.testing.assert_allclose(m[0], 2.0 ** (-8 / heads))
        np.testing.assert_allclose(m[-1], 2.0 ** -8)


def test_non_power_of_two_fills_in_from_the_next_power():
    m12 = alibi_slopes(12)
    np.testing.assert_array_equal(m12[:8], alibi_slopes(8))
    np.testing.assert_array_equal(m12[8:], alibi_slopes(16)[0:8:2])
    assert len(set(m12.tolist())) == 12  # no two heads share a slope


@pytest.mark.parametrize("heads", [3, 8, 12])
def test_bias_gives_the_same_attention_as_bloom_and_mpt(heads):
    """BLOOM adds m*j and MPT m*(j - n + 1) to every query row; we add -m*(i - j). Under a causal
    mask the three differ by a constant per row, which softmax ignores."""
    n = 9
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((heads, n, n))
    mask = causal_mask(n, n)
    ours = alibi_bias(alibi_slopes(heads), np.arange(n))
    bloom = build_alibi_tensor(torch.ones(1, n), heads, torch.float32).numpy()  # (heads, 1, n)
    mpt = build_mpt_alibi_tensor(heads, n).numpy()  # (heads, 1, n)

    def attn(bias):
        return softmax(np.where(mask, logits + bias, -np.inf))

    np.testing.assert_allclose(attn(ours), attn(bloom), atol=1e-6)
    np.testing.assert_allclose(attn(ours), attn(mpt), atol=1e-6)
    # ... and the row constant matters without the per-row normalisation: the biases differ.
    assert not np.allclose(np.where(mask, ours, 0), np.where(mask, np.broadcast_to(bloom, ours.shape), 0))


def test_bias_is_linear_in_distance_and_shift_invariant():
    m = alibi_slopes(4)
    b = alibi_bias(m, np.arange(6))
    for h in range(4):
        for i in range(6):
            np.testing.assert_allclose(b[h, i, : i + 1], -m[h] * (i - np.arange(i + 1)))
    np.testing.assert_allclose(alibi_bias(m, np.arange(6) + 100), b)
    kq = alibi_bias(m, [5.0], np.arange(6))
    np.testing.assert_allclose(kq[:, 0], b[:, 5])


def test_exports():
    assert rope_edu.alibi_slopes is alibi_slopes and rope_edu.alibi_bias is alibi_bias


@pytest.mark.parametrize("call, exc, match", [
    (lambda: alibi_slopes(0), ValueError, "num_heads"),
    (lambda: alibi_slopes(2.0), TypeError, "num_heads"),
    (lambda: alibi_slopes(True), TypeError, "num_heads"),
    (lambda: alibi_bias(np.ones((2, 2)), np.arange(3)), ValueError, "slopes must have shape"),
    (lambda: alibi_bias([-0.5], np.arange(3)), ValueError, "slopes must be finite and >= 0"),
    (lambda: alibi_bias([np.nan], np.arange(3)), ValueError, "slopes"),
    (lambda: alibi_bias(["a"], np.arange(3)), TypeError, "slopes"),
    (lambda: alibi_bias([0.5], np.zeros((2, 2))), ValueError, "query_positions"),
    (lambda: alibi_bias([0.5], np.arange(3), np.zeros((2, 2))), ValueError, "key_positions"),
    (lambda: alibi_bias([0.5], [np.inf]), ValueError, "finite"),
    (lambda: alibi_bias([0.5], np.array([True])), TypeError, "query_positions"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
