"""Chapter 3 widget: RoPE in two dimensions.

A query ``q`` at position ``m`` is turned counter-clockwise by ``m·θ``, a key ``k`` at position
``n`` by ``n·θ``. The plot shows both rotated vectors, the angle between them and their dot
product, which depends on ``m - n`` only.

The numbers the plot shows come from the pure function :func:`state`, so tests can check them
without drawing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.patches import Arc, Circle

from .._checks import as_real_array, check_positions, check_real
from ..plots import COLORS
from ..rope import apply_rope
from ._core import Demo

__all__ = ["Q", "K", "rotate2d", "state", "draw", "controls", "frames", "DEMO"]

#: The two vectors the widget turns (any non-zero pair works; these are easy to tell apart).
Q = np.array([1.0, 0.3])
K = np.array([0.6, 0.8])




def _wrap(angle: float) -> float:
    """``angle`` brought into ``(-π, π]`` (``-π`` itself becomes ``π``)."""
    return float(np.pi - (np.pi - angle) % (2 * np.pi))


def rotate2d(v: Any, position: Any, theta: float) -> np.ndarray:
    """Turn 2-D vectors counter-clockwise by ``position * theta`` radians.

    This is :func:`rope_edu.apply_rope` with ``dim = 2`` and the single frequency ``theta``:
    the vector ``(a, b)`` read as the complex number ``a + ib`` is multiplied by
    ``exp(i * position * theta)``.

    Parameters
    ----------
    v : array_like, shape (..., 2)
        One vector, or any stack of them (last axis: the two coordinates).
    position : float or array_like broadcastable to ``v.shape[:-1]``
        The position :math:`m` of each vector (integers or reals).
    theta : float
        The frequency :math:`\\theta`, in radians per position.

    Returns
    -------
    numpy.ndarray, shape v.shape, floating
        ``[a cos(mθ) - b sin(mθ), a sin(mθ) + b cos(mθ)]`` for every vector ``(a, b)``.

    Raises
    ------
    TypeError
        If ``v`` is not real-valued, ``position`` is not real, or ``theta`` is not a real number.
    ValueError
        If the last axis of ``v`` is not 2, ``position`` does not broadcast, or a value is not finite.

    Examples
    --------
    >>> rotate2d([1.0, 0.0], 1, np.pi / 2).round(12)
    array([0., 1.])
    """
    v = as_real_array(v, "v")
    if v.shape[-1] != 2:
        raise ValueError(f"v must have shape (..., 2) (2-D vectors), got shape {v.shape}")
    check_positions(position, v.shape[:-1], name="position")
    theta = check_real(theta, "theta")
    return apply_rope(v, position, inv_freq=[theta])


def state(m: float, n: float, theta: float, q: Any = Q, k: Any = K) -> dict[str, Any]:
    """Everything the widget shows, computed without drawing.

    Parameters
    ----------
    m, n : float
        Positions of the query and of the key.
    theta : float
        Frequency, radians per position.
    q, k : array_like, shape (2,)
        The query and key before rotation.

    Returns
    -------
    dict
        ``q_m``, ``k_n``: the rotated vectors :math:`R(m\\theta)q`, :math:`R(n\\theta)k`, shape (2,);
        ``dot``: their dot product; ``relative``: ``m - n``; ``g``: :math:`q^\\top R((n-m)\\theta)k`,
        the dot product computed from the relative position alone (equal to ``dot``);
        ``angle_q``, ``angle_k``: the turns :math:`m\\theta`, :math:`n\\theta` (radians, not wrapped);
        ``angle_between``: the signed angle from ``k_n`` to ``q_m`` in :math:`(-\\pi, \\pi]`,
        so that ``dot == |q| |k| cos(angle_between)`` (NaN when ``q`` or ``k`` is zero).
    """
    m = check_real(m, "m")
    n = check_real(n, "n")
    theta = check_real(theta, "theta")
    for name, vec in (("q", q), ("k", k)):
        if np.shape(vec) != (2,):
            raise ValueError(f"{name} must have shape (2,), got shape {np.shape(vec)}")
    q = as_real_array(q, "q").astype(np.float64)
    k = as_real_array(k, "k").astype(np.float64)
    q_m = rotate2d(q, m, theta)
    k_n = rotate2d(k, n, theta)
    g = float(q @ rotate2d(k, n - m, theta))
    if np.any(q != 0) and np.any(k != 0):
        between = _wrap(np.arctan2(q_m[1], q_m[0]) - np.arctan2(k_n[1], k_n[0]))
    else:  # the zero vector has no direction
        between = float("nan")
    return {
        "q_m": q_m,
        "k_n": k_n,
        "dot": float(q_m @ k_n),
        "relative": m - n,
        "g": g,
        "angle_q": m * theta,
        "angle_k": n * theta,
        "angle_between": between,
    }


def draw(fig, m: float = 3, n: float = 1, theta: float = 0.5, q: Any = Q, k: Any = K, note: str = "") -> None:
    """Draw q, k, their rotations R(mθ)q, R(nθ)k and the angle between the rotated vectors."""
    s = state(m, n, theta, q, k)
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    nq, nk = float(np.linalg.norm(q)), float(np.linalg.norm(k))
    ax = fig.add_subplot(1, 1, 1)
    ax.set_aspect("equal")
    lim = 1.35 * max(nq, nk) or 1.0
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ticks = np.arange(-np.floor(lim), np.floor(lim) + 1)  # whole units only: few labels to render
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    # The circles the tips move on: a rotation never changes a length.
    ax.add_patch(Circle((0, 0), nq, fill=False, ls=":", color=COLORS["q"], alpha=0.6))
    ax.add_patch(Circle((0, 0), nk, fill=False, ls=":", color=COLORS["k"], alpha=0.6))
    arrow = dict(angles="xy", scale_units="xy", scale=1, width=0.012)
    ax.quiver(0, 0, *q, color=COLORS["q"], alpha=0.25, **arrow)
    ax.quiver(0, 0, *k, color=COLORS["k"], alpha=0.25, **arrow)
    ax.annotate("q", 1.08 * q, color=COLORS["q"], alpha=0.6, ha="center", va="center")
    ax.annotate("k", 1.08 * k, color=COLORS["k"], alpha=0.6, ha="center", va="center")
    ax.quiver(0, 0, *s["q_m"], color=COLORS["q"], label=f"R(mθ)q, m = {m:g}", **arrow)
    ax.quiver(0, 0, *s["k_n"], color=COLORS["k"], label=f"R(nθ)k, n = {n:g}", **arrow)
    # The angle between the rotated vectors: the only thing the dot product sees besides lengths.
    if np.isfinite(s["angle_between"]):
        start = np.degrees(np.arctan2(s["k_n"][1], s["k_n"][0]))
        sweep = np.degrees(s["angle_between"])
        lo, hi = (start, start + sweep) if sweep >= 0 else (start + sweep, start)
        radius = 0.35 * min(nq, nk)
        ax.add_patch(Arc((0, 0), 2 * radius, 2 * radius, theta1=lo, theta2=hi, color=COLORS["accent"], lw=2))
        mid = np.radians(start + sweep / 2)
        ax.annotate("α", (1.45 * radius * np.cos(mid), 1.45 * radius * np.sin(mid)),
                    color=COLORS["accent"], ha="center", va="center")
    info = (
        f"mθ = {s['angle_q']:.2f} rad,  nθ = {s['angle_k']:.2f} rad\n"
        f"α = angle(k → q) = {s['angle_between']:+.2f} rad\n"
        f"|q||k|cos α = {nq * nk * np.cos(s['angle_between']):+.4f}"
    )
    ax.text(0.02, 0.02, info, transform=ax.transAxes, fontsize=8.5, va="bottom", ha="left",
            bbox=dict(boxstyle="round", fc="white", ec=COLORS["grey"], alpha=0.85))
    ax.set_xlabel("coordinate 0 (real part)")
    ax.set_ylabel("coordinate 1 (imaginary part)")
    ax.legend(loc="upper left", fontsize=9)
    title = f"m − n = {s['relative']:g},  θ = {theta:.2f} rad,  ⟨R(mθ)q, R(nθ)k⟩ = {s['dot']:+.4f}"
    ax.set_title(title if not note else f"{note}\n{title}", fontsize=10)


def controls() -> dict[str, Any]:
    """The live widget's sliders: positions m and n, and the frequency θ (radians/position)."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    return {
        "m": w.IntSlider(value=3, min=0, max=24, description="m (query position)", style=style),
        "n": w.IntSlider(value=1, min=0, max=24, description="n (key position)", style=style),
        "theta": w.FloatSlider(value=0.5, min=0.0, max=np.pi, step=0.05, description="θ (rad/position)", style=style),
    }


#: Number of frames in each half of the animation.
_HALF = 10


def frames() -> list[dict[str, Any]]:
    """Kernel-free animation: first m and n move together (the dot product stays), then only n
    moves (it changes)."""
    together = [
        {"m": 3 + s, "n": 1 + s, "theta": 0.5, "note": f"both shifted by {s}: dot product unchanged"}
        for s in range(_HALF)
    ]
    apart = [
        {"m": 3, "n": 1 + s, "theta": 0.5, "note": f"only the key moves (n = {1 + s}): dot product changes"}
        for s in range(_HALF)
    ]
    return together + apart


DEMO = Demo(draw=draw, controls=controls, frames=frames, figsize=(4.6, 4.6))
