"""Chapter 13 figure: ALiBi's bias against RoPE's average decay, as a change of the attention logit.

ALiBi adds :math:`-m_h\\,\\delta` to the logit of a key :math:`\\delta` tokens back, with the slopes
:math:`m_h` of :func:`rope_edu.alibi_slopes`: a penalty that grows without bound, straight lines.
RoPE adds nothing; it turns queries and keys, and for random queries and keys whose coordinates
correlate with coefficient :math:`\\rho` the *mean* logit is
:math:`\\rho\\,\\operatorname{tr}R_\\delta/\\sqrt d = 2\\rho\\sum_i\\cos(\\delta\\theta_i)/\\sqrt d`
(:func:`rope_edu.decay.expected_score`), which wanders down and oscillates. The figure plots both as
the change from distance 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import check_choice, check_int, check_real
from ..alibi import alibi_slopes
from ..decay import expected_score
from ..rope import frequencies
from ._core import Control, Figure

__all__ = ["DIMS", "BASES", "MAX_HEADS", "alibi_change", "rope_change", "readouts", "data", "CONTROLS", "DEMO"]

#: Head dimensions and bases the figure offers (as the strings of its drop-downs).
DIMS: tuple[str, ...] = ("16", "64", "128")
BASES: tuple[str, ...] = ("10000", "500000")
#: Largest number of ALiBi heads on the heads slider.
MAX_HEADS = 16


def alibi_change(heads: int, distance: Any) -> np.ndarray:
    """ALiBi's logit change ``-m_h * distance`` for every head, shape (heads, len(distance))."""
    return -alibi_slopes(heads)[:, None] * np.asarray(distance, dtype=float)[None, :]


def rope_change(distance: Any, dim: int, base: float, rho: float) -> np.ndarray:
    """RoPE's mean logit change from distance 0: ``(E[score(δ)] - E[score(0)]) / sqrt(dim)``."""
    d = np.asarray(distance, dtype=float)
    return (expected_score(d, dim, base, rho) - expected_score(0.0, dim, base, rho)) / np.sqrt(dim)


def readouts(heads: int, distance: int, rho: float, dim: str, base: str) -> dict[str, float]:
    """The numbers the figure prints: both slopes at the ends, both biases at ``distance``, RoPE's change."""
    heads = check_int(heads, "heads", 1)
    distance = check_int(distance, "distance", 0)
    rho = check_real(rho, "rho")
    d, b = int(check_choice(dim, DIMS, "dim")), float(check_choice(base, BASES, "base"))
    m = alibi_slopes(heads)
    return {
        "slope_first": float(m[0]),
        "slope_last": float(m[-1]),
        "alibi_first": float(-m[0] * distance),
        "alibi_last": float(-m[-1] * distance),
        "rope": float(rope_change(distance, d, b, rho)),
    }


def data() -> dict[str, Any]:
    """ALiBi slopes for 1..MAX_HEADS heads and RoPE frequencies for every (dim, base) choice."""
    return {
        "slopes": {str(h): alibi_slopes(h) for h in range(1, MAX_HEADS + 1)},
        "theta": {f"{d}|{b}": frequencies(int(d), float(b)) for d in DIMS for b in BASES},
    }


CONTROLS = [
    Control("heads", "ALiBi heads H", 8, min=1, max=MAX_HEADS, step=1),
    Control("distance", "distance δ (tokens back)", 64, min=0, max=512, step=8),
    Control("rho", "RoPE: correlation ρ of q and k", 1.0, min=0.0, max=1.0, step=0.05, digits=2),
    Control("dim", "RoPE head dimension d", "64", kind="select", options=list(DIMS)),
    Control("base", "RoPE base b", "10000", kind="select", options=list(BASES)),
]

#: The chapter 13 figure: the logit change against distance, ALiBi's lines and RoPE's mean.
DEMO = Figure(
    "alibi_rope", CONTROLS, data=data, readouts=readouts,
    title="ALiBi bias and RoPE's mean logit against the distance between query and key",
)
