"""Chapter 4 figure: RoPE in ``d = 8`` dimensions as four planes, and the score they add up to.

A query ``q`` and a key ``k`` of dimension :data:`DIM` are cut into ``DIM // 2`` pairs (the
interleaved layout: pair ``i`` is coordinates ``2i`` and ``2i + 1``). At position ``m`` pair ``i``
of the query turns counter-clockwise by ``m·θ_i``, each pair at its own speed ``θ_i``. The score
``⟨R_m q, R_n k⟩`` is the sum of one dot product per plane, and each of them depends on the
angle between the two turned pairs, ``(m − n)θ_i`` plus a fixed offset, so on ``m − n`` only:
that is ``R_mᵀ R_n = R_{n−m}`` read block by block.

The figure (``js/relative_planes.js``) has three controls: the query position ``m``, the key
position ``n`` and a shift ``s`` added to both, so that the query sits at ``m + s`` and the key
at ``n + s``. It turns the pairs in the browser with the frequencies of :func:`data` and prints
the numbers of :func:`readouts`: each plane's contribution, their sum (the score), and
``qᵀR_{n−m}k`` computed from the relative position alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import check_int
from ..rope import apply_rope, frequencies, rotation_matrix
from ._core import Control, Figure

__all__ = ["DIM", "BASE", "Q", "K", "contributions", "readouts", "data", "CONTROLS", "DEMO"]

DIM = 8        #: four pairs, four planes
BASE = 100.0   #: θ_i = 100**(-2i/8) = 1, 0.32, 0.1, 0.03 rad per position: every plane turns visibly

#: The query and key before rotation (norm about 1 in every plane, so the planes share one scale).
Q = np.array([1.0, 0.2, 0.3, 0.9, -0.7, 0.6, 0.5, -0.8])
K = np.array([0.5, 0.8, 0.9, 0.1, -0.2, 0.9, 0.9, 0.1])


def contributions(m: int, n: int, q: Any = Q, k: Any = K) -> np.ndarray:
    """Each plane's share of the score ``⟨R_m q, R_n k⟩`` (base :data:`BASE`, interleaved layout).

    Parameters
    ----------
    m, n : int
        Positions of the query and of the key.
    q, k : array_like, shape (DIM,)
        The query and key before rotation.

    Returns
    -------
    numpy.ndarray, shape (DIM // 2,)
        Entry ``i`` is the dot product of pair ``i`` of ``R_m q`` with pair ``i`` of ``R_n k``
        (coordinates ``2i`` and ``2i + 1``); the entries add up to the score.

    Raises
    ------
    TypeError
        If ``m`` or ``n`` is not an integer, or ``q``/``k`` is not real-valued.
    ValueError
        If ``q`` or ``k`` does not have shape ``(DIM,)``.
    """
    m, n = check_int(m, "m"), check_int(n, "n")
    for name, vec in (("q", q), ("k", k)):
        if np.shape(vec) != (DIM,):
            raise ValueError(f"{name} must have shape ({DIM},), got shape {np.shape(vec)}")
    q_m = apply_rope(q, m, base=BASE)
    k_n = apply_rope(k, n, base=BASE)
    return (q_m * k_n).reshape(DIM // 2, 2).sum(axis=-1)


def readouts(m: int, n: int, s: int) -> dict[str, float]:
    """The numbers the figure prints, by readout name: query at ``m + s``, key at ``n + s``.

    ``m_total``, ``n_total``: the two positions; ``relative``: ``m − n``; ``c_i`` for each plane
    ``i``: its contribution (:func:`contributions`); ``score``: ``⟨R_{m+s} q, R_{n+s} k⟩``, from
    :func:`rope_edu.apply_rope`; ``g``: ``qᵀ R_{n−m} k``, from :func:`rope_edu.rotation_matrix`,
    which sees only the difference of the positions.
    """
    m, n, s = check_int(m, "m"), check_int(n, "n"), check_int(s, "s")
    c = contributions(m + s, n + s)
    out: dict[str, float] = {"m_total": float(m + s), "n_total": float(n + s), "relative": float(m - n)}
    out.update({f"c_{i}": float(v) for i, v in enumerate(c)})
    out["score"] = float(apply_rope(Q, m + s, base=BASE) @ apply_rope(K, n + s, base=BASE))
    out["g"] = float(Q @ rotation_matrix(n - m, DIM, base=BASE) @ K)
    return out


def data() -> dict[str, Any]:
    """What the figure draws with.

    Returns
    -------
    dict
        ``theta`` (shape (DIM // 2,)): the frequencies, rad/position; ``q``, ``k`` (shape (DIM,));
        ``bound``: the largest ``|c_0 + ... + c_j|`` (``j = -1, ..., DIM // 2 - 1``) over every
        relative position ``m − n`` the sliders reach, so that the bar chart keeps one fixed
        axis that every state fits in.
    """
    by_name = {c.name: c for c in CONTROLS}
    (m_lo, m_hi, _), (n_lo, n_hi, _) = by_name["m"].bounds, by_name["n"].bounds
    reach = int(max(m_hi - n_lo, n_hi - m_lo))
    partial = [np.cumsum(contributions(r, 0)) for r in range(-reach, reach + 1)]
    return {"theta": frequencies(DIM, BASE), "q": Q, "k": K, "bound": float(np.abs(partial).max())}


CONTROLS = [
    Control("m", "m (query position)", 3, min=0, max=24, step=1),
    Control("n", "n (key position)", 1, min=0, max=24, step=1),
    Control("s", "shift s (added to m and n)", 0, min=0, max=60, step=1),
]

#: The chapter 4 figure: q at m + s and k at n + s, turned plane by plane, and the score as a sum.
DEMO = Figure(
    "relative_planes", CONTROLS, data=data, readouts=readouts,
    title="RoPE in 8 dimensions: four planes, each turning at its own speed, and the score as the sum of their contributions",
)
