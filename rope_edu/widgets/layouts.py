"""Chapter 6 widget: which coordinates each layout pairs, and what a table mix-up does.

A vector of dimension 8 is rotated at position ``m`` by ``x * cos + partner(x) * sin``, where
the *rotation* (``partner``: :func:`~rope_edu.layouts.rotate_half` or
:func:`~rope_edu.layouts.rotate_every_two`) and the *table* (``cos_sin_table``) each have a
layout. Top: the coordinates as bars, arcs joining the coordinates the rotation pairs, and under
every coordinate the frequency its table entry holds. When the two ends of an arc read the same
frequency the map is a rotation; otherwise (the mix-up) it is not. Below: the norm ratio and the
score at a fixed distance as the position moves; both are flat only when the layouts match.

The figure (``js/layouts.js``) has three controls, the position ``m`` and the two layouts; it
draws what :func:`data` precomputes with ``rope_edu`` for every pair of layouts, and prints
:func:`readouts`, which the browser tests compare with the page.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import as_real_array, check_positions
from ..layouts import TABLE_LAYOUTS, cos_sin_table, rope_from_table
from ..rope import LAYOUTS
from ._core import Control, Figure, snap_zero

__all__ = [
    "DIM", "BASE", "X", "K", "DISTANCE", "POSITIONS", "ZERO", "ROTATION_NAMES", "TABLE_NAMES",
    "state", "readouts", "data", "CONTROLS", "DEMO",
]

#: Dimension shown (4 pairs: small enough to read, large enough for the layouts to differ).
DIM = 8
#: A small base so that every pair turns visibly over a few dozen positions.
BASE = 100.0
#: The vector whose coordinates the bars show (it also plays the query), and the key.
X = np.array([1.0, 0.8, 0.6, 0.4, -0.3, 0.5, -0.7, 0.9])
K = np.array([0.5, -0.9, 0.7, 0.2, 0.8, 0.1, -0.4, 0.6])
#: Query-key distance m - n of the score plotted in the lower panel.
DISTANCE = 2
#: Positions of the lower panels' curves.
POSITIONS = np.arange(0, 41)
#: The two spreads are printed as 0 below this (:func:`~rope_edu.widgets.snap_zero`): 0 in exact
#: arithmetic when the layouts match (about 1e-15 in floating point), above 0.2 when they do not.
ZERO = 1e-12


def _rotate(v: np.ndarray, positions: Any, rotation: str, table: str) -> np.ndarray:
    pos = np.asarray(positions, dtype=np.float64)
    cos, sin = cos_sin_table(pos, v.shape[-1], base=BASE, layout=table)
    return rope_from_table(np.broadcast_to(v, pos.shape + v.shape), cos, sin, layout=rotation)


def state(m: float, rotation: str = "half", table: str = "half", x: Any = X, k: Any = K) -> dict[str, Any]:
    """Everything the widget shows, computed without drawing.

    Parameters
    ----------
    m : float
        Position of the vector ``x`` (and of the query in the score curve).
    rotation, table : {"interleaved", "half"}
        Layout of the rotation (which coordinates are paired) and of the cos/sin table.
    x, k : array_like, shape (DIM,)
        The vector shown (the query) and the key.

    Returns
    -------
    dict
        ``pairs`` (two index arrays: pair ``i`` joins ``pairs[0][i]`` and ``pairs[1][i]``),
        ``freq_index`` (frequency index each coordinate's table entry holds), ``matched`` (every
        pair reads one frequency), ``x_rot`` (the rotated ``x``), ``norm_ratio``
        (``||x_rot|| / ||x||``), ``positions``, ``norm_curve`` (the ratio at every position) and
        ``score_curve`` (``<f(x, p + DISTANCE), f(k, p)>`` at every position ``p``),
        ``score_ref`` (the correct rotation's score at that distance, the same for every ``p``).
    """
    m = float(check_positions(m, (), name="m"))
    x = as_real_array(x, "x").astype(np.float64)
    k = as_real_array(k, "k").astype(np.float64)
    if x.shape != (DIM,) or k.shape != (DIM,):
        raise ValueError(f"x and k must have shape ({DIM},), got {x.shape} and {k.shape}")
    for name, val in (("rotation", rotation), ("table", table)):
        if val not in TABLE_LAYOUTS:
            raise ValueError(f"unknown {name} {val!r}; expected one of {sorted(TABLE_LAYOUTS)}")
    a, b = LAYOUTS[rotation].pairs(DIM)
    fidx = TABLE_LAYOUTS[table].freq_index(DIM)
    x_rot = _rotate(x, m, rotation, table)
    q_curve = _rotate(x, POSITIONS + DISTANCE, rotation, table)
    k_curve = _rotate(k, POSITIONS, rotation, table)
    ref = float(_rotate(x, DISTANCE, rotation, rotation) @ _rotate(k, 0.0, rotation, rotation))
    return {
        "pairs": (a, b),
        "freq_index": fidx,
        "matched": bool(np.all(fidx[a] == fidx[b])),
        "x_rot": x_rot,
        "norm_ratio": float(np.linalg.norm(x_rot) / np.linalg.norm(x)),
        "positions": POSITIONS,
        "norm_curve": np.linalg.norm(_rotate(x, POSITIONS, rotation, table), axis=-1) / np.linalg.norm(x),
        "score_curve": np.sum(q_curve * k_curve, axis=-1),
        "score_ref": ref,
    }


#: How the figure names each layout: the rotation's pairs and the table's order of frequencies.
ROTATION_NAMES = {"half": "half-split: pairs (i, i+d/2)", "interleaved": "interleaved: pairs (2i, 2i+1)"}
TABLE_NAMES = {"half": "half: [θ0..θ3, θ0..θ3]", "interleaved": "interleaved: [θ0, θ0, θ1, θ1, ...]"}


def _spreads(s: dict[str, Any]) -> tuple[float, float]:
    """(largest |norm ratio - 1|, score max - min) over the plotted positions, as computed (the
    readouts print them through :func:`snap_zero` with :data:`ZERO`)."""
    return float(np.max(np.abs(s["norm_curve"] - 1.0))), float(np.ptp(s["score_curve"]))


def readouts(m: int, rotation: str, table: str) -> dict[str, float]:
    """The numbers the figure prints for position ``m`` and the two layouts (from :func:`state`).

    ``norm_ratio``: :math:`\\|f(x, m)\\| / \\|x\\|`; ``norm_error``: the largest
    :math:`|\\|f(x, p)\\| / \\|x\\| - 1|` over the plotted positions; ``score``: the score
    :math:`\\langle f(x, m + \\text{DISTANCE}), f(k, m)\\rangle`; ``score_ref``: the correct RoPE
    score at that distance; ``score_spread``: max minus min of the score over the plotted positions
    (0 for RoPE). The two spreads are printed as 0 below :data:`ZERO` (floating-point rounding of
    a true 0, :func:`snap_zero`).
    """
    s = state(m, rotation, table)
    norm_error, score_spread = _spreads(s)
    index = int(np.searchsorted(POSITIONS, m))
    if index >= len(POSITIONS) or POSITIONS[index] != m:
        raise ValueError(f"m must be one of the plotted positions {POSITIONS[0]}..{POSITIONS[-1]}, got {m!r}")
    return {
        "norm_ratio": s["norm_ratio"],
        "norm_error": snap_zero(norm_error, ZERO),
        "score": float(s["score_curve"][index]),
        "score_ref": s["score_ref"],
        "score_spread": snap_zero(score_spread, ZERO),
    }


def data() -> dict[str, Any]:
    """For every (rotation, table) pair of layouts, keyed ``"rotation/table"``: what :func:`state`
    returns at every plotted position (``x_rot`` rounded to 4 decimals: it only draws bars), and the
    spreads as computed (the browser prints them as 0 below ``zero`` = :data:`ZERO`)."""
    combos = {}
    for rotation in ROTATION_NAMES:
        for table in TABLE_NAMES:
            s = state(0.0, rotation, table)
            norm_error, score_spread = _spreads(s)
            combos[f"{rotation}/{table}"] = {
                "pairs": np.stack(s["pairs"]),
                "freq_index": s["freq_index"],
                "matched": s["matched"],
                "x_rot": np.round(_rotate(X, POSITIONS, rotation, table), 4),
                "norm_curve": s["norm_curve"],
                "norm_error": norm_error,
                "score_curve": s["score_curve"],
                "score_spread": score_spread,
                "score_ref": s["score_ref"],
            }
    return {
        "x": X, "positions": POSITIONS, "distance": DISTANCE, "zero": ZERO, "combos": combos,
        "rotation_names": ROTATION_NAMES, "table_names": TABLE_NAMES,
    }


CONTROLS = [
    Control("m", "position m", 5, min=0, max=int(POSITIONS[-1]), step=1),
    Control("rotation", "rotation pairs", "half", kind="select", options=tuple(ROTATION_NAMES)),
    Control("table", "cos/sin table", "half", kind="select", options=tuple(TABLE_NAMES)),
]

#: The chapter 6 figure: the pairing of each layout, and the norm and score under a table mix-up.
DEMO = Figure(
    "layouts", CONTROLS, data=data, readouts=readouts,
    title="RoPE layouts: which coordinates a rotation pairs, which frequency its cos/sin table holds, "
          "and what a mix-up does to norms and scores",
)
