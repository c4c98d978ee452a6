"""2-D RoPE for image patches: axial and mixed frequencies over a patch's (row, column).

:func:`axial_frequencies` gives each pair one axis (the schemes of :data:`AXIAL_SCHEMES`: Qwen2-VL's
and Pixtral's vision encoders, Heo et al.'s RoPE-Axial), :func:`mixed_frequencies` lets a pair turn
along a learned direction (RoPE-Mixed, Heo et al. 2024); both return ``freqs`` of shape
``(dim // 2, 2)`` for :func:`~.kernel.apply_rope_nd`. :func:`grid_positions` lists the patches of a
``height x width`` image as ``(height * width, 2)`` (row, column) positions, and :func:`axial_rope`
applies axial RoPE to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._checks import as_real_array, check_base, check_choice, check_dim, check_int
from ..rope import frequencies
from .kernel import apply_rope_nd

__all__ = [
    "AXIAL_SCHEMES",
    "AxialScheme",
    "axial_frequencies",
    "axial_rope",
    "mixed_frequencies",
    "grid_positions",
]


# --- 2-D: axial and mixed frequencies --------------------------------------------------------


def _check_dim4(dim: Any, name: str = "dim") -> int:
    dim = check_dim(dim, name)
    if dim % 4:
        raise ValueError(
            f"{name} must be a multiple of 4 for 2-D RoPE (dim // 2 pairs shared between two axes), got {dim}"
        )
    return dim


def _axial_shared(dim: int, base: float) -> np.ndarray:
    # Both axes reuse the same dim // 4 frequencies b^(-4j/d): a 1-D RoPE of dimension dim // 2
    # per axis.
    q = dim // 4
    theta = base ** (-4.0 * np.arange(q) / dim)
    f = np.zeros((dim // 2, 2))
    f[:q, 0] = theta
    f[q:, 1] = theta
    return f


def _axial_alternating(dim: int, base: float) -> np.ndarray:
    # The 1-D schedule theta_i = b^(-2i/d) dealt out alternately: even i to rows, odd i to columns.
    q = dim // 4
    theta = frequencies(dim, base)
    f = np.zeros((dim // 2, 2))
    f[:q, 0] = theta[0::2]
    f[q:, 1] = theta[1::2]
    return f


@dataclass(frozen=True)
class AxialScheme:
    """How axial 2-D RoPE deals frequencies to the row and column axes.

    Attributes
    ----------
    name : str
        Key in :data:`AXIAL_SCHEMES`.
    build : callable
        ``build(dim, base) -> freqs`` of shape ``(dim // 2, 2)``: pairs ``0 .. dim/4 - 1`` follow
        the row (axis 0), pairs ``dim/4 .. dim/2 - 1`` the column (axis 1).
    used_by : str
    """

    name: str
    build: Callable[[int, float], np.ndarray]
    used_by: str


AXIAL_SCHEMES: dict[str, AxialScheme] = {
    "shared": AxialScheme(
        "shared", _axial_shared,
        "Qwen2-VL/Qwen2.5-VL vision encoders (Hugging Face Qwen2VLVisionRotaryEmbedding); "
        "Heo et al. 2024 RoPE-Axial",
    ),
    "alternating": AxialScheme(
        "alternating", _axial_alternating,
        "Pixtral's vision encoder (Hugging Face PixtralVisionRotaryEmbedding)",
    ),
}


def axial_frequencies(dim: int, base: float = 10000.0, *, scheme: str = "shared") -> np.ndarray:
    """Frequency vectors of axial 2-D RoPE: each pair follows either the row or the column.

    Parameters
    ----------
    dim : int
        Head dimension, a multiple of 4.
    base : float, default 10000.0
        Frequency base (Qwen2-VL's and Pixtral's vision encoders use 10 000; Heo et al. 2024 use
        100 for ViTs).
    scheme : {"shared", "alternating"}, default "shared"
        ``"shared"``: rows and columns both use :math:`b^{-4j/d}`, ``j < d/4``. ``"alternating"``:
        rows get the even-indexed and columns the odd-indexed frequencies of the 1-D schedule
        :math:`b^{-2i/d}`. See :data:`AXIAL_SCHEMES`.

    Returns
    -------
    numpy.ndarray, shape (dim // 2, 2), float64
        Row ``i`` is :math:`(\\theta^{x}_i, \\theta^{y}_i)` with exactly one entry non-zero.
    """
    dim = _check_dim4(dim)
    base = check_base(base)
    scheme = check_choice(scheme, AXIAL_SCHEMES, "scheme")
    return AXIAL_SCHEMES[scheme].build(dim, base)


def axial_rope(
    x: Any,
    positions: Any,
    *,
    base: float = 10000.0,
    scheme: str = "shared",
    layout: str = "interleaved",
) -> np.ndarray:
    """Axial 2-D RoPE: ``apply_rope_nd(x, positions, axial_frequencies(dim, base, scheme=scheme))``.

    Parameters
    ----------
    x : array_like, shape (..., seq, dim)
        Queries or keys of ``seq`` image patches; ``dim`` a multiple of 4.
    positions : array_like, shape (seq, 2) or (..., seq, 2)
        (row, column) of every patch, e.g. from :func:`grid_positions`.
    base, scheme
        As in :func:`axial_frequencies`.
    layout : {"interleaved", "half"}
        Which coordinates form pair ``i``. Hugging Face's vision encoders use ``"half"``.

    Returns
    -------
    numpy.ndarray, shape x.shape
    """
    x = as_real_array(x, "x", min_ndim=2)
    dim = _check_dim4(x.shape[-1], "x.shape[-1] (dim)")
    return apply_rope_nd(x, positions, axial_frequencies(dim, base, scheme=scheme), layout=layout)


def mixed_frequencies(dim: int, angles: Any, *, base: float = 10.0) -> np.ndarray:
    """RoPE-Mixed frequency vectors (Heo et al. 2024) at their initialisation.

    Pair ``j < dim/4`` gets magnitude :math:`b^{-4j/d}` in direction :math:`\\varphi`, pair
    ``dim/4 + j`` the same magnitude in the perpendicular direction :math:`\\varphi + \\pi/2`:

    .. math:: \\boldsymbol\\theta_j = b^{-4j/d}(\\cos\\varphi, \\sin\\varphi), \\qquad
              \\boldsymbol\\theta_{d/4+j} = b^{-4j/d}(-\\sin\\varphi, \\cos\\varphi).

    With :math:`\\varphi = 0` this is :func:`axial_frequencies` with ``scheme="shared"``. In the
    paper the vectors are then trained (per head and per layer); any matrix of shape
    ``(dim // 2, 2)`` can be passed to :func:`apply_rope_nd`.

    Parameters
    ----------
    dim : int
        Head dimension, a multiple of 4.
    angles : float or array_like, shape (heads,)
        Direction :math:`\\varphi` in radians, one per head (Heo et al. draw it uniformly in
        :math:`[0, 2\\pi)`).
    base : float, default 10.0
        Magnitude base (the paper's RoPE-Mixed uses 10).

    Returns
    -------
    numpy.ndarray, shape (dim // 2, 2) for a scalar angle, (heads, dim // 2, 2) otherwise
    """
    dim = _check_dim4(dim)
    base = check_base(base)
    phi = as_real_array(angles, "angles", min_ndim=0).astype(np.float64)
    if phi.ndim > 1:
        raise ValueError(f"angles must be a number or a 1-d array (one per head), got shape {phi.shape}")
    if not np.all(np.isfinite(phi)):
        raise ValueError("angles must be finite, got NaN or infinity")
    q = dim // 4
    mag = base ** (-4.0 * np.arange(q) / dim)
    c, s = np.cos(phi)[..., None], np.sin(phi)[..., None]
    first = np.stack([mag * c, mag * s], axis=-1)
    second = np.stack([-mag * s, mag * c], axis=-1)
    return np.concatenate([first, second], axis=-2)


def grid_positions(height: int, width: int) -> np.ndarray:
    """(row, column) of every patch of a ``height x width`` grid, in row-major order.

    Parameters
    ----------
    height, width : int
        Grid size in patches, >= 1.

    Returns
    -------
    numpy.ndarray, shape (height * width, 2), int64
        Row ``r * width + c`` is ``(r, c)``.
    """
    height = check_int(height, "height", 1)
    width = check_int(width, "width", 1)
    r, c = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    return np.stack([r.ravel(), c.ravel()], axis=-1).astype(np.int64)
