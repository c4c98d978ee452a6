"""A LLaMA-style attention layer in numpy: RoPE on queries and keys, grouped-query heads, KV cache.

Written to be read next to Hugging Face's ``LlamaAttention`` (and checked against it in the
tests). One layer does, for the new tokens ``x`` at ``positions``::

    1. q = RoPE(split_heads(x @ q_proj.T))        per head, the same rotation for every head
       k = RoPE(split_heads(x @ k_proj.T))
       v = split_heads(x @ v_proj.T)              values: no RoPE
    2. keys, values = cache + (k, v)              keys are cached after rotation
    3. a = softmax(q @ repeat_kv(keys).T / sqrt(D) + mask)   causal mask aligned to the last keys
    4. out = merge_heads(a @ repeat_kv(values)) @ o_proj.T

Shapes, with ``B`` the batch, ``S`` the number of new tokens, ``L`` the number of keys (cached +
new), ``H`` query heads, ``G`` key/value heads (``H % G == 0``; grouped-query attention when
``G < H``, multi-query when ``G == 1``) and ``D`` the head dimension (even):

* hidden states ``x``: ``(B, S, hidden)``;
* weights as in Hugging Face's ``nn.Linear`` (``(out_features, in_features)``): ``q_proj``
  ``(H*D, hidden)``, ``k_proj`` and ``v_proj`` ``(G*D, hidden)``, ``o_proj`` ``(hidden, H*D)``;
* per-head queries ``(B, H, S, D)``, keys and values ``(B, G, L, D)``;
* positions ``(S,)`` (shared by the batch) or ``(B, S)`` (one row per sequence, e.g. with
  left padding).

The whole decoder around it (enough to run a trained LLaMA-architecture model, e.g. SmolLM2 read
by :mod:`rope_edu.trained`): :class:`MLPWeights` and :func:`swiglu_mlp` (``down(silu(gate x) *
up x)``), :class:`DecoderLayerWeights` and :func:`decoder_layer` (pre-norm attention and MLP with
RMSNorm gains), and :class:`LlamaWeights` and :func:`llama_forward` (token embeddings, the
layers, a final RMSNorm and the output projection, tied to the embeddings when ``lm_head`` is
``None``), the numpy twins of Hugging Face's ``LlamaMLP``, ``LlamaDecoderLayer`` and
``LlamaForCausalLM``; :func:`token_log_likelihoods` turns logits into a perplexity.

Everything is a plain function over numpy arrays; weights and caches are frozen dataclasses, so a
decoding step returns a *new* cache instead of changing the old one.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ._checks import (
    check_int,
    as_real_array,
    check_base,
    check_choice,
    check_dim,
    check_inv_freq,
    check_positions,
    float_dtype,
)
from .attention import attention, attention_scores
from .rope import LAYOUTS, apply_rope, frequencies

__all__ = [
    "AttentionWeights",
    "KVCache",
    "init_attention_weights",
    "init_stack_weights",
    "split_heads",
    "merge_heads",
    "repeat_kv",
    "default_positions",
    "positions_from_padding",
    "project_qkv",
    "llama_attention",
    "llama_attention_weights",
    "rms_norm",
    "llama_stack",
    "MLPWeights",
    "DecoderLayerWeights",
    "LlamaWeights",
    "silu",
    "swiglu_mlp",
    "decoder_layer",
    "llama_forward",
    "log_softmax",
    "token_log_likelihoods",
]


# --- validation helpers (local to this module) ----------------------------------------------




def _readonly_matrix(w: Any, name: str, shape: tuple[int, int], what: str) -> np.ndarray:
    arr = as_real_array(w, name, min_ndim=2)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {what} = {shape}, got {arr.shape}")
    arr = np.array(arr, dtype=float_dtype(arr.dtype))  # a private copy...
    arr.flags.writeable = False  # ...that nobody can change behind the frozen dataclass's back
    return arr


# --- weights ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class AttentionWeights:
    """The parameters of one LLaMA-style attention layer (validated when constructed).

    Parameters
    ----------
    q_proj : array_like, shape (n_heads * head_dim, hidden)
    k_proj : array_like, shape (n_kv_heads * head_dim, hidden)
    v_proj : array_like, shape (n_kv_heads * head_dim, hidden)
    o_proj : array_like, shape (hidden, n_heads * head_dim)
        Projection matrices laid out like ``torch.nn.Linear.weight`` (``y = x @ W.T``), so
        Hugging Face's ``q_proj.weight`` etc. can be used as they are.
    n_heads : int
        Number of query heads ``H``.
    n_kv_heads : int
        Number of key/value heads ``G``; must divide ``n_heads``. ``G < H`` is grouped-query
        attention: query head ``h`` reads key/value head ``h // (H // G)``.
    head_dim : int
        Even head dimension ``D``, the ``dim`` RoPE rotates.
    base : float, default 10000.0
        RoPE frequency base (Hugging Face's ``rope_theta``).
    layout : {"half", "interleaved"}, default "half"
        RoPE pairing; ``"half"`` (pairs ``(i, i + D/2)``) is what Hugging Face's LLaMA uses.
    inv_freq : array_like, shape (head_dim // 2,), optional
        Frequencies to use instead of ``frequencies(head_dim, base)`` (scaled RoPE variants).
    layer_idx : int, default 0
        Index of this layer in its stack; a :class:`KVCache` belongs to one layer.
    attention_scaling : float, default 1.0
        Multiplies the rotated queries and keys (so the attention logits by its square), as
        Hugging Face multiplies cos and sin by a scaled RoPE's ``attention_factor`` (YaRN's
        :func:`rope_edu.scaling.yarn_attention_factor`); the second value
        :func:`rope_edu.scaling.scaled_frequencies` returns.
    """

    q_proj: np.ndarray
    k_proj: np.ndarray
    v_proj: np.ndarray
    o_proj: np.ndarray
    n_heads: int
    n_kv_heads: int
    head_dim: int
    base: float = 10000.0
    layout: str = "half"
    inv_freq: np.ndarray | None = None
    layer_idx: int = 0
    attention_scaling: float = 1.0

    def __post_init__(self) -> None:
        n_heads = check_int(self.n_heads, "n_heads", minimum=1)
        n_kv_heads = check_int(self.n_kv_heads, "n_kv_heads", minimum=1)
        if n_heads % n_kv_heads:
            raise ValueError(
                f"n_heads ({n_heads}) must be a multiple of n_kv_heads ({n_kv_heads}): each key/value "
                f"head serves n_heads // n_kv_heads query heads"
            )
        head_dim = check_dim(self.head_dim, "head_dim")
        q = as_real_array(self.q_proj, "q_proj", min_ndim=2)
        if q.ndim != 2:
            raise ValueError(f"q_proj must be a 2-d (out_features, in_features) matrix, got shape {q.shape}")
        hidden = q.shape[1]
        set_ = object.__setattr__  # frozen dataclass: normalise fields once, here
        set_(self, "n_heads", n_heads)
        set_(self, "n_kv_heads", n_kv_heads)
        set_(self, "head_dim", head_dim)
        set_(self, "q_proj", _readonly_matrix(q, "q_proj", (n_heads * head_dim, hidden), "(n_heads * head_dim, hidden)"))
        kv_shape = (n_kv_heads * head_dim, hidden)
        set_(self, "k_proj", _readonly_matrix(self.k_proj, "k_proj", kv_shape, "(n_kv_heads * head_dim, hidden)"))
        set_(self, "v_proj", _readonly_matrix(self.v_proj, "v_proj", kv_shape, "(n_kv_heads * head_dim, hidden)"))
        set_(self, "o_proj", _readonly_matrix(self.o_proj, "o_proj", (hidden, n_heads * head_dim), "(hidden, n_heads * head_dim)"))
        set_(self, "base", check_base(self.base))
        set_(self, "layout", check_choice(self.layout, LAYOUTS, "layout"))
        if self.inv_freq is not None:
            freqs = check_inv_freq(self.inv_freq, head_dim).copy()
            freqs.flags.writeable = False
            set_(self, "inv_freq", freqs)
        set_(self, "layer_idx", check_int(self.layer_idx, "layer_idx", minimum=0))
        scaling = self.attention_scaling
        if isinstance(scaling, (bool, np.bool_)) or not isinstance(scaling, numbers.Real):
            raise TypeError(f"attention_scaling must be a positive real number, got {scaling!r}")
        if not (np.isfinite(scaling) and scaling > 0):
            raise ValueError(f"attention_scaling must be a positive real number, got {scaling!r}")
        set_(self, "attention_scaling", float(scaling))

    @property
    def hidden(self) -> int:
        """Width of the hidden states (``in_features`` of the projections)."""
        return self.q_proj.shape[1]

    @property
    def n_rep(self) -> int:
        """Query heads per key/value head, ``n_heads // n_kv_heads``."""
        return self.n_heads // self.n_kv_heads

    @property
    def frequencies(self) -> np.ndarray:
        """The RoPE frequencies this layer uses, shape ``(head_dim // 2,)``."""
        return frequencies(self.head_dim, self.base) if self.inv_freq is None else self.inv_freq


def init_attention_weights(
    rng: np.random.Generator,
    hidden: int,
    n_heads: int,
    n_kv_heads: int,
    head_dim: int,
    *,
    base: float = 10000.0,
    layout: str = "half",
    layer_idx: int = 0,
) -> AttentionWeights:
    """Random weights for one layer, drawn from ``N(0, 1/in_features)`` (unit-scale outputs).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (pass ``np.random.default_rng(seed)`` for reproducible weights).
    hidden, n_heads, n_kv_heads, head_dim, base, layout, layer_idx
        As in :class:`AttentionWeights`.

    Returns
    -------
    AttentionWeights
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    hidden = check_int(hidden, "hidden", minimum=1)
    n_heads = check_int(n_heads, "n_heads", minimum=1)
    n_kv_heads = check_int(n_kv_heads, "n_kv_heads", minimum=1)
    head_dim = check_dim(head_dim, "head_dim")

    def linear(out_features: int, in_features: int) -> np.ndarray:
        return rng.normal(0.0, in_features**-0.5, size=(out_features, in_features))

    return AttentionWeights(
        q_proj=linear(n_heads * head_dim, hidden),
        k_proj=linear(n_kv_heads * head_dim, hidden),
        v_proj=linear(n_kv_heads * head_dim, hidden),
        o_proj=linear(hidden, n_heads * head_dim),
        n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=head_dim,
        base=base, layout=layout, layer_idx=layer_idx,
    )


def init_stack_weights(
    rng: np.random.Generator,
    n_layers: int,
    hidden: int,
    n_heads: int,
    n_kv_heads: int,
    head_dim: int,
    *,
    base: float = 10000.0,
    layout: str = "half",
) -> tuple[AttentionWeights, ...]:
    """Random weights for ``n_layers`` layers, with ``layer_idx`` 0, 1, ..., ``n_layers - 1``."""
    n_layers = check_int(n_layers, "n_layers", minimum=1)
    return tuple(
        init_attention_weights(rng, hidden, n_heads, n_kv_heads, head_dim, base=base, layout=layout, layer_idx=i)
        for i in range(n_layers)
    )


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


def _check_x(x: Any, weights: AttentionWeights) -> np.ndarray:
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
    x = _check_x(x, weights)
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
    x = _check_x(x, weights)
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


# --- a stack of layers ------------------------------------------------------------------------


def rms_norm(x: Any, weight: Any = None, eps: float = 1e-6) -> np.ndarray:
    """RMSNorm over the last axis: ``x / sqrt(mean(x**2) + eps) * weight``.

    Parameters
    ----------
    x : array_like, shape (..., hidden)
    weight : array_like, shape (hidden,), optional
        Learned gain; ``None`` means ones.
    eps : float, default 1e-6
        Added to the mean square (Hugging Face's ``rms_norm_eps``).

    Returns
    -------
    numpy.ndarray, shape x.shape
    """
    x = as_real_array(x, "x")
    x = x.astype(float_dtype(x.dtype), copy=False)
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be a real number >= 0, got {eps!r} of type {type(eps).__name__}")
    if not eps >= 0:
        raise ValueError(f"eps must be a real number >= 0, got {eps!r}")
    out = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    if weight is not None:
        w = as_real_array(weight, "weight")
        if w.shape != x.shape[-1:]:
            raise ValueError(f"weight must have shape (hidden,) = {x.shape[-1:]}, got {w.shape}")
        out = out * w
    return out


def llama_stack(
    x: Any,
    layers: Sequence[AttentionWeights],
    positions: Any = None,
    *,
    caches: Sequence[KVCache | None] | None = None,
    mask: Any = None,
    causal: bool = True,
    eps: float = 1e-6,
) -> tuple[np.ndarray, tuple[KVCache, ...]]:
    """Attention-only pre-norm blocks, ``h <- h + llama_attention(rms_norm(h), layer)``.

    A LLaMA decoder without its MLPs (and with unit RMSNorm gains). The same ``positions`` go to
    every layer, and every layer rotates its own queries and keys with them: RoPE does not
    write positions into the hidden states, so a layer that skipped it would not see distances.

    Parameters
    ----------
    x : array_like, shape (B, S, hidden)
    layers : sequence of AttentionWeights
        ``layers[i].layer_idx`` must be ``i``.
    positions : array_like, shape (S,) or (B, S), optional
        Default: ``caches[0].length + arange(S)``.
    caches : sequence of KVCache, optional
        One per layer, in order (``None``: nothing cached yet).
    mask, causal
        As in :func:`llama_attention`.
    eps : float, default 1e-6
        RMSNorm epsilon.

    Returns
    -------
    out : numpy.ndarray, shape (B, S, hidden)
    caches : tuple of KVCache
        The updated cache of every layer.
    """
    if isinstance(layers, AttentionWeights) or not isinstance(layers, Sequence) or not layers:
        raise TypeError("layers must be a non-empty sequence (list or tuple) of AttentionWeights")
    for i, layer in enumerate(layers):
        if not isinstance(layer, AttentionWeights):
            raise TypeError(f"layers[{i}] must be AttentionWeights, got {type(layer).__name__}")
        if layer.layer_idx != i:
            raise ValueError(f"layers[{i}] has layer_idx {layer.layer_idx}; layers must be given in order 0, 1, ...")
    if caches is None:
        caches = [None] * len(layers)
    elif not isinstance(caches, Sequence) or len(caches) != len(layers):
        raise ValueError(f"caches must be a sequence of {len(layers)} KVCache, one per layer")
    else:
        lengths = {c.length if isinstance(c, KVCache) else 0 for c in caches}
        if len(lengths) > 1:
            raise ValueError(f"caches must all hold the same number of tokens, got lengths {sorted(lengths)}")
    h = _check_x(x, layers[0])
    if positions is None:
        first = caches[0]
        if first is not None and not isinstance(first, KVCache):
            raise TypeError(f"caches[0] must be a KVCache, got {type(first).__name__}")
        positions = default_positions(h.shape[1], first)
    new_caches = []
    for layer, cache in zip(layers, caches):
        out, cache = llama_attention(rms_norm(h, eps=eps), layer, positions, cache=cache, mask=mask, causal=causal)
        h = h + out
        new_caches.append(cache)
    return h, tuple(new_caches)


# --- the whole decoder: MLP, decoder layer, embeddings and head --------------------------------


def _readonly_vector(w: Any, name: str, size: int) -> np.ndarray:
    arr = as_real_array(w, name)
    if arr.shape != (size,):
        raise ValueError(f"{name} must have shape (hidden,) = ({size},), got {arr.shape}")
    arr = np.array(arr, dtype=float_dtype(arr.dtype))
    arr.flags.writeable = False
    return arr


def _check_eps(eps: Any) -> float:
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be a real number >= 0, got {eps!r} of type {type(eps).__name__}")
    if not float(eps) >= 0:
        raise ValueError(f"eps must be a real number >= 0, got {eps!r}")
    return float(eps)


@dataclass(frozen=True, eq=False)
class MLPWeights:
    """The parameters of a LLaMA feed-forward block (SwiGLU), validated when constructed.

    Parameters
    ----------
    gate_proj : array_like, shape (intermediate, hidden)
    up_proj : array_like, shape (intermediate, hidden)
    down_proj : array_like, shape (hidden, intermediate)
        Laid out like ``torch.nn.Linear.weight`` (Hugging Face's ``LlamaMLP``).
    """

    gate_proj: np.ndarray
    up_proj: np.ndarray
    down_proj: np.ndarray

    def __post_init__(self) -> None:
        gate = as_real_array(self.gate_proj, "gate_proj", min_ndim=2)
        if gate.ndim != 2:
            raise ValueError(f"gate_proj must be a 2-d (intermediate, hidden) matrix, got shape {gate.shape}")
        inter, hidden = gate.shape
        set_ = object.__setattr__
        set_(self, "gate_proj", _readonly_matrix(gate, "gate_proj", (inter, hidden), "(intermediate, hidden)"))
        set_(self, "up_proj", _readonly_matrix(self.up_proj, "up_proj", (inter, hidden), "(intermediate, hidden)"))
        set_(self, "down_proj", _readonly_matrix(self.down_proj, "down_proj", (hidden, inter), "(hidden, intermediate)"))

    @property
    def hidden(self) -> int:
        return self.gate_proj.shape[1]

    @property
    def intermediate(self) -> int:
        return self.gate_proj.shape[0]


def silu(x: Any) -> np.ndarray:
    """``x * sigmoid(x)`` (the "swish" of SwiGLU), elementwise; floating input keeps its dtype."""
    x = as_real_array(x, "x", min_ndim=0)
    x = x.astype(float_dtype(x.dtype), copy=False)
    with np.errstate(over="ignore"):  # exp(-x) overflows to inf for very negative x: silu -> -0
        return x / (1.0 + np.exp(-x))


def swiglu_mlp(x: Any, mlp: MLPWeights) -> np.ndarray:
    """LLaMA's feed-forward block, ``down(silu(x @ gate.T) * (x @ up.T))``.

    Parameters
    ----------
    x : array_like, shape (..., hidden)
    mlp : MLPWeights

    Returns
    -------
    numpy.ndarray, shape (..., hidden)
    """
    if not isinstance(mlp, MLPWeights):
        raise TypeError(f"mlp must be MLPWeights, got {type(mlp).__name__}")
    x = as_real_array(x, "x")
    if x.shape[-1] != mlp.hidden:
        raise ValueError(f"x must have shape (..., hidden) with hidden={mlp.hidden}, got {x.shape}")
    return (silu(x @ mlp.gate_proj.T) * (x @ mlp.up_proj.T)) @ mlp.down_proj.T


@dataclass(frozen=True, eq=False)
class DecoderLayerWeights:
    """One LLaMA decoder layer: attention and MLP, each after its own RMSNorm (pre-norm).

    Parameters
    ----------
    attention : AttentionWeights
    mlp : MLPWeights
        Its ``hidden`` must be the attention's.
    input_norm : array_like, shape (hidden,)
        RMSNorm gain before attention (Hugging Face's ``input_layernorm.weight``).
    post_attention_norm : array_like, shape (hidden,)
        RMSNorm gain before the MLP (``post_attention_layernorm.weight``).
    """

    attention: AttentionWeights
    mlp: MLPWeights
    input_norm: np.ndarray
    post_attention_norm: np.ndarray

    def __post_init__(self) -> None:
        if not isinstance(self.attention, AttentionWeights):
            raise TypeError(f"attention must be AttentionWeights, got {type(self.attention).__name__}")
        if not isinstance(self.mlp, MLPWeights):
            raise TypeError(f"mlp must be MLPWeights, got {type(self.mlp).__name__}")
        hidden = self.attention.hidden
        if self.mlp.hidden != hidden:
            raise ValueError(f"mlp has hidden={self.mlp.hidden} but attention has hidden={hidden}")
        set_ = object.__setattr__
        set_(self, "input_norm", _readonly_vector(self.input_norm, "input_norm", hidden))
        set_(self, "post_attention_norm", _readonly_vector(self.post_attention_norm, "post_attention_norm", hidden))

    @property
    def layer_idx(self) -> int:
        return self.attention.layer_idx


def decoder_layer(
    x: Any,
    layer: DecoderLayerWeights,
    positions: Any = None,
    *,
    cache: KVCache | None = None,
    mask: Any = None,
    causal: bool = True,
    eps: float = 1e-6,
) -> tuple[np.ndarray, KVCache]:
    """One LLaMA decoder layer, the numpy twin of Hugging Face's ``LlamaDecoderLayer``::

        h = x + llama_attention(rms_norm(x, input_norm), attention)
        out = h + swiglu_mlp(rms_norm(h, post_attention_norm), mlp)

    Parameters
    ----------
    x : array_like, shape (B, S, hidden)
    layer : DecoderLayerWeights
    positions, cache, mask, causal
        As in :func:`llama_attention`.
    eps : float, default 1e-6
        RMSNorm epsilon (``rms_norm_eps``).

    Returns
    -------
    out : numpy.ndarray, shape (B, S, hidden)
    cache : KVCache
        The attention's new cache.
    """
    if not isinstance(layer, DecoderLayerWeights):
        raise TypeError(f"layer must be DecoderLayerWeights, got {type(layer).__name__}")
    x = _check_x(x, layer.attention)
    eps = _check_eps(eps)
    att, cache = llama_attention(rms_norm(x, layer.input_norm, eps), layer.attention, positions,
                                 cache=cache, mask=mask, causal=causal)
    h = x + att
    return h + swiglu_mlp(rms_norm(h, layer.post_attention_norm, eps), layer.mlp), cache


@dataclass(frozen=True, eq=False)
class LlamaWeights:
    """A whole LLaMA-architecture language model (validated when constructed).

    Parameters
    ----------
    embed_tokens : array_like, shape (vocab, hidden)
        Token embeddings (row ``t`` is token ``t``'s input vector).
    layers : sequence of DecoderLayerWeights
        ``layers[i].layer_idx`` must be ``i``.
    norm : array_like, shape (hidden,)
        Gain of the final RMSNorm.
    lm_head : array_like, shape (vocab, hidden), optional
        Output projection; ``None`` ties it to ``embed_tokens`` (SmolLM2 does).
    eps : float, default 1e-6
        RMSNorm epsilon of every norm (``rms_norm_eps``).
    """

    embed_tokens: np.ndarray
    layers: tuple
    norm: np.ndarray
    lm_head: np.ndarray | None = None
    eps: float = 1e-6

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if isinstance(self.layers, DecoderLayerWeights) or not isinstance(self.layers, Sequence) or not self.layers:
            raise TypeError("layers must be a non-empty sequence (list or tuple) of DecoderLayerWeights")
        for i, layer in enumerate(self.layers):
            if not isinstance(layer, DecoderLayerWeights):
                raise TypeError(f"layers[{i}] must be DecoderLayerWeights, got {type(layer).__name__}")
            if layer.layer_idx != i:
                raise ValueError(f"layers[{i}] has layer_idx {layer.layer_idx}; layers must be given in order 0, 1, ...")
        hidden = self.layers[0].attention.hidden
        emb = as_real_array(self.embed_tokens, "embed_tokens", min_ndim=2)
        if emb.ndim != 2 or emb.shape[1] != hidden:
            raise ValueError(f"embed_tokens must have shape (vocab, hidden) with hidden={hidden}, got {emb.shape}")
        set_(self, "layers", tuple(self.layers))
        set_(self, "embed_tokens", _readonly_matrix(emb, "embed_tokens", emb.shape, "(vocab, hidden)"))
        set_(self, "norm", _readonly_vector(self.norm, "norm", hidden))
        if self.lm_head is not None:
            set_(self, "lm_head", _readonly_matrix(self.lm_head, "lm_head", emb.shape, "(vocab, hidden)"))
        set_(self, "eps", _check_eps(self.eps))

    @property
    def vocab(self) -> int:
        return self.embed_tokens.shape[0]

    @property
    def hidden(self) -> int:
        return self.embed_tokens.shape[1]

    @property
    def tied(self) -> bool:
        """Whether the output projection is the embedding matrix (``lm_head is None``)."""
        return self.lm_head is None

    @property
    def attention_layers(self) -> tuple[AttentionWeights, ...]:
        return tuple(layer.attention for layer in self.layers)

    def with_attention(self, **changes: Any) -> "LlamaWeights":
        """A copy whose every attention layer has ``changes`` applied (e.g. ``layout="interleaved"``,
        ``inv_freq=...`` or new ``q_proj``/``k_proj`` via a callable), the rest shared.

        Each value may be a callable ``f(attention_weights) -> value``, called per layer.
        """
        from dataclasses import replace

        layers = []
        for layer in self.layers:
            att = layer.attention
            new = {k: (v(att) if callable(v) else v) for k, v in changes.items()}
            layers.append(replace(layer, attention=replace(att, **new)))
        return replace(self, layers=tuple(layers))


def _check_tokens(tokens: Any, vocab: int) -> np.ndarray:
    arr = np.asarray(tokens)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"tokens must be an integer array of token ids, got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"tokens must have shape (seq,) or (batch, seq) with seq >= 1, got {np.asarray(tokens).shape}")
    if arr.min() < 0 or arr.max() >= vocab:
        raise ValueError(f"tokens must be ids in 0 .. {vocab - 1} (the vocabulary), got {arr.min()} .. {arr.max()}")
    return arr.astype(np.int64, copy=False)


def llama_forward(
    tokens: Any,
    model: LlamaWeights,
    positions: Any = None,
    *,
    caches: Sequence[KVCache | None] | None = None,
    mask: Any = None,
    last_only: bool = False,
) -> tuple[np.ndarray, tuple[KVCache, ...]]:
    """Next-token logits of a LLaMA model: embed, ``len(layers)`` decoder layers, RMSNorm, head.

    The numpy twin of Hugging Face's ``LlamaForCausalLM.forward``; it computes in the weights'
    dtype (float32 weights: float32 throughout).

    Parameters
    ----------
    tokens : array_like of int, shape (S,) or (B, S)
        Token ids of the new tokens.
    model : LlamaWeights
    positions : array_like, shape (S,) or (B, S), optional
        Default: ``caches[0].length + arange(S)``.
    caches : sequence of KVCache, optional
        One per layer (from an earlier call); ``None``: no earlier tokens.
    mask : array_like of bool, optional
        As in :func:`llama_attention`; combined with the causal mask.
    last_only : bool, default False
        Return the logits of the last token only (what generation needs; saves the
        ``(S, vocab)`` product).

    Returns
    -------
    logits : numpy.ndarray, shape (B, S, vocab) (``(B, 1, vocab)`` with ``last_only``)
    caches : tuple of KVCache
        Every layer's cache, the new tokens appended.
    """
    if not isinstance(model, LlamaWeights):
        raise TypeError(f"model must be LlamaWeights, got {type(model).__name__}")
    ids = _check_tokens(tokens, model.vocab)
    if caches is None:
        caches = [None] * len(model.layers)
    elif not isinstance(caches, Sequence) or len(caches) != len(model.layers):
        raise ValueError(f"caches must be a sequence of {len(model.layers)} KVCache, one per layer")
    first = caches[0]
    if first is not None and not isinstance(first, KVCache):
        raise TypeError(f"caches[0] must be a KVCache, got {type(first).__name__}")
    if positions is None:
        positions = default_positions(ids.shape[1], first)
    h = model.embed_tokens[ids]
    new_caches = []
    for layer, cache in zip(model.layers, caches):
        h, cache = decoder_layer(h, layer, positions, cache=cache, mask=mask, eps=model.eps)
        new_caches.append(cache)
    if last_only:
        h = h[:, -1:]
    head = model.embed_tokens if model.lm_head is None else model.lm_head
    return rms_norm(h, model.norm, model.eps) @ head.T, tuple(new_caches)


def log_softmax(logits: Any, axis: int = -1) -> np.ndarray:
    """``logits - logsumexp(logits)`` along ``axis``, computed stably (floating dtype kept)."""
    z = as_real_array(logits, "logits")
    z = z.astype(float_dtype(z.dtype), copy=False)
    z = z - np.max(z, axis=axis, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def token_log_likelihoods(logits: Any, tokens: Any) -> np.ndarray:
    """Log-probability the model gave each next token: ``log p(tokens[t + 1] | tokens[:t + 1])``.

    Parameters
    ----------
    logits : array_like, shape (B, S, vocab) or (S, vocab)
        From :func:`llama_forward` on ``tokens``.
    tokens : array_like of int, shape (B, S) or (S,)

    Returns
    -------
    numpy.ndarray, shape (B, S - 1) or (S - 1,), float64
        The perplexity of the text is ``exp(-mean(...))``.
    """
    z = as_real_array(logits, "logits", min_ndim=2)
    ids = np.asarray(tokens)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"tokens must be an integer array of token ids, got dtype {ids.dtype}")
    if ids.shape != z.shape[:-1]:
        raise ValueError(f"tokens must have shape logits.shape[:-1] = {z.shape[:-1]}, got {ids.shape}")
    if ids.shape[-1] < 2:
        raise ValueError("tokens must hold at least 2 tokens (the first one is never predicted)")
    logp = log_softmax(z[..., :-1, :].astype(np.float64))
    return np.take_along_axis(logp, ids[..., 1:, None], axis=-1)[..., 0]
