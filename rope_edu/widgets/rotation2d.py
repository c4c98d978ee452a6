"""Chapter 3 widget: RoPE in two dimensions.

A query ``q`` at position ``m`` is turned counter-clockwise by ``m·θ``, a key ``k`` at position
``n`` by ``n·θ``. The plot shows both rotated vectors, the angle between them and their dot
product, which depends on ``m - n`` only.

The figure (``js/rotation2d.js``) has four controls: the query position ``m``, the key position
``n``, a shift ``s`` added to both, and ``θ``. Its readouts are :func:`readouts`, computed from
:func:`state`; the browser tests compare the page with them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import as_real_array, check_positions, check_real
from ..rope import apply_rope
from ._core import Control, Figure

__all__ = ["Q", "K", "rotate2d", "state", "readouts", "data", "CONTROLS", "DEMO"]

#: The two vectors the widget turns (any non-zero pair works; these are easy to tell apart).
Q = np.array([1.0, 0.3])
K = np.array([0.6, 0.8])


def _wrap(angle: float) -> float:
    """``angle`` brought into ``(-π, π]`` (``-π`` itself becomes ``π``).

    ``(π - angle) % 2π`` can round up to exactly ``2π`` when ``π - angle`` is a tiny negative
    number (antiparallel vectors), which would give ``-π``: that case is ``π``."""
    wrapped = float(np.pi - (np.pi - angle) % (2 * np.pi))
    return np.pi if wrapped <= -np.pi else wrapped


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


def readouts(m: int, n: int, s: int, theta: float) -> dict[str, float]:
    """The numbers the figure prints for its controls (query at ``m + s``, key at ``n + s``)."""
    st = state(m + s, n + s, theta)
    return {
        "m_total": m + s,
        "n_total": n + s,
        "angle_q": st["angle_q"],
        "angle_k": st["angle_k"],
        "relative": st["relative"],
        "angle_between": st["angle_between"],
        "dot": st["dot"],
        "g": st["g"],
    }


def data() -> dict[str, Any]:
    """The two vectors the figure turns."""
    return {"q": Q, "k": K}


CONTROLS = [
    Control("m", "m (query position)", 3, min=0, max=24, step=1),
    Control("n", "n (key position)", 1, min=0, max=24, step=1),
    Control("s", "shift s (added to m and n)", 0, min=0, max=40, step=1),
    Control("theta", "θ (rad/position)", 0.5, min=0.0, max=3.14, step=0.01, digits=2),
]

#: The chapter 3 figure: q at position m + s and k at n + s, turned by (m + s)θ and (n + s)θ.
DEMO = Figure(
    "rotation2d", CONTROLS, data=data, readouts=readouts,
    title="RoPE in two dimensions: q and k rotated by their positions, and their dot product",
)
