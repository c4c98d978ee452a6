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

from ._checks import (
    as_real_array,
    check_base,
    check_choice,
    check_dim,
    check_inv_freq,
    check_positions,
    float_dtype,
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
    """
    pos = np.asarray(positions, dtype=np.float64)
    return pos[..., None] * np.asarray(inv_freq, dtype=np.float64)


# --- layouts: which coordinates form pair i, and a fast kernel for each ---------------------


def _interleaved_pairs(dim: int) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(0, dim, 2), np.arange(1, dim, 2)


def _half_pairs(dim: int) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(dim // 2), np.arange(dim // 2, dim)


#: Bytes per block in the half-split kernel's loop (128 KiB): a block of x, of the result, of
#: the two tables and of the one temporary (640 KiB) stay in a CPU core's L2 cache together.
_BLOCK_BYTES = 1 << 17


def _shared_tables(shape: tuple[int, ...], angles: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Group the rows of ``x`` (all axes but the last two) by the angle table they use.

    ``angles`` broadcasts to ``shape[:-1] + (dim // 2,)``; along every leading axis where it is
    only broadcast (stride 0, e.g. one table for all heads) it is computed once, not per row.

    Returns
    -------
    tables : numpy.ndarray, shape (T, seq or 1, dim // 2), float64
        The distinct angle tables (``seq`` is ``shape[-2]``; 1 where one position serves all).
    which : numpy.ndarray of int, shape (rows,), or None
        ``which[r]`` is the table of row ``r`` of ``x.reshape(rows, seq, dim)``; ``None`` when
        every row uses table 0 (positions shared by all batches and heads: the usual case).
    """
    full = np.broadcast_to(angles, (*shape[:-1], angles.shape[-1]))
    if len(shape) == 1:
        full = full[None]
    keep = tuple(slice(None) if st else slice(0, 1) for st in full.strides[:-1])
    tables = full[keep]  # drops the broadcast copies: a view of the distinct angles
    n_tables = int(np.prod(tables.shape[:-2], dtype=np.int64))
    tables = tables.reshape(n_tables, *tables.shape[-2:])
    if n_tables == 1:
        return tables, None
    ids = np.arange(n_tables).reshape(full[keep].shape[:-2])
    return tables, np.broadcast_to(ids, full.shape[:-2]).ravel()


def _rotate_interleaved(x: np.ndarray, angles: np.ndarray, work: np.dtype) -> np.ndarray:
    # Read each pair (x[2i], x[2i+1]) as one complex number and multiply by e^{i m theta_i}:
    # a single vectorised pass over memory (what Meta's reference code does with torch.polar).
    # The table e^{i m theta_i} has the angles' own shape, (seq, dim // 2) when every head
    # shares the positions, and is broadcast over the heads by the multiplication.
    if work in (np.float32, np.float64):
        complex_dtype = np.complex64 if work == np.float32 else np.complex128
        xc = np.ascontiguousarray(x, dtype=work).view(complex_dtype)
        rot = np.empty(angles.shape, dtype=complex_dtype)
        np.cos(angles, out=rot.real, casting="same_kind")  # float64 cos, rounded once to work
        np.sin(angles, out=rot.imag, casting="same_kind")
        return np.multiply(xc, rot).view(work)
    cos, sin = np.cos(angles).astype(work), np.sin(angles).astype(work)
    x = x.astype(work, copy=False)
    xa, xb = x[..., 0::2], x[..., 1::2]
    out = np.empty(np.broadcast_shapes(x.shape, (*cos.shape[:-1], x.shape[-1])), dtype=work)
    out[..., 0::2] = xa * cos - xb * sin
    out[..., 1::2] = xa * sin + xb * cos
    return out


def _rotate_half(x: np.ndarray, angles: np.ndarray, work: np.dtype) -> np.ndarray:
    # Pairs (i, i + d/2). Seen as (..., 2, d/2), a row is [xa, xb] and its rotation is
    #   [xa, xb] * [cos, cos]  +  [xb, xa] * [-sin, sin],
    # two products with full-width tables and one sum, so three vectorised passes, each as
    # long as possible. They run over cache-sized blocks (positions outer, rows of heads
    # inner, so a block of the tables is reused by every head while it is in the cache):
    # x is read from memory once and the result written once, like a copy.
    d = x.shape[-1]
    h = d // 2
    seq = x.shape[-2] if x.ndim >= 2 else 1
    x4 = np.ascontiguousarray(x, dtype=work).reshape(-1, seq, 2, h)
    tables, which = _shared_tables(x.shape, angles)
    cos_t = np.empty((*tables.shape[:-1], 2, h), dtype=work)  # [cos, cos]
    sin_t = np.empty_like(cos_t)  # [-sin, sin]
    np.cos(tables, out=cos_t[..., 0, :], casting="same_kind")  # float64 cos, rounded once
    cos_t[..., 1, :] = cos_t[..., 0, :]
    np.sin(tables, out=sin_t[..., 1, :], casting="same_kind")
    np.negative(sin_t[..., 1, :], out=sin_t[..., 0, :])
    out = np.empty_like(x4)
    block = max(1, _BLOCK_BYTES // x4.itemsize)  # elements per block
    n_pos = min(seq, max(1, block // d))  # positions per block
    n_rows = max(1, block // (n_pos * d))  # rows (heads) per block, > 1 for short sequences
    tmp = np.empty((n_rows, n_pos, 2, h), dtype=work)
    for s0 in range(0, seq, n_pos):
        ps = slice(s0, s0 + n_pos) if tables.shape[1] > 1 else slice(0, 1)
        c, s = cos_t[:, ps], sin_t[:, ps]
        for r0 in range(0, x4.shape[0], n_rows):
            xk = x4[r0 : r0 + n_rows, s0 : s0 + n_pos]  # a block of x, (rows, positions, 2, d/2)
            ok = out[r0 : r0 + n_rows, s0 : s0 + n_pos]
            t = tmp[: xk.shape[0], : xk.shape[1]]
            cb, sb = (c, s) if which is None else (c[which[r0 : r0 + n_rows]], s[which[r0 : r0 + n_rows]])
            np.multiply(xk, cb, out=ok)
            np.multiply(xk[:, :, ::-1], sb, out=t)  # [xb, xa] * [-sin, sin]
            ok += t
    return out.reshape(x.shape)


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
    rotate : callable
        ``rotate(x, angles, work_dtype)``, the vectorised kernel used by :func:`apply_rope`.
    used_by : str
        Where this layout is found in the wild.
    """

    name: str
    pairs: Callable[[int], tuple[np.ndarray, np.ndarray]]
    rotate: Callable[[np.ndarray, np.ndarray, np.dtype], np.ndarray]
    used_by: str


LAYOUTS: dict[str, Layout] = {
    "interleaved": Layout(
        "interleaved", _interleaved_pairs, _rotate_interleaved,
        "RoFormer, Meta's LLaMA reference code (torch.view_as_complex)",
    ),
    "half": Layout(
        "half", _half_pairs, _rotate_half,
        "GPT-NeoX, Hugging Face transformers (rotate_half)",
    ),
}


def _resolve_inv_freq(dim: int, base: Any, inv_freq: Any) -> np.ndarray:
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

    Returns
    -------
    numpy.ndarray, shape x.shape
        A new array; ``x`` is never modified. Angles :math:`m\\theta_i` and their cos/sin are
        computed in float64 whatever the dtype of ``x``.

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
    freqs = _resolve_inv_freq(dim, base, inv_freq)
    out_dtype = float_dtype(x.dtype)
    if x.size == 0:
        return np.empty(x.shape, dtype=out_dtype)
    work = np.result_type(out_dtype, np.float32)  # float16 is rotated in float32, then cast back
    out = LAYOUTS[layout].rotate(x, rope_angles(pos, freqs), work)
    return out.astype(out_dtype, copy=False)


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
    freqs = _resolve_inv_freq(dim, base, inv_freq)
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
