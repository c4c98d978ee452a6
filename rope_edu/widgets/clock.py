"""Chapter 5 widget: the RoPE clock, one hand per frequency pair.

At position ``m`` pair ``i`` is turned counter-clockwise by ``m·θ_i`` with
``θ_i = base ** (-2i/d)``. Each dial shows one pair as a clock hand that starts pointing right
(the real axis) at ``m = 0``: pair 0 turns one radian per position, the last pair so slowly that
it has not made one full turn after thousands of positions. The base sets how slow the slow
hands are.

The numbers the dials show come from the pure function :func:`state`.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from matplotlib.patches import Circle

from .._checks import check_base, check_dim
from ..decay import wavelengths
from ..plots import COLORS
from ..rope import apply_rope, frequencies
from ._legacy import Demo

__all__ = ["DIM", "BASES", "POSITION_MAX", "state", "draw", "controls", "frames", "DEMO"]

#: Dimension shown by the widget: 16 coordinates, so 8 pairs and 8 dials.
DIM = 16
#: Bases offered by the live widget's drop-down.
BASES = (10.0, 100.0, 1000.0, 10000.0, 500000.0)
#: Largest position of the live widget's slider.
POSITION_MAX = 512


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


def _position_label(m: float) -> str:
    return f"{m:,.0f}" if float(m).is_integer() else f"{m:,.2f}"


def draw(fig, m: float = 3, base: float = 10000.0, dim: int = DIM, note: str = "") -> None:
    """Draw one dial per pair with its hand at angle ``m·θ_i`` (counter-clockwise from the right).

    All dials share one set of axes (one unit circle per pair, laid out in rows of four), which
    keeps the kernel-free animation light.
    """
    s = state(m, dim, base)
    n_pairs = dim // 2
    ncols = min(4, n_pairs)
    nrows = -(-n_pairs // ncols)
    gap = 2.9  # distance between dial centres, in dial radii
    ax = fig.add_subplot(1, 1, 1)
    ax.set_aspect("equal")
    ax.set_xlim(-1.4, (ncols - 1) * gap + 1.4)
    ax.set_ylim(-(nrows - 1) * gap - 1.6, 1.5)
    ax.set_axis_off()
    for i in range(n_pairs):
        cx, cy = (i % ncols) * gap, -(i // ncols) * gap
        colour = COLORS["q"] if s["full_turn"][i] else COLORS["orange"]
        ax.add_patch(Circle((cx, cy), 1.0, fill=False, color=COLORS["grey"], lw=1))
        ax.plot([cx + 1.0, cx + 1.2], [cy, cy], color=COLORS["black"], lw=1.2)  # angle 0: the start
        x, y = s["hand"][i]
        ax.annotate("", xy=(cx + x, cy + y), xytext=(cx, cy),
                    arrowprops=dict(arrowstyle="-|>", color=colour, lw=2, shrinkA=0, shrinkB=0))
        ax.text(cx, cy + 1.15, f"pair {i}: λ = {s['wavelength'][i]:,.0f}", ha="center", va="bottom", fontsize=7.5)
        ax.text(cx, cy - 1.15, f"{s['turns'][i]:,.2f} turns", ha="center", va="top", fontsize=7.5, color=colour)
    head = f"position m = {_position_label(m)},  base b = {base:,.0f},  d = {dim}"
    legend = "λ: wavelength (positions per turn); blue: ≥ 1 turn made, orange: < 1 turn"
    ax.set_title("\n".join(t for t in (note, head, legend) if t), fontsize=8)


def controls() -> dict[str, Any]:
    """The live widget's controls: the position m and the base b."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    return {
        "m": w.IntSlider(value=3, min=0, max=POSITION_MAX, description="position m", style=style),
        "base": w.Dropdown(options=[(f"{b:,.0f}", b) for b in BASES], value=10000.0,
                           description="base b", style=style),
    }


def frames() -> list[dict[str, Any]]:
    """Kernel-free animation (16 frames, base 10,000): positions 0 to 8 one by one (the fast hands
    turn, the slow ones do not seem to move), then positions growing fourfold up to 65,536 (the
    slow hands catch up; the fast ones have wrapped around many times)."""
    steps = [{"m": m, "base": 10000.0, "note": "one position per frame"} for m in range(9)]
    jumps = [{"m": 4 ** p, "base": 10000.0, "note": "the position grows fourfold per frame"} for p in range(2, 9)]
    return steps + jumps


DEMO = Demo(draw=draw, controls=controls, frames=frames, figsize=(5.6, 3.3))
