"""Chapter 11 figure: 2-D RoPE on an image grid; moving two patches together leaves their score fixed.

A query patch at (row, column) ``(qr + sr, qc + sc)`` and a key patch at ``(kr + sr, kc + sc)``:
the shift ``(sr, sc)`` moves both. Each patch of the grid is coloured by the score the query would
give a key there, so the whole pattern travels with the query. With axial frequencies (each pair
follows the row or the column) or RoPE-Mixed frequencies (pairs follow diagonal directions) the
score depends on the 2-D offset only (:func:`rope_edu.multidim.apply_rope_nd`).

The figure (``js/patch_shift.js``) prints the readouts of :func:`readouts`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from .._checks import check_int
from ..multidim import apply_rope_nd, axial_frequencies, mixed_frequencies
from ._core import Control, Figure

__all__ = ["GRID", "DIM", "SCHEMES", "vectors", "score", "score_from_offset", "grid_scores", "readouts", "data",
           "CONTROLS", "DEMO"]

#: The image is GRID x GRID patches.
GRID = 8
#: Head dimension of the query and key (4 pairs per axis).
DIM = 16
#: Frequency matrices the figure offers: axial (Qwen2-VL's "shared" scheme, base 100 as Heo et al. use for
#: ViTs) and RoPE-Mixed at its initialisation with direction 0.6 rad.
SCHEMES: dict[str, np.ndarray] = {
    "axial": axial_frequencies(DIM, 100.0),
    "mixed": mixed_frequencies(DIM, 0.6, base=100.0),
}


@lru_cache(maxsize=1)
def _vectors() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    q = rng.standard_normal(DIM)
    return q, q + 0.5 * rng.standard_normal(DIM)  # correlated, so the score has a visible peak


def vectors() -> tuple[np.ndarray, np.ndarray]:
    """Copies of the query and key ``(q, k)``, each of shape (DIM,)."""
    q, k = _vectors()
    return q.copy(), k.copy()


def _freqs(scheme: str) -> np.ndarray:
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {list(SCHEMES)}, got {scheme!r}")
    return SCHEMES[scheme]


def score(query_pos: Any, key_pos: Any, scheme: str = "axial") -> float:
    """``<R(p_q) q, R(p_k) k>``: both vectors rotated at their own (row, column), then dotted."""
    q, k = _vectors()
    f = _freqs(scheme)
    qr = apply_rope_nd(q[None], np.asarray(query_pos, dtype=float)[None], f)
    kr = apply_rope_nd(k[None], np.asarray(key_pos, dtype=float)[None], f)
    return float((qr * kr).sum())


def score_from_offset(offset: Any, scheme: str = "axial") -> float:
    """``<q, R(p_k - p_q) k>``: the score computed from the 2-D offset alone."""
    q, k = _vectors()
    return float(q @ apply_rope_nd(k[None], np.asarray(offset, dtype=float)[None], _freqs(scheme))[0])


def grid_scores(query_pos: Any, scheme: str = "axial") -> np.ndarray:
    """Score of the query at ``query_pos`` with the key at every patch, shape (GRID, GRID)."""
    q, k = _vectors()
    f = _freqs(scheme)
    rows, cols = np.meshgrid(np.arange(GRID), np.arange(GRID), indexing="ij")
    keys = apply_rope_nd(np.broadcast_to(k, (GRID * GRID, DIM)), np.stack([rows.ravel(), cols.ravel()], -1), f)
    qr = apply_rope_nd(q[None], np.asarray(query_pos, dtype=float)[None], f)[0]
    return (keys @ qr).reshape(GRID, GRID)


def readouts(qr: int, qc: int, kr: int, kc: int, sr: int, sc: int, scheme: str) -> dict[str, float]:
    """The numbers the figure prints: the offset, the score after the shift, before it, and from the offset."""
    qr, qc, kr, kc, sr, sc = (check_int(v, name) for v, name in
                              zip((qr, qc, kr, kc, sr, sc), ("qr", "qc", "kr", "kc", "sr", "sc")))
    pq, pk = (qr + sr, qc + sc), (kr + sr, kc + sc)
    return {
        "dr": kr - qr,
        "dc": kc - qc,
        "score": score(pq, pk, scheme),
        "score_unshifted": score((qr, qc), (kr, kc), scheme),
        "score_offset": score_from_offset((kr - qr, kc - qc), scheme),
    }


def data() -> dict[str, Any]:
    """Query, key and the frequency matrix of each scheme (the browser rotates and dots them)."""
    q, k = _vectors()
    return {"grid": GRID, "q": q, "k": k, "freqs": {name: f for name, f in SCHEMES.items()},
            "bound": float(np.sum(np.hypot(q[0::2], q[1::2]) * np.hypot(k[0::2], k[1::2])))}


CONTROLS = [
    Control("qr", "query row", 1, min=0, max=4, step=1),
    Control("qc", "query column", 1, min=0, max=4, step=1),
    Control("kr", "key row", 3, min=0, max=4, step=1),
    Control("kc", "key column", 2, min=0, max=4, step=1),
    Control("sr", "shift both down (rows)", 0, min=0, max=3, step=1),
    Control("sc", "shift both right (columns)", 0, min=0, max=3, step=1),
    Control("scheme", "frequencies", "axial", kind="select", options=list(SCHEMES)),
]

#: The chapter 11 figure: two patches, one 2-D shift, the score before and after.
DEMO = Figure(
    "patch_shift", CONTROLS, data=data, readouts=readouts,
    title="2-D RoPE on an image grid: moving the query and key patches together keeps their score",
)
