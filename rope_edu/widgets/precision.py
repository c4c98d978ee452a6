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
from ._core import Demo

__all__ = ["DTYPES", "DIM", "BASE", "X", "MAX_POSITION", "angle_errors", "state", "draw", "controls", "frames", "DEMO"]

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


def angle_errors(positions: Any, dtype: str, *, dim: int = DIM, base: float = BASE) -> np.ndarray:
    """Error of the angles :math:`m\\theta_i` computed in ``dtype``, against float64.

    Positions and frequencies are rounded to ``dtype`` and multiplied there
    (:func:`rope_edu.torch_rope.rope_angles`); the error is wrapped modulo :math:`2\\pi`, so it
    lies in :math:`[0, \\pi]` radians.

    Parameters
    ----------
    positions : array_like, shape (n,) or scalar
        Token positions.
    dtype : {"float32", "bfloat16", "float16"}
    dim : int, default 128
    base : float, default 10000.0

    Returns
    -------
    numpy.ndarray, shape (*positions.shape, dim // 2), float64
        Radians; NaN where the angle is not finite (float16 overflows above 65 504).
    """
    dtype = check_choice(dtype, DTYPES, "dtype")
    pos = check_positions(positions, np.shape(positions))
    inv = frequencies(dim, base)
    low = torch_rope.rope_angles(pos, inv, dtype=DTYPES[dtype]).double().numpy()
    return _wrap(low - rope_angles(pos, inv))


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
        (largest :math:`|\\cos` of the ``dtype`` angle :math:`- \\cos` of the exact one:math:`|`),
        ``drift`` and ``drift_f32`` (relative change of the rotated vector :data:`X`, NaN when
        the angles overflow), and ``cos_storage_error`` (largest error of float32-angle cos/sin
        after rounding them to ``dtype``: the price real implementations pay).
    """
    dtype = check_choice(dtype, DTYPES, "dtype")
    pos = float(check_positions(position, (), name="position"))
    inv = frequencies(DIM, BASE)
    exact = rope_angles([pos], inv)[0]
    low = torch_rope.rope_angles([pos], inv, dtype=DTYPES[dtype]).double().numpy()[0]
    a32 = torch_rope.rope_angles([pos], inv, dtype=torch.float32).double().numpy()[0]
    with np.errstate(invalid="ignore"):
        cos_error = float(np.max(np.abs(np.cos(low) - np.cos(exact))))
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
    top.semilogy(pairs, np.maximum(s["angle_error"], _FLOOR), "o-", ms=3, color=COLORS["k"], label=f"angles in {dtype}")
    if dtype != "float32":
        top.semilogy(pairs, np.maximum(s["angle_error_f32"], _FLOOR), "s-", ms=2, color=COLORS["q"], label="angles in float32")
    top.axhline(np.pi, color=COLORS["grey"], ls=":", lw=1)
    top.text(DIM // 2 - 1, np.pi / 1.6, "π: pointing anywhere", ha="right", va="top", fontsize=7, color=COLORS["grey"])
    if not np.all(np.isfinite(s["angle_error"])):
        top.text(DIM // 4, 1e-3, f"{dtype} angles are inf:\ncos and sin are NaN", ha="center", fontsize=8, color=COLORS["k"])
    top.set_ylim(_FLOOR / 2, 30)
    top.yaxis.set_major_locator(FixedLocator([1e-10, 1e-7, 1e-4, 1e-1]))
    top.yaxis.set_minor_locator(NullLocator())  # few ticks: each frame draws fast
    top.set_xlabel("pair index i (frequency θᵢ falls with i)")
    top.set_ylabel("|angle error| (rad)")
    top.legend(loc="lower left", fontsize=7)
    stored = "overflows to inf" if not np.isfinite(s["stored_position"]) else f"stored as {s['stored_position']:,.0f}"
    top.set_title(f"position m = {s['position']:,.0f} in {dtype}: {stored}", fontsize=9)

    labels = [f"angles in {dtype}", "angles in float32", f"float32 angles,\ncos/sin stored in {dtype}"]
    values = [s["drift"], s["drift_f32"], s["cos_storage_error"]]
    colors = [COLORS["k"], COLORS["q"], COLORS["v"]]
    heights = [np.maximum(v, _FLOOR) if np.isfinite(v) else 0.0 for v in values]
    bottom.barh(labels, heights, color=colors, left=_FLOOR / 2)
    for y, v in enumerate(values):
        bottom.text(_FLOOR, y, " " + _fmt(v), va="center", fontsize=7)
    bottom.set_xscale("log")
    bottom.set_xlim(_FLOOR / 2, 10)
    bottom.xaxis.set_major_locator(FixedLocator([1e-10, 1e-7, 1e-4, 1e-1]))
    bottom.xaxis.set_minor_locator(NullLocator())
    bottom.invert_yaxis()
    bottom.tick_params(axis="y", labelsize=7)
    bottom.set_xlabel("drift ‖R̃x − Rx‖ / ‖x‖ (cos/sin error for the last bar)")


def controls() -> dict[str, Any]:
    """Position slider (0 to 100 000; type a value in its box) and dtype dropdown."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    return {
        "position": w.IntSlider(value=4096, min=0, max=MAX_POSITION, step=1, description="position m",
                                continuous_update=False, style=style, layout={"width": "420px"}),
        "dtype": w.Dropdown(options=list(DTYPES), value="bfloat16", description="angles in", style=style),
    }


#: Positions of the animation: past 256 (bfloat16 collapses), past 2048 (float16 collapses),
#: 65 504 (float16's largest number), past it, and 100 000.
FRAME_POSITIONS = (100, 257, 2049, 10_000, 65_504, 70_000, 100_000)


def frames() -> list[dict[str, Any]]:
    """Kernel-free animation: the positions above for bfloat16, then float16, then float32."""
    return [{"position": p, "dtype": d} for d in ("bfloat16", "float16", "float32") for p in FRAME_POSITIONS]


DEMO = Demo(draw=draw, controls=controls, frames=frames, figsize=(5.2, 4.4), interval=700)
