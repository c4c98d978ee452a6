"""Dual Chunk Attention (DCA): position ids that keep every distance inside the trained range.

An et al. (2024) run a RoPE model on sequences longer than it was trained on without training it
again: the sequence is cut into chunks of ``L`` tokens, every key gets the id ``n mod L``, and each
query gets *three* ids, one per kind of attention:

* **intra-chunk** (query and key in the same chunk): ``m mod L``, so the distance is the true one;
* **successive-chunk** (the key in the chunk just before): ``min(L + m mod L, cap)``, the true
  distance for the first ``local_size`` queries of a chunk, capped after that;
* **inter-chunk** (the key two or more chunks back): a constant, the cap.

Qwen2.5-1M configures it with ``dual_chunk_attention_config = {"chunk_size": S, "local_size":
w, ...}``; vLLM's ``DualChunkRotaryEmbedding`` then uses ``L = S - w``, caps at ``S``, and gives
inter-chunk queries ``min(2L - 1, S)``. The paper (its ``s = L``, ``c = S`` the training length)
caps at ``c - 1``. :data:`DCA_VARIANTS` holds both; they differ only in the cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ._checks import check_choice, check_int, real_array

__all__ = [
    "DCA_KINDS",
    "DCA_VARIANTS",
    "DCAPositions",
    "DCADistances",
    "dca_position_ids",
    "dca_relative_distances",
]

#: The three attentions of DCA, in the order of the codes in :attr:`DCADistances.kind` (1, 2, 3;
#: 0 is a masked pair, a key after its query).
DCA_KINDS = ("intra", "successive", "inter")


def _succ_vllm(offset: np.ndarray, chunk_len: int, chunk_size: int) -> np.ndarray:
    return np.minimum(offset + chunk_len, chunk_size)


def _inter_vllm(chunk_len: int, chunk_size: int) -> int:
    return min(2 * chunk_len - 1, chunk_size)


def _succ_paper(offset: np.ndarray, chunk_len: int, chunk_size: int) -> np.ndarray:
    return np.minimum(offset + chunk_len, chunk_size - 1)


def _inter_paper(chunk_len: int, chunk_size: int) -> int:
    return chunk_size - 1


#: ``variant -> (successive-chunk query id from the offset in the chunk, inter-chunk query id)``.
#: ``"vllm"``: vLLM's ``DualChunkRotaryEmbedding`` (cap ``chunk_size``); ``"paper"``: An et al.
#: 2024, section 3 (cap ``chunk_size - 1``, with ``chunk_size`` read as the training length ``c``).
DCA_VARIANTS: dict[str, tuple[Callable[..., np.ndarray], Callable[..., int]]] = {
    "vllm": (_succ_vllm, _inter_vllm),
    "paper": (_succ_paper, _inter_paper),
}


@dataclass(frozen=True)
class DCAPositions:
    """DCA position ids of a sequence (all of shape ``(seq,)``, integers).

    Attributes
    ----------
    key : ids of the keys, ``n mod L``
    intra, successive, inter : the query ids for each of the three attentions
    chunk : the chunk of every token, ``p // L``
    chunk_len : ``L = chunk_size - local_size``
    """

    key: np.ndarray
    intra: np.ndarray
    successive: np.ndarray
    inter: np.ndarray
    chunk: np.ndarray
    chunk_len: int


@dataclass(frozen=True)
class DCADistances:
    """The relative distance every (query, key) pair sees under DCA.

    Attributes
    ----------
    distance : numpy.ndarray, shape (n_queries, n_keys), int64
        Query id minus key id for the attention the pair belongs to; ``-1`` where masked.
    true_distance : numpy.ndarray, shape (n_queries, n_keys), int64
        Query position minus key position (negative where masked).
    kind : numpy.ndarray, shape (n_queries, n_keys), int8
        0 masked (key after query), then 1, 2, 3 for :data:`DCA_KINDS`.
    """

    distance: np.ndarray
    true_distance: np.ndarray
    kind: np.ndarray

    def of(self, kind: str) -> np.ndarray:
        """The distances of one kind (``"intra"``, ``"successive"``, ``"inter"``), flattened."""
        code = DCA_KINDS.index(check_choice(kind, DCA_KINDS, "kind")) + 1
        return self.distance[self.kind == code]


def _check_sizes(chunk_size: Any, local_size: Any) -> tuple[int, int, int]:
    chunk_size = check_int(chunk_size, "chunk_size", 2)
    local_size = check_int(local_size, "local_size", 0)
    if local_size >= chunk_size:
        raise ValueError(
            f"local_size must be smaller than chunk_size (chunk length L = chunk_size - local_size "
            f">= 1), got local_size={local_size}, chunk_size={chunk_size}"
        )
    return chunk_size, local_size, chunk_size - local_size


def _check_ids(positions: Any, name: str) -> np.ndarray:
    pos = real_array(positions, name, "a 1-d array of non-negative integer positions")
    if pos.ndim != 1 or pos.dtype.kind not in "iu":
        raise TypeError(f"{name} must be a 1-d array of non-negative integers, got dtype {pos.dtype}, shape {pos.shape}")
    if pos.size and pos.min() < 0:
        raise ValueError(f"{name} must be non-negative, got minimum {pos.min()}")
    return pos.astype(np.int64)


def dca_position_ids(
    positions: Any,
    *,
    chunk_size: int,
    local_size: int,
    variant: str = "vllm",
) -> DCAPositions:
    """DCA's key id and three query ids for every position.

    Parameters
    ----------
    positions : array_like of int, shape (seq,)
        Token positions in the text, ``>= 0``.
    chunk_size : int, >= 2
        ``dual_chunk_attention_config["chunk_size"]``; the largest distance DCA produces
        (``"vllm"``) or one more than it (``"paper"``).
    local_size : int, 0 <= local_size < chunk_size
        ``dual_chunk_attention_config["local_size"]``: how many queries at the start of a chunk
        keep true distances to the previous chunk.
    variant : {"vllm", "paper"}, default "vllm"
        See :data:`DCA_VARIANTS`.

    Returns
    -------
    DCAPositions
    """
    chunk_size, local_size, chunk_len = _check_sizes(chunk_size, local_size)
    succ, inter = DCA_VARIANTS[check_choice(variant, DCA_VARIANTS, "variant")]
    pos = _check_ids(positions, "positions")
    offset = pos % chunk_len
    return DCAPositions(
        key=offset,
        intra=offset,
        successive=succ(offset, chunk_len, chunk_size).astype(np.int64),
        inter=np.full_like(offset, inter(chunk_len, chunk_size)),
        chunk=pos // chunk_len,
        chunk_len=chunk_len,
    )


def dca_relative_distances(
    query_positions: Any,
    key_positions: Any,
    *,
    chunk_size: int,
    local_size: int,
    variant: str = "vllm",
) -> DCADistances:
    """The relative distance RoPE sees for every (query, key) pair under DCA.

    A pair in the same chunk uses the intra-chunk query id, a key in the chunk just before the
    query's the successive-chunk id, a key further back the inter-chunk id; the distance is that
    query id minus the key's id ``n mod L``. Keys after their query are masked (causal).

    Parameters
    ----------
    query_positions : array_like of int, shape (n_queries,)
    key_positions : array_like of int, shape (n_keys,)
    chunk_size, local_size, variant
        As in :func:`dca_position_ids`.

    Returns
    -------
    DCADistances
    """
    qp = _check_ids(query_positions, "query_positions")
    kp = _check_ids(key_positions, "key_positions")
    q = dca_position_ids(qp, chunk_size=chunk_size, local_size=local_size, variant=variant)
    k = dca_position_ids(kp, chunk_size=chunk_size, local_size=local_size, variant=variant)
    gap = q.chunk[:, None] - k.chunk[None, :]
    true = qp[:, None] - kp[None, :]
    kind = np.select([true < 0, gap == 0, gap == 1], [0, 1, 2], default=3).astype(np.int8)
    query_id = np.select(
        [kind == 1, kind == 2, kind == 3],
        [q.intra[:, None], q.successive[:, None], q.inter[:, None]],
        default=0,
    )
    distance = np.where(kind > 0, query_id - k.key[None, :], -1).astype(np.int64)
    return DCADistances(distance=distance, true_distance=true.astype(np.int64), kind=kind)
