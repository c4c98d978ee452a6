"""Chapter 6 widget: which coordinates each layout pairs, and what a table mix-up does.

A vector of dimension 8 is rotated at position ``m`` by ``x * cos + partner(x) * sin``, where
the *rotation* (``partner``: :func:`~rope_edu.layouts.rotate_half` or
:func:`~rope_edu.layouts.rotate_every_two`) and the *table* (``cos_sin_table``) each have a
layout. Top: the coordinates as bars, arcs joining the coordinates the rotation pairs, and under
every coordinate the frequency its table entry holds. When the two ends of an arc read the same
frequency the map is a rotation; otherwise (the mix-up) it is not. Below: the norm ratio and the
score at a fixed distance as the position moves; both are flat only when the layouts match.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.patches import Arc

from .._checks import as_real_array, check_positions
from ..layouts import TABLE_LAYOUTS, cos_sin_table, rope_from_table
from ..plots import COLORS, CYCLE
from ..rope import LAYOUTS
from ._legacy import Demo

__all__ = ["DIM", "BASE", "X", "K", "DISTANCE", "POSITIONS", "state", "draw", "controls", "frames", "DEMO"]

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


_NAMES = {"half": "half-split (i, i+d/2)", "interleaved": "interleaved (2i, 2i+1)"}


def draw(fig, m: float = 5, rotation: str = "half", table: str = "half", note: str = "") -> None:
    """Draw the pairing diagram at position ``m`` and the norm and score curves on ``fig``."""
    s = state(m, rotation, table)
    axes = fig.subplots(3, 1, gridspec_kw={"height_ratios": [1.5, 1, 1]})
    if fig.get_layout_engine() is None:  # the kernel-free animation draws with no layout engine
        fig.subplots_adjust(left=0.12, right=0.97, top=0.86 if note else 0.9, bottom=0.08, hspace=0.62)
    ax = axes[0]
    j = np.arange(DIM)
    a, b = s["pairs"]
    pair_of = np.empty(DIM, dtype=int)
    pair_of[a] = np.arange(DIM // 2)
    pair_of[b] = np.arange(DIM // 2)
    ax.bar(j, X, width=0.8, color="none", edgecolor=COLORS["grey"], ls="--", label="x")
    ax.bar(j, s["x_rot"], width=0.5, color=[CYCLE[p] for p in pair_of], label=f"x at m = {m:g}")
    top = 1.6
    for i, (ja, jb) in enumerate(zip(a, b)):
        width = jb - ja
        ax.add_patch(Arc(((ja + jb) / 2, top), width, 0.5 + 0.25 * width, theta1=0, theta2=180,
                         color=CYCLE[i], lw=1.6))
    ax.set_xticks(j)
    ax.set_xticklabels([f"x{jj}\nθ{f}" for jj, f in zip(j, s["freq_index"])], fontsize=8)
    for lab, f in zip(ax.get_xticklabels(), s["freq_index"]):
        lab.set_color(CYCLE[f])
    ax.set_ylim(-2.0, top + 1.0)
    ax.set_ylabel("coordinate value")
    ax.legend(loc="lower right", fontsize=7, ncol=2)
    verdict = "tables match: a rotation" if s["matched"] else "MIX-UP: arc ends read different θ"
    head = f"rotation {_NAMES[rotation]}, {table} table\n{verdict}"
    ax.set_title(head if not note else f"{note}\n{head}", fontsize=9)

    p = s["positions"]
    axes[1].plot(p, s["norm_curve"], color=COLORS["q"])
    axes[1].axhline(1.0, color=COLORS["grey"], ls=":", lw=1)
    axes[1].axvline(m, color=COLORS["accent"], lw=1)
    axes[1].set_ylabel("norm ratio", fontsize=8)
    axes[1].set_title(f"‖f(x, p)‖ / ‖x‖ (1 for RoPE); at p = m = {m:g}: {s['norm_ratio']:.3f}", fontsize=9)
    axes[2].plot(p, s["score_curve"], color=COLORS["k"], label="this implementation")
    axes[2].axhline(s["score_ref"], color=COLORS["grey"], ls=":", lw=1, label="correct RoPE")
    axes[2].set_ylabel("score", fontsize=8)
    axes[2].set_title(f"score ⟨f(x, p+{DISTANCE}), f(k, p)⟩ at distance {DISTANCE}: constant for RoPE", fontsize=9)
    axes[2].set_xlabel("position p (tokens)")
    axes[2].legend(loc="lower left", fontsize=7, ncol=2)
    axes[1].set_ylim(0.5, 1.5)
    axes[2].set_ylim(s["score_ref"] - 1.5, s["score_ref"] + 1.5)
    axes[1].set_xlim(p[0], p[-1])
    axes[2].set_xlim(p[0], p[-1])


def controls() -> dict[str, Any]:
    """The live widget's controls: position m and the layouts of the rotation and of the table."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    options = [(_NAMES[name], name) for name in ("half", "interleaved")]
    return {
        "m": w.IntSlider(value=5, min=0, max=int(POSITIONS[-1]), description="position m", style=style),
        "rotation": w.Dropdown(options=options, value="half", description="rotation pairs", style=style),
        "table": w.Dropdown(options=[("half: [θ0..θ3, θ0..θ3]", "half"), ("interleaved: [θ0,θ0,θ1,θ1,...]", "interleaved")],
                            value="half", description="cos/sin table", style=style),
    }


def frames() -> list[dict[str, Any]]:
    """Kernel-free animation: the matching half-split pair moves through positions, then the
    same rotation with the interleaved table (the bug)."""
    ms = range(0, 36, 7)
    good = [{"m": m, "rotation": "half", "table": "half", "note": "correct: rotate_half with the half table"} for m in ms]
    bad = [{"m": m, "rotation": "half", "table": "interleaved", "note": "bug: rotate_half with the interleaved table"} for m in ms]
    return good + bad


DEMO = Demo(draw=draw, controls=controls, frames=frames, figsize=(5.4, 5.8))
