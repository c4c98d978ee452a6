"""One LLaMA attention layer: per-head projections, RoPE on queries and keys, the KV cache.

:class:`KVCache` holds a layer's keys (rotated) and values; :func:`split_heads`,
:func:`merge_heads` and :func:`repeat_kv` move between ``(B, S, H*D)`` and per-head
``(B, H, S, D)``; :func:`default_positions` and :func:`positions_from_padding` give the new tokens
their positions; :func:`project_qkv`, :func:`llama_attention` and :func:`llama_attention_weights`
are the layer. Shapes as in :mod:`rope_edu.llama`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import as_real_array, check_int, check_positions, float_dtype
from ..attention import attention, attention_scores
from ..rope import apply_rope
from .weights import AttentionWeights

__all__ = [
    "KVCache",
    "split_heads",
    "merge_heads",
    "repeat_kv",
    "default_positions",
    "positions_from_padding",
    "check_hidden_states",
    "project_qkv",
    "llama_attention",
    "llama_attention_weights",
]


# --- the KV cache ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class KVCache:
    """Keys (already rotated by RoPE) and values of the tokens seen so far, for one layer.

    Keys are stored *after* rotation, each at its own position: a cached key is never rotated
    again. Values are stored as projected (RoPE never touches them). Only the ``n_kv_heads``
    key/value heads are stored, not the ``n_heads`` copies that :func:`repeat_kv` makes, which is
    where grouped-query attention saves memory.

    Parameters
    ----------
    keys : array_like, shape (batch, n_kv_heads, length, head_dim)
    values : array_like, shape (batch, n_kv_heads, length, head_dim)
    layer_idx : int, default 0
        The layer these keys and values belong to.
    """

    keys: np.ndarray
    values: np.ndarray
    layer_idx: int = 0

    def __post_init__(self) -> None:
        keys = as_real_array(self.keys, "keys", min_ndim=4)
        values = as_real_array(self.values, "values", min_ndim=4)
        if keys.ndim != 4:
            raise ValueError(f"keys must have shape (batch, n_kv_heads, length, head_dim), got {keys.shape}")
        if values.shape != keys.shape:
            raise ValueError(f"values must have the shape of keys {keys.shape}, got {values.shape}")
        set_ = object.__setattr__
        for name, arr in (("keys", keys), ("values", values)):
            arr = np.array(arr, dtype=float_dtype(arr.dtype))
            arr.flags.writeable = False
            set_(self, name, arr)
        set_(self, "layer_idx", check_int(self.layer_idx, "layer_idx", minimum=0))

    @classmethod
    def empty(cls, weights: AttentionWeights, batch: int = 1, dtype: Any = np.float64) -> "KVCache":
        """An empty cache (length 0) for the layer ``weights`` and ``batch`` sequences."""
        if not isinstance(weights, AttentionWeights):
            raise TypeError(f"weights must be AttentionWeights, got {type(weights).__name__}")
        batch = check_int(batch, "batch", minimum=1)
        shape = (batch, weights.n_kv_heads, 0, weights.head_dim)
        return cls(np.empty(shape, dtype=dtype), np.empty(shape, dtype=dtype), weights.layer_idx)

    @property
    def length(self) -> int:
        """Number of cached tokens (per sequence)."""
        return self.keys.shape[2]

    @property
    def batch(self) -> int:
        return self.keys.shape[0]

    @property
    def n_kv_heads(self) -> int:
        return self.keys.shape[1]

    @property
    def head_dim(self) -> int:
        return self.keys.shape[3]

    def append(self, keys: Any, values: Any) -> "KVCache":
        """A new cache with ``keys`` and ``values`` (shape ``(batch, n_kv_heads, S, head_dim)``)
        appended after the cached tokens; ``self`` is unchanged."""
        keys = as_real_array(keys, "keys", min_ndim=4)
        values = as_real_array(values, "values", min_ndim=4)
        expected = (self.batch, self.n_kv_heads, keys.shape[2] if keys.ndim == 4 else -1, self.head_dim)
        if keys.shape != expected or values.shape != keys.shape:
            raise ValueError(
                f"keys and values must have shape (batch, n_kv_heads, S, head_dim) = "
                f"({self.batch}, {self.n_kv_heads}, S, {self.head_dim}) to extend this cache, "
                f"got keys {keys.shape} and values {values.shape}"
            )
        return KVCache(
            np.concatenate([self.keys, keys], axis=2),
            np.concatenate([self.values, values], axis=2),
            self.layer_idx,
        )


def _check_cache(cache: Any, weights: AttentionWeights, batch: int) -> KVCache:
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a KVCache (or None), got {type(cache).__name__}")
    if cache.layer_idx != weights.layer_idx:
        raise ValueError(
            f"cache belongs to layer {cache.layer_idx} but the weights are layer {weights.layer_idx}; "
            f"every layer needs its own cache"
        )
    expected = (batch, weights.n_kv_heads, weights.head_dim)
    if (cache.batch, cache.n_kv_heads, cache.head_dim) != expected:
        raise ValueError(
            f"cache holds keys of shape {cache.keys.shape}, expected (batch, n_kv_heads, length, head_dim) "
            f"with batch={batch}, n_kv_heads={weights.n_kv_heads}, head_dim={weights.head_dim}"
        )
    return cache


# --- heads and positions ----------------------------------------------------------------------


def split_heads(x: Any, n_heads: int) -> np.ndarray:
    """``(B, S, n_heads * D) -> (B, n_heads, S, D)``: give each head its own slice of features.

    Head ``h`` gets features ``h*D .. (h+1)*D - 1``, the same split as Hugging Face's
    ``view(B, S, -1, D).transpose(1, 2)``.
    """
    x = as_real_array(x, "x", min_ndim=3)
    n_heads = check_int(n_heads, "n_heads", minimum=1)
    if x.ndim != 3 or x.shape[-1] % n_heads:
        raise ValueError(f"x must have shape (batch, seq, n_heads * head_dim) with n_heads={n_heads}, got {x.shape}")
    b, s, f = x.shape
    return x.reshape(b, s, n_heads, f // n_heads).transpose(0, 2, 1, 3)


def merge_heads(x: Any) -> np.ndarray:
    """``(B, H, S, D) -> (B, S, H * D)``: the inverse of :func:`split_heads`."""
    x = as_real_array(x, "x", min_ndim=4)
    if x.ndim != 4:
        raise ValueError(f"x must have shape (batch, n_heads, seq, head_dim), got {x.shape}")
    b, h, s, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, s, h * d)


def repeat_kv(x: Any, n_rep: int) -> np.ndarray:
    """``(B, G, L, D) -> (B, G * n_rep, L, D)``: each key/value head serves ``n_rep`` query heads.

    Query head ``h`` reads key/value head ``h // n_rep`` (heads are repeated in place,
    ``[k0, k0, k1, k1]`` for ``n_rep = 2``), as in Hugging Face's ``repeat_kv``.
    """
    x = as_real_array(x, "x", min_ndim=4)
    if x.ndim != 4:
        raise ValueError(f"x must have shape (batch, n_kv_heads, length, head_dim), got {x.shape}")
    n_rep = check_int(n_rep, "n_rep", minimum=1)
    return x if n_rep == 1 else np.repeat(x, n_rep, axis=1)


def default_positions(n_new: int, cache: KVCache | None = None) -> np.ndarray:
    """Positions of ``n_new`` tokens that follow the ``cache.length`` cached ones:
    ``cache.length, ..., cache.length + n_new - 1`` (``0 .. n_new - 1`` without a cache).

    Right when every sequence of the batch has all its tokens in the cache (no padding); with
    left padding, use :func:`positions_from_padding` and continue each row from its own count.
    """
    n_new = check_int(n_new, "n_new", minimum=0)
    offset = 0 if cache is None else cache.length
    return np.arange(offset, offset + n_new, dtype=np.int64)


def positions_from_padding(padding_mask: Any) -> np.ndarray:
    """Positions that count real tokens only: ``cumsum(padding_mask) - 1`` along each row.

    Parameters
    ----------
    padding_mask : array_like of bool, shape (batch, seq)
        ``True`` for real tokens, ``False`` for padding.

    Returns
    -------
    numpy.ndarray, shape (batch, seq), int64
        The ``j``-th real token of a row gets position ``j``; padding gets ``0`` (any value would
        do, as long as the padding is also masked out of attention). This is the convention of
        Hugging Face's ``generate``.
    """
    mask = np.asarray(padding_mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"padding_mask must be a boolean array (True = real token), got dtype {mask.dtype}")
    if mask.ndim != 2:
        raise ValueError(f"padding_mask must have shape (batch, seq), got {mask.shape}")
    return np.where(mask, np.cumsum(mask, axis=-1) - 1, 0).astype(np.int64)


def check_hidden_states(x: Any, weights: AttentionWeights) -> np.ndarray:
    """``x`` as an array of shape ``(B, S, hidden)`` with ``weights.hidden`` features, ``weights`` an
    :class:`AttentionWeights` (read by :mod:`.forward` too)."""
    if not isinstance(weights, AttentionWeights):
        raise TypeError(f"weights must be AttentionWeights, got {type(weights).__name__}")
    x = as_real_array(x, "x", min_ndim=3)
    if x.ndim != 3 or x.shape[-1] != weights.hidden:
        raise ValueError(f"x must have shape (batch, seq, hidden) with hidden={weights.hidden}, got {x.shape}")
    return x


def _check_step_positions(positions: Any, batch: int, seq: int) -> np.ndarray:
    pos = check_positions(positions, (batch, seq))
    if pos.shape not in {(seq,), (1, seq), (batch, seq)}:
        raise ValueError(
            f"positions must give one position per new token: shape (seq,) = ({seq},) or "
            f"(batch, seq) = ({batch}, {seq}), got {pos.shape}"
        )
    return pos if pos.ndim == 1 else pos[:, None, :]  # (B, 1, S): broadcasts over heads


# --- the layer --------------------------------------------------------------------------------


def project_qkv(x: Any, weights: AttentionWeights, positions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-head queries and keys rotated by RoPE at ``positions``, and values (not rotated).

    Parameters
    ----------
    x : array_like, shape (B, S, hidden)
    weights : AttentionWeights
    positions : array_like, shape (S,) or (B, S)

    Returns
    -------
    q : numpy.ndarray, shape (B, n_heads, S, head_dim)
        ``RoPE(x @ q_proj.T)``: every head rotated by the same angles (times
        ``attention_scaling`` when it is not 1).
    k : numpy.ndarray, shape (B, n_kv_heads, S, head_dim)
        ``RoPE(x @ k_proj.T)`` (times ``attention_scaling``).
    v : numpy.ndarray, shape (B, n_kv_heads, S, head_dim)
        ``x @ v_proj.T``, untouched by RoPE.
    """
    x = check_hidden_states(x, weights)
    pos = _check_step_positions(positions, x.shape[0], x.shape[1])
    q = apply_rope(split_heads(x @ weights.q_proj.T, weights.n_heads), pos, layout=weights.layout,
                   inv_freq=weights.frequencies)
    k = apply_rope(split_heads(x @ weights.k_proj.T, weights.n_kv_heads), pos, layout=weights.layout,
                   inv_freq=weights.frequencies)
    v = split_heads(x @ weights.v_proj.T, weights.n_kv_heads)
    if weights.attention_scaling != 1.0:
        q, k = q * q.dtype.type(weights.attention_scaling), k * k.dtype.type(weights.attention_scaling)
    return q, k, v


def _step(
    x: Any, weights: AttentionWeights, positions: Any, cache: Any, causal: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, KVCache]:
    """Shared by the public functions: (q, keys, values, new cache) with keys/values cached+new."""
    x = check_hidden_states(x, weights)
    batch, seq = x.shape[:2]
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    cache = KVCache.empty(weights, batch, x.dtype if x.dtype.kind == "f" else np.float64) if cache is None \
        else _check_cache(cache, weights, batch)
    if positions is None:
        positions = default_positions(seq, cache)
    q, k, v = project_qkv(x, weights, positions)
    cache = cache.append(k, v)  # rotated keys, plain values
    return q, repeat_kv(cache.keys, weights.n_rep), repeat_kv(cache.values, weights.n_rep), cache


def llama_attention(
    x: Any,
    weights: AttentionWeights,
    positions: Any = None,
    *,
    cache: KVCache | None = None,
    mask: Any = None,
    causal: bool = True,
) -> tuple[np.ndarray, KVCache]:
    """One LLaMA-style attention layer (no residual, no norm): the numpy twin of Hugging Face's
    ``LlamaAttention``.

    Parameters
    ----------
    x : array_like, shape (B, S, hidden)
        Hidden states of the ``S`` new tokens.
    weights : AttentionWeights
    positions : array_like, shape (S,) or (B, S), optional
        Positions of the new tokens. Default: they follow the cached ones,
        ``cache.length + arange(S)`` (:func:`default_positions`).
    cache : KVCache, optional
        Rotated keys and values of earlier tokens of this layer. ``None``: no earlier tokens.
    mask : array_like of bool, broadcastable to (B, n_heads, S, cache.length + S), optional
        ``True`` where a query may attend to a key (e.g. a padding mask
        ``padding[:, None, None, :]``); combined with the causal mask.
    causal : bool, default True
        New token ``i`` sees the cached tokens and new tokens ``0..i`` (the causal mask aligned to
        the last keys, :func:`rope_edu.causal_mask`).

    Returns
    -------
    out : numpy.ndarray, shape (B, S, hidden)
    cache : KVCache
        A new cache holding the old tokens followed by the ``S`` new ones (keys after RoPE).
    """
    q, k, v, cache = _step(x, weights, positions, cache, causal)
    heads = attention(q, k, v, causal=causal, mask=mask)  # (B, H, S, D)
    return merge_heads(heads) @ weights.o_proj.T, cache


def llama_attention_weights(
    x: Any,
    weights: AttentionWeights,
    positions: Any = None,
    *,
    cache: KVCache | None = None,
    mask: Any = None,
    causal: bool = True,
) -> np.ndarray:
    """The attention probabilities of :func:`llama_attention` (same arguments).

    Returns
    -------
    numpy.ndarray, shape (B, n_heads, S, cache.length + S)
        ``softmax(q kᵀ / sqrt(head_dim))`` with the masks applied; rows sum to one.
    """
    q, k, _, _ = _step(x, weights, positions, cache, causal)
    return attention_scores(q, k, causal=causal, mask=mask)
