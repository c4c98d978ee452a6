"""M-RoPE: three axes (time, height, width), a share of the rotated pairs each.

``mrope_section`` says how many pairs follow each axis, in contiguous blocks (Qwen2-VL, Qwen2.5-VL)
or interleaved (Qwen3-VL), the assignments of :data:`MROPE_ASSIGNMENTS`: :func:`mrope_axes` gives
the axis of each pair, shape ``(dim // 2,)``, :func:`mrope_frequencies` the ``(dim // 2, 3)``
frequency matrix, and :func:`apply_mrope` rotates ``x`` of shape ``(..., seq, dim)`` with positions
of shape ``(3, seq)`` or ``(3, batch, seq)``, as Hugging Face's code takes them. The positions
themselves are built by :mod:`.mrope_positions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from .._checks import (
    as_real_array,
    check_base,
    check_choice,
    check_dim,
    check_int,
    check_inv_freq,
    real_array,
)
from ..rope import frequencies
from .kernel import apply_rope_nd

__all__ = [
    "MROPE_ASSIGNMENTS",
    "mrope_axes",
    "mrope_frequencies",
    "apply_mrope",
]


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
