"""Chapter 9 widget: what each context-extension method does to the RoPE frequencies.

Pick a method, a scale factor ``s`` and the original (trained) context ``L``. The left panel
shows the ratio new/old :math:`\\theta_i` of every pair against its wavelength
:math:`\\lambda_i = 2\\pi/\\theta_i` (log axes, ``L`` and ``sL`` marked): 1 means the pair is
untouched, ``1/s`` that it is fully interpolated; pairs that reach angles past their trained arc
over ``sL`` are ringed. The right panel shows the attention logit of a fixed query/key pair as
their distance grows, with plain RoPE and after scaling (including the method's attention factor,
squared), on fixed axes so that stretching is visible.

The figure (``js/context_extension.js``) draws in the browser from :func:`data`, computed with
:mod:`rope_edu.scaling` for every point of the sliders' grids (:data:`FACTORS`, :data:`ORIGINALS`):
each method's ratio :math:`\\theta'_i/\\theta_i` is one of four rules (:data:`RULES`), whose
tables (YaRN's and Llama 3.1's ramps per ``L``, the NTK scale per ``s``, the attention factor per
``s``) the browser only indexes and mixes. Its readouts are :func:`readouts`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._checks import check_choice, check_dim
from ..rope import apply_rope, frequencies
from ..scaling import METHODS as SCALING_METHODS
from ..scaling import (
    beyond_trained_angles, check_factor, check_length, dynamic_scale, frequency_ratio, llama3_ramp, rotations,
    scaled_frequencies, yarn_ramp,
)
from ._core import Control, Figure

__all__ = [
    "DIM",
    "BASE",
    "LABELS",
    "FACTORS",
    "ORIGINALS",
    "MOVED_RTOL",
    "RULES",
    "fixed_pair",
    "METHOD_PARAMS",
    "method_params",
    "state",
    "readouts",
    "data",
    "CONTROLS",
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

#: Names shown in the figure's title and legend (the drop-down lists the keys, as `state` takes them).
LABELS: dict[str, str] = {name: SCALING_METHODS[name].label for name in METHOD_PARAMS}


def method_params(method: str, factor: float, original: int) -> dict[str, Any]:
    """The parameters :func:`rope_edu.scaling.scaled_frequencies` gets for the widget's choices."""
    method = check_choice(method, METHOD_PARAMS, "method")
    return METHOD_PARAMS[method](check_factor(factor), check_length(original, "original"))


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


#: Scale factors the slider offers: 1 to 32 in steps of 0.5.
FACTORS: tuple[float, ...] = tuple(1.0 + 0.5 * j for j in range(63))
#: Original context lengths the slider offers: 512 to 32 768 in steps of 512.
ORIGINALS: tuple[int, ...] = tuple(512 * j for j in range(1, 65))
#: A pair counts as moved when its ratio new/old frequency is below ``1 - MOVED_RTOL``.
MOVED_RTOL = 1e-9


def _power_rule(scale: Callable[[float, int], float]) -> Callable[[], dict[str, Any]]:
    # theta'_i = theta_i * S ** (-2i / (d - 2)): NTK-aware scaling of the base by S ** (d / (d - 2)).
    return lambda: {"rule": "power", "scale": [scale(s, ORIGINALS[0]) for s in FACTORS]}


def _ramp_rule(ramp: Callable[[int], np.ndarray]) -> Callable[[], dict[str, Any]]:
    # theta'_i = (1 - gamma_i) theta_i / s + gamma_i theta_i, with gamma depending on L only.
    return lambda: {"rule": "blend", "ramp": [ramp(L) for L in ORIGINALS]}


#: How the figure's browser code gets each method's ratio :math:`\theta'_i/\theta_i` from tables:
#: ``"one"`` (1), ``"inverse"`` (:math:`1/s`), ``"power"`` (:math:`S^{-2i/(d-2)}` with the tabulated
#: scale ``S`` per factor: ``s`` for NTK-aware, :func:`rope_edu.scaling.dynamic_scale` at
#: :math:`\ell = sL` for dynamic NTK) and ``"blend"`` (the tabulated ramp :math:`\gamma_i` per ``L``
#: mixes 1 and :math:`1/s`). The tests check every grid point against
#: :func:`rope_edu.scaling.scaled_frequencies`.
RULES: dict[str, Callable[[], dict[str, Any]]] = {
    "default": lambda: {"rule": "one"},
    "linear": lambda: {"rule": "inverse"},
    "ntk": _power_rule(lambda s, L: s),
    "dynamic": _power_rule(lambda s, L: dynamic_scale(**method_params("dynamic", s, L))),
    "yarn": _ramp_rule(lambda L: yarn_ramp(DIM, BASE, L)),
    "llama3": _ramp_rule(lambda L: llama3_ramp(
        DIM, BASE, L, **{k: v for k, v in method_params("llama3", 1.0, L).items()
                         if k in ("low_freq_factor", "high_freq_factor")})),
}


def readouts(method: str, factor: float, original: int) -> dict[str, float]:
    """The numbers the figure prints for its controls, from :func:`state` and ``rope_edu``.

    Returns
    -------
    dict
        ``new_context`` (:math:`sL`), ``moved`` (pairs whose frequency changes, out of
        ``DIM // 2``), ``slowdown_first`` and ``slowdown_last`` (:math:`\\theta_i/\\theta'_i` of
        pair 0 and of the slowest pair), ``logit_scale`` (:math:`a^2`), ``beyond`` and
        ``no_full_turn`` (as in :func:`state`), ``logit_plain_new`` and ``logit_new`` (the logit of
        the fixed query and key at distance :math:`sL`, plain RoPE and with the method, times
        :math:`a^2`), computed with :func:`rope_edu.apply_rope`.
    """
    s = state(method, factor, original, n_points=2)
    q, k = fixed_pair(DIM)
    new = s["new_context"]
    return {
        "new_context": new,
        "moved": int(np.sum(s["ratio"] < 1.0 - MOVED_RTOL)),
        "slowdown_first": float(1.0 / s["ratio"][0]),
        "slowdown_last": float(1.0 / s["ratio"][-1]),
        "logit_scale": s["logit_scale"],
        "beyond": s["beyond"],
        "no_full_turn": s["no_full_turn"],
        "logit_plain_new": float(apply_rope(q[None], [new], base=BASE)[0] @ k),
        "logit_new": float(s["logit_scale"] * (apply_rope(q[None], [new], inv_freq=s["inv_freq"])[0] @ k)),
    }


def data() -> dict[str, Any]:
    """Tables the browser draws from, computed with :mod:`rope_edu.scaling` on the sliders' grids.

    Returns
    -------
    dict
        ``theta``: plain frequencies, shape (DIM // 2,); ``factors``, ``originals``: the grids
        :data:`FACTORS` and :data:`ORIGINALS`; ``exponent``: :math:`-2i/(d-2)`, read off NTK-aware
        scaling by 2, shape (DIM // 2,); ``methods``: for each method of :data:`METHOD_PARAMS`, its
        :data:`RULES` entry (``rule`` and its table: ``scale`` per factor, or ``ramp`` per original
        length, shape (len(ORIGINALS), DIM // 2)), its ``label`` and ``attention`` (the attention
        factor per factor; it does not depend on ``L``); ``moved_rtol``: :data:`MOVED_RTOL`.
    """
    methods = {}
    for name in METHOD_PARAMS:
        entry = RULES[name]()
        entry["label"] = LABELS[name]
        entry["attention"] = [scaled_frequencies(name, DIM, BASE, **method_params(name, s, ORIGINALS[0]))[1]
                              for s in FACTORS]
        methods[name] = entry
    return {
        "theta": frequencies(DIM, BASE),
        "factors": FACTORS,
        "originals": ORIGINALS,
        "exponent": np.log2(frequency_ratio("ntk", DIM, BASE, factor=2.0)),
        "methods": methods,
        "moved_rtol": MOVED_RTOL,
    }


CONTROLS = [
    Control("method", "method", "yarn", kind="select", options=tuple(METHOD_PARAMS),
            labels=tuple(LABELS[m] for m in METHOD_PARAMS)),
    Control("factor", "scale s", 4.0, min=FACTORS[0], max=FACTORS[-1], step=FACTORS[1] - FACTORS[0], digits=1),
    Control("original", "original context L (tokens)", 4096, min=ORIGINALS[0], max=ORIGINALS[-1],
            step=ORIGINALS[1] - ORIGINALS[0]),
]

#: The chapter 9 figure: which frequencies each method moves, and what that does to the logits.
DEMO = Figure(
    "context_extension", CONTROLS, data=data, readouts=readouts,
    title="Context extension: each method's new/old RoPE frequencies, and the logit of a fixed q, k over distance",
)
