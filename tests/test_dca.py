"""rope_edu.dca: Dual Chunk Attention's position remapping."""

from __future__ import annotations

import numpy as np
import pytest

from rope_edu import apply_rope
from rope_edu.dca import (
    DCA_KINDS,
    DCA_VARIANTS,
    dca_position_ids,
    dca_relative_distances,
)

rng = np.random.default_rng(0)


# --- Dual Chunk Attention ----------------------------------------------------------------------


def reference_distance(m, n, chunk_size, local_size, variant):
    """One pair at a time, written from the rules in An et al. 2024 and vLLM's DualChunkRotaryEmbedding."""
    L = chunk_size - local_size
    if n > m:
        return None, 0
    cap = chunk_size if variant == "vllm" else chunk_size - 1
    cq, ck = m // L, n // L
    if cq == ck:
        return m % L - n % L, 1
    if cq - ck == 1:
        return min(m % L + L, cap) - n % L, 2
    inter = min(2 * L - 1, chunk_size) if variant == "vllm" else chunk_size - 1
    return inter - n % L, 3


@pytest.mark.parametrize("variant", list(DCA_VARIANTS))
@pytest.mark.parametrize("chunk_size,local_size", [(10, 4), (16, 3), (7, 0), (12, 8)])
def test_dca_matches_pairwise_reference(variant, chunk_size, local_size):
    p = np.arange(45)
    d = dca_relative_distances(p, p, chunk_size=chunk_size, local_size=local_size, variant=variant)
    for m in p:
        for n in p:
            ref, kind = reference_distance(int(m), int(n), chunk_size, local_size, variant)
            assert d.kind[m, n] == kind
            assert d.distance[m, n] == (-1 if ref is None else ref)
    np.testing.assert_array_equal(d.true_distance, p[:, None] - p[None, :])


@pytest.mark.parametrize("variant", list(DCA_VARIANTS))
def test_dca_distances_stay_in_trained_range(variant):
    chunk_size, local_size = 64, 16
    p = np.arange(1000)
    d = dca_relative_distances(p, p, chunk_size=chunk_size, local_size=local_size, variant=variant)
    seen = d.distance[d.kind > 0]
    assert seen.min() >= 0
    assert seen.max() == (chunk_size if variant == "vllm" else chunk_size - 1)
    # intra-chunk distances are the true ones, and every distance up to local_size is kept
    intra = d.kind == 1
    np.testing.assert_array_equal(d.distance[intra], d.true_distance[intra])
    near = (d.true_distance >= 0) & (d.true_distance <= local_size)
    np.testing.assert_array_equal(d.distance[near], d.true_distance[near])
    assert d.true_distance.max() == 999
    for kind in DCA_KINDS:
        assert d.of(kind).size > 0


def test_dca_qwen25_1m_config():
    """Qwen2.5-14B-Instruct-1M: chunk_size 262144, local_size 8192; one query at 1M tokens."""
    keys = np.arange(0, 1_000_000, 997)
    d = dca_relative_distances([999_999], keys, chunk_size=262144, local_size=8192)
    assert d.distance.max() <= 262144 and d.distance.min() >= 0
    ids = dca_position_ids([0, 253_952, 253_952 + 8191, 253_952 + 8192], chunk_size=262144, local_size=8192)
    assert ids.chunk_len == 253_952
    np.testing.assert_array_equal(ids.key, [0, 0, 8191, 8192])
    np.testing.assert_array_equal(ids.successive, [253_952, 253_952, 262_143, 262_144])
    np.testing.assert_array_equal(ids.inter, 262_144)


def test_dca_rope_logits_follow_the_remapped_distance():
    """Rotating queries and keys by DCA's ids gives the logit of a pair at the remapped distance."""
    dim = 16
    q, k = rng.standard_normal((2, dim))
    p = np.arange(40)
    ids = dca_position_ids(p, chunk_size=12, local_size=4)
    d = dca_relative_distances(p, p, chunk_size=12, local_size=4)
    kr = apply_rope(np.tile(k, (40, 1)), ids.key)
    for m in (5, 13, 30, 39):
        for kind, qid in zip(DCA_KINDS, (ids.intra, ids.successive, ids.inter)):
            qm = apply_rope(q[None], [qid[m]])[0]
            cols = np.flatnonzero(d.kind[m] == DCA_KINDS.index(kind) + 1)
            for n in cols:
                plain = apply_rope(q[None], [d.distance[m, n]])[0] @ k
                assert abs(qm @ kr[n] - plain) < 1e-10


def test_dca_bad_inputs():
    p = np.arange(4)
    with pytest.raises(ValueError, match="local_size"):
        dca_position_ids(p, chunk_size=8, local_size=8)
    with pytest.raises(ValueError, match="local_size"):
        dca_position_ids(p, chunk_size=8, local_size=-1)
    with pytest.raises(ValueError, match="chunk_size"):
        dca_position_ids(p, chunk_size=1, local_size=0)
    with pytest.raises(TypeError, match="chunk_size"):
        dca_position_ids(p, chunk_size=8.0, local_size=0)
    with pytest.raises(ValueError, match="variant"):
        dca_position_ids(p, chunk_size=8, local_size=2, variant="hf")
    with pytest.raises(TypeError, match="positions"):
        dca_position_ids([0.5, 1.0], chunk_size=8, local_size=2)
    with pytest.raises(ValueError, match="positions"):
        dca_position_ids([-1, 0], chunk_size=8, local_size=2)
    with pytest.raises(TypeError, match="key_positions"):
        dca_relative_distances(p, np.ones((2, 2), dtype=int), chunk_size=8, local_size=2)
    with pytest.raises(ValueError, match="query_positions"):
        dca_relative_distances([-3], p, chunk_size=8, local_size=2)
    d = dca_relative_distances(p, p, chunk_size=8, local_size=2)
    with pytest.raises(ValueError, match="kind"):
        d.of("local")
