"""Men et al.'s criterion in rope_edu.decay (chapter 5): similarity_advantage, max_context, min_base."""

from __future__ import annotations

import numpy as np
import pytest

import rope_edu
from rope_edu import expected_score, frequencies, max_context, min_base, similarity_advantage
from rope_edu.models import PUBLISHED


def _direct(dim, base, stop, theta=None):
    """sum_i cos(m theta_i) for m = 0 .. stop-1, straight from the definition (in blocks of
    distances: Gemma 3's global layers reach 573,011 distances of 128 pairs)."""
    theta = frequencies(dim, base) if theta is None else theta
    m = np.arange(stop)
    return np.concatenate([np.cos(np.outer(m[i:i + 8192], theta)).sum(axis=1) for i in range(0, stop, 8192)])


def test_exported():
    assert {"similarity_advantage", "max_context", "min_base"} <= set(rope_edu.__all__)


def test_advantage_is_half_the_rho_one_expected_score():
    dist = np.arange(-300, 3000)
    np.testing.assert_allclose(2 * similarity_advantage(dist, 128, 10000.0),
                               expected_score(dist, 128, 10000.0, correlation=1.0), atol=1e-12)


def test_unrotated_pairs_add_one_each():
    dist = np.arange(500)
    part = similarity_advantage(dist, 96, rotary_dim=24)
    np.testing.assert_allclose(part, 36 + _direct(24, 10000.0, 500), atol=1e-12)
    same = similarity_advantage(dist, 96, inv_freq=frequencies(24, 10000.0))
    np.testing.assert_allclose(part, same, atol=0)


@pytest.mark.parametrize("dim, base", [(128, 10000.0), (128, 500000.0), (64, 150000.0), (256, 1e6), (96, 3e4)])
def test_max_context_is_the_first_negative_distance(dim, base):
    first = max_context(dim, base)
    f = _direct(dim, base, first + 1)
    assert f[first] < 0 and np.all(f[:first] >= 0)


@pytest.mark.parametrize("name", ["Llama 3.1 8B", "Qwen3 8B", "Gemma 3 4B, global layers", "GPT-OSS 20B"])
def test_max_context_with_scaled_frequencies_is_the_first_negative_distance(name):
    # the inv_freq path (what chapter 5's table of released models uses) against a direct sum
    spec = PUBLISHED[name].spec()
    theta = spec.inv_freq(seq_len=PUBLISHED[name].extended if spec.depends_on_length else None)
    first = max_context(spec.head_dim, inv_freq=theta)
    f = _direct(spec.head_dim, None, first + 1, theta=theta)
    assert f[first] < 0 and np.all(f[:first] >= 0)


def test_zero_entries_of_inv_freq_count_as_unrotated():
    # proportional RoPE (Gemma 4's global layers): the slow pairs' entries are 0 in inv_freq itself
    fast = frequencies(128, 10000.0)[:16]
    padded = np.concatenate([fast, np.zeros(48)])
    assert max_context(128, inv_freq=padded) is None
    assert max_context(128, inv_freq=padded) == max_context(128, inv_freq=fast)
    np.testing.assert_allclose(similarity_advantage(np.arange(3000), 128, inv_freq=padded),
                               48 + _direct(None, None, 3000, theta=fast), atol=1e-9)


def test_max_context_known_values_and_limits():
    assert max_context(128, 10000.0) == 1707
    assert max_context(128, 500000.0) == 18438
    assert max_context(128, 10000.0, limit=1707) is None
    assert max_context(128, 10000.0, limit=1708) == 1707


def test_far_distances_match_direct_sums():
    # the block products against a direct sum far out, where the angles are large
    from rope_edu.decay import _advantage_range

    theta = frequencies(128, 10000.0)
    m = np.arange(10**6, 10**6 + 2000)
    values, slope = _advantage_range(theta, 10**6, 10**6 + 2000, theta)
    np.testing.assert_allclose(values, np.cos(np.outer(m, theta)).sum(axis=1), atol=1e-8)
    np.testing.assert_allclose(slope, m * (np.sin(np.outer(m, theta)) * theta).sum(axis=1), atol=1e-2)


def test_half_or_more_unrotated_never_fails():
    assert max_context(96, rotary_dim=24) is None            # GPT-NeoX: 25 %
    assert max_context(128, 5e6, rotary_dim=64) is None      # half: the sum is Σ(1 + cos) >= 0
    assert max_context(128, 1e4, rotary_dim=96) is not None  # three quarters rotate: it can fail


def test_scaled_frequencies_linear_scaling_multiplies_the_reach():
    # position interpolation by s: θ/s, so the criterion at δ is the original's at δ/s
    base = frequencies(128, 10000.0)
    reach = max_context(128, inv_freq=base / 4)
    assert 4 * 1707 - 4 <= reach <= 4 * 1707 + 4
    spec = PUBLISHED["Llama 3.1 8B"].spec()
    assert max_context(spec.head_dim, inv_freq=spec.inv_freq()) > max_context(128, spec.base)


@pytest.mark.parametrize("context, dim", [(1024, 128), (3000, 64), (2048, 96)])
def test_min_base_passes_and_a_sweep_below_fails(context, dim):
    b = min_base(context, dim)
    assert max_context(dim, b) >= context
    below = b * np.exp(-np.linspace(1e-6, 0.5, 400))
    assert all(max_context(dim, x) < context for x in below)


def test_min_base_matches_men_and_su_tables():
    # Men et al. 2024 (their table) and Su 2024 (a finer search), d = 128: 1K -> 4.3e3, 2K -> 1.2e4 (Su)
    assert f"{min_base(1024, 128):.1e}" == "4.3e+03"
    assert f"{min_base(2048, 128):.1e}" == "1.2e+04"


def test_min_base_trivial_contexts():
    assert min_base(1, 128) == min_base(2, 128) == 1.0


@pytest.mark.parametrize("call, exc, match", [
    (lambda: max_context(127), ValueError, "dim"),
    (lambda: max_context(128, 1.0), ValueError, "base"),
    (lambda: max_context(128, limit=0), ValueError, "limit"),
    (lambda: max_context(128, rotary_dim=256), ValueError, "rotary_dim"),
    (lambda: max_context(128, rotary_dim=64, inv_freq=np.ones(4)), ValueError, "not both"),
    (lambda: max_context(128, 5e5, inv_freq=np.ones(4)), ValueError, "base or inv_freq"),
    (lambda: similarity_advantage(0, 128, 5e5, inv_freq=np.ones(4)), ValueError, "base or inv_freq"),
    (lambda: max_context(128, inv_freq=np.ones((2, 3))), ValueError, "inv_freq"),
    (lambda: max_context(128, limit=True), TypeError, "limit"),
    (lambda: max_context(128, inv_freq=np.ones(65)), ValueError, "inv_freq"),
    (lambda: max_context(128, inv_freq=[np.nan]), ValueError, "inv_freq"),
    (lambda: max_context(128, inv_freq=["a"]), TypeError, "inv_freq"),
    (lambda: similarity_advantage([np.inf], 128), ValueError, "distance"),
    (lambda: min_base(0, 128), ValueError, "context"),
    (lambda: min_base(1024, 130.5), TypeError, "dim"),
    (lambda: min_base(1024, 128, rtol=0.0), ValueError, "rtol"),
    (lambda: min_base(1024, 128, rtol="x"), TypeError, "rtol"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
