"""Frequencies and rotations: the numpy core of RoPE.

Conventions used everywhere in the book and the package:

* ``dim`` (the book's :math:`d`) is even; coordinates are grouped in ``dim // 2`` pairs.
* Pair :math:`i` turns at frequency :math:`\\theta_i = b^{-2i/d}` radians per position,
  :math:`i = 0, \\dots, d/2 - 1` (RoFormer writes :math:`i = 1..d/2` and
  :math:`b^{-2(i-1)/d}`: the same numbers).
* A pair :math:`(x_a, x_b)` at position :math:`m` is turned **counter-clockwise** by
  :math:`m\\theta_i`, that is multiplied by :math:`e^{i m\\theta_i}` when read as the complex
  number :math:`x_a + i x_b`::

      x_a' = x_a cos(m θ_i) - x_b sin(m θ_i)
      x_b' = x_a sin(m θ_i) + x_b cos(m θ_i)

* The *layout* says which coordinates form pair :math:`i`: ``"interleaved"`` pairs
  :math:`(2i, 2i+1)` (RoFormer, Meta's LLaMA code), ``"half"`` pairs :math:`(i, i + d/2)`
  (GPT-NeoX, Hugging Face's ``rotate_half``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import kernels
from ._checks import (
    as_real_array,
    check_base,
    check_choice,
    check_dim,
    check_inv_freq,
    check_positions,
    finite_float64,
    float_dtype,
    real_array,
)

__all__ = [
    "LAYOUTS",
    "Layout",
    "frequencies",
    "rope_angles",
    "apply_rope",
    "rotation_matrix",
    "layout_permutation",
]


def frequencies(dim: int, base: float = 10000.0) -> np.ndarray:
    """Rotation frequencies :math:`\\theta_i = b^{-2i/d}` of the ``dim // 2`` pairs.

    Parameters
    ----------
    dim : int
        Even feature dimension :math:`d` (the head dimension in a transformer).
    base : float, default 10000.0
        The base :math:`b > 1`. Larger bases give slower low frequencies.

    Returns
    -------
    numpy.ndarray, shape (dim // 2,), float64
        Radians per position, from ``1.0`` (pair 0) down to ``base ** (-(dim - 2) / dim)``.
    """
    dim = check_dim(dim)
    base = check_base(base)
    return base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)


def rope_angles(positions: Any, inv_freq: np.ndarray) -> np.ndarray:
    """Angles :math:`m \\theta_i` for every position and pair, in float64.

    Parameters
    ----------
    positions : array_like, shape (...)
        Token positions (integers or reals).
    inv_freq : numpy.ndarray, shape (dim // 2,)
        Frequencies, e.g. from :func:`frequencies`.

    Returns
    -------
    numpy.ndarray, shape (..., dim // 2), float64

    Raises
    ------
    TypeError
        ``positions`` or ``inv_freq`` is not real numbers.
    ValueError
        ``inv_freq`` is not one vector, or either holds NaN or infinity.
    """
    pos = finite_float64(real_array(positions, "positions"), "positions")
    freq = real_array(inv_freq, "inv_freq", "a real-valued array")
    if freq.ndim != 1:
        raise ValueError(f"inv_freq must be a vector of shape (dim // 2,), got shape {freq.shape}")
    return pos[..., None] * finite_float64(freq, "inv_freq")


# --- layouts: which coordinates form pair i -------------------------------------------------


def _interleaved_pairs(dim: int) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(0, dim, 2), np.arange(1, dim, 2)


def _half_pairs(dim: int) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(dim // 2), np.arange(dim // 2, dim)


@dataclass(frozen=True)
class Layout:
    """A way of grouping the ``dim`` coordinates into ``dim // 2`` rotated pairs.

    Attributes
    ----------
    name : str
        Key in :data:`LAYOUTS`.
    pairs : callable
        ``pairs(dim) -> (a, b)``, two index arrays of shape ``(dim // 2,)``: pair ``i`` is made of
        coordinates ``a[i]`` (real part) and ``b[i]`` (imaginary part) and turns at ``theta_i``.
    used_by : str
        Where this layout is found in the wild.
    """

    name: str
    pairs: Callable[[int], tuple[np.ndarray, np.ndarray]]
    used_by: str


LAYOUTS: dict[str, Layout] = {
    "interleaved": Layout(
        "interleaved", _interleaved_pairs, "RoFormer, Meta's LLaMA reference code (torch.view_as_complex)"
    ),
    "half": Layout("half", _half_pairs, "GPT-NeoX, Hugging Face transformers (rotate_half)"),
}


# --- the rotation ---------------------------------------------------------------------------


def _rotate_pairs(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, layout: str) -> np.ndarray:
    """The rotation itself, the reference: every pair :math:`(x_a, x_b)` turns by its angle.

    With ``cos``, ``sin`` the cosine and sine of :math:`m\\theta_i` for pair :math:`i`::

        x_a' = x_a cos - x_b sin
        x_b' = x_a sin + x_b cos

    ``x`` has shape ``(..., seq, dim)``; ``cos`` and ``sin`` broadcast to ``x.shape[:-1] +
    (dim // 2,)`` and have ``x``'s dtype, in which the products and sums are rounded. For the
    half layout this is Hugging Face's ``x * cos + rotate_half(x) * sin`` with the table written
    twice (:func:`rope_edu.rope_rotate_half`); for the interleaved one, Meta's multiplication by
    :math:`e^{\\mathrm{i} m\\theta_i}` (:func:`rope_edu.rope_complex`).
    :func:`apply_rope` computes the same numbers with the tuned kernels of
    :mod:`rope_edu.kernels` (``tests/test_kernels.py`` checks they agree).
    """
    a, b = LAYOUTS[layout].pairs(x.shape[-1])
    out = np.empty_like(x)
    out[..., a] = x[..., a] * cos - x[..., b] * sin
    out[..., b] = x[..., a] * sin + x[..., b] * cos
    return out


def rotate_fast(
    x: np.ndarray, cos: np.ndarray, sin: np.ndarray, layout: str, out: np.ndarray | None = None
) -> np.ndarray:
    """:func:`_rotate_pairs`'s numbers, near memory speed (shared with :mod:`rope_edu.multidim`): by the kernels of :mod:`rope_edu.kernels`
    where they are written for ``x``'s dtype (float32, float64), else by ``_rotate_pairs`` itself.
    With ``out`` (checked by the caller: ``x``'s shape, not overlapping it) the result is written
    there: by the kernel itself where ``out`` is C-contiguous and of ``x``'s dtype, else copied in."""
    if x.dtype not in kernels.DTYPES:
        result = _rotate_pairs(x, cos, sin, layout)
    elif out is not None and out.dtype == x.dtype and out.flags.c_contiguous:
        return kernels.rotate(x, cos, sin, layout, out=out)
    else:
        result = kernels.rotate(x, cos, sin, layout)
    if out is None:
        return result
    np.copyto(out, result, casting="same_kind")
    return out


def _check_out(out: Any, shape: tuple[int, ...], dtype: np.dtype, x: np.ndarray) -> np.ndarray:
    """``out`` checked as the array :func:`apply_rope` writes into: a writeable numpy array of the
    result's shape and dtype that does not share memory with ``x``."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy.ndarray (or None), got {type(out).__name__}")
    if out.shape != shape or out.dtype != dtype:
        raise ValueError(f"out must have the result's shape {shape} and dtype {dtype}, got shape {out.shape} and dtype {out.dtype}")
    if not out.flags.writeable:
        raise ValueError("out must be writeable, got a read-only array")
    if np.may_share_memory(out, x):
        raise ValueError("out must not share memory with x (the rotation reads x while it writes out)")
    return out


def _cos_sin(positions: np.ndarray, inv_freq: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of the angles :math:`m\\theta_i`, computed in float64 and rounded once to ``dtype``.

    Returns two arrays of shape ``positions.shape + (dim // 2,)``.
    """
    angles = rope_angles(positions, inv_freq)
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def resolve_inv_freq(dim: int, base: Any, inv_freq: Any) -> np.ndarray:
    """The frequencies a rotation uses, shape ``(dim // 2,)`` float64: ``inv_freq`` checked, or
    :func:`frequencies` of ``base`` (checked either way) where it is None. Shared by the package's
    rotations (:mod:`rope_edu.layouts`); not part of the book's API."""
    base = check_base(base)
    if inv_freq is None:
        return frequencies(dim, base)
    return check_inv_freq(inv_freq, dim)


def apply_rope(
    x: Any,
    positions: Any,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    inv_freq: Any = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Rotate the last axis of ``x`` by the RoPE angles of ``positions``.

    Parameters
    ----------
    x : array_like, shape (..., seq, dim)
        Queries or keys. ``dim`` must be even. Any number of leading axes (batch, heads).
        Integer input is converted to float64; floating input keeps its dtype.
    positions : array_like, shape (seq,) or broadcastable to x.shape[:-1]
        Position of every token, integers or reals (a scalar rotates every row alike).
    base : float, default 10000.0
        Frequency base :math:`b`, used when ``inv_freq`` is not given.
    layout : {"interleaved", "half"}, default "interleaved"
        Which coordinates form a rotated pair; see :data:`LAYOUTS`.
    inv_freq : array_like, shape (dim // 2,), optional
        Frequencies to use instead of ``frequencies(dim, base)`` (scaled RoPE variants).
    out : numpy.ndarray, shape x.shape, optional
        An array to write the result into, of the result's dtype, not sharing memory with ``x``:
        a model that rotates every layer's queries into the same buffer saves the time a new
        array costs (``make bench``: most of the rotation's time beyond a copy's).

    Returns
    -------
    numpy.ndarray, shape x.shape
        A new array, or ``out``; ``x`` is never modified. Angles :math:`m\\theta_i` and their
        cos/sin are computed in float64 whatever the dtype of ``x``.

    Notes
    -----
    The rotation is the pair equation of ``_rotate_pairs`` (below the layouts), computed by the
    tuned kernels of :mod:`rope_edu.kernels`: numpy by default, numba after
    ``rope_edu.kernels.use("numba")``. The cos/sin tables of the last few positions are kept
    (``rope_edu.kernels.TABLES``), as a model's rotary module keeps them for all its layers.

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([[1.0, 0.0]])          # one token, dim 2
    >>> apply_rope(q, [1], inv_freq=[np.pi / 2]).round(12)
    array([[0., 1.]])
    """
    x = as_real_array(x, "x")
    layout = check_choice(layout, LAYOUTS, "layout")
    dim = check_dim(x.shape[-1], "x.shape[-1] (dim)")
    pos = check_positions(positions, x.shape[:-1])
    freqs = resolve_inv_freq(dim, base, inv_freq)
    out_dtype = float_dtype(x.dtype)
    if out is not None:
        out = _check_out(out, x.shape, out_dtype, x)
    if x.size == 0:
        return np.empty(x.shape, dtype=out_dtype) if out is None else out
    work = np.result_type(out_dtype, np.float32)  # float16 is rotated in float32, then cast back
    cos, sin = kernels.TABLES.get(pos, freqs, work, _cos_sin)  # _cos_sin's, kept for the next call
    return rotate_fast(x.astype(work, copy=False), cos, sin, layout, out=out).astype(out_dtype, copy=False)


def rotation_matrix(
    position: float,
    dim: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    inv_freq: Any = None,
) -> np.ndarray:
    """The dense orthogonal matrix :math:`R_m` with ``rotation_matrix(m, d) @ v == apply_rope(v, m)``.

    :math:`O(d^2)` memory and time: for teaching and testing, not for models.

    Parameters
    ----------
    position : float
        The position :math:`m` (a real scalar).
    dim : int
        Even dimension :math:`d`.
    base, layout, inv_freq
        As in :func:`apply_rope`.

    Returns
    -------
    numpy.ndarray, shape (dim, dim), float64
        Block-diagonal (``"interleaved"``) or with its 2x2 blocks spread over coordinates
        ``(i, i + d/2)`` (``"half"``).
    """
    dim = check_dim(dim)
    layout = check_choice(layout, LAYOUTS, "layout")
    pos = check_positions(position, (), name="position")
    freqs = resolve_inv_freq(dim, base, inv_freq)
    ang = float(pos) * freqs
    cos, sin = np.cos(ang), np.sin(ang)
    a, b = LAYOUTS[layout].pairs(dim)
    mat = np.zeros((dim, dim))
    mat[a, a] = cos
    mat[a, b] = -sin
    mat[b, a] = sin
    mat[b, b] = cos
    return mat


def layout_permutation(dim: int) -> np.ndarray:
    """Index array ``P`` that turns the interleaved layout into the half-split one.

    For every ``x`` and positions::

        apply_rope(x[..., P], pos, layout="half") == apply_rope(x, pos, layout="interleaved")[..., P]

    ``P = [0, 2, 4, ..., d-2, 1, 3, ..., d-1]``: the real parts of all pairs first, then the
    imaginary parts.

    Parameters
    ----------
    dim : int
        Even dimension :math:`d`.

    Returns
    -------
    numpy.ndarray, shape (dim,), int64
    """
    dim = check_dim(dim)
    a, b = _interleaved_pairs(dim)
    return np.concatenate([a, b]).astype(np.int64)
