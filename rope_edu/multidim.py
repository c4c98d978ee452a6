"""RoPE beyond one dimension: axial and mixed 2-D RoPE for image patches, and M-RoPE.

One idea covers every variant here. Give each rotated pair :math:`i` a *frequency vector*
:math:`\\boldsymbol\\theta_i \\in \\mathbb{R}^k` instead of a number, give each token a position
vector :math:`\\mathbf p \\in \\mathbb{R}^k` (``k = 2`` for an image patch's (row, column),
``k = 3`` for M-RoPE's (time, height, width)), and turn pair :math:`i` by the angle
:math:`\\boldsymbol\\theta_i \\cdot \\mathbf p`. The frequencies are stored as a matrix ``freqs`` of
shape ``(dim // 2, k)``, row ``i`` being :math:`\\boldsymbol\\theta_i`, and
:func:`apply_rope_nd` is the single kernel. The variants differ only in that matrix:

* **axial 2-D RoPE** (:func:`axial_frequencies`): every row has one non-zero entry; half of the
  pairs follow the row coordinate, half the column coordinate (Qwen2-VL's and Pixtral's vision
  encoders, Heo et al.'s RoPE-Axial);
* **mixed frequencies** (:func:`mixed_frequencies`, RoPE-Mixed of Heo et al. 2024): both entries
  non-zero, so a pair can turn along a diagonal direction; the vectors are learned per head;
* **M-RoPE** (:func:`mrope_frequencies`): three axes; ``mrope_section`` says how many pairs follow
  time, height and width, either in contiguous blocks (Qwen2-VL, Qwen2.5-VL) or interleaved
  (Qwen3-VL); :func:`apply_mrope` applies it with positions of shape ``(3, seq)`` or
  ``(3, batch, seq)`` as Hugging Face's code takes them, and :func:`mrope_position_ids` builds those
  positions for a layout of text runs, images and videos.

Conventions are the book's (``book/notation.md``): pair ``i`` is turned counter-clockwise by its
angle, and ``layout`` says which coordinates form pair ``i`` (``"interleaved"`` or ``"half"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ._checks import (
    as_real_array,
    check_base,
    check_choice,
    check_dim,
    check_int,
    check_inv_freq,
    check_real,
    finite_float64,
    float_dtype,
    real_array,
)
from .rope import LAYOUTS, rotate_fast, frequencies

__all__ = [
    "AXIAL_SCHEMES",
    "AxialScheme",
    "MROPE_ADVANCES",
    "MROPE_ASSIGNMENTS",
    "MROPE_FAMILIES",
    "MRopeFamily",
    "MRopePositions",
    "apply_mrope",
    "apply_rope_nd",
    "axial_frequencies",
    "axial_rope",
    "grid_positions",
    "mixed_frequencies",
    "mrope_axes",
    "mrope_frequencies",
    "mrope_position_ids",
    "rope_nd_angles",
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


# --- M-RoPE: three axes ------------------------------------------------------------------------


def _check_section(mrope_section: Any) -> tuple[int, int, int]:
    if isinstance(mrope_section, (str, bytes)) or not isinstance(mrope_section, (Sequence, np.ndarray)):
        raise TypeError(
            f"mrope_section must be a sequence of 3 non-negative integers (pairs for time, height, width), "
            f"got {mrope_section!r}"
        )
    if len(mrope_section) != 3:
        raise ValueError(
            f"mrope_section must have 3 entries (pairs for time, height, width), got {len(mrope_section)}: "
            f"{list(mrope_section)!r}"
        )
    sec = tuple(check_int(s, f"mrope_section[{i}]", 0) for i, s in enumerate(mrope_section))
    if sum(sec) == 0:
        raise ValueError("mrope_section must give at least one pair to some axis, got all zeros")
    return sec  # type: ignore[return-value]


def _contiguous(section: tuple[int, int, int]) -> np.ndarray:
    return np.repeat(np.arange(3), section)


def _interleaved(section: tuple[int, int, int]) -> np.ndarray:
    # Qwen3-VL: pair j goes to height when j % 3 == 1 and to width when j % 3 == 2, for the first
    # section[1] (resp. section[2]) such pairs; every other pair keeps time.
    n = sum(section)
    axes = np.zeros(n, dtype=np.int64)
    for axis in (1, 2):
        idx = np.arange(axis, 3 * section[axis], 3)
        if idx.size and idx[-1] >= n:
            raise ValueError(
                f"mrope_section {list(section)} cannot be interleaved: axis {axis} needs pairs up to "
                f"{idx[-1]} but there are only {n}"
            )
        axes[idx] = axis
    return axes


MROPE_ASSIGNMENTS: dict[str, Callable[[tuple[int, int, int]], np.ndarray]] = {
    "contiguous": _contiguous,  # Qwen2-VL, Qwen2.5-VL: [t t ... t h h ... h w w ... w]
    "interleaved": _interleaved,  # Qwen3-VL: [t h w t h w ... t t]
}


def mrope_axes(mrope_section: Sequence[int], *, assignment: str = "contiguous") -> np.ndarray:
    """Which axis (0 time, 1 height, 2 width) each frequency pair follows.

    Parameters
    ----------
    mrope_section : sequence of 3 ints
        Numbers of pairs given to time, height and width; their sum is ``dim // 2``.
    assignment : {"contiguous", "interleaved"}, default "contiguous"
        ``"contiguous"`` (Qwen2-VL, Qwen2.5-VL): the first ``mrope_section[0]`` pairs (the fastest
        frequencies) follow time, the next block height, the last block (the slowest) width.
        ``"interleaved"`` (Qwen3-VL): pairs cycle time, height, width, so each axis gets fast and
        slow frequencies; left-over pairs follow time.

    Returns
    -------
    numpy.ndarray, shape (sum(mrope_section),), int64
    """
    sec = _check_section(mrope_section)
    assignment = check_choice(assignment, MROPE_ASSIGNMENTS, "assignment")
    return MROPE_ASSIGNMENTS[assignment](sec)


def mrope_frequencies(
    dim: int,
    mrope_section: Sequence[int],
    *,
    base: float = 10000.0,
    inv_freq: Any = None,
    assignment: str = "contiguous",
) -> np.ndarray:
    """M-RoPE as frequency vectors: pair ``i`` has :math:`\\theta_i` on its axis and 0 elsewhere.

    Parameters
    ----------
    dim : int
        Rotated head dimension; ``sum(mrope_section)`` must equal ``dim // 2``.
    mrope_section : sequence of 3 ints
        Pairs for (time, height, width), e.g. Qwen2-VL's ``[16, 24, 24]`` for head dim 128.
    base : float, default 10000.0
        Frequency base (Qwen2-VL's ``rope_theta`` is 10^6), used when ``inv_freq`` is not given.
    inv_freq : array_like, shape (dim // 2,), optional
        The 1-D frequencies :math:`\\theta_i` to distribute (e.g. scaled ones).
    assignment : {"contiguous", "interleaved"}
        See :func:`mrope_axes`.

    Returns
    -------
    numpy.ndarray, shape (dim // 2, 3), float64
    """
    dim = check_dim(dim)
    base = check_base(base)
    theta = frequencies(dim, base) if inv_freq is None else check_inv_freq(inv_freq, dim)
    axes = mrope_axes(mrope_section, assignment=assignment)
    if axes.size != dim // 2:
        raise ValueError(
            f"mrope_section {list(mrope_section)} gives {axes.size} pairs but dim={dim} has dim // 2 = {dim // 2}; "
            f"the sections must add up to dim // 2"
        )
    f = np.zeros((dim // 2, 3))
    f[np.arange(dim // 2), axes] = theta
    return f


def _mrope_positions_last(positions: Any, x_ndim: int) -> np.ndarray:
    """(3, seq) / (3, batch, seq) / (seq,) positions -> shape (..., seq, 3) for apply_rope_nd."""
    pos = real_array(positions, "positions")
    if pos.ndim == 1:  # text: the same id on all three axes
        return np.repeat(pos[:, None], 3, axis=1)
    if pos.ndim not in (2, 3) or pos.shape[0] != 3:
        raise ValueError(
            "positions must have shape (3, seq) or (3, batch, seq) (time, height, width ids, as Hugging Face's "
            f"Qwen2-VL code takes them) or (seq,) for text, got shape {pos.shape}"
        )
    out = np.moveaxis(pos, 0, -1)  # (seq, 3) or (batch, seq, 3)
    if pos.ndim == 3:
        if x_ndim == 4:  # x is (batch, heads, seq, dim): add the heads axis
            out = out[:, None]
        elif x_ndim != 3:
            raise ValueError(
                "positions of shape (3, batch, seq) need x of shape (batch, heads, seq, dim) or (batch, seq, dim), "
                f"got x with {x_ndim} axes"
            )
    return out


def apply_mrope(
    x: Any,
    positions: Any,
    *,
    mrope_section: Sequence[int],
    base: float = 10000.0,
    inv_freq: Any = None,
    assignment: str = "contiguous",
    layout: str = "half",
) -> np.ndarray:
    """Multimodal RoPE (M-RoPE): pair ``i`` turns by :math:`\\theta_i` times the id of its axis.

    What Qwen2-VL, Qwen2.5-VL (``assignment="contiguous"``) and Qwen3-VL
    (``assignment="interleaved"``) do to a query or key in their language model. When the three ids
    of a token are equal (every text token) this is exactly 1-D RoPE at that id.

    Parameters
    ----------
    x : array_like, shape (batch, heads, seq, dim) or (..., seq, dim)
        Queries or keys.
    positions : array_like, shape (3, seq), (3, batch, seq) or (seq,)
        Time, height and width ids of every token (:attr:`MRopePositions.position_ids`); axis 0
        is the axis, as in Hugging Face's ``position_ids``. A 1-d array is a text-only sequence and
        is used on all three axes. (Hugging Face reads a 2-d ``position_ids`` as ``(batch, seq)``
        text ids; here a 2-d array is ``(3, seq)``.)
    mrope_section : sequence of 3 ints
        Pairs for (time, height, width); they add up to ``dim // 2``.
    base : float, default 10000.0
        Frequency base, used when ``inv_freq`` is not given.
    inv_freq : array_like, shape (dim // 2,), optional
        1-D frequencies to distribute among the axes.
    assignment : {"contiguous", "interleaved"}, default "contiguous"
        See :func:`mrope_axes`.
    layout : {"half", "interleaved"}, default "half"
        Which coordinates form pair ``i``; the Qwen-VL checkpoints use ``"half"`` (``rotate_half``).

    Returns
    -------
    numpy.ndarray, shape x.shape
    """
    x = as_real_array(x, "x", min_ndim=2)
    dim = check_dim(x.shape[-1], "x.shape[-1] (dim)")
    f = mrope_frequencies(dim, mrope_section, base=base, inv_freq=inv_freq, assignment=assignment)
    return apply_rope_nd(x, _mrope_positions_last(positions, x.ndim), f, layout=layout)


# --- M-RoPE position ids for a layout of text, images and videos ------------------------------


def _time_index(t: int, seconds: float, tokens_per_second: float | None) -> np.ndarray:
    return np.arange(t, dtype=np.int64)


def _time_absolute(t: int, seconds: float, tokens_per_second: float | None) -> np.ndarray:
    # Qwen2.5-VL: temporal patch k sits at k * second_per_grid_t seconds; its id is that time in
    # units of 1 / tokens_per_second, truncated to an integer as the reference code does (.long()).
    # transformers holds second_per_grid_t as a float32 tensor and multiplies in float32
    # (arange(t) * (tokens_per_second * second_per_grid_t)); where k * interval is an integer in exact
    # arithmetic, float32 and float64 can truncate to different ids (e.g. 2 s per patch at 1.5 fps),
    # so the product is formed in float32 here too.
    interval = np.float32(np.float32(tokens_per_second) * np.float32(seconds))
    return np.trunc(np.arange(t, dtype=np.float32) * interval).astype(np.int64)


@dataclass(frozen=True)
class MRopeFamily:
    """How one model family builds and applies M-RoPE.

    Attributes
    ----------
    name : str
        Key in :data:`MROPE_FAMILIES` (Hugging Face's ``model_type``).
    time_ids : callable
        ``time_ids(t, second_per_grid_t, tokens_per_second) -> ids`` of the ``t`` temporal patches
        of a video, before the running offset is added.
    split_frames : bool
        Whether a video is laid out as ``t`` separate one-frame blocks (Qwen3-VL, whose processor
        puts a timestamp in the text before each frame) instead of one ``t x h x w`` block.
    assignment : str
        Key of :data:`MROPE_ASSIGNMENTS` used by the family's language model.
    needs_tokens_per_second : bool
    used_by : str
    """

    name: str
    time_ids: Callable[[int, float, float | None], np.ndarray]
    split_frames: bool
    assignment: str
    needs_tokens_per_second: bool
    used_by: str


MROPE_FAMILIES: dict[str, MRopeFamily] = {
    "qwen2_vl": MRopeFamily(
        "qwen2_vl", _time_index, False, "contiguous", False,
        "Qwen2-VL: time id = index of the temporal patch",
    ),
    "qwen2_5_vl": MRopeFamily(
        "qwen2_5_vl", _time_absolute, False, "contiguous", True,
        "Qwen2.5-VL: time id = absolute time x tokens_per_second (vision_config.tokens_per_second)",
    ),
    "qwen3_vl": MRopeFamily(
        "qwen3_vl", _time_index, True, "interleaved", False,
        "Qwen3-VL: one block per frame (time given by timestamp text), interleaved frequencies",
    ),
}


def _advance_max(start: int, ids: np.ndarray, llm_h: int, llm_w: int) -> int:
    return int(ids.max()) + 1


def _advance_spatial(start: int, ids: np.ndarray, llm_h: int, llm_w: int) -> int:
    return start + max(llm_h, llm_w)


#: Where the text after a visual block starts. ``"max"``: one past the largest id in the block,
#: over all three axes (the Qwen2-VL paper, Qwen's reference code and transformers 4.x).
#: ``"spatial"``: the block's start plus ``max(h, w)`` after merging, ignoring the time ids
#: (transformers 5.x ``get_rope_index``). They agree for images and for Qwen3-VL frames; they differ
#: for a Qwen2-VL video with more temporal patches than rows and columns, and for most Qwen2.5-VL
#: videos (whose time ids grow by ``tokens_per_second * second_per_grid_t`` per patch).
MROPE_ADVANCES: dict[str, Callable[[int, np.ndarray, int, int], int]] = {
    "max": _advance_max,
    "spatial": _advance_spatial,
}


@dataclass(frozen=True)
class MRopePositions:
    """Position ids of a multimodal sequence.

    Attributes
    ----------
    position_ids : numpy.ndarray, shape (3, n_tokens), int64
        (time, height, width) id of every token; for a text token all three are equal.
    token_type : numpy.ndarray, shape (n_tokens,), int8
        0 text, 1 image, 2 video (Hugging Face's ``mm_token_type_ids``).
    rope_delta : int
        ``position_ids.max() + 1 - n_tokens``: a token generated after the prompt, at sequence
        index ``s``, gets id ``s + rope_delta`` on all three axes.
    """

    position_ids: np.ndarray
    token_type: np.ndarray
    rope_delta: int

    @property
    def n_tokens(self) -> int:
        return int(self.token_type.size)


_KINDS = {"text": 0, "image": 1, "video": 2}


def _check_grid(grid: Any, merge: int, name: str) -> tuple[int, int, int]:
    if isinstance(grid, (str, bytes)) or not isinstance(grid, (Sequence, np.ndarray)) or len(grid) != 3:
        raise ValueError(f"{name} must be a grid (t, h, w) of 3 positive integers (patches), got {grid!r}")
    t, h, w = (check_int(v, f"{name}[{i}]", 1) for i, v in enumerate(grid))
    if h % merge or w % merge:
        raise ValueError(
            f"{name} = {(t, h, w)}: h and w must be multiples of spatial_merge_size={merge} "
            f"(the vision encoder merges {merge}x{merge} patches into one token)"
        )
    return t, h, w


def mrope_position_ids(
    layout: Sequence[tuple],
    *,
    family: str = "qwen2_vl",
    spatial_merge_size: int = 2,
    tokens_per_second: float | None = None,
    advance: str = "max",
) -> MRopePositions:
    """Build M-RoPE (time, height, width) ids for a sequence of text runs, images and videos.

    Rules (Qwen2-VL, Wang et al. 2024):

    * a run of ``n`` text tokens gets ids ``s, s+1, ..., s+n-1`` on all three axes, where ``s`` is
      the running offset; the offset then moves to ``s + n``;
    * an image or video of ``(t, h, w)`` patches becomes ``t * (h/m) * (w/m)`` tokens
      (``m = spatial_merge_size``: the encoder merges ``m x m`` patches into one token), in
      (time, row, column) order; the token at (k, r, c) gets ids ``(s + time_k, s + r, s + c)``;
    * after a visual block the offset moves on as ``advance`` says (:data:`MROPE_ADVANCES`).

    Family differences (:data:`MROPE_FAMILIES`): Qwen2-VL's ``time_k = k``; Qwen2.5-VL's
    ``time_k = int(k * second_per_grid_t * tokens_per_second)`` (the product in float32, as
    transformers forms it), so ids follow absolute time;
    Qwen3-VL lays each frame of a video out as its own block (its processor writes a timestamp as
    text before each frame: add those text runs to ``layout`` as separate segments, with each frame
    as a ``("video", (1, h, w))`` segment, to reproduce the model's input exactly).

    Parameters
    ----------
    layout : sequence of tuples
        Segments in order: ``("text", n)``, ``("image", (t, h, w))``, ``("video", (t, h, w))`` or
        ``("video", (t, h, w), second_per_grid_t)``. Grids count patches *before* merging, as
        Hugging Face's ``image_grid_thw`` / ``video_grid_thw`` do. ``second_per_grid_t`` (seconds
        per temporal patch, Qwen2.5-VL only) defaults to 1.0 as in Hugging Face's code.
    family : {"qwen2_vl", "qwen2_5_vl", "qwen3_vl"}, default "qwen2_vl"
    spatial_merge_size : int, default 2
    tokens_per_second : float, optional
        Qwen2.5-VL's ``vision_config.tokens_per_second``; required for that family.
    advance : {"max", "spatial"}, default "max"
        Where text after a visual block starts; see :data:`MROPE_ADVANCES`. Use ``"spatial"`` to
        reproduce transformers 5.x.

    Returns
    -------
    MRopePositions
        ``position_ids`` of shape ``(3, n_tokens)``, ``token_type``, ``rope_delta``.
    """
    family = check_choice(family, MROPE_FAMILIES, "family")
    fam = MROPE_FAMILIES[family]
    advance = check_choice(advance, MROPE_ADVANCES, "advance")
    merge = check_int(spatial_merge_size, "spatial_merge_size", 1)
    if fam.needs_tokens_per_second:
        if tokens_per_second is None:
            raise ValueError(f"tokens_per_second is required for family {family!r} (vision_config.tokens_per_second)")
        tokens_per_second = check_real(tokens_per_second, "tokens_per_second")
        if tokens_per_second <= 0:
            raise ValueError(f"tokens_per_second must be > 0, got {tokens_per_second}")
    if isinstance(layout, (str, bytes)) or not isinstance(layout, Sequence) or len(layout) == 0:
        raise ValueError(f"layout must be a non-empty sequence of segments such as ('text', 5), got {layout!r}")

    ids: list[np.ndarray] = []
    types: list[np.ndarray] = []
    pos = 0
    for i, seg in enumerate(layout):
        name = f"layout[{i}]"
        if not isinstance(seg, tuple) or len(seg) < 2:
            raise ValueError(f"{name} must be a tuple like ('text', n) or ('image', (t, h, w)), got {seg!r}")
        kind = check_choice(seg[0], _KINDS, f"{name} kind")
        if kind == "text":
            if len(seg) != 2:
                raise ValueError(f"{name} must be ('text', n), got {seg!r}")
            n = check_int(seg[1], f"{name} length", 1)
            ids.append(np.broadcast_to(np.arange(pos, pos + n), (3, n)))
            types.append(np.zeros(n, dtype=np.int8))
            pos += n
            continue
        if len(seg) not in (2, 3) or (kind == "image" and len(seg) != 2):
            raise ValueError(f"{name} must be ('image', (t, h, w)) or ('video', (t, h, w)[, second_per_grid_t]), got {seg!r}")
        t, h, w = _check_grid(seg[1], merge, f"{name} grid")
        seconds = check_real(seg[2], f"{name} second_per_grid_t") if len(seg) == 3 else 1.0
        if seconds < 0:
            raise ValueError(f"{name} second_per_grid_t must be >= 0, got {seconds}")
        lh, lw = h // merge, w // merge
        blocks = [1] * t if (kind == "video" and fam.split_frames) else [t]
        for tb in blocks:
            if kind == "video":
                time = fam.time_ids(tb, seconds, tokens_per_second)
            else:  # still images are never spaced out in time (transformers issue 45325)
                time = np.arange(tb, dtype=np.int64)
            tt, hh, ww = np.meshgrid(time, np.arange(lh), np.arange(lw), indexing="ij")
            block = np.stack([tt.ravel(), hh.ravel(), ww.ravel()]) + pos
            ids.append(block)
            types.append(np.full(block.shape[1], _KINDS[kind], dtype=np.int8))
            pos = MROPE_ADVANCES[advance](pos, block, lh, lw)
    position_ids = np.concatenate(ids, axis=1).astype(np.int64)
    token_type = np.concatenate(types)
    delta = int(position_ids.max()) + 1 - position_ids.shape[1]
    return MRopePositions(position_ids, token_type, delta)
