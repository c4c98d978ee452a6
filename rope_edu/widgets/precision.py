"""Chapter 8 widget: what computing RoPE angles in half precision does, position by position.

Pick a position ``m`` (up to 100 000) and a dtype (float32, bfloat16, float16). The angles
:math:`m\\theta_i` of the 64 pairs of a ``head_dim = 128`` vector are computed in that dtype, as
happens when a model's RoPE buffers are cast with its weights, and compared with float64:

* top: the angle error of every pair, wrapped to :math:`[0, \\pi]` radians (an error of
  :math:`\\pi` means the pair points the opposite way);
* bottom: how far the rotated vector drifts, :math:`\\lVert \\tilde R_m x - R_m x \\rVert /
  \\lVert x \\rVert`, for angles in the chosen dtype, for angles in float32, and for float32
  angles whose cos/sin are then stored in the chosen dtype (what real implementations do).

Importing this module imports torch (bfloat16 has no numpy dtype).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from matplotlib.ticker import FixedLocator, NullLocator

from ..plots import COLORS
from ..rope import apply_rope, frequencies, rope_angles
from .. import torch_rope
from .._checks import check_choice, check_positions
from ._legacy import Demo

__all__ = [
    "DTYPES", "DIM", "BASE", "X", "MAX_POSITION", "FRAME_POSITIONS",
    "angle_errors", "cos_errors", "state", "draw", "controls", "frames", "DEMO",
]

#: The dtypes the widget compares, by the name shown in its dropdown.
DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
DIM = 128          #: head dimension of the rotated vector (LLaMA's)
BASE = 10000.0     #: frequency base
MAX_POSITION = 100_000
#: The vector the widget rotates: fixed random, unit norm.
X = np.random.default_rng(0).standard_normal(DIM)
X /= np.linalg.norm(X)

_FLOOR = 1e-10  # errors below this (exact zeros included) are drawn at this height on log axes


def _wrap(delta: np.ndarray) -> np.ndarray:
    """|delta| reduced modulo 2π to [0, π]; non-finite entries become NaN (quietly)."""
    out = np.full(delta.shape, np.nan)
    ok = np.isfinite(delta)
    out[ok] = np.abs((delta[ok] + np.pi) % (2 * np.pi) - np.pi)
    return out


def _angles_low_and_exact(
    positions: Any, dtype: str, inv_freq: Any, dim: int, base: float
) -> tuple[np.ndarray, np.ndarray]:
    """Angles computed in ``dtype`` (from ``inv_freq`` when given) and exact float64 angles."""
    dtype = check_choice(dtype, DTYPES, "dtype")
    pos = check_positions(positions, np.shape(positions))
    exact_inv = frequencies(dim, base)
    used = exact_inv if inv_freq is None else torch_rope._check_inv_freq(inv_freq, dim)
    low = torch_rope.rope_angles(pos, used, dtype=DTYPES[dtype]).double().numpy()
    return low, rope_angles(pos, exact_inv)


def angle_errors(
    positions: Any, dtype: str, *, inv_freq: Any = None, dim: int = DIM, base: float = BASE
) -> np.ndarray:
    """Error of the angles :math:`m\\theta_i` computed in ``dtype``, against float64.

    Positions and frequencies are rounded to ``dtype`` and multiplied there
    (:func:`rope_edu.torch_rope.rope_angles`); the error is wrapped modulo :math:`2\\pi`, so it
    lies in :math:`[0, \\pi]` radians.

    Parameters
    ----------
    positions : array_like, shape (n,) or scalar
        Token positions.
    dtype : {"float32", "bfloat16", "float16"}
        Dtype of the whole computation.
    inv_freq : torch.Tensor or array_like, shape (dim // 2,), optional
        Frequencies to start from instead of the exact ones, e.g. a copy already rounded to
        bfloat16 by ``module.to(torch.bfloat16)``. The reference is always the exact
        :math:`\\theta_i = b^{-2i/d}` in float64.
    dim : int, default 128
    base : float, default 10000.0

    Returns
    -------
    numpy.ndarray, shape (*positions.shape, dim // 2), float64
        Radians; NaN where the angle is not finite (float16 overflows from 65 520 on).
    """
    low, exact = _angles_low_and_exact(positions, dtype, inv_freq, dim, base)
    return _wrap(low - exact)


def cos_errors(
    positions: Any, dtype: str, *, inv_freq: Any = None, dim: int = DIM, base: float = BASE
) -> np.ndarray:
    """:math:`|\\cos \\tilde a - \\cos a|` for the angles of :func:`angle_errors` (same arguments).

    The cosines are evaluated in float64 on the (rounded) angles, so this is the error the angles
    alone cause; it never exceeds the angle error, since :math:`\\cos` has slope at most 1.

    Returns
    -------
    numpy.ndarray, shape (*positions.shape, dim // 2), float64
        NaN where the angle is not finite.
    """
    low, exact = _angles_low_and_exact(positions, dtype, inv_freq, dim, base)
    with np.errstate(invalid="ignore"):  # cos(inf) is NaN, on purpose
        return np.abs(np.cos(low) - np.cos(exact))


def _drift(angles: np.ndarray, reference: np.ndarray) -> float:
    """||R(angles) X - R(reference) X|| / ||X||, both rotations in float64."""
    if not np.all(np.isfinite(angles)):
        return float("nan")
    rotated = apply_rope(X[None, :], [1.0], inv_freq=angles)  # position 1: the angles themselves
    exact = apply_rope(X[None, :], [1.0], inv_freq=reference)
    return float(np.linalg.norm(rotated - exact) / np.linalg.norm(X))


def state(position: float, dtype: str = "bfloat16") -> dict[str, Any]:
    """Everything the widget shows, computed without drawing.

    Returns
    -------
    dict
        ``position`` and ``stored_position`` (the position after rounding to ``dtype``; inf when
        it overflows), ``angle_error`` and ``angle_error_f32`` (per pair, radians, shape
        (DIM // 2,), for angles in ``dtype`` and in float32), ``max_angle_error``, ``cos_error``
        (the largest :func:`cos_errors` over the pairs),
        ``drift`` and ``drift_f32`` (relative change of the rotated vector :data:`X`, NaN when
        the angles overflow), and ``cos_storage_error`` (largest error of float32-angle cos/sin
        after rounding them to ``dtype``: the price real implementations pay).
    """
    dtype = check_choice(dtype, DTYPES, "dtype")
    pos = float(check_positions(position, (), name="position"))
    low, exact = (a[0] for a in _angles_low_and_exact([pos], dtype, None, DIM, BASE))
    a32 = _angles_low_and_exact([pos], "float32", None, DIM, BASE)[0][0]
    cos_error = float(np.max(cos_errors([pos], dtype)[0]))
    stored_cos = torch.from_numpy(np.cos(a32)).to(DTYPES[dtype]).double().numpy()
    stored_sin = torch.from_numpy(np.sin(a32)).to(DTYPES[dtype]).double().numpy()
    storage = max(np.max(np.abs(stored_cos - np.cos(exact))), np.max(np.abs(stored_sin - np.sin(exact))))
    angle_error = _wrap(low - exact)
    return {
        "position": pos,
        "dtype": dtype,
        "stored_position": float(torch.tensor(pos, dtype=torch.float64).to(DTYPES[dtype]).item()),
        "angle_error": angle_error,
        "angle_error_f32": _wrap(a32 - exact),
        "max_angle_error": float(np.max(angle_error)) if np.all(np.isfinite(angle_error)) else float("nan"),
        "cos_error": cos_error,
        "drift": _drift(low, exact),
        "drift_f32": _drift(a32, exact),
        "cos_storage_error": float(storage),
    }


def _fmt(v: float) -> str:
    return "overflow (NaN)" if not np.isfinite(v) else f"{v:.1e}"


def draw(fig, position: float = 4096, dtype: str = "bfloat16") -> None:
    """Top: angle error per pair; bottom: drift of the rotated vector, three ways."""
    s = state(position, dtype)
    top, bottom = fig.subplots(2, 1, gridspec_kw={"height_ratios": [3, 2]})
    pairs = np.arange(DIM // 2)
    color = COLORS["q"] if dtype == "float32" else COLORS["k"]
    top.semilogy(pairs, np.maximum(s["angle_error"], _FLOOR), "o-", ms=3, color=color, label=f"angles in {dtype}")
    if dtype != "float32":
        top.semilogy(pairs, np.maximum(s["angle_error_f32"], _FLOOR), "s-", ms=2, color=COLORS["q"],
                     label="angles in float32")
    top.axhline(np.pi, color=COLORS["grey"], ls=":", lw=1)
    top.text(DIM // 2 - 1, np.pi / 1.6, "π: pointing anywhere", ha="right", va="top", fontsize=7, color=COLORS["grey"])
    if not np.all(np.isfinite(s["angle_error"])):
        top.text(DIM // 4, 1e-3, f"{dtype} angles are inf:\ncos and sin are NaN", ha="center", fontsize=8,
                 color=COLORS["k"])
    top.set_ylim(_FLOOR / 2, 30)
    top.yaxis.set_major_locator(FixedLocator([1e-10, 1e-7, 1e-4, 1e-1]))
    top.yaxis.set_minor_locator(NullLocator())  # few ticks: each frame draws fast
    top.set_xlabel("pair index i (frequency θᵢ falls with i)")
    top.set_ylabel("|angle error| (rad)")
    top.legend(loc="lower left", fontsize=7)
    stored = "overflows to inf" if not np.isfinite(s["stored_position"]) else f"stored as {s['stored_position']:,.0f}"
    top.set_title(f"position m = {s['position']:,.0f} in {dtype}: {stored}", fontsize=9)

    rows = [("angles in float32", s["drift_f32"], COLORS["q"])]
    if dtype != "float32":  # for float32 the first two rows would be the same
        rows.insert(0, (f"angles in {dtype}", s["drift"], COLORS["k"]))
    rows.append((f"float32 angles,\ncos/sin stored in {dtype}", s["cos_storage_error"], COLORS["v"]))
    ys = np.arange(len(rows))
    heights = [max(v, _FLOOR) if np.isfinite(v) else 0.0 for _, v, _ in rows]
    bottom.barh(ys, heights, color=[c for _, _, c in rows], left=_FLOOR / 2)
    bottom.set_yticks(ys, [label for label, _, _ in rows])
    bottom.set_ylim(2.5, -0.5)  # same bar height in every frame, first row on top
    for y, (_, v, _) in zip(ys, rows):
        bottom.text(_FLOOR, y, " " + _fmt(v), va="center", fontsize=7)
    bottom.set_xscale("log")
    bottom.set_xlim(_FLOOR / 2, 10)
    bottom.xaxis.set_major_locator(FixedLocator([1e-10, 1e-7, 1e-4, 1e-1]))
    bottom.xaxis.set_minor_locator(NullLocator())
    bottom.tick_params(axis="y", labelsize=7)
    bottom.set_xlabel("drift ‖R̃x − Rx‖ / ‖x‖ (cos/sin error for the last bar)")


def controls() -> dict[str, Any]:
    """Position slider (0 to 100 000; type a value in its box) and dtype dropdown."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    return {
        "position": w.IntSlider(value=4096, min=0, max=MAX_POSITION, step=1, description="position m",
                                style=style, layout={"width": "420px"}),
        "dtype": w.Dropdown(options=list(DTYPES), value="bfloat16", description="angles in", style=style),
    }


#: Positions of the animation: past 256 (bfloat16 collapses), past 2048 (float16 collapses),
#: 65 519 (rounds to float16's largest number, 65 504), 65 520 (overflows), and 100 000.
FRAME_POSITIONS = (100, 257, 2049, 10_000, 65_519, 65_520, 100_000)


def frames() -> list[dict[str, Any]]:
    """Kernel-free animation: the positions above for bfloat16, then float16, then float32."""
    return [{"position": p, "dtype": d} for d in ("bfloat16", "float16", "float32") for p in FRAME_POSITIONS]


DEMO = Demo(draw=draw, controls=controls, frames=frames, figsize=(5.2, 4.4), interval=700)
