"""Scaled dot-product softmax attention, the operation RoPE feeds.

Used by chapter 1 (attention without positions is permutation equivariant) and by the
LLaMA-style layer of chapter 7.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._checks import as_real_array, check_int, check_real, finite_float64, float_dtype, real_array

__all__ = ["softmax", "causal_mask", "attention_scores", "attention", "attention_entropy", "logn_scale",
           "power_scale"]


def softmax(logits: Any, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax: subtracts the maximum before exponentiating.

    ``-inf`` marks a masked entry; rows that are entirely ``-inf`` (fully masked) give zeros
    instead of NaN. NaN and ``+inf`` are rejected.

    Parameters
    ----------
    logits : array_like
        Real-valued scores.
    axis : int, default -1
        Axis that sums to one.

    Returns
    -------
    numpy.ndarray, same shape as ``logits``, floating
    """
    z = as_real_array(logits, "logits")
    z = z.astype(float_dtype(z.dtype), copy=False)
    if np.isnan(z).any() or np.isposinf(z).any():
        raise ValueError("logits must be finite or -inf (masked); got NaN or +inf")
    if z.size == 0:
        return z.copy()
    zmax = np.max(z, axis=axis, keepdims=True)
    zmax = np.where(np.isfinite(zmax), zmax, 0.0)
    with np.errstate(over="ignore"):  # a gap beyond the float range: exp(-inf) = 0 is right
        e = np.exp(z - zmax)
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def causal_mask(n_queries: int, n_keys: int) -> np.ndarray:
    """Boolean mask, shape ``(n_queries, n_keys)``: ``True`` where a query may attend.

    Queries are the *last* ``n_queries`` tokens of the ``n_keys`` (as when new tokens are
    appended to a KV cache): query ``i`` sees keys ``0 .. n_keys - n_queries + i``.
    """
    for name, val in (("n_queries", n_queries), ("n_keys", n_keys)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)):
            raise TypeError(f"{name} must be a non-negative integer, got {val!r} of type {type(val).__name__}")
        if val < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {val}")
    if n_queries > n_keys:
        raise ValueError(f"n_queries ({n_queries}) cannot exceed n_keys ({n_keys}) in a causal mask")
    offset = n_keys - n_queries
    return np.arange(n_keys)[None, :] <= (np.arange(n_queries)[:, None] + offset)


def _check_qkv(q: Any, k: Any, v: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = as_real_array(q, "q", min_ndim=2)
    k = as_real_array(k, "k", min_ndim=2)
    v = as_real_array(v, "v", min_ndim=2)
    if q.shape[-1] == 0:
        raise ValueError(f"q and k must have a non-empty last dimension (head_dim), got q.shape={q.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last dimension, got q.shape={q.shape} and k.shape={k.shape}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of tokens (axis -2), got k.shape={k.shape} and v.shape={v.shape}")
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"leading (batch/head) axes of q {q.shape[:-2]}, k {k.shape[:-2]} and v {v.shape[:-2]} do not broadcast"
        ) from None
    return q, k, v


def attention_scores(q: Any, k: Any, *, causal: bool = False, mask: Any = None) -> np.ndarray:
    """Attention weights ``softmax(q kᵀ / sqrt(d))`` over the last two axes.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d)
    k : array_like, shape (..., n_k, d)
    causal : bool, default False
        Apply :func:`causal_mask` (queries are the last ``n_q`` of the ``n_k`` tokens).
    mask : array_like of bool, broadcastable to (..., n_q, n_k), optional
        ``True`` where attending is allowed; combined with ``causal``.

    Returns
    -------
    numpy.ndarray, shape (..., n_q, n_k)
        Each row sums to one (or is all zeros if every key is masked).
    """
    q, k, _ = _check_qkv(q, k, k)
    return _weights(q, k, causal, mask)


def _weights(q: np.ndarray, k: np.ndarray, causal: bool, mask: Any, dtype: Any = None) -> np.ndarray:
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    dtype = dtype or np.result_type(float_dtype(q.dtype), float_dtype(k.dtype))
    logits = np.matmul(q.astype(dtype, copy=False), np.swapaxes(k.astype(dtype, copy=False), -1, -2))
    logits /= np.sqrt(q.shape[-1])
    allowed = None
    if causal:
        allowed = causal_mask(q.shape[-2], k.shape[-2])
    if mask is not None:
        m = np.asarray(mask)
        if m.dtype != np.bool_:
            raise TypeError(f"mask must be a boolean array (True = may attend), got dtype {m.dtype}")
        try:
            np.broadcast_shapes(m.shape, logits.shape)
        except ValueError:
            raise ValueError(f"mask of shape {m.shape} does not broadcast to the scores' shape {logits.shape}") from None
        allowed = m if allowed is None else (allowed & m)
    if allowed is not None:
        logits = np.where(allowed, logits, -np.inf)
    return softmax(logits, axis=-1)


def attention(q: Any, k: Any, v: Any, *, causal: bool = False, mask: Any = None) -> np.ndarray:
    """Scaled dot-product attention ``softmax(q kᵀ / sqrt(d)) v`` over the last two axes.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d)
        Queries.
    k : array_like, shape (..., n_k, d)
        Keys.
    v : array_like, shape (..., n_k, d_v)
        Values.
    causal : bool, default False
        Each query attends only to keys at or before it (queries are the last ``n_q`` tokens).
    mask : array_like of bool, broadcastable to (..., n_q, n_k), optional
        ``True`` where attending is allowed.

    Returns
    -------
    numpy.ndarray, shape (..., n_q, d_v)
        In the widest floating dtype of q, k and v (float64 for integer inputs). A query whose
        keys are all masked (or with no keys at all) gets a zero output.
    """
    q, k, v = _check_qkv(q, k, v)
    dtype = np.result_type(float_dtype(q.dtype), float_dtype(k.dtype), float_dtype(v.dtype))
    w = _weights(q, k, causal, mask, dtype)
    return np.matmul(w, v.astype(dtype, copy=False))


# --- attention scaled by position or length ---------------------------------------------------------


def _positions(positions: Any) -> np.ndarray:
    pos = finite_float64(real_array(positions, "positions", "integer or real positions"), "positions")
    if np.any(pos < 0):
        raise ValueError("positions must be >= 0 (0 is the first token)")
    return pos


def logn_scale(positions: Any, trained_length: int) -> np.ndarray:
    """Qwen's ``use_logn_attn``: the factor on the query of the token at each position.

    A query at position :math:`m` (0-based) sees :math:`n = m + 1` keys under a causal mask; its
    logits are multiplied by :math:`\\max(1, \\ln n / \\ln L)`, i.e. by :math:`\\log_L n` once
    :math:`n` exceeds the trained length :math:`L` and by 1 within it. Su's entropy-invariance
    argument: the entropy of a softmax over :math:`n` comparable logits grows like :math:`\\ln n`,
    and a factor proportional to :math:`\\ln n` on the logits holds it near its value at the trained
    length (Qwen's released code applies the factor past :math:`L` only).

    Parameters
    ----------
    positions : array_like of int or float, any shape
        Positions of the queries, 0 for the first token.
    trained_length : int >= 2
        The length :math:`L` the model was trained on (Qwen's ``seq_length``).

    Returns
    -------
    numpy.ndarray, shape positions.shape, float64
        The factor, 1 for every position below ``trained_length``.
    """
    pos = _positions(positions)
    length = check_int(trained_length, "trained_length", 2)
    return np.maximum(1.0, np.log1p(pos) / np.log(length))


def power_scale(positions: Any, length: float, exponent: float) -> np.ndarray:
    """Beam's query scale on its NoPE layers: :math:`(1 + (m + 1)/\\text{length})^{\\text{exponent}}`.

    transformers' ``compute_attention_scaling`` (``models/beam``), with ``length`` 2048 and
    ``exponent`` 0.1 there: the logits are multiplied by a factor that grows like
    :math:`\\exp(\\text{exponent} \\cdot \\ln(1 + n/\\text{length}))` for :math:`n = m + 1` keys,
    a slowly growing power of the length in the spirit of scalable softmax (logits times
    :math:`s \\ln n`).

    Parameters
    ----------
    positions : array_like of int or float, any shape
        Positions of the queries, 0 for the first token.
    length : float > 0
        The length scale (2048 in Beam).
    exponent : float
        The power (0.1 in Beam).

    Returns
    -------
    numpy.ndarray, shape positions.shape, float64
    """
    pos = _positions(positions)
    length = check_real(length, "length")
    if length <= 0:
        raise ValueError(f"length must be > 0, got {length}")
    exponent = check_real(exponent, "exponent")
    return np.exp(exponent * np.log1p((pos + 1.0) / length))


def attention_entropy(weights: Any, axis: int = -1) -> np.ndarray:
    """Entropy (in nats) of attention weights along ``axis``: :math:`-\\sum_j p_j \\ln p_j`.

    Parameters
    ----------
    weights : array_like, shape (..., n_keys, ...)
        Non-negative weights that sum to 1 along ``axis`` (a softmax's output; masked keys are 0).
    axis : int, default -1
        The axis of the keys.

    Returns
    -------
    numpy.ndarray, shape weights.shape without axis, float64
        0 for a one-hot row, :math:`\\ln n` for a uniform row over :math:`n` keys.
    """
    w = finite_float64(as_real_array(weights, "weights"), "weights")
    check_int(axis, "axis")
    if np.any(w < 0):
        raise ValueError("weights must be non-negative")
    if not np.allclose(w.sum(axis=axis), 1.0, atol=1e-9):
        raise ValueError(f"weights must sum to 1 along axis {axis}")
    logs = np.log(np.where(w > 0, w, 1.0))
    return -(w * logs).sum(axis=axis)
