"""Chapter 2 widget: the shift matrix M(k) turns every pair of PE(p) by k·θ_i, clockwise.

Pair ``i`` of the sinusoidal encoding, ``(sin pθ_i, cos pθ_i)``, is drawn as a point on a circle
with coordinate ``2i`` across and ``2i + 1`` up, so position 0 sits at 12 o'clock. Shifting
the position by ``k`` moves every point clockwise by ``kθ_i``, the same arc whatever ``p`` is:
that is ``PE(p + k) = M(k) PE(p)`` with one matrix ``M(k)`` for all positions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.patches import Arc, Circle

from .._checks import check_int
from ..encodings import shift_matrix, sinusoidal_at
from ..plots import COLORS
from ..rope import frequencies
from ._legacy import Demo

__all__ = ["DIM", "BASE", "state", "draw", "controls", "frames", "DEMO"]

DIM = 8        #: four pairs, four circles
BASE = 100.0   #: θ_i = 100**(-2i/8): 1, 0.32, 0.1, 0.03 rad per position




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


def draw(fig, p: int = 5, k: int = 3) -> None:
    """One circle per pair: PE(p) (hollow), M(k)·PE(p) (filled) and PE(p+k) (cross) coincide."""
    s = state(p, k)
    ax = fig.add_subplot(1, 1, 1)
    gap = 2.8
    for i in range(DIM // 2):
        x = gap * i
        ax.add_patch(Circle((x, 0), 1, fill=False, color=COLORS["grey"], lw=0.8))
        ax.plot([x, x], [0, 1], color=COLORS["grey"], lw=0.6, ls=":")  # where every pair starts (p = 0)
        turn = np.degrees(s["turn"][i])  # clockwise when positive
        if abs(turn) > 1e-9:
            # matplotlib's Arc runs counter-clockwise from theta1 to theta2: from the point's new
            # angle a0 - turn up to a0 when turn > 0, from a0 up to a0 + |turn| when turn < 0
            a0 = np.degrees(s["angle_p"][i])
            start, span = a0 - max(turn, 0.0), min(abs(turn), 359.9)
            ax.add_patch(Arc((x, 0), 1.5, 1.5, theta1=start, theta2=start + span, color=COLORS["orange"], lw=2))
        pts = {key: (x + s[key][2 * i], s[key][2 * i + 1]) for key in ("pe_p", "shifted", "pe_pk")}
        ax.plot(*pts["pe_p"], "o", mfc="white", mec=COLORS["q"], ms=9, label="PE(p)" if i == 0 else None)
        ax.plot(*pts["shifted"], "o", color=COLORS["k"], ms=5, label="M(k)·PE(p)" if i == 0 else None)
        ax.plot(*pts["pe_pk"], "x", color=COLORS["black"], ms=9, label="PE(p+k)" if i == 0 else None)
        ax.text(x, 1.3, f"pair {i}", ha="center", fontsize=8)
        ax.text(x, -1.35, f"kθ = {s['turn'][i]:+.2f} rad", ha="center", va="top", fontsize=8)
    ax.set_xlim(-1.3, gap * (DIM // 2 - 1) + 1.3)
    ax.set_ylim(-1.8, 1.6)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_xlabel("coordinate 2i (the sin entry) →")
    ax.set_ylabel("coordinate 2i+1\n(the cos entry) →")
    ax.grid(False)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, fontsize=8)
    fig.suptitle(
        f"p = {p}, k = {k}: each pair turns clockwise by kθ_i (orange)\n"
        f"max |M(k)·PE(p) − PE(p+k)| = {s['error']:.1e}",
        fontsize=9,
    )


def controls() -> dict[str, Any]:
    """The live widget's sliders: the position p and the shift k."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    return {
        "p": w.IntSlider(value=5, min=0, max=30, description="position p", style=style),
        "k": w.IntSlider(value=3, min=-8, max=8, description="shift k", style=style),
    }


def frames() -> list[dict[str, Any]]:
    """Kernel-free animation: p moves with k = 3 fixed (the arcs keep their length), then k moves."""
    return [{"p": p, "k": 3} for p in range(8)] + [{"p": 5, "k": k} for k in range(-5, 6)]


DEMO = Demo(draw=draw, controls=controls, frames=frames, figsize=(6.0, 2.9), interval=400)
