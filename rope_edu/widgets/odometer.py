"""Chapter 2 widget: a binary odometer next to sinusoidal clocks, driven by one position slider.

Both encodings have one "wheel" per scale: bit ``j`` of the position flips every ``2**j`` steps,
and pair ``i`` of the sinusoidal encoding is a clock hand turning at ``θ_i`` radians per step.
With ``dim = 12`` and ``base = 64`` the clocks' periods double from one pair to the next, like the
bits' (``θ_i = 64**(-2i/12) = 2**-i``). The bits jump: going from ``p`` to ``p + 1`` changes
anything from one bit to all of them. The hands glide: every step moves the point
``PE(p)`` by the same distance.

The figure (``js/odometer.js``) has one control, the position ``p``; :func:`data` holds both
tables and their steps for every position, :func:`readouts` the numbers it prints.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..encodings import binary_encoding, sinusoidal_at
from ..rope import frequencies
from ._core import Control, Figure

__all__ = ["N_BITS", "DIM", "BASE", "N_POSITIONS", "state", "readouts", "data", "CONTROLS", "DEMO"]

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


def readouts(p: int) -> dict[str, float]:
    """The numbers the figure prints at position ``p``, by readout name.

    ``flips``: how many bits change from ``p`` to ``p + 1``; ``bit_step`` and ``pe_step``: the
    steps ``‖code(p + 1) − code(p)‖`` of the two encodings (all three NaN at the last position,
    which has no successor in the table).
    """
    s = state(p)
    last = int(p) == N_POSITIONS - 1
    flips = float("nan") if last else float(np.sum(s["bits"] != state(int(p) + 1)["bits"]))
    return {"flips": flips, "bit_step": s["bit_step"], "pe_step": s["pe_step"]}


def data() -> dict[str, Any]:
    """The two tables and their steps, for every position.

    ``bits`` (shape (N_POSITIONS, N_BITS), least significant first), ``pe`` (shape
    (N_POSITIONS, DIM), ``PE(p)`` rounded to 5 decimals: only drawn), ``bit_steps`` and
    ``pe_steps`` (shape (N_POSITIONS - 1,), exact: the readouts), ``theta`` (shape (DIM // 2,)).
    """
    s = state(0)
    return {
        "bits": binary_encoding(N_POSITIONS, N_BITS).astype(int),
        "pe": np.round(sinusoidal_at(np.arange(N_POSITIONS), DIM, BASE), 5),
        "bit_steps": s["bit_steps"],
        "pe_steps": s["pe_steps"],
        "theta": frequencies(DIM, BASE),
    }


CONTROLS = [Control("p", "position p", 0, min=0, max=N_POSITIONS - 1, step=1)]

#: The chapter 2 odometer figure: the bits of p next to the clock hands of PE(p), and the step
#: to p + 1 of both codes.
DEMO = Figure(
    "odometer", CONTROLS, data=data, readouts=readouts,
    title="A binary odometer next to sinusoidal clock hands, driven by one position p",
)
