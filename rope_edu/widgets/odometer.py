"""Chapter 2 widget: a binary odometer next to sinusoidal clocks, driven by one position slider.

Both encodings have one "wheel" per scale: bit ``j`` of the position flips every ``2**j`` steps,
and pair ``i`` of the sinusoidal encoding is a clock hand turning at ``θ_i`` radians per step.
With ``dim = 12`` and ``base = 64`` the clocks' periods double from one pair to the next, like the
bits' (``θ_i = 64**(-2i/12) = 2**-i``). The bits jump: going from ``p`` to ``p + 1`` changes
anything from one bit to all of them. The hands glide: every step moves the point
``PE(p)`` by the same distance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.patches import Circle, Rectangle

from ..encodings import binary_encoding, sinusoidal_at
from ..plots import COLORS
from ..rope import frequencies
from ._legacy import Demo

__all__ = ["N_BITS", "DIM", "BASE", "N_POSITIONS", "state", "draw", "controls", "frames", "DEMO"]

N_BITS = 6          #: bits of the odometer (positions 0 .. 63)
DIM = 12            #: width of the sinusoidal encoding: 6 clock hands
BASE = 64.0         #: θ_i = 64**(-2i/12) = 2**-i: each hand is half as fast as the one before
N_POSITIONS = 2 ** N_BITS


def _check_p(p: Any) -> int:
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise TypeError(f"p must be an integer position, got {p!r}")
    if not 0 <= p < N_POSITIONS:
        raise ValueError(f"p must be in 0..{N_POSITIONS - 1}, got {p}")
    return int(p)


def state(p: int) -> dict[str, Any]:
    """Everything the widget shows for position ``p``, computed without drawing.

    Returns
    -------
    dict
        ``bits`` (shape (N_BITS,), least significant first), ``pe`` (shape (DIM,),
        ``PE(p)``), ``angles`` (shape (DIM // 2,), ``p θ_i`` in radians), ``bit_steps`` and
        ``pe_steps`` (shape (N_POSITIONS - 1,): ``‖code(q + 1) − code(q)‖`` for every q, the
        odometer's jagged and the clocks' constant step), and ``bit_step`` / ``pe_step`` (those
        steps at ``p``, or NaN at the last position).
    """
    p = _check_p(p)
    table_b = binary_encoding(N_POSITIONS, N_BITS)
    table_s = sinusoidal_at(np.arange(N_POSITIONS), DIM, BASE)
    bit_steps = np.linalg.norm(np.diff(table_b, axis=0), axis=1)
    pe_steps = np.linalg.norm(np.diff(table_s, axis=0), axis=1)
    last = p == N_POSITIONS - 1
    return {
        "bits": table_b[p],
        "pe": table_s[p],
        "angles": p * frequencies(DIM, BASE),
        "bit_steps": bit_steps,
        "pe_steps": pe_steps,
        "bit_step": float("nan") if last else float(bit_steps[p]),
        "pe_step": float("nan") if last else float(pe_steps[p]),
    }


def draw(fig, p: int = 0) -> None:
    """Top: the bits of ``p`` and the clock hands of ``PE(p)``. Bottom: step sizes against p."""
    s = state(p)
    top, bottom = fig.subplots(2, 1, gridspec_kw={"height_ratios": [1.5, 1.0]})
    for j in range(N_BITS):
        x = 2.6 * (N_BITS - 1 - j)  # the most significant bit on the left, as numbers are written
        on = bool(s["bits"][j])
        top.add_patch(Rectangle((x - 0.5, 1.7), 1.0, 1.0, facecolor=COLORS["k"] if on else "white",
                                edgecolor=COLORS["black"], lw=1))
        top.text(x, 2.2, "1" if on else "0", ha="center", va="center", fontsize=12,
                 color="white" if on else COLORS["black"])
        top.text(x, 2.95, f"bit {j}", ha="center", va="center", fontsize=8)
        # pair j holds (sin pθ_j, cos pθ_j): coordinate 2j across, 2j+1 up, so p = 0 is 12 o'clock
        a, b = s["pe"][2 * j], s["pe"][2 * j + 1]
        top.add_patch(Circle((x, 0), 1, fill=False, color=COLORS["grey"], lw=0.8))
        top.plot([x, x + a], [0, b], color=COLORS["q"], lw=2)
        top.plot([x + a], [b], "o", color=COLORS["q"], ms=4)
        top.text(x, -1.2, f"pair {j}\nθ = 1/{2 ** j}", ha="center", va="top", fontsize=8)
    top.set_xlim(-1.3, 2.6 * (N_BITS - 1) + 1.3)
    top.set_ylim(-2.4, 3.2)
    top.set_aspect("equal")
    top.set_axis_off()
    q = np.arange(N_POSITIONS - 1)
    bottom.step(q, s["bit_steps"], where="post", color=COLORS["k"], label="binary (√ of the bits that flip)")
    bottom.plot(q, s["pe_steps"], color=COLORS["q"], label="sinusoidal (the same every step)")
    bottom.axvline(p, color=COLORS["grey"], ls=":")
    bottom.set_xlabel("position p")
    bottom.set_ylabel("‖code(p+1) − code(p)‖")
    bottom.set_xlim(0, N_POSITIONS - 1)
    bottom.set_ylim(0, 3.4)
    bottom.legend(loc="upper right", fontsize=7, ncol=2)
    step = "—" if np.isnan(s["bit_step"]) else f"binary {s['bit_step']:.2f}, sinusoidal {s['pe_step']:.2f}"
    fig.suptitle(f"position p = {p}   (step to p+1: {step})", fontsize=9)


def controls() -> dict[str, Any]:
    """The live widget's slider: the position p."""
    import ipywidgets as w

    return {"p": w.IntSlider(value=0, min=0, max=N_POSITIONS - 1, description="position p")}


def frames() -> list[dict[str, Any]]:
    """Kernel-free animation: the first 17 positions, then the carry 31 → 32 and the last positions."""
    return [{"p": p} for p in [*range(17), 31, 32, 62, 63]]


DEMO = Demo(draw=draw, controls=controls, frames=frames, figsize=(5.6, 4.2), interval=500)
