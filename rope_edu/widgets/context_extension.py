"""Chapter 9 widget: what each context-extension method does to the RoPE frequencies.

Pick a method, a scale factor ``s`` and the original (trained) context ``L``. The left panel
shows the ratio new/old :math:`\\theta_i` of every pair against its wavelength
:math:`\\lambda_i = 2\\pi/\\theta_i` (log axis, the original context marked): 1 means the pair is
untouched, ``1/s`` that it is fully interpolated. The right panel shows the attention logit of a
fixed query/key pair as their distance grows, with plain RoPE and after scaling (including the
method's attention factor, squared).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._checks import check_choice, check_dim
from ..plots import COLORS
from ..rope import apply_rope, frequencies
from ..scaling import _factor, _length, beyond_trained_angles, rotations, scaled_frequencies
from ._legacy import Demo

__all__ = [
    "DIM",
    "BASE",
    "LABELS",
    "FACTORS",
    "ORIGINALS",
    "fixed_pair",
    "METHOD_PARAMS",
    "method_params",
    "state",
    "draw",
    "controls",
    "frames",
    "DEMO",
]

#: Head dimension and base of the widget (LLaMA 1/2 values).
DIM = 128
BASE = 10000.0

#: How the widget's three choices (factor s, original context L) become each method's parameters.
#: YaRN keeps its defaults (beta_fast 32, beta_slow 1); Llama 3.1 uses low 1 and high 4; dynamic NTK
#: is evaluated at the extended length seq_len = s·L.
METHOD_PARAMS: dict[str, Callable[[float, int], dict[str, Any]]] = {
    "default": lambda s, L: {},
    "linear": lambda s, L: {"factor": s},
    "ntk": lambda s, L: {"factor": s},
    "dynamic": lambda s, L: {"factor": s, "original_max_position_embeddings": L, "seq_len": int(round(s * L))},
    "yarn": lambda s, L: {"factor": s, "original_max_position_embeddings": L},
    "llama3": lambda s, L: {
        "factor": s, "original_max_position_embeddings": L, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    },
}

#: Names shown in the dropdown and titles.
LABELS: dict[str, str] = {
    "default": "plain RoPE",
    "linear": "Position Interpolation",
    "ntk": "NTK-aware",
    "dynamic": "dynamic NTK",
    "yarn": "YaRN",
    "llama3": "Llama 3.1",
}


def method_params(method: str, factor: float, original: int) -> dict[str, Any]:
    """The parameters :func:`rope_edu.scaling.scaled_frequencies` gets for the widget's choices."""
    method = check_choice(method, METHOD_PARAMS, "method")
    return METHOD_PARAMS[method](_factor(factor), _length(original, "original"))


def fixed_pair(dim: int = DIM) -> tuple[np.ndarray, np.ndarray]:
    """The widget's query and key: every pair is :math:`(\\sqrt{2/d}, 0)` in both.

    The logit at distance :math:`\\Delta` is then :math:`\\frac{2}{d}\\sum_i \\cos(\\Delta\\theta_i)`,
    the average of the pairs' cosines: 1 at :math:`\\Delta = 0`.
    """
    dim = check_dim(dim)
    q = np.tile([1.0, 0.0], dim // 2) * np.sqrt(2.0 / dim)
    return q, q.copy()


def state(
    method: str = "yarn",
    factor: float = 4.0,
    original: int = 4096,
    *,
    dim: int = DIM,
    base: float = BASE,
    n_points: int = 1200,
) -> dict[str, Any]:
    """Everything the widget shows, computed without drawing.

    Parameters
    ----------
    method : str
        A key of :data:`rope_edu.scaling.METHODS`.
    factor : float
        Scale :math:`s \\ge 1`; the new context is :math:`sL`.
    original : int
        Trained context :math:`L`.
    dim, base
        Head dimension and RoPE base.
    n_points : int
        About how many distances the logits are evaluated at (integers, log-spaced from 1 to 2sL,
        plus 0).

    Returns
    -------
    dict
        ``theta`` and ``inv_freq``: old and new frequencies, shape (dim // 2,); ``wavelength``: old
        wavelengths in positions; ``ratio``: new/old; ``attention_factor`` and ``logit_scale`` (its
        square); ``new_context``: round(s·L); ``no_full_turn``: number of pairs that turn less than
        once over L; ``beyond``: number of pairs whose angles over the new context go past the
        largest angle they reached in training; ``distances``, shape (n,); ``logits_before`` and
        ``logits_after``, shape (n,): the logit of the fixed query at distance Δ from the fixed key
        (:func:`fixed_pair`) with plain RoPE, and with the method (attention factor included).
    """
    params = method_params(method, factor, original)
    theta = frequencies(dim, base)
    inv_freq, attention_factor = scaled_frequencies(method, dim, base, **params)
    new_context = int(round(float(factor) * original))
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)):
        raise TypeError(f"n_points must be an integer >= 2, got {n_points!r} of type {type(n_points).__name__}")
    if n_points < 2:
        raise ValueError(f"n_points must be an integer >= 2, got {n_points}")
    distances = np.unique(np.geomspace(1, 2 * new_context, int(n_points)).astype(np.int64))
    distances = np.concatenate([[0], distances])
    q, k = fixed_pair(dim)
    rows = np.broadcast_to(q, (distances.size, dim))
    # The key sits at position 0 and the query at position Δ: logit = <R_Δ q, R_0 k> = <R_Δ q, k>.
    before = apply_rope(rows, distances, base=base) @ k
    after = attention_factor**2 * (apply_rope(rows, distances, inv_freq=inv_freq) @ k)
    return {
        "theta": theta,
        "inv_freq": inv_freq,
        "wavelength": 2.0 * np.pi / theta,
        "ratio": inv_freq / theta,
        "attention_factor": attention_factor,
        "logit_scale": attention_factor**2,
        "new_context": new_context,
        "no_full_turn": int(np.sum(rotations(dim, base, original) < 1.0)),
        "beyond": int(np.sum(beyond_trained_angles(inv_freq, original, new_context, base=base))),
        "distances": distances,
        "logits_before": before,
        "logits_after": after,
    }


def _fraction(v: float) -> str:
    return "1" if v == 1 else f"1/{1 / v:g}"


def draw(
    fig,
    method: str = "yarn",
    factor: float = 4.0,
    original: int = 4096,
    note: str = "",
) -> None:
    """Draw the two panels (frequency ratio, logits over distance) on ``fig``."""
    s = state(method, factor, original)
    ax_r, ax_l = fig.subplots(1, 2)
    L, new = original, s["new_context"]

    # left: which frequencies move
    ax_r.axhline(1.0, color=COLORS["grey"], lw=1, ls=":")
    if factor > 1:
        ax_r.axhline(1.0 / factor, color=COLORS["grey"], lw=1, ls=":")
    ax_r.plot(s["wavelength"], s["ratio"], "o-", ms=3, color=COLORS["q"], gid="ratio")
    for ax in (ax_r, ax_l):
        ax.axvline(L, color=COLORS["orange"], lw=1.5)
        ax.axvline(new, color=COLORS["accent"], lw=1.5, ls="--")
        ax.text(L, 1.0, " L", color=COLORS["orange"], transform=ax.get_xaxis_transform(), va="top", fontsize=8)
        ax.text(new, 1.0, " sL", color=COLORS["accent"], transform=ax.get_xaxis_transform(), va="top", fontsize=8)
    ax_r.set_xscale("log")
    ax_r.set_yscale("log", base=2)
    ticks = [2.0**-k for k in range(0, 6)]
    ax_r.set_yticks(ticks, [_fraction(t) for t in ticks])
    ax_r.set_ylim(1 / 45, 1.5)
    ax_r.set_xlabel("wavelength 2π/θᵢ of pair i (positions, log scale)")
    ax_r.set_ylabel("new / old frequency θ′ᵢ / θᵢ")

    # right: the logit of a fixed q/k pair against distance
    d = s["distances"]
    ax_l.plot(d[1:], s["logits_before"][1:], color=COLORS["grey"], lw=1, label="plain RoPE")
    ax_l.plot(d[1:], s["logits_after"][1:], color=COLORS["k"], lw=1, label=f"{LABELS[method]}, logits × a² = {s['logit_scale']:.3f}")
    ax_l.set_xscale("log")
    ax_l.set_ylim(-0.4, max(1.6, 1.1 * float(np.max(s["logits_after"]))))
    ax_l.set_xlabel("distance m − n (positions, log scale)")
    ax_l.set_ylabel("attention logit of a fixed q, k")
    ax_l.legend(loc="upper right", fontsize=7)

    for ax in (ax_r, ax_l):
        ax.minorticks_off()  # log axes: minor ticks cost most of the drawing time, and add little

    title = (
        f"{LABELS[method]}: s = {factor:g}, L = {L}.  Pairs past their trained angles at sL: "
        f"{s['beyond']} of {s['theta'].size} (plain RoPE: {s['no_full_turn']})"
    )
    fig.suptitle(title if not note else f"{note}\n{title}", fontsize=9)
    if fig.get_layout_engine() is None:  # the kernel-free animation draws with no layout engine
        fig.subplots_adjust(left=0.08, right=0.98, top=0.84 if note else 0.9, bottom=0.15, wspace=0.28)


#: Scale factors offered by the live slider.
FACTORS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0)
#: Original context lengths offered by the live slider.
ORIGINALS = (512, 1024, 2048, 4096, 8192, 16384, 32768)


def controls() -> dict[str, Any]:
    """The live widget's controls: method, scale factor s and original context L."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    return {
        "method": w.Dropdown(
            options=[(label, key) for key, label in LABELS.items()], value="yarn", description="method", style=style
        ),
        "factor": w.SelectionSlider(options=list(FACTORS), value=4.0, description="scale s", style=style),
        "original": w.SelectionSlider(options=list(ORIGINALS), value=4096, description="original context L", style=style),
    }


def frames() -> list[dict[str, Any]]:
    """Kernel-free animation: plain RoPE, then each method at s = 2, 4, 8 with L = 4096 (16 frames)."""
    out: list[dict[str, Any]] = [{"method": "default", "factor": 4.0, "original": 4096}]
    for method in ("linear", "ntk", "dynamic", "yarn", "llama3"):
        for s in (2.0, 4.0, 8.0):
            out.append({"method": method, "factor": s, "original": 4096})
    return out


DEMO = Demo(draw=draw, controls=controls, frames=frames, figsize=(8.0, 3.4))
