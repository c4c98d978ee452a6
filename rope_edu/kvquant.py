"""Key-cache quantisation before or after RoPE (chapter 12).

An inference engine may store its keys in a few bits. KVQuant (Hooper et al. 2024) quantises
keys *per channel* (one scale per coordinate, shared by all tokens) and *before* RoPE, rotating
them only when they are read. This module holds the pieces to measure why:

* :func:`quantize` is symmetric uniform quantisation with one scale per channel or per token,
  returning the dequantised values (what a kernel would compute with);
* :func:`outlier_keys` builds synthetic keys with a few large, consistent channels, the pattern
  KVQuant reports for trained models' keys (synthetic here: no model is loaded);
* :func:`cached_keys` returns the rotated keys that attention reads back from a quantised cache,
  for the two orders in :data:`QUANT_ORDERS`;
* :func:`quantize_blocks` gives one scale to each block of consecutive coordinates of a token (the
  grouping of llama.cpp's ``q8_0`` and ``q4_0`` caches, 32 values), and :func:`hadamard` the
  orthonormal Walsh-Hadamard matrix llama.cpp multiplies a quantised key cache by first (chapter 14);
* :func:`ggml_quantize` is that grouping with ggml's own rounding (:data:`GGML_TYPES`: ``q8_0`` and
  ``q4_0``, a float16 scale per block of 32), and :func:`quantize_fp8` rounds to 8-bit floating point
  (e4m3) under one scale per tensor or per head, as vLLM's ``fp8`` cache does (chapter 14).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._checks import as_real_array, check_choice, check_int, check_real, finite_float64
from .rope import apply_rope

__all__ = ["QUANT_AXES", "QUANT_ORDERS", "quantize", "quantize_blocks", "hadamard", "outlier_keys",
           "cached_keys", "GGML_TYPES", "ggml_quantize", "E4M3_MAX", "round_e4m3", "FP8_SCALES", "quantize_fp8"]

#: Which axis one scale is shared over, for arrays of shape ``(..., seq, dim)``: ``"channel"``
#: has one scale per coordinate (the maximum over the tokens, axis -2), ``"token"`` one scale per
#: token (the maximum over its coordinates, axis -1).
QUANT_AXES = {"channel": -2, "token": -1}

#: Where the quantiser sits relative to RoPE: ``"pre_rope"`` stores quantised unrotated keys and
#: rotates them when they are read; ``"post_rope"`` rotates first and stores quantised rotated keys.
QUANT_ORDERS = ("pre_rope", "post_rope")


def quantize(x: Any, bits: int, axis: str) -> np.ndarray:
    """Symmetric uniform quantisation to ``bits`` bits; returns the dequantised values.

    Each group (one channel over all tokens, or one token over all channels) gets the scale
    :math:`s = \\max|x| / (2^{b-1} - 1)`; a value becomes :math:`s \\cdot
    \\mathrm{round}(x / s)`, an integer level in :math:`[-(2^{b-1}-1), 2^{b-1}-1]` times the
    scale. A group that is all zeros stays zero. The error of one value is at most :math:`s/2`.

    Parameters
    ----------
    x : array_like, shape (..., seq, dim)
        Keys (or any real array with at least two axes).
    bits : int, 2 to 16
        Bits per stored value, sign included.
    axis : {"channel", "token"}
        What shares one scale; see :data:`QUANT_AXES`.

    Returns
    -------
    numpy.ndarray, shape x.shape, float64
        The values a kernel computes with after dequantising.
    """
    x = finite_float64(as_real_array(x, "x", min_ndim=2), "x")
    bits = check_int(bits, "bits", 2)
    if bits > 16:
        raise ValueError(f"bits must be an integer from 2 to 16, got {bits}")
    reduce = QUANT_AXES[check_choice(axis, QUANT_AXES, "axis")]
    levels = 2 ** (bits - 1) - 1
    scale = np.abs(x).max(axis=reduce, keepdims=True) / levels
    safe = np.where(scale > 0, scale, 1.0)
    q = np.clip(np.rint(x / safe), -levels, levels)
    return np.where(scale > 0, q * safe, 0.0)



def quantize_blocks(x: Any, bits: int, block: int = 32) -> np.ndarray:
    """Symmetric uniform quantisation with one scale per ``block`` consecutive coordinates of a token.

    The grouping of llama.cpp's quantised cache types (``q8_0``, ``q4_0``: blocks of 32 values
    along a row, one scale each): :func:`quantize` with ``axis="token"`` applied to each block.
    (ggml's own rounding differs in detail: ``q4_0`` uses the levels -8..7.)

    Parameters
    ----------
    x : array_like, shape (..., seq, dim)
        ``dim`` a multiple of ``block``.
    bits : int, 2 to 16
    block : int, default 32

    Returns
    -------
    numpy.ndarray, shape x.shape, float64
    """
    x = finite_float64(as_real_array(x, "x", min_ndim=2), "x")
    block = check_int(block, "block", 1)
    if x.shape[-1] % block:
        raise ValueError(f"the last axis of x ({x.shape[-1]}) must be a multiple of block ({block})")
    blocks = x.reshape(*x.shape[:-1], x.shape[-1] // block, block)
    return quantize(blocks, bits, "token").reshape(x.shape)


def _q8_0(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ggml's q8_0: d = max|x| / 127, levels round(x / d) (half away from zero) in -127..127."""
    d = np.abs(blocks).max(axis=-1, keepdims=True) / np.float32(127)
    inv = np.where(d == 0, np.float32(0), np.float32(1) / np.where(d == 0, np.float32(1), d))
    scaled = blocks * inv
    return d, np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))


def _q4_0(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ggml's q4_0: d = m / -8 for the block's value m of largest size (its sign kept), levels
    trunc(x / d + 8.5) - 8, cut to -8..7; m itself becomes level -8 exactly."""
    at = np.abs(blocks).argmax(axis=-1)[..., None]
    d = np.take_along_axis(blocks, at, axis=-1) / np.float32(-8)
    inv = np.where(d == 0, np.float32(0), np.float32(1) / np.where(d == 0, np.float32(1), d))
    levels = np.clip(np.trunc(blocks * inv + np.float32(8.5)), 0, 15) - 8
    return d, levels


#: ggml's quantised cache types :func:`ggml_quantize` implements: name -> (block size, the function that
#: gives a block's scale and integer levels). Both store the scale as float16.
GGML_TYPES = {"q8_0": (32, _q8_0), "q4_0": (32, _q4_0)}


def ggml_quantize(x: Any, kind: str) -> np.ndarray:
    """Quantise and dequantise as llama.cpp stores a ``q8_0`` or ``q4_0`` cache (``-ctk q8_0``).

    Each block of 32 consecutive values along the last axis gets one scale :math:`d`, stored as
    float16, and each value an integer level :math:`q`; the cache gives back :math:`q \\cdot d`.
    The level is computed in float32 with the scale before it is rounded to float16, as ggml's
    reference quantiser does, so the result matches ``gguf``'s ``quants.quantize`` then
    ``dequantize`` bit for bit.

    * ``q8_0``: :math:`d = \\max|x| / 127`, :math:`q = \\mathrm{round}(x/d)` (half away from zero),
      :math:`q \\in [-127, 127]`.
    * ``q4_0``: :math:`d = -m/8` for the block's value :math:`m` of largest size, sign kept, and
      :math:`q = \\min(\\lfloor x/d + 8.5 \\rfloor, 15) - 8 \\in [-8, 7]`: :math:`m` is level
      :math:`-8`, and values of the other sign reach at most :math:`7|d|` in size.

    A block of zeros stays zero.

    Parameters
    ----------
    x : array_like, shape (..., dim)
        ``dim`` a multiple of 32 (a head of keys: ``(heads, seq, head_dim)``).
    kind : {"q8_0", "q4_0"}
        See :data:`GGML_TYPES`.

    Returns
    -------
    numpy.ndarray, shape x.shape, float32
    """
    kind = check_choice(kind, GGML_TYPES, "kind")
    x = finite_float64(as_real_array(x, "x"), "x")
    size, levels_of = GGML_TYPES[kind]
    if x.ndim < 1 or x.shape[-1] % size:
        raise ValueError(f"the last axis of x must be a multiple of {size} ({kind} blocks), got shape {x.shape}")
    blocks = x.astype(np.float32).reshape(*x.shape[:-1], x.shape[-1] // size, size)
    d, levels = levels_of(blocks)
    out = levels.astype(np.float32) * d.astype(np.float16).astype(np.float32)
    return out.reshape(x.shape)


#: The largest finite value of float8 e4m3 (``float8_e4m3fn``: 4 exponent bits, 3 mantissa bits, no infinity).
E4M3_MAX = 448.0


def round_e4m3(x: Any) -> np.ndarray:
    """``x`` rounded to the nearest float8 e4m3 value (ties to even), cut to :math:`\\pm 448`.

    e4m3 keeps 3 bits after the leading one: between :math:`2^e` and :math:`2^{e+1}` the values are
    :math:`2^{e-3}` apart, for :math:`e \\ge -6`; below :math:`2^{-6}` they are :math:`2^{-9}` apart
    (subnormals). The error of a normal value is therefore at most :math:`2^{-4}` of its size.

    Parameters
    ----------
    x : array_like

    Returns
    -------
    numpy.ndarray, shape x.shape, float64
    """
    x = finite_float64(as_real_array(x, "x"), "x")
    mag = np.abs(x)
    with np.errstate(divide="ignore"):
        exponent = np.floor(np.log2(np.where(mag > 0, mag, 1.0)))
    step = np.exp2(np.maximum(exponent, -6.0) - 3.0)
    return np.clip(np.rint(x / step) * step, -E4M3_MAX, E4M3_MAX)


#: What one fp8 scale covers in :func:`quantize_fp8`, for keys of shape ``(..., heads, seq, head_dim)``:
#: the axes its maximum is taken over.
FP8_SCALES = {"tensor": None, "head": (-2, -1)}


def quantize_fp8(x: Any, scale: str) -> np.ndarray:
    """Keys stored in float8 e4m3 under one scale per tensor or per head, and read back.

    The scale is :math:`s = \\max|x| / 448` over the tensor (one layer's keys, vLLM's ``k_scale``)
    or over each head; a value is stored as ``round_e4m3(x / s)`` and read back times :math:`s`.
    The scale is taken from ``x`` itself (a calibration on the same keys).

    Parameters
    ----------
    x : array_like, shape (..., heads, seq, head_dim)
    scale : {"tensor", "head"}
        See :data:`FP8_SCALES`.

    Returns
    -------
    numpy.ndarray, shape x.shape, float64
    """
    scale = check_choice(scale, FP8_SCALES, "scale")
    x = finite_float64(as_real_array(x, "x", min_ndim=3 if scale == "head" else 1), "x")
    axes = FP8_SCALES[scale]
    s = np.abs(x).max(axis=axes, keepdims=axes is not None) / E4M3_MAX
    safe = np.where(s > 0, s, 1.0)
    return round_e4m3(x / safe) * safe


def hadamard(dim: int) -> np.ndarray:
    """The orthonormal Walsh-Hadamard matrix of size ``dim`` (Sylvester's construction).

    :math:`H_1 = [1]`, :math:`H_{2n} = \\begin{pmatrix} H_n & H_n \\\\ H_n & -H_n \\end{pmatrix}`,
    divided by :math:`\\sqrt{\\text{dim}}`: symmetric, and its own inverse. Every entry has the same
    size, so one large coordinate of a vector is spread evenly over all coordinates of
    :math:`Hx`, with the norm kept.

    Parameters
    ----------
    dim : int
        A power of two.

    Returns
    -------
    numpy.ndarray, shape (dim, dim), float64
    """
    dim = check_int(dim, "dim", 1)
    if dim & (dim - 1):
        raise ValueError(f"dim must be a power of two, got {dim}")
    h = np.ones((1, 1))
    while h.shape[0] < dim:
        h = np.block([[h, h], [h, -h]])
    return h / np.sqrt(dim)

def outlier_keys(
    n_tokens: int,
    dim: int,
    *,
    channels: Any,
    magnitude: float = 12.0,
    seed: int = 0,
) -> np.ndarray:
    """Synthetic unrotated keys with a few outlier channels.

    Every coordinate is standard normal; each channel in ``channels`` also gets a constant offset
    ``magnitude`` (sign alternating from one outlier channel to the next), so that it is large
    and of the same sign for every token, as the outlier channels KVQuant reports in trained
    models' keys before RoPE. Synthetic: no trained model is involved.

    Parameters
    ----------
    n_tokens : int, >= 1
    dim : int
        Head dimension (any size >= 1; RoPE later needs it even).
    channels : sequence of int
        The outlier channels, each in ``[0, dim)``.
    magnitude : float, default 12.0
        Offset added to the outlier channels (> 0).
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray, shape (n_tokens, dim), float64
    """
    n_tokens = check_int(n_tokens, "n_tokens", 1)
    dim = check_int(dim, "dim", 1)
    magnitude = check_real(magnitude, "magnitude")
    if magnitude <= 0:
        raise ValueError(f"magnitude must be > 0, got {magnitude}")
    seed = check_int(seed, "seed", 0)
    ch = as_real_array(channels, "channels")
    if ch.ndim != 1 or ch.dtype.kind not in "iu":
        raise TypeError(f"channels must be a 1-d sequence of integers, got dtype {ch.dtype}, shape {ch.shape}")
    if ch.size and (ch.min() < 0 or ch.max() >= dim):
        raise ValueError(f"channels must lie in [0, dim) = [0, {dim}), got {ch.tolist()}")
    if len(set(ch.tolist())) != ch.size:
        raise ValueError(f"channels must not repeat, got {ch.tolist()}")
    keys = np.random.default_rng(seed).standard_normal((n_tokens, dim))
    signs = np.where(np.arange(ch.size) % 2 == 0, 1.0, -1.0)
    keys[:, ch] += magnitude * signs
    return keys


def cached_keys(
    keys: Any,
    positions: Any,
    *,
    bits: int,
    axis: str,
    order: str,
    base: float = 10000.0,
    layout: str = "interleaved",
) -> np.ndarray:
    """The rotated keys that attention reads back from a quantised key cache.

    Parameters
    ----------
    keys : array_like, shape (..., seq, dim)
        Unrotated keys.
    positions : array_like, shape (seq,)
        Position of every key.
    bits : int, 2 to 16
    axis : {"channel", "token"}
        See :func:`quantize`.
    order : {"pre_rope", "post_rope"}
        ``"pre_rope"``: ``apply_rope(quantize(keys))``, the cache stores unrotated keys;
        ``"post_rope"``: ``quantize(apply_rope(keys))``, the cache stores rotated keys.
    base : float, default 10000.0
    layout : {"interleaved", "half"}, default "interleaved"

    Returns
    -------
    numpy.ndarray, shape keys.shape
        Compare with ``apply_rope(keys, positions)``, the keys without quantisation.
    """
    order = check_choice(order, QUANT_ORDERS, "order")
    keys = finite_float64(as_real_array(keys, "keys", min_ndim=2), "keys")
    if order == "pre_rope":
        return apply_rope(quantize(keys, bits, axis), positions, base=base, layout=layout)
    rotated = apply_rope(keys, positions, base=base, layout=layout)
    return quantize(rotated, bits, axis)
