"""The kernel of every multi-dimensional RoPE: a frequency vector per rotated pair.

Pair ``i`` has a frequency vector :math:`\\boldsymbol\\theta_i \\in \\mathbb{R}^k` (row ``i`` of
``freqs``, shape ``(dim // 2, k)``) and a token a position vector :math:`\\mathbf p \\in \\mathbb{R}^k`;
pair ``i`` turns by :math:`\\boldsymbol\\theta_i \\cdot \\mathbf p`. :func:`rope_nd_angles` gives the
angles, shape ``(..., seq, dim // 2)``, and :func:`apply_rope_nd` rotates ``x`` of shape
``(..., seq, dim)`` by them. The 2-D layouts (:mod:`.axial`) and M-RoPE (:mod:`.mrope`) only build
``freqs``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import as_real_array, check_choice, check_dim, finite_float64, float_dtype, real_array
from ..rope import LAYOUTS, rotate_fast

__all__ = [
    "rope_nd_angles",
    "apply_rope_nd",
]


# --- the general kernel: a frequency vector per pair ---------------------------------------------


def _check_freqs(freqs: Any, dim: int | None = None, name: str = "freqs") -> np.ndarray:
    arr = real_array(freqs, name, "a real-valued array of shape (..., dim // 2, k)")
    if arr.ndim < 2:
        raise ValueError(f"{name} must have shape (..., dim // 2, k) (one frequency vector per pair), got shape {arr.shape}")
    if dim is not None and arr.shape[-2] != dim // 2:
        raise ValueError(
            f"{name} must have dim // 2 = {dim // 2} rows (one per rotated pair) for dim={dim}, got shape {arr.shape}"
        )
    return finite_float64(arr, name)


def _check_nd_positions(positions: Any, k: int, name: str = "positions") -> np.ndarray:
    pos = real_array(positions, name)
    if pos.ndim < 1 or pos.shape[-1] != k:
        raise ValueError(
            f"{name} must have shape (..., {k}): one {k}-d position vector per token, got shape {pos.shape}"
        )
    return finite_float64(pos, name)


def rope_nd_angles(positions: Any, freqs: Any) -> np.ndarray:
    """Angles :math:`\\boldsymbol\\theta_i \\cdot \\mathbf p` of every token and pair.

    Parameters
    ----------
    positions : array_like, shape (..., k)
        One position vector per token (e.g. (row, column) for ``k = 2``).
    freqs : array_like, shape (..., dim // 2, k)
        One frequency vector per pair; leading axes (e.g. heads) broadcast against the leading
        axes of ``positions`` minus its token axis.

    Returns
    -------
    numpy.ndarray, shape (..., dim // 2), float64
        ``positions @ freqs.T``: for ``positions`` of shape ``(seq, k)`` and ``freqs`` of shape
        ``(heads, dim // 2, k)`` the result has shape ``(heads, seq, dim // 2)``.
    """
    f = _check_freqs(freqs)
    pos = _check_nd_positions(positions, f.shape[-1])
    # A sum of k products per angle. For axial frequencies every row has a single non-zero entry,
    # so the angle is exactly p_a * theta_i (adding zeros is exact).
    return pos @ np.swapaxes(f, -1, -2)


def apply_rope_nd(x: Any, positions: Any, freqs: Any, *, layout: str = "interleaved") -> np.ndarray:
    """Rotate pair ``i`` of every token by :math:`\\boldsymbol\\theta_i \\cdot \\mathbf p`.

    With ``k = 1`` and ``freqs = frequencies(dim)[:, None]`` this is :func:`rope_edu.apply_rope`.

    Parameters
    ----------
    x : array_like, shape (..., seq, dim)
        Queries or keys; ``dim`` even.
    positions : array_like, shape (seq, k) or (..., seq, k)
        Position vector of every token; leading axes broadcast against ``x.shape[:-2]``.
    freqs : array_like, shape (dim // 2, k) or (..., dim // 2, k)
        Frequency vector of every pair, e.g. from :func:`axial_frequencies`,
        :func:`mixed_frequencies` or :func:`mrope_frequencies`. Leading axes (per-head
        frequencies: shape ``(heads, dim // 2, k)``) broadcast against ``x.shape[:-2]``.
    layout : {"interleaved", "half"}, default "interleaved"
        Which coordinates form pair ``i`` (see :data:`rope_edu.LAYOUTS`).

    Returns
    -------
    numpy.ndarray, shape x.shape
        A new array; angles and their cos/sin are computed in float64.
    """
    x = as_real_array(x, "x", min_ndim=2)
    layout = check_choice(layout, LAYOUTS, "layout")
    dim = check_dim(x.shape[-1], "x.shape[-1] (dim)")
    f = _check_freqs(freqs, dim)
    pos = _check_nd_positions(positions, f.shape[-1])
    if pos.ndim < 2:
        raise ValueError(f"positions must have shape (seq, {f.shape[-1]}) or (..., seq, {f.shape[-1]}), got shape {pos.shape}")
    angles = pos @ np.swapaxes(f, -1, -2)
    target = (*x.shape[:-1], dim // 2)
    try:
        ok = np.broadcast_shapes(angles.shape, target) == target
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"positions of shape {pos.shape} and freqs of shape {f.shape} give angles of shape {angles.shape}, "
            f"which do not broadcast to x.shape[:-1] + (dim // 2,) = {target}"
        )
    out_dtype = float_dtype(x.dtype)
    if x.size == 0:
        return np.empty(x.shape, dtype=out_dtype)
    work = np.result_type(out_dtype, np.float32)
    cos, sin = np.cos(angles).astype(work), np.sin(angles).astype(work)  # float64, rounded once
    return rotate_fast(x.astype(work, copy=False), cos, sin, layout).astype(out_dtype, copy=False)
