"""Landing-page widget: two tokens' vectors turning, the angle between them kept.

A query at position ``p + gap`` and a key at position ``p`` are each turned counter-clockwise by
their position times ``θ`` (:func:`rope_edu.widgets.rotation2d.state`, which calls
:func:`rope_edu.apply_rope`). Moving both tokens along the text (``p``) turns both arrows by the
same angle, so the angle between them, and their dot product (the attention score), stay as they
are; only the distance ``gap`` between the tokens changes them.

The figure (``js/turning_pair.js``) has two controls, ``p`` and ``gap``; its readouts are
:func:`readouts`, which the browser tests compare with the page.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._core import Control, Figure
from .rotation2d import K, Q, state

__all__ = ["THETA", "readouts", "data", "CONTROLS", "DEMO"]

#: The frequency the figure turns by, radians per position (about 23° a position: a few
#: positions make a visible turn, 15 positions a little under one full turn).
THETA = 0.4


def readouts(p: int, gap: int) -> dict[str, float]:
    """The numbers the figure prints: the two positions, the turn of each arrow (degrees modulo a
    full turn, in [0°, 360°): the direction it points) and the angle
    between them (degrees, the angle from the key's arrow to the query's in (−180°, 180°]), and
    the score ``⟨R(mθ)q, R(nθ)k⟩``.

    Parameters
    ----------
    p : int
        Position of the key (the earlier token); the query sits at ``p + gap``.
    gap : int
        Distance between the two tokens, in positions.
    """
    st = state(p + gap, p, THETA)
    return {
        "m": p + gap,
        "n": p,
        "turn_q": float(np.degrees(st["angle_q"]) % 360),
        "turn_k": float(np.degrees(st["angle_k"]) % 360),
        "angle": float(np.degrees(st["angle_between"])),
        "score": st["dot"],
    }


def data() -> dict[str, Any]:
    """The two vectors before rotation and the frequency θ."""
    return {"q": Q, "k": K, "theta": THETA}


CONTROLS = [
    Control("p", "move both tokens to position", 0, min=0, max=30, step=1),
    Control("gap", "distance between them", 4, min=0, max=6, step=1),
]

#: The landing page's figure: the query at p + gap and the key at p, each turned by its position.
DEMO = Figure(
    "turning_pair", CONTROLS, data=data, readouts=readouts,
    title="Two tokens' vectors turned by their positions: moving both keeps the angle between them",
)
