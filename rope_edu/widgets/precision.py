"""Chapter 8 widget: what computing RoPE angles in half precision does, position by position.

Pick a position ``m`` (up to 100 000) and a dtype (float32, bfloat16, float16). The angles
:math:`m\\theta_i` of the 64 pairs of a ``head_dim = 128`` vector are computed in that dtype, as
happens when a model's RoPE buffers are cast with its weights, and compared with float64:

* top: the angle error of every pair, wrapped to :math:`[0, \\pi]` radians (an error of
  :math:`\\pi` means the pair points the opposite way);
* bottom: how far the rotated vector drifts, :math:`\\lVert \\tilde R_m x - R_m x \\rVert /
  \\lVert x \\rVert`, for angles in the chosen dtype, for angles in float32, and for float32
  angles whose cos/sin are then stored in the chosen dtype (what real implementations do).

The figure (``js/precision.js``) draws this in the browser for every integer position. The
rounding it needs is tabulated here with torch (:func:`data`: each pair's frequency as torch
rounds it to each dtype, and each format's significand bits); the browser redoes only the
rounding of positions and products to the same formats, bit for bit (float32 through
``Math.fround``, bfloat16 and float16 by rounding to nearest even on 8 and 11 significant bits,
after a float32 step as torch does), and prints :func:`readouts`, which come from :func:`state`.

Importing this module imports torch (bfloat16 has no numpy dtype).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..rope import LAYOUTS, apply_rope, frequencies, rope_angles
from .. import torch_rope
from .._checks import check_choice, check_positions
from ._core import Control, Figure

__all__ = [
    "DTYPES", "DIM", "BASE", "X", "MAX_POSITION", "FLOOR",
    "angle_errors", "cos_errors", "state", "readouts", "data", "CONTROLS", "DEMO",
]

#: The dtypes the widget compares, by the name shown in its dropdown.
DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
DIM = 128          #: head dimension of the rotated vector (LLaMA's)
BASE = 10000.0     #: frequency base
MAX_POSITION = 100_000
#: The vector the widget rotates: fixed random, unit norm.
X = np.random.default_rng(0).standard_normal(DIM)
X /= np.linalg.norm(X)

#: Errors below this (exact zeros included) are drawn at this height on the figure's log axes.
FLOOR = 1e-10


def _wrap(delta: np.ndarray) -> np.ndarray:
    """|delta| reduced modulo 2π to [0, π]; non-finite entries become NaN (quietly)."""
    out = np.full(delta.shape, np.nan)
    ok = np.isfinite(delta)
    out[ok] = np.abs((delta[ok] + np.pi) % (2 * np.pi) - np.pi)
    return out


def _angles_low_and_exact(
    positions: Any, dtype: str, inv_freq: Any, dim: int, base: float
) -> tuple[np.ndarray, np.ndarray]:
    """Angles computed in ``dtype`` (from ``inv_freq`` when given) and exact float64 angles."""
    dtype = check_choice(dtype, DTYPES, "dtype")
    pos = check_positions(positions, np.shape(positions))
    exact_inv = frequencies(dim, base)
    used = exact_inv if inv_freq is None else torch_rope.check_inv_freq_tensor(inv_freq, dim)
    low = torch_rope.rope_angles(pos, used, dtype=DTYPES[dtype]).double().numpy()
    return low, rope_angles(pos, exact_inv)


def angle_errors(
    positions: Any, dtype: str, *, inv_freq: Any = None, dim: int = DIM, base: float = BASE
) -> np.ndarray:
    """Error of the angles :math:`m\\theta_i` computed in ``dtype``, against float64.

    Positions and frequencies are rounded to ``dtype`` and multiplied there
    (:func:`rope_edu.torch_rope.rope_angles`); the error is wrapped modulo :math:`2\\pi`, so it
    lies in :math:`[0, \\pi]` radians.

    Parameters
    ----------
    positions : array_like, shape (n,) or scalar
        Token positions.
    dtype : {"float32", "bfloat16", "float16"}
        Dtype of the whole computation.
    inv_freq : torch.Tensor or array_like, shape (dim // 2,), optional
        Frequencies to start from instead of the exact ones, e.g. a copy already rounded to
        bfloat16 by ``module.to(torch.bfloat16)``. The reference is always the exact
        :math:`\\theta_i = b^{-2i/d}` in float64.
    dim : int, default 128
    base : float, default 10000.0

    Returns
    -------
    numpy.ndarray, shape (*positions.shape, dim // 2), float64
        Radians; NaN where the angle is not finite (float16 overflows from 65 520 on).
    """
    low, exact = _angles_low_and_exact(positions, dtype, inv_freq, dim, base)
    return _wrap(low - exact)


def cos_errors(
    positions: Any, dtype: str, *, inv_freq: Any = None, dim: int = DIM, base: float = BASE
) -> np.ndarray:
    """:math:`|\\cos \\tilde a - \\cos a|` for the angles of :func:`angle_errors` (same arguments).

    The cosines are evaluated in float64 on the (rounded) angles, so this is the error the angles
    alone cause; it never exceeds the angle error, since :math:`\\cos` has slope at most 1.

    Returns
    -------
    numpy.ndarray, shape (*positions.shape, dim // 2), float64
        NaN where the angle is not finite.
    """
    low, exact = _angles_low_and_exact(positions, dtype, inv_freq, dim, base)
    with np.errstate(invalid="ignore"):  # cos(inf) is NaN, on purpose
        return np.abs(np.cos(low) - np.cos(exact))


def _drift(angles: np.ndarray, reference: np.ndarray) -> float:
    """||R(angles) X - R(reference) X|| / ||X||, both rotations in float64."""
    if not np.all(np.isfinite(angles)):
        return float("nan")
    rotated = apply_rope(X[None, :], [1.0], inv_freq=angles)  # position 1: the angles themselves
    exact = apply_rope(X[None, :], [1.0], inv_freq=reference)
    return float(np.linalg.norm(rotated - exact) / np.linalg.norm(X))


def state(position: float, dtype: str = "bfloat16") -> dict[str, Any]:
    """Everything the widget shows, computed without drawing.

    Returns
    -------
    dict
        ``position`` and ``stored_position`` (the position after rounding to ``dtype``; inf when
        it overflows), ``angle_error`` and ``angle_error_f32`` (per pair, radians, shape
        (DIM // 2,), for angles in ``dtype`` and in float32), ``max_angle_error``, ``cos_error``
        (the largest :func:`cos_errors` over the pairs),
        ``drift`` and ``drift_f32`` (relative change of the rotated vector :data:`X`, NaN when
        the angles overflow), and ``cos_storage_error`` (largest error of float32-angle cos/sin
        after rounding them to ``dtype``: the price real implementations pay).
    """
    dtype = check_choice(dtype, DTYPES, "dtype")
    pos = float(check_positions(position, (), name="position"))
    low, exact = (a[0] for a in _angles_low_and_exact([pos], dtype, None, DIM, BASE))
    a32 = _angles_low_and_exact([pos], "float32", None, DIM, BASE)[0][0]
    cos_error = float(np.max(cos_errors([pos], dtype)[0]))
    stored_cos = torch.from_numpy(np.cos(a32)).to(DTYPES[dtype]).double().numpy()
    stored_sin = torch.from_numpy(np.sin(a32)).to(DTYPES[dtype]).double().numpy()
    storage = max(np.max(np.abs(stored_cos - np.cos(exact))), np.max(np.abs(stored_sin - np.sin(exact))))
    angle_error = _wrap(low - exact)
    return {
        "position": pos,
        "dtype": dtype,
        "stored_position": float(torch.tensor(pos, dtype=torch.float64).to(DTYPES[dtype]).item()),
        "angle_error": angle_error,
        "angle_error_f32": _wrap(a32 - exact),
        "max_angle_error": float(np.max(angle_error)) if np.all(np.isfinite(angle_error)) else float("nan"),
        "cos_error": cos_error,
        "drift": _drift(low, exact),
        "drift_f32": _drift(a32, exact),
        "cos_storage_error": float(storage),
    }


def readouts(position: int, dtype: str) -> dict[str, float]:
    """The numbers the figure prints for its controls, from :func:`state`.

    Returns
    -------
    dict
        ``stored_position`` (inf when it overflows), ``max_angle_error`` and
        ``max_angle_error_f32`` (radians, largest over the pairs; NaN when the angles overflow),
        ``drift``, ``drift_f32`` and ``cos_storage_error`` (as in :func:`state`).
    """
    s = state(position, dtype)
    return {
        "stored_position": s["stored_position"],
        "max_angle_error": s["max_angle_error"],
        "max_angle_error_f32": float(np.max(s["angle_error_f32"])),
        "drift": s["drift"],
        "drift_f32": s["drift_f32"],
        "cos_storage_error": s["cos_storage_error"],
    }


def _significand_bits(dtype: torch.dtype) -> int:
    """Significant bits p of a floating format (implicit bit included): eps = 2**(1 - p)."""
    return 1 - int(round(np.log2(torch.finfo(dtype).eps)))


def data() -> dict[str, Any]:
    """What the browser needs to redo :func:`state` for any position, computed with torch.

    Returns
    -------
    dict
        ``theta``: the exact frequencies :math:`\\theta_i` (float64, shape (DIM // 2,));
        ``theta_in``: for each dtype, the frequencies as torch rounds them to it (the angles at
        position 1 of :func:`rope_edu.torch_rope.rope_angles`), shape (DIM // 2,);
        ``formats``: for each dtype, ``bits`` (significant bits, implicit one included), ``max``
        (largest finite number) and ``tiny`` (smallest normal number), from ``torch.finfo``;
        ``pair_weight``: :math:`\\lVert x_i \\rVert^2`, the squared length of pair ``i`` of
        :data:`X` (so the drift is :math:`\\sqrt{\\sum_i 4 \\lVert x_i\\rVert^2
        \\sin^2(\\delta_i/2)} / \\lVert X \\rVert` for angle errors :math:`\\delta_i`), shape (DIM // 2,);
        ``floor``: :data:`FLOOR`.
    """
    theta = frequencies(DIM, BASE)
    a, b = LAYOUTS["interleaved"].pairs(DIM)  # the layout apply_rope uses by default (as in state)
    return {
        "theta": theta,
        "theta_in": {
            name: torch_rope.rope_angles([1.0], theta, dtype=dt)[0].double().numpy() for name, dt in DTYPES.items()
        },
        "formats": {
            name: {"bits": _significand_bits(dt), "max": float(torch.finfo(dt).max), "tiny": float(torch.finfo(dt).tiny)}
            for name, dt in DTYPES.items()
        },
        "pair_weight": X[a] ** 2 + X[b] ** 2,
        "floor": FLOOR,
    }


CONTROLS = [
    Control("position", "position m (tokens)", 4096, min=0, max=MAX_POSITION, step=1),
    Control("dtype", "angles computed in", "bfloat16", kind="select", options=tuple(DTYPES)),
]

#: The chapter 8 figure: per-pair angle errors and the drift of a rotated vector, for one position
#: and the dtype the angles are computed in.
DEMO = Figure(
    "precision", CONTROLS, data=data, readouts=readouts,
    title="RoPE angles in half precision: per-pair angle error and drift of the rotated vector, by position",
)
