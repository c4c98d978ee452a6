"""The forward pass around the attention: RMSNorm, the SwiGLU MLP, decoder layers, the whole model.

:func:`rms_norm`; :func:`llama_stack` (attention-only pre-norm blocks); :func:`silu` and
:func:`swiglu_mlp`; :func:`decoder_layer` (Hugging Face's ``LlamaDecoderLayer``);
:func:`llama_forward` (``LlamaForCausalLM``: embeddings, the layers, the final norm, the head);
:func:`log_softmax` and :func:`token_log_likelihoods` (a perplexity from the logits).
"""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from .._checks import as_real_array, float_dtype
from .attention import KVCache, check_hidden_states, default_positions, llama_attention
from .weights import AttentionWeights, DecoderLayerWeights, LlamaWeights, MLPWeights, check_eps

__all__ = [
    "rms_norm",
    "llama_stack",
    "silu",
    "swiglu_mlp",
    "decoder_layer",
    "llama_forward",
    "log_softmax",
    "token_log_likelihoods",
]


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
    h = check_hidden_states(x, layers[0])
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
    x = check_hidden_states(x, layer.attention)
    eps = check_eps(eps)
    att, cache = llama_attention(rms_norm(x, layer.input_norm, eps), layer.attention, positions,
                                 cache=cache, mask=mask, causal=causal)
    h = x + att
    return h + swiglu_mlp(rms_norm(h, layer.post_attention_norm, eps), layer.mlp), cache


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
