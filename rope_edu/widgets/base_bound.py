"""Chapter 5 figure: the base bounds the context (Men et al. 2024), with released models as points.

Three controls: the head dimension :math:`d`, the base :math:`b` (as :math:`\\log_{10} b`) and the
context :math:`L` (as :math:`\\log_2 L`). The left panel shows the wavelengths
:math:`\\lambda_i = 2\\pi b^{2i/d}` of the :math:`d/2` pairs against :math:`L`: the pairs with
:math:`\\lambda_i \\le L` complete at least one turn within the context. The right panel is the plane
of contexts and bases: for every base on the slider, the band from the left edge to
:func:`rope_edu.max_context` (the first distance where Men et al.'s criterion
:math:`\\sum_i \\cos\\delta\\theta_i \\ge 0` fails) is shaded, so a point (L, b) in the shade passes and
one outside fails; the band's ragged edge is the criterion's non-monotone dependence on the base.
Released models of :data:`rope_edu.models.PUBLISHED` that rotate every coordinate of a head of the
chosen size are drawn at (trained context, base), with a hollow mark at the context they are
released for when it is longer.

:func:`data` computes the reaches with ``rope_edu``; :func:`readouts` computes every number the
figure prints, and the browser tests compare the page with them.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._checks import check_choice, check_real
from ..decay import max_context, wavelengths
from ..models import PUBLISHED
from ._core import Control, Figure

__all__ = ["DIMS", "LOG10_BASES", "BASE_GRID", "LOG2_CONTEXTS", "LLAMA4_CHUNK", "attended_span", "models", "readouts",
           "data", "CONTROLS", "DEMO"]

#: Head dimensions offered by the drop-down (strings, as a ``<select>`` holds them).
DIMS: tuple[str, ...] = ("64", "96", "128", "256")
#: The base slider, in log10 b: 3 to 8 in steps of 0.1.
LOG10_BASES = (3.0, 8.0, 0.1)
#: The bases on the slider, :math:`10^{3}, 10^{3.1}, \\dots, 10^{8}`.
BASE_GRID: np.ndarray = 10.0 ** np.round(np.arange(30, 81) / 10.0, 1)
#: The context slider, in log2 L: 2**8 to 2**24 tokens.
LOG2_CONTEXTS = (8, 24, 1)
#: Distances searched for the reach (past the context slider's end).
LIMIT = 2**25
#: Llama 4's chunked-attention (RoPE) layers attend within chunks of this many tokens when the
#: configuration does not say: ``Llama4TextConfig``'s ``attention_chunk_size`` default.
LLAMA4_CHUNK = 8192


def attended_span(pub: Any) -> int | None:
    """How far back a released layer can look, when its attention is local; else None.

    A sliding-window layer (Gemma 3's local layers) never sees a key more than ``sliding_window``
    tokens back, and a chunked-attention layer (Llama 4's RoPE layers) none outside its chunk of
    ``attention_chunk_size`` tokens (default :data:`LLAMA4_CHUNK`): the distances such a layer meets
    stay below that span whatever the context, so the criterion is asked only up to it.

    Parameters
    ----------
    pub : rope_edu.models.Published
        A row of :data:`rope_edu.models.PUBLISHED`.

    Returns
    -------
    int or None
        The window or the chunk in tokens, or None for a layer that attends over the whole context.
    """
    spec = pub.spec()
    if spec.layer_type == "sliding_attention":
        return int(pub.config["sliding_window"])
    if spec.layer_type == "chunked_attention":
        return int(pub.config.get("attention_chunk_size", LLAMA4_CHUNK))
    return None


def _base_index(log10_base: float) -> int:
    v = check_real(log10_base, "log10_base")
    lo, hi, step = LOG10_BASES
    if not lo - 1e-9 <= v <= hi + 1e-9:
        raise ValueError(f"log10_base must be in [{lo}, {hi}], got {v}")
    return int(round((v - lo) / step))


def _context(log2_context: float) -> int:
    v = check_real(log2_context, "log2_context")
    lo, hi, _ = LOG2_CONTEXTS
    if not lo <= v <= hi or v != int(v):
        raise ValueError(f"log2_context must be an integer in [{lo}, {hi}], got {v}")
    return 2 ** int(v)


@functools.lru_cache(maxsize=None)
def _reaches(dim: int) -> tuple[int, ...]:
    out = []
    for b in BASE_GRID:
        r = max_context(dim, float(b), limit=LIMIT)
        out.append(LIMIT if r is None else r)
    return tuple(out)


def models() -> list[dict[str, Any]]:
    """The released models the figure can show: name, head_dim, base, trained and released context.

    Models of :data:`rope_edu.models.PUBLISHED` whose layer rotates every coordinate of its heads,
    with a known context (the trained one, else the released one; a sliding-window layer's window,
    a chunked layer's chunk: :func:`attended_span`)
    and a base on the slider; the
    others (partial rotary, MLA's rotary part) never fail the criterion (see
    :func:`rope_edu.max_context`) and are left out of the plane.
    """
    out = []
    for name, pub in PUBLISHED.items():
        spec = pub.spec()
        if not spec.uses_rope or spec.rotary_dim != spec.head_dim or spec.rotating_pairs is not None:
            continue
        trained, released = pub.trained or pub.extended, pub.extended
        span = attended_span(pub)
        if span:  # a sliding window or an attention chunk: no key further back than that
            trained, released = min(trained or span, span), None
        if trained is None or not 10**LOG10_BASES[0] <= spec.base <= 10**LOG10_BASES[1]:
            continue
        out.append({"name": name, "head_dim": spec.head_dim, "base": spec.base, "trained": trained,
                    "released": released if released and released > trained else None})
    return out


def readouts(head_dim: Any, log10_base: float, log2_context: float) -> dict[str, float]:
    """The numbers the figure prints.

    ``base`` (:math:`b`), ``context`` (:math:`L`), ``turning`` (pairs with
    :math:`\\lambda_i \\le L`: at least one full turn within the context), ``critical``
    (Liu et al.'s critical dimension, twice ``turning``), ``reach`` (:func:`rope_edu.max_context`:
    the criterion holds for every context up to it) and ``ratio`` (reach / L: 1 or more passes).
    """
    d = int(check_choice(str(head_dim), DIMS, "head_dim"))
    k = _base_index(log10_base)
    L = _context(log2_context)
    b = float(BASE_GRID[k])
    turning = int(np.sum(wavelengths(d, b) <= L))
    reach = _reaches(d)[k]
    return {"base": b, "context": L, "turning": turning, "critical": 2 * turning, "reach": reach,
            "ratio": reach / L}


def data() -> dict[str, Any]:
    """Per head dimension the reach of every base on the slider; the bases; the released models."""
    return {
        "bases": BASE_GRID,
        "reach": {d: list(_reaches(int(d))) for d in DIMS},
        "limit": LIMIT,
        "models": models(),
    }


CONTROLS = [
    Control("head_dim", "head dimension d", "128", kind="select", options=list(DIMS)),
    Control("log10_base", "base b", 4.0, min=LOG10_BASES[0], max=LOG10_BASES[1], step=LOG10_BASES[2],
            digits=1, shows="10^"),
    Control("log2_context", "context L (tokens)", 12, min=LOG2_CONTEXTS[0], max=LOG2_CONTEXTS[1],
            step=LOG2_CONTEXTS[2], shows="2^"),
]

#: The chapter 5 figure: which pairs turn within L, and where Men et al.'s bound lies.
DEMO = Figure(
    "base_bound", CONTROLS, data=data, readouts=readouts,
    title="The base bounds the context: pairs that turn within L, Men et al.'s criterion, released models",
)
