"""What the "Check your model" page says about a config beyond :func:`rope_edu.rope_spec`, in Python.

The page (``book/model_check.md``) shows, next to ``describe()``, where the head size comes from, the
layer plan, the pairs against the model's training and maximum context, and the traps a config falls
into. Its browser code (``_ext/model_check/checks.js`` and ``page.js``) writes them; this module
writes the same sentences from the same rules, so that the command line (``rope-edu check``,
:mod:`rope_edu.cli`) says what the page says. ``tests/test_model_check.py`` feeds every swept and
published config to both and requires the same warnings, layer plan and head-size sentence.

::

    from rope_edu.model_check import contexts, layer_plan, pair_table, warnings
    spec = rope_spec(config)
    for w in warnings(config, spec):        # [{"id", "title", "text", "parts"}]
        print(w["title"], w["text"])
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import numpy as np

from . import models as M
from .models import FAMILIES, MODEL_TYPES, RopeSpec, rope_spec

__all__ = ["MAX_LAYERS", "BF16_ANGLE", "family_of", "layer_count", "ranges", "layer_summary", "layer_plan",
           "contexts", "plain_inv_freq", "pair_table", "pairs_summary", "head_source", "warnings", "default_select",
           "grouped", "fmt_g"]

#: Layers listed in the plan (a config with more is summarised by its first ones), as on the page.
MAX_LAYERS = 512
#: The angle error (rad) from which the bf16 warning counts positions.
BF16_ANGLE = 0.1
_TWO_PI = 2 * math.pi


# --- numbers as the page writes them -------------------------------------------------------------


def grouped(x: float) -> str:
    """A number as the page's ``toLocaleString("en-US")`` writes it: 131,072; 1,234.5 (at most 3 decimals)."""
    x = float(x)
    if not math.isfinite(x):
        return "∞" if x > 0 else "-∞" if x < 0 else "NaN"
    if x == int(x):
        return f"{int(x):,}"
    return f"{x:,.3f}".rstrip("0").rstrip(".")


def fmt_g(x: float, p: int = 6) -> str:
    """``format(x, f".{p}g")`` (what the page's ``fmtG`` imitates)."""
    return format(float(x), f".{p}g")


def _num(x: Any) -> str:
    """A JSON number as JavaScript prints it inside a sentence (32.0 -> 32)."""
    if isinstance(x, float) and math.isfinite(x) and x == int(x):
        return str(int(x))
    return str(x)


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _given(v: Any) -> bool:
    """JavaScript's truthiness of a JSON value (an empty list or object counts: the page's test)."""
    return v is not None and v is not False and v != 0 and v != ""


def _first(data: Mapping[str, Any], *keys: str) -> Any:
    """The first of ``keys`` that ``data`` states (not None), else None (JavaScript's ``a ?? b``)."""
    for key in keys:
        if data.get(key) is not None:
            return data[key]
    return None


def _spec(spec: Any, name: str = "spec", optional: bool = False) -> RopeSpec | None:
    if spec is None and optional:
        return None
    if not isinstance(spec, RopeSpec):
        raise TypeError(f"{name} must be a RopeSpec (from rope_spec){' or None' if optional else ''}, "
                        f"got {type(spec).__name__}")
    return spec


def _context(ctx: Any) -> Mapping[str, Any]:
    if not isinstance(ctx, Mapping) or not {"trained", "maximum"} <= set(ctx):
        raise TypeError(f"ctx must be the dict contexts() returns (with 'trained' and 'maximum'), got {ctx!r}")
    return ctx


# --- the family and the layers --------------------------------------------------------------------


def family_of(config: Any) -> tuple[dict[str, Any] | None, Any, M.Family | None]:
    """The language model's config (a multimodal wrapper's ``text_config``), its model_type and family row.

    Returns ``(config, None, None)`` where the wrapper lacks its language model, and ``(None, None, None)``
    for anything but a mapping (the page's ``familyOf``).
    """
    if not isinstance(config, Mapping):
        return None, None, None
    try:
        data = M.unwrap(config)
    except (TypeError, ValueError):  # a wrapper without its language model
        return dict(config), None, None
    model_type = data.get("model_type")
    row: str | None = MODEL_TYPES.get(model_type) if isinstance(model_type, str) else None
    return data, model_type, FAMILIES[row] if row else None


def layer_count(data: Mapping[str, Any] | None) -> int | None:
    """Layer count of a config (``num_hidden_layers``, ``n_layer``, ``num_layers``, or its ``layer_types``)."""
    if not isinstance(data, Mapping):
        return None
    for key in ("num_hidden_layers", "n_layer", "num_layers"):
        if _is_int(data.get(key)) and data[key] > 0:
            return int(data[key])
    return len(data["layer_types"]) if isinstance(data.get("layer_types"), list) else None


def ranges(indices: list[int]) -> str:
    """Layer indices as short ranges: ``[0, 1, 2, 4]`` -> ``"0–2, 4"``."""
    if not isinstance(indices, (list, tuple)) or not all(_is_int(i) for i in indices):
        raise TypeError(f"indices must be a list of ints in increasing order, got {indices!r}")
    out, k = [], 0
    while k < len(indices):
        j = k
        while j + 1 < len(indices) and indices[j + 1] == indices[j] + 1:
            j += 1
        out.append(f"{indices[k]}–{indices[j]}" if j > k else f"{indices[k]}")
        k = j + 1
    return ", ".join(out)


def layer_summary(spec: RopeSpec) -> str:
    """One line for a layer's RoPE: what the plan groups layers by."""
    _spec(spec)
    lead = f"{spec.layer_type}: " if spec.layer_type else ""
    if not spec.uses_rope:
        return f"{lead}no RoPE ({spec.no_rope_reason or 'NoPE layer'})"
    scaling = "no scaling" if spec.rope_type == "default" else f"{spec.rope_type} scaling"
    return f"{lead}RoPE on {spec.rotary_dim} of {spec.head_dim} dims, base {grouped(spec.base)}, {scaling}"


def layer_plan(config: Any) -> dict[str, Any] | None:
    """Every layer's RoPE, grouped as the page's layer plan groups it.

    Returns
    -------
    dict or None
        ``count`` (layers), ``shown`` (at most :data:`MAX_LAYERS`), ``types`` (each layer's type or None),
        ``groups`` (``[{"layers": [...], "summary": str}]``, a layer rope_spec refuses under
        ``"refused: <message>"``) and ``differ``; None without a layer count or a known family.
    """
    data, _, family = family_of(config)
    n = layer_count(data) if family is not None else None
    if not n:
        return None
    groups: dict[str, list[int]] = {}
    shown = min(n, MAX_LAYERS)
    types: list[str | None] = []
    for i in range(shown):
        try:
            spec = rope_spec(dict(config), layer=i)
            types.append(spec.layer_type)
            summary = layer_summary(spec)
        except (ValueError, TypeError) as exc:
            types.append(None)
            summary = f"refused: {exc}"
        groups.setdefault(summary, []).append(i)
    listed = [{"layers": layers, "summary": summary} for summary, layers in groups.items()]
    return {"count": n, "shown": shown, "types": types, "groups": listed, "differ": len(listed) > 1}


def default_select(config: Any, plan: dict[str, Any] | None = None) -> dict[str, int]:
    """The layer the page opens a config at: where layers differ, the first one that uses RoPE; else none."""
    plan = layer_plan(config) if plan is None else plan
    if plan and plan["differ"]:
        first = next((g for g in plan["groups"] if "RoPE on" in g["summary"]), plan["groups"][0])
        return {"layer": first["layers"][0]}
    return {}


# --- contexts and pairs --------------------------------------------------------------------------


def contexts(data: Mapping[str, Any], spec: RopeSpec | None, published: Any = None) -> dict[str, Any]:
    """The training and maximum context of a model: from its published entry, else from its config.

    Returns
    -------
    dict
        ``trained`` and ``maximum`` (int or None) and ``source`` (``{"trained": str, "maximum": str}``,
        where each comes from, in words).
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"data must be a config dict, got {type(data).__name__}")
    _spec(spec, optional=True)
    params = dict(spec.rope_params) if spec is not None else {}
    mpe = data.get("max_position_embeddings") if _is_int(data.get("max_position_embeddings")) else \
        data.get("n_positions") if _is_int(data.get("n_positions")) else spec.max_positions if spec is not None else None
    original = params.get("original_max_position_embeddings")
    # a type that holds the loaded length there (dynamic NTK) says nothing of the trained context
    original = original if _is_int(original) and spec is not None and \
        spec.loaded_seq_len != "original_max_position_embeddings" else None
    p_trained = getattr(published, "trained", None)
    p_extended = getattr(published, "extended", None)
    trained = next((x for x in (p_trained, original, mpe) if x is not None), None)
    maximum = next((x for x in (p_extended, mpe, trained) if x is not None), None)
    source = {
        "trained": "as its authors report it" if p_trained else "from original_max_position_embeddings" if original
        else "from max_position_embeddings: the config states no shorter training length, so this may overstate it"
        if mpe else "",
        "maximum": "as its authors report it" if p_extended else "from max_position_embeddings" if mpe else "",
    }
    return {"trained": trained, "maximum": max(maximum or 0, trained or 0) or None, "source": source}


def plain_inv_freq(spec: RopeSpec) -> np.ndarray:
    """The frequencies ``spec`` would have without its scaling (proportional RoPE: its turning pairs, undivided)."""
    _spec(spec)
    if spec.rotating_pairs is not None:
        plain = dataclasses.replace(spec, rope_type="proportional", rope_params={})
    else:
        plain = dataclasses.replace(spec, rope_type="default", rope_params={})
    return plain.inv_freq()


def pair_table(spec: RopeSpec, ctx: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every pair's frequency, wavelength, ratio to plain RoPE, and turns over the training and maximum context.

    Turns over the training context are at the unscaled frequency (what pre-training saw,
    :math:`L\\theta_i/2\\pi`); turns at the maximum context at the frequency the model uses there (a
    length-dependent scaling at that length).
    """
    _spec(spec)
    maximum, trained = _context(ctx)["maximum"], ctx["trained"]
    inv = spec.inv_freq(maximum) if spec.depends_on_length and maximum else spec.inv_freq()
    plain = plain_inv_freq(spec)
    rows = []
    for i, (theta, p) in enumerate(zip(inv.tolist(), plain.tolist())):
        ratio = 1.0 if p == 0 else theta / p
        rows.append({"pair": i, "inv_freq": theta, "wavelength": math.inf if theta == 0 else _TWO_PI / theta,
                     "ratio": ratio, "moved": abs(ratio - 1) > 1e-12,
                     "turns_trained": trained * p / _TWO_PI if trained else None,
                     "turns_max": maximum * theta / _TWO_PI if maximum else None})
    return rows


def _tokens(n: int | None) -> str:
    return grouped(n) if n else "unknown"


def pairs_summary(spec: RopeSpec, ctx: Mapping[str, Any], rows: list[dict[str, Any]] | None = None) -> list[str]:
    """The sentences above the page's table of pairs (one list item per sentence)."""
    _spec(spec)
    _context(ctx)
    rows = pair_table(spec, ctx) if rows is None else rows
    done = sum(r["turns_trained"] is not None and r["turns_trained"] >= 1 for r in rows)
    moved = sum(r["moved"] for r in rows)
    still = sum(r["inv_freq"] == 0 for r in rows)
    trained, maximum, source = ctx["trained"], ctx["maximum"], ctx["source"]
    parts = [f"Training context {_tokens(trained)} tokens ({source['trained']}); maximum context "
             f"{_tokens(maximum)} tokens ({source['maximum']})." if trained else
             "The config states no context length (max_position_embeddings), so the turns over the training "
             "context are left out."]
    if trained:
        parts.append(f"{done} of {len(rows)} pairs complete a full turn within the training context (at their "
                     f"unscaled frequency, as in pre-training); the other {len(rows) - done - still} see only an arc "
                     "of their circle in training.")
    if spec.rope_type == "default":
        parts.append("No scaling: every pair turns at b^(−2i/d).")
    elif spec.depends_on_length and maximum:
        parts.append(f"The {spec.rope_type} scaling moves {moved} of {len(rows)} pairs (ratio ≠ 1). It depends on the "
                     f"length: the table shows the frequencies at the maximum context, {_tokens(maximum)} tokens "
                     "(up to the original context the model uses other ones; describe() above gives those).")
    else:
        parts.append(f"The {spec.rope_type} scaling moves {moved} of {len(rows)} pairs (ratio ≠ 1).")
    if still:
        parts.append(f"{still} pairs do not turn at all (proportional RoPE).")
    return parts


def head_source(config: Any, spec: RopeSpec | None) -> str:
    """Where the layer's ``head_dim`` comes from, in words (describe() names it only when a default is used)."""
    _spec(spec, optional=True)
    data, _, family = family_of(config)
    if data is None or family is None or spec is None:
        return ""
    d = spec.head_dim
    if family.rotary == "mla":
        return (f"head_dim {d} = qk_nope_head_dim {data.get('qk_nope_head_dim')} + qk_rope_head_dim "
                f"{data.get('qk_rope_head_dim')} (multi-head latent attention: a head_dim field, where the config has "
                "one, is the rotary part only).")
    hidden, heads = _first(data, "hidden_size", "n_embd"), _first(data, "num_attention_heads", "n_head")
    split = f"hidden_size / num_attention_heads = {_num(hidden)} / {_num(heads)}"
    if family.read or family.head == "split":
        return f"head_dim {d} = {split}: this family's code always computes it so."
    if family.head != "head_dim":
        return f"head_dim {d} is the config's {family.head}."
    typed = family.type_head.get(spec.layer_type) if family.type_head and spec.layer_type else None
    per_layer = _given(data.get("per_layer_config"))
    if typed and not per_layer:
        lead = f"head_dim {d} is {typed[0]}" + (" (the config class default)" if typed[0] not in data else "")
        return f"{lead}: {family.label}'s {spec.layer_type} layers have heads of their own size."
    if _is_int(data.get("head_dim")) and data["head_dim"] == d:
        return f"head_dim {d} is stated in the config (head_dim)."
    if d != data.get("head_dim") and per_layer:
        return f"head_dim {d} comes from per_layer_config for this layer."
    if "head_dim" not in data and family.head_default is not None:
        return f"head_dim {d} is the config class default: the config leaves head_dim out."
    return f"head_dim {d} = {split} (the config states no head_dim)."


# --- the traps ---------------------------------------------------------------------------------


def _bf16(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to bf16 (nearest, ties to even), as ``model.to(torch.bfloat16)`` rounds them."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) & np.uint64(0xFFFF0000)
    return (u & 0xFFFFFFFF).astype(np.uint32).view(np.float32)


def _block(value: Any) -> dict[str, Any] | None:
    """A rope block with transformers 4's ``type`` read as ``rope_type``; None for anything but a mapping."""
    if not isinstance(value, Mapping):
        return None
    out = dict(value)
    if "type" in out and "rope_type" not in out:
        out["rope_type"] = out.pop("type")
    return out


def _schemas_warning(data: Mapping[str, Any], spec: RopeSpec | None) -> dict[str, Any] | None:
    params, scaling = _block(data.get("rope_parameters")), _block(data.get("rope_scaling"))
    if params is None:
        return None
    nested = any(isinstance(v, Mapping) for v in params.values())
    parts: list[str] = []
    if scaling is not None:
        clash = [k for k in params if k in scaling and params[k] != scaling[k]]
        lost = [k for k in params if k not in scaling]
        parts.append("This config states its RoPE twice: rope_parameters (transformers 5's field) and rope_scaling "
                     "(transformers 4's). transformers 5 keeps rope_scaling as the whole description and drops the rest "
                     "of rope_parameters; transformers 4 never reads rope_parameters.")
        if clash:
            pairs = [f"rope_parameters.{k} = {params[k]!r} but rope_scaling.{k} = {scaling[k]!r}" for k in clash]
            parts.append(f"They disagree: {'; '.join(pairs)}.")
        if "rope_theta" in lost and not nested:
            if data.get("rope_theta") is not None:
                source = f"the top-level rope_theta = {data['rope_theta']!r}."
            elif spec is not None and spec.uses_rope:
                source = f"the config class's default, without a warning ({grouped(spec.base)} here)."
            else:
                source = "the config class's default, without a warning."
            parts.append(f"rope_parameters.rope_theta = {params['rope_theta']!r} is among what is dropped: the base "
                         f"comes from {source}")
        elif lost and not nested:
            parts.append(f"Dropped: {', '.join(f'rope_parameters.{k}' for k in lost)}.")
        parts.append("Keep one of the two.")
    elif (not nested and data.get("rope_theta") is not None and params.get("rope_theta") is not None
          and data["rope_theta"] != params["rope_theta"]):
        parts.append(f"The base is stated twice, differently: rope_theta = {data['rope_theta']!r} (transformers 4's "
                     f"field) and rope_parameters.rope_theta = {params['rope_theta']!r} (transformers 5's). Each "
                     "version reads its own field.")
    if not parts:
        return None
    return {"id": "schemas", "title": "Both config schemas present" if spec is not None
            else "Both config schemas present and disagreeing", "text": " ".join(parts), "parts": parts}


def _head_warning(config: Any, data: Mapping[str, Any], family: M.Family | None,
                  spec: RopeSpec | None) -> dict[str, Any] | None:
    hidden, heads = _first(data, "hidden_size", "n_embd"), _first(data, "num_attention_heads", "n_head")
    if (family is not None and family.rotary != "mla" and family.head == "head_dim" and spec is not None
            and not _is_int(data.get("head_dim")) and heads is None):
        return {"id": "head_dim", "title": "Head size left to the config class", "text": (
            f"{head_source(config, spec)} The config states neither head_dim nor num_attention_heads: both come from "
            f"the defaults of {family.label}'s config class, and the code uses {spec.head_dim}-dim heads. A tool that "
            "derives the head size from hidden_size / num_attention_heads, with defaults of its own (an older "
            "converter or engine), may build heads of another size. Before converting the model, write head_dim and "
            "num_attention_heads into the config.")}
    if family is None or family.rotary == "mla" or not _is_int(hidden) or not _is_int(heads) or heads <= 0:
        return None
    split = hidden / heads
    stated = data["head_dim"] if _is_int(data.get("head_dim")) else None
    if family.head == "split":
        if stated is None or stated == split:
            return None
        return {"id": "head_dim", "title": "head_dim that the code ignores", "text": (
            f"head_dim = {stated}, but {family.label}'s code computes the head size as hidden_size / "
            f"num_attention_heads = {hidden} / {heads} = {_num(split)} and never reads head_dim.")}
    used = spec.head_dim if spec is not None else stated
    if used is None or used == split or family.head != "head_dim":
        return None
    where = head_source(config, spec) if spec is not None else f"head_dim = {stated}."
    size = _num(split) if split == int(split) else "non-integer"
    return {"id": "head_dim", "title": "head_dim ≠ hidden_size / num_attention_heads", "text": (
        f"{where} But hidden_size / num_attention_heads = {hidden} / {heads} = {fmt_g(split, 6)}. The code uses "
        f"{used}-dim heads; a tool that derives the head size from hidden_size (an older converter or engine) builds "
        f"{size}-dim heads: different frequencies θ_i = b^(−2i/d) for every pair, and projections that do not fit.")}


def _partial_warning(data: Mapping[str, Any], family: M.Family | None) -> dict[str, Any] | None:
    if family is None:
        return None
    stated = [("partial_rotary_factor", data.get("partial_rotary_factor"))]
    for name in ("rope_parameters", "rope_scaling"):
        block = _block(data.get(name))
        if block is not None:
            stated.append((f"{name}.partial_rotary_factor", block.get("partial_rotary_factor")))
    found = [(k, v) for k, v in stated if _is_num(v) and v != 1]
    if not found:
        return None
    what = ", ".join(f"{k} = {_num(v)}" for k, v in found)
    title = "partial_rotary_factor that the family ignores"
    if family.rotary == "head":
        return {"id": "partial_rotary", "title": title, "text": (
            f"{what}, but the {family.key!r} family's default rotary embedding rotates the whole head and ignores it, "
            "while the scaled RoPE types of transformers (linear, dynamic, yarn, longrope, llama3) compute "
            "int(head_dim × factor) frequencies: with a scaling block, cos and sin no longer fit the head and the "
            "forward pass fails (\"The size of tensor a … must match the size of tensor b\"). This page (like "
            "rope_spec) refuses the config rather than guess: remove partial_rotary_factor (this family rotates the "
            "whole head) or set it to 1.")}
    if family.read or family.rotary == "rotary_dim":
        return {"id": "partial_rotary", "title": title, "text": (
            f"{what}, but {family.label}'s code reads rotary_dim for the number of rotated dims and never this factor.")}
    return None


#: rope_types that transformers gained after its first releases: what a transformers 4 release without it does
OLDER_TRANSFORMERS = {name: t.older_transformers for name, t in M.ROPE_TYPES.items() if t.older_transformers}



def _loader_warning(data: Mapping[str, Any], spec: RopeSpec | None, ctx: Mapping[str, Any]) -> dict[str, Any] | None:
    if spec is None or not spec.uses_rope:
        return None
    parts: list[str] = []
    v5only = (_block(data.get("rope_parameters")) is not None and _block(data.get("rope_scaling")) is None
              and data.get("rope_theta") is None)
    if spec.rope_type != "default":
        rows = pair_table(spec, {"trained": None, "maximum": ctx["maximum"]})
        moved = sum(r["moved"] for r in rows)
        at = grouped(ctx["maximum"]) if spec.depends_on_length and ctx["maximum"] else None
        older = OLDER_TRANSFORMERS.get(spec.rope_type)
        past = grouped(spec.rope_params.get("original_max_position_embeddings") or 0)
        if moved == 0:
            upto = f"up to {at} tokens" if at else "up to the maximum context"
            effect = (f"the scaling moves no pair {upto} (it acts only past {past} tokens), so nothing changes up to "
                      "there; past it plain RoPE extrapolates")
        else:
            which = f"the ones the scaling moves at {at} tokens" if at else "the ones the scaling moves"
            effect = f"{moved} of {len(rows)} pairs, {which}, would turn at their unscaled frequencies"
        drop = ("that builds the frequencies from the base alone (an older converter or inference engine, a "
                f"hand-written RoPE) drops it silently and runs plain RoPE: {effect}")
        drop += (f", and cos and sin would lose their factor {fmt_g(spec.attention_factor, 6)}."
                 if spec.attention_factor != 1 else ".")
        parts.append(f"rope_type {spec.rope_type!r}: {older}. Code {drop}" if older
                     else f"rope_type {spec.rope_type!r}: code {drop}")
    if v5only and (spec.rope_type != "default" or spec.base != 10000):
        lead = ("This config states RoPE only in rope_parameters, transformers 5's field: transformers 4 does not read "
                "it and would run its config class's default base (10,000 for most families) instead of "
                f"{grouped(spec.base)}")
        parts.append(lead + (", with no scaling." if spec.rope_type != "default" else "."))
    if not parts:
        return None
    return {"id": "old_loader", "title": "A scaling an older loader would refuse or drop", "text": " ".join(parts),
            "parts": parts}


def _bf16_warning(spec: RopeSpec | None, ctx: Mapping[str, Any]) -> dict[str, Any] | None:
    if spec is None or not spec.uses_rope or not ctx["maximum"]:
        return None
    inv = spec.inv_freq().astype(np.float32)
    err = np.abs(_bf16(inv).astype(np.float64) - inv.astype(np.float64))
    pair = int(np.argmax(err))
    worst = float(err[pair])
    if worst == 0:
        return None
    at_max = ctx["maximum"] * worst
    if at_max < 0.01:
        return None
    faster = bool(_bf16(inv[pair:pair + 1])[0] > inv[pair])
    start = math.ceil(BF16_ANGLE / worst)
    return {"id": "bf16", "title": "Angles a bf16 inv_freq would round", "text": (
        "If a model-wide cast such as model.to(torch.bfloat16) rounds the inv_freq buffer (8 significant bits), pair "
        f"{pair} turns {fmt_g(worst, 3)} rad per position too {'fast' if faster else 'slow'}: its angle is off by "
        f"{fmt_g(at_max, 3)} rad at position {grouped(ctx['maximum'])}, and by more than {BF16_ANGLE} rad from "
        f"position {grouped(start)} on. Load in the dtype you want (from_pretrained(..., dtype=torch.bfloat16)) "
        "instead of casting afterwards.")}


def warnings(config: Any, spec: RopeSpec | None, published: Any = None) -> list[dict[str, Any]]:
    """The traps this config falls into, as the page lists them.

    Parameters
    ----------
    config : dict
        A config.json as read (a multimodal wrapper is read through its language model).
    spec : RopeSpec or None
        What :func:`rope_edu.rope_spec` made of it (None where it refused the config).
    published : rope_edu.models.Published, optional
        Its entry among the released models (the training and extended context, as reported).

    Returns
    -------
    list of dict
        ``{"id", "title", "text", "parts"}`` each (``parts``: the sentences of ``text``), in the page's
        order: ``schemas``, ``head_dim``, ``partial_rotary``, ``old_loader``, ``bf16``.
    """
    _spec(spec, optional=True)
    data, _, family = family_of(config)
    if data is None:
        return []
    ctx = contexts(data, spec, published)
    found = [_schemas_warning(data, spec), _head_warning(config, data, family, spec), _partial_warning(data, family),
             _loader_warning(data, spec, ctx), _bf16_warning(spec, ctx)]
    return [{**w, "parts": w.get("parts") or [w["text"]]} for w in found if w]
