"""RoPE for image and video generation: per-axis frequency blocks, per-axis NTK bases, RIFLEx.

Diffusion transformers for images and videos (FLUX, HunyuanVideo, Cosmos, ...) give every latent
patch an id vector, e.g. (index or time, row, column), and give each axis its *own* 1-D RoPE:
axis ``a`` owns ``axes_dim[a]`` coordinates, i.e. ``axes_dim[a] // 2`` pairs, with the
frequencies :math:`b_a^{-2j/d_a}`, :math:`j < d_a/2`, of a RoPE of dimension :math:`d_a`. In the
language of :mod:`rope_edu.multidim` this is a frequency matrix with one non-zero entry per row,
the rows of axis ``a`` forming one contiguous block (:func:`axes_frequencies`); rotate with
:func:`rope_edu.apply_rope_nd`. FLUX's ``axes_dim`` is ``[16, 56, 56]`` with base 10 000 and
interleaved pairs (``layout="interleaved"``).

Also here:

* :func:`video_positions`: the (t, h, w) id of every patch of a ``frames x height x width`` grid;
* :func:`ntk_axes_base`: the NTK-aware base :math:`b\\,s_a^{d_a/(d_a-2)}` chosen per axis, for
  generating a grid ``s_a`` times larger along axis ``a`` than trained;
* :func:`intrinsic_frequency_index` and :func:`riflex_frequencies`: RIFLEx (Zhao et al. 2025) finds
  the temporal pair whose period is closest to the frame where repetition shows up and lowers
  that one frequency so that a single period covers the extended video;
* :func:`videorope_axes`: VideoRoPE's allocation of a head's pairs to (t, h, w) (Wei et al. 2025):
  time gets the slowest pairs, height and width alternate over the rest.

Conventions are the book's (``book/notation.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._checks import check_base, check_dim, check_int, check_real
from .scaling import ntk_base

__all__ = [
    "axes_frequencies",
    "intrinsic_frequency_index",
    "ntk_axes_base",
    "riflex_frequencies",
    "video_positions",
    "videorope_axes",
]


def _check_axes_dim(axes_dim: Any) -> tuple[int, ...]:
    if isinstance(axes_dim, (str, bytes)) or not isinstance(axes_dim, (Sequence, np.ndarray)):
        raise TypeError(
            f"axes_dim must be a sequence of positive even integers (coordinates per axis, e.g. FLUX's "
            f"[16, 56, 56]), got {axes_dim!r}"
        )
    if len(axes_dim) == 0:
        raise ValueError("axes_dim must name at least one axis, got an empty sequence")
    return tuple(check_dim(d, f"axes_dim[{a}]") for a, d in enumerate(axes_dim))


def _check_per_axis(value: Any, k: int, name: str, check) -> tuple[float, ...]:
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a number or a sequence of {k} numbers (one per axis), got {value!r}")
    if isinstance(value, (Sequence, np.ndarray)):
        if len(value) != k:
            raise ValueError(f"{name} must have one entry per axis ({k}), got {len(value)}: {list(value)!r}")
        return tuple(check(v, f"{name}[{a}]") for a, v in enumerate(value))
    v = check(value, name)
    return (v,) * k


def axes_frequencies(axes_dim: Sequence[int], base: float | Sequence[float] = 10000.0) -> np.ndarray:
    """Frequency vectors of per-axis RoPE: axis ``a`` owns a block of ``axes_dim[a] // 2`` pairs.

    Pair ``j`` of axis ``a``'s block turns at :math:`b_a^{-2j/d_a}` along axis ``a`` only, with
    :math:`d_a` = ``axes_dim[a]``: a 1-D RoPE of dimension :math:`d_a` per axis, the blocks in axis
    order. This is the frequency layout of FLUX (``axes_dim = [16, 56, 56]``, base 10 000,
    diffusers' ``FluxPosEmbed``) and HunyuanVideo (``[16, 56, 56]``, base 256).

    Parameters
    ----------
    axes_dim : sequence of k positive even ints
        Coordinates per axis; the head dimension is ``sum(axes_dim)``.
    base : float or sequence of k floats, default 10000.0
        Frequency base, one for all axes or one per axis (> 1), e.g. from :func:`ntk_axes_base`.

    Returns
    -------
    numpy.ndarray, shape (sum(axes_dim) // 2, k), float64
        Row ``i`` is the frequency vector of pair ``i``; pass it to :func:`rope_edu.apply_rope_nd`.
    """
    dims = _check_axes_dim(axes_dim)
    bases = _check_per_axis(base, len(dims), "base", check_base)
    f = np.zeros((sum(dims) // 2, len(dims)))
    start = 0
    for a, (d, b) in enumerate(zip(dims, bases)):
        f[start:start + d // 2, a] = b ** (-2.0 * np.arange(d // 2) / d)
        start += d // 2
    return f


def video_positions(frames: int, height: int, width: int, *, start: Sequence[int] = (0, 0, 0)) -> np.ndarray:
    """(t, h, w) ids of every patch of a ``frames x height x width`` grid, in (t, h, w) order.

    Parameters
    ----------
    frames, height, width : int
        Grid size in latent patches, >= 1. An image is one frame (FLUX gives its latent image the
        index id 0 on the first axis).
    start : sequence of 3 ints, default (0, 0, 0)
        Id of the first patch on each axis (FLUX Kontext gives a reference image index 1).

    Returns
    -------
    numpy.ndarray, shape (frames * height * width, 3), int64
        Row ``(t * height + r) * width + c`` is ``start + (t, r, c)``.
    """
    frames = check_int(frames, "frames", 1)
    height = check_int(height, "height", 1)
    width = check_int(width, "width", 1)
    if isinstance(start, (str, bytes)) or not isinstance(start, (Sequence, np.ndarray)) or len(start) != 3:
        raise ValueError(f"start must be 3 integers (first t, h, w id), got {start!r}")
    offset = np.array([check_int(s, f"start[{a}]") for a, s in enumerate(start)], dtype=np.int64)
    t, r, c = np.meshgrid(np.arange(frames), np.arange(height), np.arange(width), indexing="ij")
    return np.stack([t.ravel(), r.ravel(), c.ravel()], axis=-1).astype(np.int64) + offset


def ntk_axes_base(
    base: float | Sequence[float], factors: Sequence[float], axes_dim: Sequence[int]
) -> np.ndarray:
    """NTK-aware base per axis: :math:`b_a' = b_a\\, s_a^{d_a/(d_a-2)}` (bloc97, 2023).

    Each axis is a 1-D RoPE of dimension :math:`d_a`, so the NTK rule of
    :func:`rope_edu.scaling.ntk_base` applies axis by axis: the axis's slowest pair turns exactly
    :math:`s_a` times slower and its fastest pair is unchanged. Diffusers' ``CosmosRotaryPosEmbed``
    scales its (t, h, w) bases this way (``rope_scale``).

    Parameters
    ----------
    base : float or sequence of k floats
        Trained base(s), > 1.
    factors : sequence of k floats
        :math:`s_a \\ge 1`: how many times longer axis ``a`` is than in training (1 leaves it alone).
    axes_dim : sequence of k positive even ints
        Coordinates per axis, each >= 4.

    Returns
    -------
    numpy.ndarray, shape (k,), float64
    """
    dims = _check_axes_dim(axes_dim)
    bases = _check_per_axis(base, len(dims), "base", check_base)
    if isinstance(factors, (str, bytes)) or not isinstance(factors, (Sequence, np.ndarray)):
        raise TypeError(f"factors must be a sequence of {len(dims)} numbers >= 1 (one per axis), got {factors!r}")
    if len(factors) != len(dims):
        raise ValueError(f"factors must have one entry per axis ({len(dims)}), got {len(factors)}: {list(factors)!r}")
    return np.array([
        ntk_base(b, check_real(s, f"factors[{a}]"), d) for a, (b, s, d) in enumerate(zip(bases, factors, dims))
    ])


def intrinsic_frequency_index(dim: int, base: float, length: float) -> int:
    """RIFLEx's intrinsic frequency: the pair whose period :math:`2\\pi/\\theta_j` is closest to ``length``.

    Zhao et al. (2025) call it the *intrinsic frequency* of a video diffusion transformer's temporal
    RoPE: when a video is generated longer than trained, its period sets where the content starts
    to repeat. Their code (``identify_k``) takes as ``length`` the latent frame at which repetition
    is first observed and compares it with each period rounded to an integer; here the periods are
    not rounded.

    Parameters
    ----------
    dim : int
        Dimension of the temporal axis (its ``axes_dim`` entry), even.
    base : float
        The axis's frequency base, > 1.
    length : float
        Length in latent frames (> 0) to match.

    Returns
    -------
    int
        0-based pair index ``j`` (RIFLEx's ``k`` is ``j + 1``). Ties go to the faster pair.
    """
    dim = check_dim(dim)
    base = check_base(base)
    length = check_real(length, "length")
    if length <= 0:
        raise ValueError(f"length must be > 0 (latent frames), got {length}")
    periods = 2 * np.pi * base ** (2.0 * np.arange(dim // 2) / dim)
    return int(np.argmin(np.abs(periods - length)))


def riflex_frequencies(dim: int, base: float, index: int, length: float, *, margin: float = 1.0) -> np.ndarray:
    """1-D frequencies of a temporal axis with RIFLEx's fix: pair ``index`` gets :math:`m\\,2\\pi/L`.

    Lowering the intrinsic frequency to :math:`2\\pi/L` makes one full period span the new length
    :math:`L` (the project page's one-line fix, with :math:`L` the trained length times the
    extension factor), so positions ``0 .. L - 1`` reach angles below :math:`2\\pi` on that pair and
    no two of them share an angle. RIFLEx's released code uses ``margin = 0.9`` to stay further
    inside the period. Every other pair keeps :math:`b^{-2j/d}`.

    Parameters
    ----------
    dim : int
        Dimension of the temporal axis, even.
    base : float
        Its frequency base, > 1.
    index : int
        0-based pair to lower, usually :func:`intrinsic_frequency_index`.
    length : float
        The extended length :math:`L` in latent frames, > 0.
    margin : float, default 1.0
        Fraction of a period that ``length`` may use, in (0, 1].

    Returns
    -------
    numpy.ndarray, shape (dim // 2,), float64
    """
    dim = check_dim(dim)
    base = check_base(base)
    index = check_int(index, "index", 0)
    if index >= dim // 2:
        raise ValueError(f"index must be a pair index below dim // 2 = {dim // 2}, got {index}")
    length = check_real(length, "length")
    if length <= 0:
        raise ValueError(f"length must be > 0 (latent frames), got {length}")
    margin = check_real(margin, "margin")
    if not 0 < margin <= 1:
        raise ValueError(f"margin must be in (0, 1] (the fraction of one period the length may use), got {margin}")
    theta = base ** (-2.0 * np.arange(dim // 2) / dim)
    theta[index] = margin * 2 * np.pi / length
    return theta


def videorope_axes(mrope_section: Sequence[int]) -> np.ndarray:
    """Which axis (0 time, 1 height, 2 width) each pair follows in VideoRoPE (Wei et al. 2025).

    *Low-frequency temporal allocation*: of ``mrope_section = [t, h, w]`` the last ``t`` pairs,
    the slowest, follow time; the first ``h + w`` pairs alternate height and width, starting with
    height (the allocation of the authors' Qwen2-VL code). Compare
    :func:`rope_edu.mrope_axes`, whose contiguous layout gives time the *fastest* pairs.

    Parameters
    ----------
    mrope_section : sequence of 3 non-negative ints
        Pairs for (time, height, width), e.g. ``[16, 24, 24]``; height and width must be equal
        or differ by one pair in height's favour, as alternation requires.

    Returns
    -------
    numpy.ndarray, shape (sum(mrope_section),), int64
    """
    if isinstance(mrope_section, (str, bytes)) or not isinstance(mrope_section, (Sequence, np.ndarray)):
        raise TypeError(f"mrope_section must be a sequence of 3 non-negative integers, got {mrope_section!r}")
    if len(mrope_section) != 3:
        raise ValueError(f"mrope_section must have 3 entries (time, height, width), got {len(mrope_section)}")
    t, h, w = (check_int(s, f"mrope_section[{a}]", 0) for a, s in enumerate(mrope_section))
    if h - w not in (0, 1):
        raise ValueError(
            f"mrope_section {[t, h, w]}: alternating height and width needs h == w or h == w + 1, got h={h}, w={w}"
        )
    if t + h + w == 0:
        raise ValueError("mrope_section must give at least one pair to some axis, got all zeros")
    spatial = 1 + np.arange(h + w) % 2  # 1 2 1 2 ...: height, width, ...
    return np.concatenate([spatial, np.zeros(t, dtype=np.int64)]).astype(np.int64)
