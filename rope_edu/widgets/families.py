"""Chapter 10 figure: the model families :func:`rope_edu.rope_spec` reads, as a map and a card.

One drop-down picks a family of :data:`rope_edu.models.FAMILIES`. The figure (``js/families.js``)
draws every family as a dot in a grid of the pairs its code rotates (half-split or interleaved)
against the part of the head that turns (the whole head, a leading fraction, a separate MLA
block), the picked one ringed, and beside it the picked family's card: its ``model_type``, pairs,
rotated part, the base and head size its config class fills in when a configuration leaves them
out, where it normalises queries and keys, which layers rotate, the scaling types it accepts, its
M-RoPE sections and where its code lives. Every entry is read off the family's row of the registry
(:func:`family_data`); the readouts are :func:`readouts`.
"""

from __future__ import annotations

from typing import Any

from .._checks import check_choice
from ..models import FAMILIES, ROPE_TYPES
from ..models.layers import LAYER_RULES
from ._core import Control, Figure

__all__ = ["KEYS", "LAYOUTS", "ROTARY", "family_data", "data", "readouts", "CONTROLS", "DEMO"]

#: The families, by key, in the order of their labels (the drop-down's order).
KEYS: list[str] = sorted(FAMILIES, key=lambda k: FAMILIES[k].label.casefold())
#: The grid's columns (pair layouts) and rows (what turns), as the registry names them.
LAYOUTS: tuple[str, ...] = ("half", "interleaved")
ROTARY: tuple[str, ...] = tuple(r for r in ("head", "fraction", "rotary_dim", "mla")
                                if any(f.rotary == r for f in FAMILIES.values()))


def _rule_words(layers: tuple[Any, ...]) -> str:
    """A layer rule's summary with its arguments, then any rule it wraps."""
    tag, *args = layers
    plain = [str(a) for a in args if not isinstance(a, tuple)]
    words = LAYER_RULES[tag].summary + (f" ({', '.join(plain)})" if plain else "")
    return "; ".join([words] + [_rule_words(a) for a in args if isinstance(a, tuple)])


def _layers(fam: Any) -> tuple[bool, str]:
    """Whether the family's layers can differ in their RoPE, and how it decides (the rule's words)."""
    if fam.layers is not None:
        return True, _rule_words(fam.layers)
    if fam.rotating_layer_types:
        return True, "only " + ", ".join(fam.rotating_layer_types) + " layers rotate"
    if fam.local_theta is not None:
        return True, f"{fam.local_theta[1]} layers take their base from {fam.local_theta[0]}"
    return False, ""


def family_data(key: str) -> dict[str, Any]:
    """What the figure shows of one family, read off its row of :data:`rope_edu.models.FAMILIES`.

    Parameters
    ----------
    key : str
        A key of ``FAMILIES``.

    Returns
    -------
    dict
        ``label``, ``model_types`` (list of str), ``layout`` and ``rotary`` (the registry's
        values), ``fraction`` (the rotated fraction when a config states none), ``base`` (the base
        when a config states none, for any layer type not listed) and ``bases`` (layer type -> base,
        empty when one base serves all), ``head`` (the field the head size comes from, ``"split"``
        for ``hidden_size // num_attention_heads``) and ``head_default`` (int or None), ``qk_norm``,
        ``layers_differ`` (bool) and ``layers`` (how the family decides which layers rotate, or
        ``""``), ``scalings`` (the accepted ``rope_type`` values; None: all of
        :data:`rope_edu.models.ROPE_TYPES`), ``mrope`` (``[assignment, [t, h, w]]`` or None),
        ``interleave`` (the MLA flag's field and its default, or None), ``clockwise`` and ``code``.
    """
    fam = FAMILIES[check_choice(key, FAMILIES, "key")]
    differ, layers = _layers(fam)
    bases = dict(fam.default_theta) if not isinstance(fam.default_theta, (int, float)) else {}
    return {
        "label": fam.label,
        "model_types": list(fam.model_types),
        "layout": fam.layout,
        "rotary": fam.rotary,
        "fraction": float(fam.default_fraction),
        "base": fam.theta_default(None),
        "bases": {t: float(b) for t, b in bases.items() if t != "*"},
        "head": fam.head,
        "head_default": fam.head_default,
        "qk_norm": fam.qk_norm,
        "layers_differ": differ,
        "layers": layers,
        "scalings": list(fam.allowed_rope_types) if fam.allowed_rope_types is not None else None,
        "mrope": [fam.mrope[0], list(fam.mrope[1])] if fam.mrope is not None else None,
        "interleave": list(fam.interleave) if fam.interleave is not None else None,
        "clockwise": fam.clockwise,
        "code": fam.code,
    }


def data() -> dict[str, Any]:
    """Every family (:func:`family_data`, by key, in :data:`KEYS` order), the grid's columns and
    rows, and the number of scaling types :func:`rope_edu.rope_spec` knows."""
    return {"families": {k: family_data(k) for k in KEYS}, "layouts": list(LAYOUTS), "rotary": list(ROTARY),
            "rope_types": len(ROPE_TYPES)}


def readouts(family: str) -> dict[str, float]:
    """The numbers the figure prints: ``same``, the families whose code rotates the same pairs of the
    same part of the head (the picked family's cell of the grid, itself included); ``base``, its base
    when a config states none; ``scalings``, how many scaling types it accepts."""
    f = family_data(family)
    same = sum(1 for g in FAMILIES.values() if (g.layout, g.rotary) == (f["layout"], f["rotary"]))
    return {"same": float(same), "base": float(f["base"]),
            "scalings": float(len(f["scalings"]) if f["scalings"] is not None else len(ROPE_TYPES))}


CONTROLS = [
    Control("family", "model family", "llama", kind="select", options=KEYS, labels=[FAMILIES[k].label for k in KEYS]),
]

#: The chapter 10 figure: every family rope_spec reads, by pairs and rotated part, with one family's card.
DEMO = Figure(
    "families", CONTROLS, data=data, readouts=readouts,
    title="The model families rope_spec reads, by the pairs their code rotates and the part of the head that "
          "turns, with what one family's code does",
)
