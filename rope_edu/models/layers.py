"""Which layers rotate, and with what: the layer rules, one tagged value per family.

A family's ``layers`` (:attr:`Family.layers <rope_edu.models.family.Family>`) is None (every
attention layer rotates; the config's own ``layer_types``, if any, name the layers) or one tagged
tuple ``(tag, *arguments)``. :data:`LAYER_RULES` maps each tag to what it does; the page's
interpreter (``_ext/model_check/layers.js``) implements the same tags. A family whose code decides
which layers rotate in a new way gets a new entry here (and in ``layers.js``), not a new field.

========================================  ===================================================================
``("pattern", field, n[, other])``        without ``layer_types``: every ``field``-th layer (default ``n``) is
                                          ``full_attention``, the others ``sliding_attention`` or ``other``
                                          (Gemma 3; Qwen3-Next's ``linear_attention`` layers have no attention)
``("cycle", field)``                      without ``layer_types``: ``field`` lists a cycle of layer types that
                                          repeats over the layers (RecurrentGemma's ``block_types``)
``("nope_flags", n, rope, nope)``         ``no_rope_layers`` (1 = RoPE) or every ``no_rope_layer_interval``-th
                                          layer (default ``n``) NoPE; the layers are named ``rope`` / ``nope``
                                          (SmolLM3, Llama 4)
``("attention_indices", field)``          without ``layer_types``: the layers ``field`` lists attend, the others
                                          are state-space layers (Bamba's ``attn_layer_indices``)
``("nope_list", field)``                  a per-layer list whose falsy entries mark NoPE layers (MuseGlimmer's
                                          ``layer_rope_theta``)
``("nope_indices", field)``               a list of layer indices without RoPE (Mllama's
                                          ``cross_attention_layers``)
``("switch", field, value, default)``     RoPE only when ``field`` (default ``default``) equals ``value``
                                          (GraniteMoeHybrid's ``position_embedding_type = "rope"``)
``("no_window", mode[, rule])``           with ``rope_types``, a config whose ``sliding_window`` is None: no layer
                                          rotates (``"none"``, Cohere 2: only layers with a window do) or every
                                          layer does (``"all"``, EXAONE 4: the code tests the window); ``rule``,
                                          another tagged value, names the layers
``("nope", reason[, zero])``             no layer rotates, attention or not: the family's text model applies no
                                          rotation (GLM-5-Next), and ``reason`` says why; a config whose field
                                          ``zero`` (GLM-5-Next's ``qk_rope_head_dim``) is not 0 is refused, as
                                          the family's config class refuses it
``("forced", list, value, built_from,     RoPE also in the layers whose entry of ``list`` is ``value``, when
gate, default, rule)``                    ``gate`` (default ``default``) is 1, whatever ``rule`` says (Cohere 2
                                          MoE's dense prefix layers); a config that states ``built_from`` but
                                          not ``list`` is refused (the config class builds the list from it)
========================================  ===================================================================

A rule's last argument may be another tagged value (``no_window``, ``forced``): the inner rule names the
layers and decides the layers the outer one leaves to it.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .._checks import check_choice, check_int
from .config import ConfigReader, positive_int

if TYPE_CHECKING:
    from .family import Family


#: Layer types that are not softmax attention (linear attention, state-space, convolution or MLP-only
#: blocks): they have no RoPE, and ``rope_spec(config, layer=i)`` says so (``uses_rope`` False).
NOT_ATTENTION = frozenset({"linear_attention", "mamba", "mamba2", "conv", "ssm", "recurrent"})

#: The two layer types of the local/global families, for messages and configs that list none.
LOCAL_GLOBAL = ("sliding_attention", "full_attention")


def _check_types(types: Any, name: str = "layer_types") -> list[str]:
    if isinstance(types, str) or not isinstance(types, Sequence) or not all(isinstance(t, str) for t in types):
        raise TypeError(f"{name} must be a list of strings, got {types!r}")
    return list(types)


def _rope_flags(cfg: ConfigReader, source: str, interval_default: int = 4) -> list[bool]:
    """Per layer: does it use RoPE? ``no_rope_layers`` (1 = RoPE, 0 = NoPE), else every
    ``no_rope_layer_interval``-th layer is NoPE (the config class builds the list that way)."""
    flags = cfg.data.get("no_rope_layers")
    if flags is None:
        interval = positive_int(cfg.default("no_rope_layer_interval", interval_default, source),
                                 "no_rope_layer_interval")
        flags = [int((i + 1) % interval != 0) for i in range(cfg.size("num_hidden_layers"))]
    if isinstance(flags, str) or not all(isinstance(f, (bool, numbers.Integral)) for f in flags):
        raise TypeError(f"no_rope_layers must be a list of 0/1 flags (1 = the layer uses RoPE), got {flags!r}")
    return [bool(f) for f in flags]


def select_layer(cfg: ConfigReader, layer_type: Any, layer: Any, types: list[str] | None,
                  known: Sequence[str] = ()) -> tuple[str | None, int | None]:
    """Check ``layer_type`` / ``layer`` against the config; return the layer's type and index."""
    if layer_type is not None and not isinstance(layer_type, str):
        raise TypeError(f"layer_type must be a string such as 'full_attention', got {layer_type!r}")
    if layer is not None:
        layer = check_int(layer, "layer", 0)
        count = next((k for k in ("num_hidden_layers", "n_layer", "num_layers") if cfg.has(k)), "num_hidden_layers")
        n = len(types) if types is not None else cfg.size(count)
        if layer >= n:
            raise ValueError(f"layer must be a layer index in [0, {n}) for this config, got {layer}")
        if types is not None:
            if layer_type is not None and layer_type != types[layer]:
                raise ValueError(f"layer_type {layer_type!r} does not match layer {layer}, which is {types[layer]!r}")
            layer_type = types[layer]
    elif layer_type is not None:
        valid = sorted(set(types)) if types is not None else list(known)
        if not valid:
            raise ValueError(
                f"layer_type {layer_type!r} given, but the {cfg.model_type!r} config lists no layer_types"
            )
        check_choice(layer_type, valid, "layer_type")
    return layer_type, layer



# --- the rules ------------------------------------------------------------------------------------


def _pattern_types(family: Family, cfg: ConfigReader, needed: bool, name: str, default: int,
                   rest: str = "sliding_attention") -> list[str] | None:
    if not (needed or cfg.has("num_hidden_layers")):
        return None
    every = positive_int(cfg.default(name, default, f"{family.label} config default"), name)
    return [rest if (i + 1) % every else "full_attention" for i in range(cfg.size("num_hidden_layers"))]


def _cycle_types(family: Family, cfg: ConfigReader, needed: bool, name: str) -> list[str] | None:
    if not (cfg.has(name) and cfg.has("num_hidden_layers")):
        return None
    cycle = _check_types(cfg.data[name], name)
    return [cycle[i % len(cycle)] for i in range(cfg.size("num_hidden_layers"))]


def _flag_types(family: Family, cfg: ConfigReader, needed: bool, interval: int, rope: str, nope: str) -> list[str] | None:
    if not (needed or cfg.has("num_hidden_layers") or cfg.has("no_rope_layers")):
        return None
    return [rope if f else nope for f in _rope_flags(cfg, f"{family.label} config default", interval)]


def _flag_state(family: Family, cfg: ConfigReader, interval: int, rope: str, nope: str) -> list[bool]:
    return _rope_flags(cfg, f"{family.label} config default", interval)


def _flag_reason(family: Family, cfg: ConfigReader, flags: Any, index: int | None, layer_type: str | None,
                 *_: Any) -> str | None:
    if index is None:
        return None
    if index >= len(flags):
        raise ValueError(f"layer {index} is beyond no_rope_layers ({len(flags)} entries)")
    return None if flags[index] else "no_rope_layers marks this layer NoPE"


def _attention_types(family: Family, cfg: ConfigReader, needed: bool, name: str) -> list[str] | None:
    if not cfg.has("num_hidden_layers"):
        return None
    listed = cfg.data.get(name) or ()
    return ["full_attention" if i in listed else "mamba" for i in range(cfg.size("num_hidden_layers"))]


def _built_by_class(family: Family, cfg: ConfigReader, name: str) -> ValueError:
    return ValueError(f"the {cfg.model_type!r} config has no {name} (which layers use no RoPE); "
                      f"{family.label}'s config class builds one: pass the config object or its to_dict()")


def _list_reason(family: Family, cfg: ConfigReader, state: Any, index: int | None, layer_type: str | None,
                 name: str) -> str | None:
    if index is None:
        return None
    marks = cfg.data.get(name)
    if marks is None:
        raise _built_by_class(family, cfg, name)
    if isinstance(marks, str) or not isinstance(marks, Sequence) or index >= len(marks):
        raise ValueError(f"{name} must list one entry per layer, got {marks!r}")
    return None if marks[index] else f"{name}[{index}] = {marks[index]!r} marks a NoPE layer"


def _indices_reason(family: Family, cfg: ConfigReader, state: Any, index: int | None, layer_type: str | None,
                    name: str) -> str | None:
    if index is None:
        return None
    listed = cfg.data.get(name)
    if listed is None:
        raise _built_by_class(family, cfg, name)
    return f"layer {index} is in {name} (no self-attention, no RoPE)" if index in listed else None


def _switch_reason(family: Family, cfg: ConfigReader, state: Any, index: int | None, layer_type: str | None,
                   name: str, on: Any, default: Any) -> str | None:
    value = cfg.default(name, default, f"{family.label} config default")
    return None if value == on else f"{name} = {value!r}: {family.label} uses RoPE only when it is {on!r}"


def _nope_reason(family: Family, cfg: ConfigReader, state: Any, index: int | None, layer_type: str | None,
                 reason: str, zero: str | None = None) -> str:
    value = cfg.data.get(zero) if zero is not None else None
    if value is not None and (isinstance(value, bool) or value != 0):
        raise ValueError(f"{zero} must be 0 for {family.label}, got {value!r}: its config class refuses a rotated "
                         "part, and rope_spec does not read such a config as NoPE")
    return reason


def _window_reason(family: Family, cfg: ConfigReader, state: Any, index: int | None, layer_type: str | None,
                   mode: str, inner: Sequence[Any] | None = None) -> str | None:
    if mode == "none" and not cfg.has("sliding_window"):
        return f"{family.label} rotates only layers with a sliding window, and sliding_window is None"
    return None


def _window_typed(cfg: ConfigReader, mode: str, inner: Sequence[Any] | None = None) -> bool:
    return cfg.has("sliding_window")


def _forced_reason(family: Family, cfg: ConfigReader, state: Any, index: int | None, layer_type: str | None,
                   name: str, value: Any, built_from: str, gate: str, default: Any, inner: Sequence[Any]) -> str | None:
    listed = cfg.data.get(name)
    if listed is None and cfg.has(built_from):
        raise ValueError(f"the {cfg.model_type!r} config states {built_from} but not {name} "
                         "(nor, perhaps, layer_types): "
                         f"{family.label}'s config class builds both from it; pass the config object or its to_dict()")
    if index is not None and listed is not None:
        if isinstance(listed, str) or not isinstance(listed, Sequence) or index >= len(listed):
            raise ValueError(f"{name} must list one entry per layer, got {listed!r}")
        if listed[index] == value and cfg.default(gate, default, f"{family.label} config default") == 1:
            return ""  # forced: this layer rotates, whatever the inner rule says
    return no_rope_reason(family, cfg, state, index, layer_type, layers=inner)


@dataclass(frozen=True)
class LayerRule:
    """What one tag of :data:`LAYER_RULES` does (each hook gets the tagged value's arguments last).

    Attributes
    ----------
    summary : str
        What the rule reads, in a few words.
    types : callable or None
        ``types(family, cfg, needed, *args)``: the layer types of a config that lists no ``layer_types``
        (None where it cannot tell; ``needed`` is True when a layer index was asked for).
    state : callable or None
        ``state(family, cfg, *args)``: what the rule reads once per config (the NoPE flags).
    reason : callable or None
        ``reason(family, cfg, state, index, layer_type, *args)``: why a layer has no RoPE, or None.
    typed : callable or None
        ``typed(cfg, *args)``: whether the family's ``rope_types`` decide which layers rotate (default yes).
    names : callable
        ``names(*args)``: layer types the rule names (accepted by ``layer_type=...``, keys of a nested
        ``rope_parameters``).
    local_global : bool
        A config that lists no ``layer_types`` still has ``sliding_attention`` and ``full_attention`` layers.
    per_layer : bool
        The rule reads layer indices: without ``layer_types``, every layer is checked.
    whole : bool
        Its reason holds for every layer of the model, with attention or without: the reader asks it before
        the layer's type (:func:`whole_model_reason`).
    """

    summary: str
    types: Callable[..., list[str] | None] | None = None
    state: Callable[..., Any] | None = None
    reason: Callable[..., str | None] | None = None
    typed: Callable[..., bool] | None = None
    names: Callable[..., tuple[str, ...]] = lambda *args: ()
    local_global: bool = False
    per_layer: bool = False
    whole: bool = False


#: The layer rules by tag (see the module's table): one dispatch for every family's ``layers``.
LAYER_RULES: dict[str, LayerRule] = {
    "pattern": LayerRule("every n-th layer full_attention, the others sliding (or another type)",
                         types=_pattern_types, local_global=True),
    "cycle": LayerRule("a cycle of layer types repeated over the layers", types=_cycle_types),
    "nope_flags": LayerRule("no_rope_layers, or every n-th layer NoPE", types=_flag_types, state=_flag_state,
                            reason=_flag_reason, names=lambda n, rope, nope: (rope, nope)),
    "attention_indices": LayerRule("the listed layers attend, the others are state-space layers",
                                   types=_attention_types),
    "nope_list": LayerRule("a per-layer list whose falsy entries mark NoPE layers", reason=_list_reason,
                           per_layer=True),
    "nope_indices": LayerRule("a list of the layers without RoPE", reason=_indices_reason, per_layer=True),
    "switch": LayerRule("RoPE only when a field has a given value", reason=_switch_reason),
    "no_window": LayerRule("rope_types, and what a config without a sliding window does", reason=_window_reason,
                           typed=_window_typed),
    "nope": LayerRule("no layer rotates: the text model applies no rotation", reason=_nope_reason, whole=True),
    "forced": LayerRule("RoPE also in the layers a per-layer list marks, whatever the inner rule says",
                        reason=_forced_reason, typed=lambda cfg, *args: False),
}


def _rule(layers: Sequence[Any] | None) -> tuple[LayerRule | None, tuple[Any, ...]]:
    if layers is None:
        return None, ()
    tag, *args = layers
    if tag not in LAYER_RULES:
        raise ValueError(f"unknown layer rule {tag!r}; expected one of {', '.join(map(repr, LAYER_RULES))}")
    return LAYER_RULES[tag], tuple(args)


def _naming(family: Family) -> tuple[LayerRule | None, tuple[Any, ...]]:
    """The rule that names a family's layers: the innermost rule (a rule whose last argument is another
    tagged value wraps it), or the rule itself."""
    rule, args = _rule(family.layers)
    while args and isinstance(args[-1], (tuple, list)):
        rule, args = _rule(args[-1])
    if rule is not None and (rule is LAYER_RULES["no_window"] or rule is LAYER_RULES["forced"]):
        return None, ()  # a wrapping rule without an inner one names no layers
    return rule, args


# --- what the reader asks -------------------------------------------------------------------------


def layer_types(family: Family, cfg: ConfigReader, needed: bool) -> list[str] | None:
    """The config's ``layer_types``, or the ones the family's rule builds, or None."""
    types = cfg.data.get("layer_types")
    if types is not None:
        return _check_types(types)
    rule, args = _naming(family)
    if rule is None or rule.types is None:
        return None
    return rule.types(family, cfg, needed, *args)


def type_names(family: Family) -> tuple[str, ...]:
    """Layer types the family's rule names (beyond the config's own ``layer_types``)."""
    rule, args = _naming(family)
    return tuple(rule.names(*args)) if rule is not None else ()


def known_types(family: Family) -> tuple[str, ...]:
    """What ``layer_type=...`` may be for a config that lists no ``layer_types``."""
    rule, _ = _naming(family)
    known: tuple[str, ...] = ()
    if (rule is not None and rule.local_global) or family.local_theta or family.flat_types or family.rotating_layer_types:
        known = tuple(family.rotating_layer_types or ()) + LOCAL_GLOBAL
    return known + type_names(family)


def per_layer(family: Family) -> bool:
    """True when the family's rule reads layer indices (every layer is checked)."""
    rule, _ = _rule(family.layers)
    return rule is not None and rule.per_layer


def whole_model_reason(family: Family, cfg: ConfigReader) -> str | None:
    """Why no layer of the family's text model rotates (a rule with ``whole``), or None."""
    rule, args = _rule(family.layers)
    if rule is None or not rule.whole or rule.reason is None:
        return None
    return rule.reason(family, cfg, None, None, None, *args)


def rule_state(family: Family, cfg: ConfigReader) -> Any:
    """What the family's rule reads once per config (None for most rules)."""
    rule, args = _rule(family.layers)
    return rule.state(family, cfg, *args) if rule is not None and rule.state is not None else None


def no_rope_reason(family: Family, cfg: ConfigReader, state: Any, index: int | None, layer_type: str | None,
                   layers: Any = "family") -> str | None:
    """Why the family's rules give one layer (or layer type) no RoPE, or None when it rotates (``layers``: an
    inner rule, instead of the family's own)."""
    rule, args = _rule(family.layers if layers == "family" else layers)
    if rule is not None and rule.reason is not None:
        why = rule.reason(family, cfg, state, index, layer_type, *args)
        if why is not None:
            return why or None  # "": the rule makes this layer rotate
    typed = rule.typed(cfg, *args) if rule is not None and rule.typed is not None else True
    if family.rotating_layer_types is not None and typed and layer_type is not None and layer_type not in family.rotating_layer_types:
        return f"{family.label} applies RoPE only in {', '.join(map(repr, family.rotating_layer_types))} layers"
    return None
