"""Chapter 5 widget: the RoPE clock, one hand per frequency pair.

At position ``m`` pair ``i`` is turned counter-clockwise by ``m·θ_i`` with
``θ_i = base ** (-2i/d)``. Each dial shows one pair as a clock hand that starts pointing right
(the real axis) at ``m = 0``: pair 0 turns one radian per position, the last pair so slowly that
it has not made one full turn after thousands of positions. The base sets how slow the slow
hands are.

The figure (``js/clock.js``) has two controls, the position ``m`` and the base ``b`` (a
drop-down of :data:`BASES`). It draws the hands from the frequencies :func:`data` computes with
``rope_edu``; the numbers it prints are :func:`readouts`, computed from the pure function
:func:`state`, and the browser tests compare the page with them.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._checks import check_base, check_dim
from ..decay import wavelengths
from ..rope import apply_rope, frequencies
from ._core import Control, Figure

__all__ = ["DIM", "BASES", "BASE_OPTIONS", "POSITION_MAX", "POSITIONS", "state", "readouts", "data", "CONTROLS", "DEMO"]

#: Dimension shown by the widget: 16 coordinates, so 8 pairs and 8 dials.
DIM = 16
#: Bases offered by the figure's drop-down.
BASES = (10.0, 100.0, 1000.0, 10000.0, 500000.0)
#: The drop-down's options (strings, as a browser ``<select>`` holds them): ``"10"`` ... ``"500000"``.
BASE_OPTIONS = tuple(f"{b:.0f}" for b in BASES)
#: Largest position of the slider: a 32k context, where at base 10,000 every hand has made a
#: full turn and at base 500,000 two have not.
POSITION_MAX = 32768


def state(position: float, dim: int = DIM, base: float = 10000.0) -> dict[str, Any]:
    """Everything the clock shows at one position, computed without drawing.

    The hands are the rotated unit vectors: pair ``i`` of ``apply_rope(e, position)`` where
    ``e`` has ``(1, 0)`` in every pair, so the widget turns exactly as the package does.

    Parameters
    ----------
    position : float
        The position :math:`m` (a finite real number; integers in the widget).
    dim : int, default 16
        Even dimension :math:`d`; the clock has ``dim // 2`` hands.
    base : float, default 10000.0
        The base :math:`b > 1`.

    Returns
    -------
    dict
        ``theta`` (shape (dim // 2,), radians per position), ``wavelength`` (positions per
        turn, :math:`2\\pi/\\theta_i`), ``angle`` (:math:`m\\theta_i`, total radians turned),
        ``turns`` (:math:`m\\theta_i / 2\\pi`, full turns made), ``hand`` (shape (dim // 2, 2),
        the tip of each hand, :math:`(\\cos m\\theta_i, \\sin m\\theta_i)`) and ``full_turn``
        (bool, shape (dim // 2,): at least one full turn made).
    """
    if isinstance(position, (bool, np.bool_)) or not isinstance(position, numbers.Real):
        raise TypeError(f"position must be a finite real number, got {position!r}")
    position = float(position)
    if not np.isfinite(position):
        raise ValueError(f"position must be a finite real number, got {position}")
    dim = check_dim(dim)
    base = check_base(base)
    theta = frequencies(dim, base)
    unit = np.tile([1.0, 0.0], dim // 2)  # (1, 0) in every interleaved pair
    hand = apply_rope(unit[None, :], [position], base=base)[0].reshape(dim // 2, 2)
    angle = position * theta
    turns = angle / (2.0 * np.pi)
    return {
        "theta": theta,
        "wavelength": wavelengths(dim, base),
        "angle": angle,
        "turns": turns,
        "hand": hand,
        "full_turn": np.abs(turns) >= 1.0,
    }


def readouts(m: int, base: Any) -> dict[str, float]:
    """The numbers the figure prints at position ``m`` for the base ``base`` (a number or an option).

    ``wavelength_i`` and ``turns_i`` for every pair ``i`` (from :func:`state`), and ``full_turns``,
    the number of pairs whose hand has made at least one full turn.
    """
    s = state(m, DIM, float(CONTROLS[1].coerce(base)))
    out: dict[str, float] = {}
    for i in range(DIM // 2):
        out[f"wavelength_{i}"] = float(s["wavelength"][i])
        out[f"turns_{i}"] = float(s["turns"][i])
    out["full_turns"] = int(s["full_turn"].sum())
    return out


def data() -> dict[str, Any]:
    """Per base option: the frequencies ``theta`` and wavelengths of the ``DIM // 2`` pairs."""
    return {
        "dim": DIM,
        "bases": {
            option: {"theta": frequencies(DIM, b), "wavelength": wavelengths(DIM, b)}
            for b, option in zip(BASES, BASE_OPTIONS)
        },
    }


#: The position slider and the base drop-down; the drop-down also takes a number equal to one of
#: :data:`BASES` (``DEMO.show(base=500000.0)``), as every drop-down of numbers does.
#: The positions the slider stops at: every integer up to 64 (where the fast hands are worth
#: watching one step at a time), then four stops per doubling up to :data:`POSITION_MAX`.
POSITIONS = tuple(range(65)) + tuple(
    sorted({int(round(64 * 2 ** (k / 4))) for k in range(1, 4 * int(np.log2(POSITION_MAX // 64)) + 1)}))

CONTROLS = [
    Control("m", "position m", 3, values=POSITIONS),
    Control("base", "base b", "10000", kind="select", options=BASE_OPTIONS),
]

#: The chapter 5 figure: one dial per frequency pair, the hand of pair i at angle m·θ_i.
DEMO = Figure(
    "clock", CONTROLS, data=data, readouts=readouts,
    title="The RoPE clock: one hand per frequency pair, each turned by m·θ_i at position m",
)
