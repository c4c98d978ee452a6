"""The standard reader: a configuration and a family's row -> the ingredients of a RopeSpec.

:func:`read_family` reads any row of :data:`~rope_edu.models.registry.FAMILIES` that names no
``read`` of its own: which layers the selection covers and whether they rotate (:mod:`.layers`),
their RoPE parameters (:func:`.rope_types.read_rope`, with the config helpers of
:mod:`.config`), the rotated part of the head, the pair layout, M-RoPE and
what the family's attention adds (the ``extra`` functions below). GPT-J/CodeGen and MiniMind have
readers of their own (``read_gptj``, ``read_minimind``). The page's interpreter follows this module
in ``_ext/model_check/reader.js``, function by function, camelCased (``_rope_for`` is ``ropeFor``);
the functions a row names (an ``extra``, a ``read``) keep their Python names there, as listed in
:data:`rope_edu.models.mirrored.CALLABLES`.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from ..multidim import mrope_axes
from ..scaling import yarn_correction_index, yarn_softmax_scale
from .config import (ConfigReader, RopeBlock, head_dim_from_hidden, no_partial, positive_int, read_head_dim,
                     required_param, rope_block, rotated_dims, rotated_fraction, valid_base)
from .family import Family
from .layers import (LOCAL_GLOBAL, NOT_ATTENTION, select_layer, known_types, layer_types, no_rope_reason, per_layer,
                     rule_state, type_names, whole_model_reason)
from .rope_types import read_rope


#: The key of a layer outside a family's ``scaling_layers`` (:func:`_layer_kind`, :func:`_rope_for`).
_UNSCALED = "unscaled"


def _nested_keys(family: Family, block: Any, types: Sequence[str] | None) -> list[str]:
    """The keys ``rope_parameters`` is nested under (layer types), or [] for a flat dict."""
    if not isinstance(block, Mapping):
        return []
    labels = (set(types or ()) | set(LOCAL_GLOBAL) | set(family.rotating_layer_types or ())
              | set((family.rope_keys or {}).values()) | set(type_names(family)))
    return [k for k, v in block.items() if k in labels and (v is None or isinstance(v, Mapping))]


def _layer_kind(family: Family, cfg: ConfigReader, nested: list[str], state: Any, index: int | None,
                layer_type: str | None) -> tuple[bool, str | None, str]:
    """(uses RoPE, the key of its RoPE parameters, why not) for one layer (or one layer type)."""
    whole = whole_model_reason(family, cfg)
    if whole is not None:
        return False, None, whole
    if layer_type in NOT_ATTENTION:
        return False, None, f"a {layer_type!r} layer has no attention, so no RoPE"
    why = no_rope_reason(family, cfg, state, index, layer_type)
    if why is not None:
        return False, None, why
    if family.scaling_layers is not None and index is not None and not nested:
        listed = cfg.data.get(family.scaling_layers)
        if listed is not None and index not in listed:
            return True, _UNSCALED, ""
    if nested:
        block = cfg.data["rope_parameters"]
        if family.rope_keys is not None:
            layer_type = family.rope_keys.get(layer_type, family.rope_keys.get("*"))  # type: ignore[arg-type]
        if layer_type not in block:
            raise ValueError(f"rope_parameters is nested by layer type ({', '.join(map(repr, nested))}) but has no "
                             f"entry for {layer_type!r}")
        if block[layer_type] is None:
            return False, None, f"rope_parameters[{layer_type!r}] is null: those layers use no RoPE"
        return True, layer_type, ""
    if family.local_theta is not None or family.flat_types is not None:
        return True, layer_type, ""
    return True, None, ""


def _dropped_theta(family: Family, cfg: ConfigReader, block: Mapping[str, Any], where: str, key: str | None) -> None:
    """A base in a field the config class drops: an error beside a different stated base, else a note."""
    for name in family.ignored_theta:
        if not cfg.has(name):
            continue
        value = cfg.data[name]
        if block.get("rope_theta") is not None:
            if valid_base(value, name) != valid_base(block["rope_theta"], f"{where}.rope_theta"):
                raise ValueError(f"the config states different bases: {where}.rope_theta = {block['rope_theta']!r}, "
                                 f"{name} = {value!r} (transformers 5 keeps the first and drops {name})")
            continue
        default = family.theta_default(key)
        if valid_base(value, name) != default:
            cfg.record(name, value, f"is ignored: {family.label}'s config class drops that keyword and keeps its "
                       f"default base {default!r}, which its code then uses", kind="unread")


def _rope_for(family: Family, cfg: ConfigReader, key: str | None, nested: list[str]) -> RopeBlock:
    """The RoPE parameters of layers keyed ``key`` (a layer type, or None when all layers share them)."""
    common: dict[str, Any] = dict(rename=family.rename, allowed=family.allowed_rope_types, top_level_original=family.top_level_original,
                  retype=family.retype, note=family.allowed_rope_types_note)
    source = f"{family.label} config default_theta"
    if key == _UNSCALED:
        # a layer the family's scaling_layers leaves out: the same base, no scaling (Molmo 2's unscaled rotary module)
        rope = _rope_for(family, cfg, None, nested)
        return RopeBlock(rope.base, "default", {}, f"(not in {family.scaling_layers})", {**rope.block, "rope_type": "default"})
    if nested:
        where = f"rope_parameters[{key!r}]"
        block = cfg.data["rope_parameters"][key]
        if not isinstance(block, Mapping):
            raise TypeError(f"{where} must be a dict, got {block!r}")
        block = dict(block)
        if "type" in block and "rope_type" not in block:
            block["rope_type"] = block.pop("type")
        # v4 names for the same values must agree with the nested ones
        keys = tuple(k for k in family.theta_keys if k not in family.ignored_theta)
        if family.local_theta is not None and key == family.local_theta[1]:
            keys = (family.local_theta[0],)
        elif family.flat_types is not None and key not in family.flat_types:
            keys = ()  # a v4 rope_theta does not reach these layers (see flat_types)
        _dropped_theta(family, cfg, block, where, key)
        rope = read_rope(cfg, theta_keys=keys, block=block, where=where, default_theta=family.theta_default(key),
                          theta_source=source, nested=True, **common)
        return rope
    if family.local_theta is not None and key == family.local_theta[1]:
        # config.json as written by transformers 4: rope_theta and rope_scaling belong to the other
        # layers; these use plain RoPE with their own base
        return read_rope(cfg, theta_keys=(family.local_theta[0],), block={"rope_type": "default"},
                          where=f"({key} layers)", default_theta=family.theta_default(key), theta_source=source)
    if family.flat_types is not None and key is not None and key not in family.flat_types:
        # the config class gives these layers plain RoPE at its default base, whatever rope_theta says
        base = family.theta_default(key)
        stated = [k for k in family.theta_keys if cfg.has(k)]
        note = (f" (it ignores {stated[0]} = {cfg.data[stated[0]]!r} for them)" if stated
                and float(cfg.data[stated[0]]) != base else "")
        cfg.record(f"{key} layers: rope_theta", base, f"({family.label} config class; a flat rope_theta/rope_scaling "
                   f"reaches {', '.join(family.flat_types)} layers only){note}", kind="fixed")
        return RopeBlock(base, "default", {}, f"({key} layers)", {"rope_type": "default", "rope_theta": base})
    block, where = rope_block(cfg, family.ignored_scaling, family.label)
    _dropped_theta(family, cfg, block, where, key)
    if family.flat_types is not None and key is not None:
        # the config class nests a v4 flat block under these layer types (OLMo 3): read it as nested
        keys = tuple(k for k in family.theta_keys if k not in family.ignored_theta)
        return read_rope(cfg, theta_keys=keys, block=block, where=where,
                          default_theta=family.theta_default(key), theta_source=source, nested=True, **common)
    if family.default_block is not None and (not block or set(block) <= {"rope_theta"}):
        cfg.record("rope_parameters", dict(family.default_block), f"{family.label} config default")
        block = {**family.default_block, **block}
    keys = tuple(k for k in family.theta_keys if k not in family.ignored_theta)
    return read_rope(cfg, theta_keys=keys, block=block, where=where,
                      default_theta=family.theta_default(key), theta_source=source, **common)


def _head_size(family: Family, cfg: ConfigReader) -> int:
    if family.head == "split":
        return head_dim_from_hidden(cfg)
    if family.head != "head_dim":
        return cfg.size(family.head)
    if family.head_default is not None and "head_dim" not in cfg.data:
        # the config class's default, not hidden_size // num_attention_heads (Gemma 3 4B: 256, not 320)
        value = cfg.default("head_dim", family.head_default, f"{family.label} config class default")
        return positive_int(value, "head_dim")
    return read_head_dim(cfg)


def _rotary_part(family: Family, cfg: ConfigReader, rope: RopeBlock) -> dict[str, Any]:
    """head_dim, rotary_dim, rotary_offset (and the proportional fields) from the family's rule."""
    if family.rotary == "mla":
        # the rotary part is qk_rope_head_dim (a config's partial_rotary_factor, where it states one, is
        # qk_rope_head_dim over the whole query head; DeepseekV3Config sets head_dim to the rotary part)
        rope_dim, nope_dim = cfg.size("qk_rope_head_dim"), cfg.size("qk_nope_head_dim")
        return dict(head_dim=nope_dim + rope_dim, rotary_dim=rope_dim, rotary_offset=nope_dim)
    head_dim = _head_size(family, cfg)
    if family.rotary == "head":
        no_partial(cfg, rope)
        return dict(head_dim=head_dim, rotary_dim=head_dim)
    if family.rotary == "rotary_dim":
        rotary_dim = positive_int(cfg.require("rotary_dim"), "rotary_dim")
        if rotary_dim % 2 or rotary_dim > head_dim:
            raise ValueError(f"rotary_dim must be an even number of dims <= head_dim = {head_dim}, got {rotary_dim}")
        return dict(head_dim=head_dim, rotary_dim=rotary_dim)
    fraction, label = rotated_fraction(cfg, rope, family.fraction_keys, family.default_fraction,
                                f"{family.label} config default")
    if family.rotary_dim_key is not None and cfg.has(family.rotary_dim_key):
        legacy = positive_int(cfg.data[family.rotary_dim_key], family.rotary_dim_key)
        stated = label in cfg.data or label.startswith(rope.where)
        if stated and int(head_dim * fraction) != legacy:
            raise ValueError(f"the config states {family.rotary_dim_key} = {legacy} and {label} = {fraction} "
                             f"(= {int(head_dim * fraction)} of head_dim {head_dim} dims); they must agree")
        cfg.forget(label)
        fraction, label = legacy / head_dim, family.rotary_dim_key
    if rope.rope_type == "proportional":
        # Gemma 4's global layers: the table covers the whole head (pairs (i, i + head_dim/2)); the
        # first int(fraction * head_dim) // 2 pairs turn at base**(-2i/head_dim), the others not at all
        pairs = int(fraction * head_dim // 2)
        if pairs <= 0:
            raise ValueError(f"{label} = {fraction} leaves no rotating pair in a head of {head_dim}")
        return dict(head_dim=head_dim, rotary_dim=head_dim, rotating_pairs=pairs)
    rotary_dim = rotated_dims(head_dim, fraction, label)
    return dict(head_dim=head_dim, rotary_dim=rotary_dim,
                rotary_offset=head_dim - rotary_dim if family.rotary_at == "end" else 0)


def _interleaved_section(section: Any, pairs: int) -> tuple[int, int, int]:
    """The section an interleaved M-RoPE family's code uses over ``pairs`` pairs when ``section`` does not
    add up to them: transformers' Qwen3-VL and Qwen3.5 give height the pairs ``1, 4, 7, ...`` below
    ``3 * section[1]`` and width ``2, 5, 8, ...`` below ``3 * section[2]`` (both cut at ``pairs``), and time
    every other pair; ``section[0]`` is never read. The result adds up to ``pairs`` and gives the same axes."""
    height = len(range(1, min(3 * int(section[1]), pairs), 3))
    width = len(range(2, min(3 * int(section[2]), pairs), 3))
    return (pairs - height - width, height, width)


def _nope_parts(family: Family, cfg: ConfigReader, nested: list[str], layer_type: str | None) -> tuple[RopeBlock, dict[str, Any]]:
    """A layer without RoPE: the RoPE the config states for it or, where it states none (or the family's
    text model rotates nowhere), the config class's default (:meth:`RopeSpec.apply` leaves such a layer
    alone; the rest is for reference)."""
    whole = whole_model_reason(family, cfg) is not None
    if whole:
        key = None
    elif nested:
        if family.rope_keys is not None:
            layer_type = family.rope_keys.get(layer_type, family.rope_keys.get("*"))  # type: ignore[arg-type]
        key = layer_type if cfg.data["rope_parameters"].get(layer_type) is not None else None
    else:
        key = layer_type if (family.local_theta or family.flat_types) else None
    if not whole and (not nested or key is not None):
        rope = _rope_for(family, cfg, key, nested)
        return rope, _rotary_part(family, cfg, rope)
    rope = RopeBlock(family.theta_default(layer_type), "default", {}, "(no RoPE)", {})
    if family.rotary == "mla":
        nope_dim, rope_dim = cfg.size("qk_nope_head_dim"), cfg.size("qk_rope_head_dim")
        return rope, dict(head_dim=nope_dim + rope_dim, rotary_dim=rope_dim, rotary_offset=nope_dim)
    head_dim = _head_size(family, cfg)
    return rope, dict(head_dim=head_dim, rotary_dim=head_dim)


def read_family(family: Family, cfg: ConfigReader, layer_type: Any, layer: Any) -> dict[str, Any]:
    """The standard reader: a configuration and a family's data -> RopeSpec ingredients."""
    types = layer_types(family, cfg, layer is not None)
    layer_type, layer = select_layer(cfg, layer_type, layer, types, known=known_types(family))
    nested = _nested_keys(family, cfg.data.get("rope_parameters"), types)
    if family.nested_only and not nested:
        raise ValueError(
            f"the {cfg.model_type!r} config has no rope_parameters nested by layer type; {family.label}'s config "
            "class fills in per-layer-type defaults (base, scaling, rotated fraction) that rope_spec does not guess: "
            "pass the config object or its to_dict()"
        )
    state = rule_state(family, cfg)
    per_type = bool(nested) or family.local_theta is not None or family.flat_types is not None
    # the layers the selection covers, and what each does
    if (types is None and layer is None and (per_layer(family) or family.scaling_layers is not None)
            and cfg.has("num_hidden_layers")):
        types = [None] * cfg.size("num_hidden_layers")  # type: ignore[list-item]
    if layer is not None:
        chosen = [(layer, layer_type)]
    elif types is not None:
        chosen = [(i, t) for i, t in enumerate(types) if layer_type is None or t == layer_type]
    else:
        chosen = [(None, layer_type)]
    kinds: dict[tuple[bool, str | None, str], list[int | None]] = {}
    for i, t in chosen:
        if (per_type or family.rotating_layer_types is not None) and t is None:
            raise ValueError(
                f"layer_type is required for {family.label}: its layer types use different RoPE settings and this "
                f"config lists no layer_types; pass layer_type=... ({', '.join(map(repr, nested or LOCAL_GLOBAL))}) "
                "or layer=index"
            )
        kinds.setdefault(_layer_kind(family, cfg, nested, state, i, t), []).append(i)
    if len(kinds) > 1:
        where = "; ".join(f"layers {idx if len(idx) < 9 else str(idx[:8])[:-1] + ', ...]'}: "
                          + (f"RoPE ({key})" if uses and key else "RoPE" if uses else "no RoPE")
                          for (uses, key, _), idx in kinds.items())
        raise ValueError(
            f"layers of this {cfg.model_type!r} config differ ({where}); pass layer=index "
            + ("or layer_type=..." if types is not None else "") + " to choose one (layer_type is required when "
            "the layer types differ)"
        )
    (uses_rope, key, why), = kinds
    cfg = _overlay(_type_head(family, cfg, chosen), [i for i, _ in chosen])
    if uses_rope:
        rope = _rope_for(family, cfg, key, nested)
        parts = _rotary_part(family, cfg, rope)
    else:
        rope, parts = _nope_parts(family, cfg, nested, layer_type)
        parts["no_rope_reason"] = why
    layout, output = family.layout, family.output_layout
    if family.interleave is not None:
        name, default = family.interleave
        flag = cfg.default(name, default, f"{family.label} config default")
        layout, output = ("interleaved", "half") if flag else ("half", "half")
    parts.update(layout=layout, output_layout=output or layout, rope=rope, qk_norm=family.qk_norm,
                 layer_type=layer_type, layer=layer, uses_rope=uses_rope)
    if family.mrope is not None and uses_rope:
        assignment, default_section = family.mrope
        section = rope.block.get("mrope_section")
        if section is None:
            section = default_section
            cfg.record(f"{rope.where}.mrope_section", list(default_section), "the family's rotary embedding default")
        pairs = parts["rotary_dim"] // 2
        mrope_axes(section)  # a section's checks: 3 non-negative integers, not all zero
        if assignment == "interleaved" and sum(section) != pairs:
            stated, section = section, _interleaved_section(section, pairs)
            cfg.record(f"{rope.where}.mrope_section", list(stated),
                       f"does not add up to rotary_dim // 2 = {pairs}: as the family's code does, height takes "
                       f"pairs 1, 4, 7, ... below {3 * stated[1]}, width 2, 5, 8, ... below {3 * stated[2]}, "
                       f"time every other pair, which is the section {list(section)}", kind="unread")
        if mrope_axes(section, assignment=assignment).size != pairs:
            raise ValueError(f"{rope.where}.mrope_section {list(section)} must add up to "
                             f"rotary_dim // 2 = {pairs} (the family's code splits the pairs by it)")
        parts.update(mrope_section=tuple(int(v) for v in section), mrope_assignment=assignment)
    if family.clockwise:
        parts["clockwise"] = True
    if family.layer_notes and layer_type in family.layer_notes:
        parts["note"] = family.layer_notes[layer_type]
    if family.extra is not None:
        parts.update(family.extra(cfg, parts))
    return parts


def _type_head(family: Family, cfg: ConfigReader, chosen: list[tuple[int | None, str | None]]) -> ConfigReader:
    """The per-layer ``head_dim`` a config class builds for some layer types (:attr:`Family.type_head`:
    Gemma 4's ``global_head_dim`` for ``full_attention`` layers), where the config has no
    ``per_layer_config`` of its own (a config.json as released)."""
    if family.type_head is None or cfg.data.get("per_layer_config") is not None:
        return cfg
    types = {t for _, t in chosen}
    hit = {t for t in types if t is not None and t in family.type_head}
    if not hit:
        return cfg
    if len(types) > 1:
        raise ValueError(f"the selected layers of this {cfg.model_type!r} config have different head sizes "
                         f"({', '.join(sorted(map(str, types)))}); pass layer=index or layer_type=...")
    (layer_type,) = hit
    name, default = family.type_head[layer_type]
    value = positive_int(cfg.default(name, default, f"{family.label} config class default"), name)
    return cfg.derive({**cfg.data, "head_dim": value})


def _overlay(cfg: ConfigReader, layers: list[int | None]) -> ConfigReader:
    """``per_layer_config`` (transformers 5: per-layer overrides such as Gemma 4's global ``head_dim``)
    applied for the selected layers, which must agree."""
    table = cfg.data.get("per_layer_config")
    if not table or layers == [None]:
        return cfg
    if not isinstance(table, Mapping):
        raise TypeError(f"per_layer_config must be a dict of per-layer overrides, got {table!r}")
    found = [dict(table.get(str(i), table.get(i)) or {}) for i in layers if i is not None]
    if any(f != found[0] for f in found):
        raise ValueError("per_layer_config gives the selected layers different settings; pass layer=index")
    if not found[0]:
        return cfg
    return cfg.derive({**cfg.data, **found[0]})


# --- what some attention layers add (shared rules) -------------------------------------------------


def llama4_extra(cfg: ConfigReader, parts: dict[str, Any]) -> dict[str, Any]:
    """Llama 4: L2 QK-norm after RoPE (RoPE layers); NoPE layers scale queries by a temperature."""
    qk = bool(cfg.class_default("use_qk_norm"))
    out: dict[str, Any] = {"qk_norm": "after_rope" if (qk and parts["uses_rope"]) else "none"}
    if not parts["uses_rope"] and cfg.class_default("attn_temperature_tuning"):
        out["temperature_tuning"] = (float(cfg.class_default("floor_scale")), float(cfg.class_default("attn_scale")))
    return out


#: Beam's NoPE query scale ``(length, exponent)``: constants of its modeling code (``compute_attention_scaling``
#: in transformers 5.24), not config fields; the page's interpreter holds the same two numbers.
BEAM_QUERY_POWER = (2048.0, 0.1)


def beam_extra(cfg: ConfigReader, parts: dict[str, Any]) -> dict[str, Any]:
    """Beam: NoPE layers multiply queries by ``(1 + (m + 1) / length) ** exponent``."""
    return {} if parts["uses_rope"] else {"query_power": BEAM_QUERY_POWER}


def mla_softmax_extra(cfg: ConfigReader, parts: dict[str, Any]) -> dict[str, Any]:
    """DeepSeek-style attention: ``scaling = qk_head_dim**-0.5 * mscale(factor, mscale_all_dim)**2``
    whenever ``rope_type`` is not "default" and ``mscale_all_dim`` is set (1 for factor <= 1)."""
    rope: RopeBlock = parts["rope"]
    all_dim = rope.block.get("mscale_all_dim")
    if not parts["uses_rope"] or rope.rope_type == "default" or not all_dim:
        return {}
    factor = float(required_param(rope.block, "factor", rope.where))
    return {"softmax_scale_factor": 1.0 if factor <= 1 else yarn_softmax_scale(factor, all_dim)}


def query_scale_extra(cfg: ConfigReader, parts: dict[str, Any]) -> dict[str, Any]:
    """Ministral 3 / Mistral 4: after RoPE, queries are multiplied by
    ``1 + llama_4_scaling_beta * ln(1 + floor(position / original_max_position_embeddings))``."""
    rope: RopeBlock = parts["rope"]
    if not parts["uses_rope"]:
        return {}
    beta = rope.block.get("llama_4_scaling_beta")
    if beta is None:
        raise ValueError(f"{rope.where} has no llama_4_scaling_beta, which {cfg.model_type!r} attention multiplies "
                         "into its query scale (transformers fails without it)")
    length = rope.block.get("original_max_position_embeddings")
    if length is None:
        length = cfg.require("original_max_position_embeddings", " (the query scale's length)")
    return {"query_scale": (float(positive_int(length, "original_max_position_embeddings")), float(beta))}


def mla_query_scale_extra(cfg: ConfigReader, parts: dict[str, Any]) -> dict[str, Any]:
    return {**mla_softmax_extra(cfg, parts), **query_scale_extra(cfg, parts)}


# --- family readers for code outside the standard rules ----------------------------------------


def read_gptj(cfg: ConfigReader, layer_type: Any, layer: Any) -> dict[str, Any]:
    layer_type, layer = select_layer(cfg, layer_type, layer, None)
    for name in ("rope_theta", "rope_scaling", "rope_parameters"):
        if cfg.has(name):
            raise ValueError(f"{name} is set, but GPT-J's code has no such field: its base is fixed at 10000 "
                             "and it has no scaling")
    hidden = "n_embd" if cfg.has("n_embd") else "hidden_size"
    heads = "n_head" if cfg.has("n_head") else "num_attention_heads"
    head_dim = head_dim_from_hidden(cfg, hidden, heads)
    if "rotary_dim" in cfg.data and cfg.data["rotary_dim"] is None:
        raise ValueError("rotary_dim is None: GPT-J's code then builds its table over the whole hidden size "
                         "(n_embd), which only fits a single head; give rotary_dim")
    rotary_dim = positive_int(cfg.class_default("rotary_dim"), "rotary_dim")
    if rotary_dim % 2 or rotary_dim > head_dim:
        raise ValueError(f"rotary_dim must be an even number of dims <= head_dim = {head_dim}, got {rotary_dim}")
    positions = cfg.data.get("n_positions", cfg.data.get("max_position_embeddings"))
    if positions is None:
        positions = cfg.class_default("n_positions")
    rope = RopeBlock(10000.0, "default", {}, "(fixed in GPT-J's code)", {})
    return dict(head_dim=head_dim, rotary_dim=rotary_dim, layout="interleaved", rope=rope,
                max_positions=positive_int(positions, "n_positions"), layer_type=layer_type, layer=layer)


def read_minimind(cfg: ConfigReader, layer_type: Any, layer: Any) -> dict[str, Any]:
    if layer_type is not None or layer is not None:
        select_layer(cfg, layer_type, layer, None)
    for old in ("dim", "n_heads"):
        if cfg.has(old) and not cfg.has("hidden_size"):
            raise ValueError(
                f"field {old!r}: this looks like the older MiniMind LMConfig (dim, n_heads), whose code rotates "
                "interleaved pairs with a fixed base; rope_spec reads the MiniMindConfig of model_minimind.py "
                "(hidden_size, num_attention_heads, rope_theta)"
            )
    head_dim = read_head_dim(cfg)  # MiniMindConfig: head_dim, else hidden_size // num_attention_heads
    base = valid_base(cfg.require("rope_theta", " (MiniMind is not in transformers: no documented default)"),
                 "rope_theta")
    scaling = cfg.data.get("rope_scaling")
    if scaling is None and cfg.data.get("inference_rope_scaling"):
        raise ValueError("inference_rope_scaling is true but the config has no rope_scaling dict")
    if scaling is None:
        rope = RopeBlock(base, "default", {}, "rope_scaling", {})
    else:
        rope = _minimind_yarn(cfg, dict(scaling), base, head_dim)
    return dict(head_dim=head_dim, rotary_dim=head_dim, layout="half", rope=rope, qk_norm="before_rope")


def _minimind_yarn(cfg: ConfigReader, block: dict[str, Any], base: float, dim: int) -> RopeBlock:
    where = "rope_scaling"
    kind = block.get("type", block.get("rope_type"))
    if kind != "yarn":
        raise ValueError(f"unknown rope_scaling.type {kind!r} for MiniMind; its code implements only 'yarn'")
    # MiniMind's own YaRN: every field stated (its code's defaults differ from transformers', e.g. its
    # attention_factor defaults to 1.0), applied only when max_position_embeddings exceeds the original.
    names = ("factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "attention_factor")
    params = {name: required_param(block, name, where) for name in names}
    if cfg.size("max_position_embeddings") <= positive_int(params["original_max_position_embeddings"],
                                                            "rope_scaling.original_max_position_embeddings"):
        return RopeBlock(base, "default", {}, where, block)
    # MiniMind clips the ramp's end at pair dim//2 - 1, transformers (and rope_edu.scaling) at dim - 1;
    # they agree when the unclipped end index lies in [0, dim//2 - 1]. Refuse rather than differ.
    original = params["original_max_position_embeddings"]
    end = math.ceil(yarn_correction_index(float(params["beta_slow"]), dim, base, original))
    if not 0 <= end <= dim // 2 - 1:
        raise ValueError(
            f"rope_scaling.beta_slow = {params['beta_slow']}: MiniMind's YaRN ramp would end at pair {end}, outside "
            f"[0, {dim // 2 - 1}], where its clipping differs from transformers'; not supported"
        )
    params["truncate"] = True
    return RopeBlock(base, "yarn", params, where, block)
