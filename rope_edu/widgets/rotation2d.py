"""Chapter 3 widget: RoPE in two dimensions.

A query ``q`` at position ``m`` is turned by ``m·θ``, a key ``k`` at position ``n`` by ``n·θ``.
The plot shows both rotated vectors and their dot product, which depends on ``m - n`` only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.patches import Circle

from ..plots import COLORS
from ..rope import apply_rope
from ._core import Demo

__all__ = ["Q", "K", "rotate2d", "state", "draw", "controls", "frames", "DEMO"]

#: The two vectors the widget turns (any non-zero pair works; these are easy to tell apart).
Q = np.array([1.0, 0.3])
K = np.array([0.6, 0.8])


def rotate2d(v: Any, position: float, theta: float) -> np.ndarray:
    """Turn the 2-D vector ``v`` counter-clockwise by ``position * theta`` radians.

    This is :func:`rope_edu.apply_rope` with ``dim = 2`` and the single frequency ``theta``.

    Parameters
    ----------
    v : array_like, shape (2,)
    position : float
    theta : float
        Radians per position.

    Returns
    -------
    numpy.ndarray, shape (2,)
    """
    v = np.asarray(v, dtype=np.float64)
    if v.shape != (2,):
        raise ValueError(f"v must have shape (2,), got {v.shape}")
    return apply_rope(v[None, :], [position], inv_freq=[theta])[0]


def state(m: float, n: float, theta: float, q: Any = Q, k: Any = K) -> dict[str, Any]:
    """Everything the widget shows, computed without drawing.

    Returns
    -------
    dict
        ``q_m`` and ``k_n`` (the rotated vectors, shape (2,)), ``dot`` (their dot product),
        ``relative`` (``m - n``) and ``g`` (``<q, R((n - m)θ) k>``, the dot product written as a
        function of the relative position only; equal to ``dot``).
    """
    q_m = rotate2d(q, m, theta)
    k_n = rotate2d(k, n, theta)
    g = float(np.dot(np.asarray(q, dtype=float), rotate2d(k, n - m, theta)))
    return {"q_m": q_m, "k_n": k_n, "dot": float(q_m @ k_n), "relative": m - n, "g": g}


def draw(fig, m: float = 3, n: float = 1, theta: float = 0.5, q: Any = Q, k: Any = K, note: str = "") -> None:
    """Draw q, k and their rotations R(mθ)q, R(nθ)k on ``fig``."""
    s = state(m, n, theta, q, k)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_aspect("equal")
    lim = 1.3 * max(np.linalg.norm(q), np.linalg.norm(k))
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.add_patch(Circle((0, 0), np.linalg.norm(q), fill=False, ls=":", color=COLORS["q"], alpha=0.5))
    ax.add_patch(Circle((0, 0), np.linalg.norm(k), fill=False, ls=":", color=COLORS["k"], alpha=0.5))
    arrow = dict(angles="xy", scale_units="xy", scale=1, width=0.012)
    ax.quiver(0, 0, *q, color=COLORS["q"], alpha=0.3, **arrow)
    ax.quiver(0, 0, *k, color=COLORS["k"], alpha=0.3, **arrow)
    ax.quiver(0, 0, *s["q_m"], color=COLORS["q"], label=f"q at m={m:g}: R(mθ)q", **arrow)
    ax.quiver(0, 0, *s["k_n"], color=COLORS["k"], label=f"k at n={n:g}: R(nθ)k", **arrow)
    ax.set_xlabel("coordinate 0 (real part)")
    ax.set_ylabel("coordinate 1 (imaginary part)")
    ax.legend(loc="upper left", fontsize=8)
    title = f"m − n = {s['relative']:g},  θ = {theta:.2f} rad,  ⟨R(mθ)q, R(nθ)k⟩ = {s['dot']:+.4f}"
    ax.set_title(title if not note else f"{note}\n{title}", fontsize=9)


def controls() -> dict[str, Any]:
    """The live widget's sliders: positions m and n, and the frequency θ (radians/position)."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    return {
        "m": w.IntSlider(value=3, min=0, max=24, description="m (query position)", style=style),
        "n": w.IntSlider(value=1, min=0, max=24, description="n (key position)", style=style),
        "theta": w.FloatSlider(value=0.5, min=0.0, max=np.pi, step=0.05, description="θ (rad/position)", style=style),
    }


def frames() -> list[dict[str, Any]]:
    """Kernel-free animation: first m and n move together (the dot product stays), then only n
    moves (it changes)."""
    together = [{"m": 3 + s, "n": 1 + s, "theta": 0.5, "note": f"shift both by s = {s}: dot product unchanged"} for s in range(12)]
    apart = [{"m": 3, "n": 1 + s, "theta": 0.5, "note": f"move only the key: n = {1 + s}"} for s in range(12)]
    return together + apart


DEMO = Demo(draw=draw, controls=controls, frames=frames, figsize=(5.0, 5.0))
