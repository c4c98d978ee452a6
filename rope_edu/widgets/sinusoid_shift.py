"""Chapter 2 widget: the shift matrix M(k) turns every pair of PE(p) by k·θ_i, clockwise.

Pair ``i`` of the sinusoidal encoding, ``(sin pθ_i, cos pθ_i)``, is drawn as a point on a circle
with coordinate ``2i`` across and ``2i + 1`` up, so position 0 sits at 12 o'clock. Shifting
the position by ``k`` moves every point clockwise by ``kθ_i``, the same arc whatever ``p`` is:
that is ``PE(p + k) = M(k) PE(p)`` with one matrix ``M(k)`` for all positions.

The figure (``js/sinusoid_shift.js``) has two controls, the position ``p`` and the shift ``k``.
It applies the blocks of ``shift_matrix(k)`` (from :func:`data`) to ``PE(p)`` and marks
``PE(p + k)`` from the formula; :func:`readouts` gives the numbers it prints.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import check_int
from ..encodings import shift_matrix, sinusoidal_at
from ..rope import frequencies
from ._core import Control, Figure

__all__ = ["DIM", "BASE", "P_RANGE", "K_RANGE", "state", "readouts", "data", "CONTROLS", "DEMO"]

DIM = 8        #: four pairs, four circles
BASE = 100.0   #: θ_i = 100**(-2i/8): 1, 0.32, 0.1, 0.03 rad per position
P_RANGE = (0, 30)   #: range of the figure's position slider
K_RANGE = (-8, 8)   #: range of the figure's shift slider


def state(p: int, k: int) -> dict[str, Any]:
    """Everything the widget shows, computed without drawing.

    Returns
    -------
    dict
        ``pe_p`` (``PE(p)``, shape (DIM,)), ``pe_pk`` (``PE(p + k)`` from the formula),
        ``shifted`` (``shift_matrix(k) @ PE(p)``), ``error`` (max abs difference of the last
        two), ``turn`` (shape (DIM // 2,): ``kθ_i``, the clockwise angle each pair moves),
        ``angle_p`` and ``angle_pk`` (shape (DIM // 2,): polar angle of each pair's point,
        measured counter-clockwise from the first coordinate's axis, in radians).
    """
    p, k = check_int(p, "p"), check_int(k, "k")
    pe_p = sinusoidal_at(p, DIM, BASE)
    pe_pk = sinusoidal_at(p + k, DIM, BASE)
    shifted = shift_matrix(k, DIM, BASE) @ pe_p
    return {
        "pe_p": pe_p,
        "pe_pk": pe_pk,
        "shifted": shifted,
        "error": float(np.abs(shifted - pe_pk).max()),
        "turn": k * frequencies(DIM, BASE),
        "angle_p": np.arctan2(pe_p[1::2], pe_p[0::2]),
        "angle_pk": np.arctan2(shifted[1::2], shifted[0::2]),
    }


def readouts(p: int, k: int) -> dict[str, float]:
    """The numbers the figure prints for position ``p`` and shift ``k``, by readout name.

    ``pk``: the position ``p + k``; ``turn_i`` for each pair ``i``: ``kθ_i``, the clockwise angle
    (radians) that pair moves; ``error``: ``max |M(k) PE(p) − PE(p + k)|``.
    """
    s = state(p, k)
    out = {"pk": float(int(p) + int(k)), "error": s["error"]}
    out.update({f"turn_{i}": float(t) for i, t in enumerate(s["turn"])})
    return out


def data() -> dict[str, Any]:
    """What the figure draws, for every state its sliders reach.

    ``theta`` (shape (DIM // 2,)); ``pe`` (shape (P_RANGE[1] + K_RANGE[1] - K_RANGE[0] + 1, DIM)):
    ``PE(q)`` for ``q = K_RANGE[0], ..., P_RANGE[1] + K_RANGE[1]`` (row ``q - K_RANGE[0]``);
    ``blocks`` (shape (K_RANGE[1] - K_RANGE[0] + 1, DIM // 2, 2, 2)): the diagonal blocks of
    ``shift_matrix(k)`` (row ``k - K_RANGE[0]``), which the figure applies to ``PE(p)``;
    ``error`` (shape (P_RANGE[1] + 1, K_RANGE[1] - K_RANGE[0] + 1)): the readout ``error`` for
    every ``(p, k)``; ``k_min``: ``K_RANGE[0]``.
    """
    ks = range(K_RANGE[0], K_RANGE[1] + 1)
    pair = np.arange(DIM // 2)
    blocks = []
    for k in ks:
        m = shift_matrix(k, DIM, BASE)
        blocks.append([m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] for i in pair])
    return {
        "theta": frequencies(DIM, BASE),
        "pe": sinusoidal_at(np.arange(K_RANGE[0], P_RANGE[1] + K_RANGE[1] + 1), DIM, BASE),
        "blocks": np.array(blocks),
        "error": [[state(p, k)["error"] for k in ks] for p in range(P_RANGE[0], P_RANGE[1] + 1)],
        "k_min": K_RANGE[0],
    }


CONTROLS = [
    Control("p", "position p", 5, min=P_RANGE[0], max=P_RANGE[1], step=1),
    Control("k", "shift k", 3, min=K_RANGE[0], max=K_RANGE[1], step=1),
]

#: The chapter 2 shift figure: M(k) turns every pair of PE(p) clockwise by kθ_i onto PE(p + k).
DEMO = Figure(
    "sinusoid_shift", CONTROLS, data=data, readouts=readouts,
    title="The shift matrix M(k) turns each pair of PE(p) clockwise by k·θ_i, onto PE(p + k)",
)
