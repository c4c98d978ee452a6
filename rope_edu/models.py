"""RoPE as the models you use configure it: read a configuration, get what the model's code does.

::

    from rope_edu import rope_spec
    spec = rope_spec(config)            # a transformers config object, or a config.json dict
    print(spec.describe())              # rotated dims, pair layout, base, scaling, attention factor
    q_rot = spec.apply(q, positions)    # what the family's code does to a query

Each supported family is one entry of :data:`FAMILIES`, a small reader that knows how that family
names its RoPE fields (``rope_parameters`` or ``rope_scaling`` + ``rope_theta``, ``rotary_pct``,
``rotary_dim``, ``qk_rope_head_dim``, ``no_rope_layers``, ...) and what its code in Hugging Face
``transformers`` (pinned 5.23.0 in ``requirements.txt``) does with them: how many coordinates of a
head rotate and where they sit, which coordinates form a pair (the book's layouts,
:data:`rope_edu.LAYOUTS`), the frequencies (every scaling method is an entry of
:data:`rope_edu.scaling.METHODS`), the factor on cos and sin, and whether a layer uses RoPE at all.
``tests/test_models.py`` checks every family against its own rotary-embedding class and apply
function in ``transformers``. This module imports neither ``transformers`` nor ``torch``.

Nothing falls back silently to a value the configuration does not state. Where ``transformers``
itself documents a default for a RoPE field that a configuration dict leaves out (``rope_theta``,
``partial_rotary_factor``, YaRN's ``beta_fast``...), the same default is used and listed in
:attr:`RopeSpec.defaults` (and by :meth:`RopeSpec.describe`); anything else missing is an error
that names the field.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ._checks import as_real_array, check_choice, check_int, finite_float64, float_dtype, real_array
from .multidim import apply_mrope, mrope_axes
from .rope import LAYOUTS, apply_rope, layout_permutation
from .scaling import METHODS, scaled_frequencies

__all__ = [
    "FAMILIES",
    "MODEL_TYPES",
    "PUBLISHED",
    "QK_NORM",
    "Family",
    "Published",
    "RopeSpec",
    "rope_spec",
]

#: Where a family normalises queries and keys, relative to the rotation (informational).
QK_NORM: dict[str, str] = {
    "none": "no normalisation of queries and keys",
    "before_rope": "queries and keys are normalised, then rotated (the relative property survives)",
    "after_rope": "queries and keys are rotated, then divided by their root mean square, with no learned gain "
                  "(a rotation keeps norms, so the order does not matter)",
}

#: The ``transformers`` RotaryEmbeddingConfigMixin default for ``rope_theta`` (``default_theta``).
_HF_THETA = 10000.0


# --- reading a configuration ------------------------------------------------------------------


class _Config:
    """A configuration as a dict: errors name the field, used defaults are recorded."""

    def __init__(self, data: Mapping[str, Any], model_type: str) -> None:
        self.data = data
        self.model_type = model_type
        self.defaults: list[str] = []

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def require(self, name: str, why: str = "") -> Any:
        value = self.data.get(name)
        if value is None:
            raise ValueError(f"the {self.model_type!r} config is missing the field {name!r}{why}")
        return value

    def default(self, name: str, value: Any, source: str) -> Any:
        """The field's value, or ``value`` (a default documented by ``source``), recorded."""
        if self.data.get(name) is not None:
            return self.data[name]
        self.defaults.append(f"{name} = {value!r} ({source}; the config does not state it)")
        return value

    def size(self, name: str) -> int:
        return _positive_int(self.require(name), name)


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {value!r} of type {type(value).__name__}")
    if int(value) <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def _head_dim(cfg: _Config, hidden: str = "hidden_size", heads: str = "num_attention_heads") -> int:
    """``head_dim`` when the config states it, else ``hidden_size // num_attention_heads``."""
    if cfg.has("head_dim"):
        return _positive_int(cfg.data["head_dim"], "head_dim")
    return _split_heads(cfg, hidden, heads)


def _split_heads(cfg: _Config, hidden: str = "hidden_size", heads: str = "num_attention_heads") -> int:
    size, n = cfg.size(hidden), cfg.size(heads)
    if size % n:
        raise ValueError(f"{hidden} = {size} is not a multiple of {heads} = {n}")
    return size // n


@dataclass
class _Rope:
    """The RoPE parameters of one layer type: base, scaling method, its parameters, field names."""

    base: float
    method: str
    params: dict[str, Any]
    where: str  # the dict the values came from, for messages: "rope_scaling", "rope_parameters"...
    block: dict[str, Any]


def _rope_block(cfg: _Config) -> tuple[dict[str, Any], str]:
    """The RoPE parameter dict: v5 ``rope_parameters`` and/or v4 ``rope_scaling`` (merged, no conflicts)."""
    blocks = []
    for name in ("rope_parameters", "rope_scaling"):
        value = cfg.data.get(name)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a dict, got {value!r} of type {type(value).__name__}")
        value = dict(value)
        if "type" in value and "rope_type" not in value:  # transformers reads the old key "type" too
            value["rope_type"] = value.pop("type")
        blocks.append((name, value))
    if not blocks:
        return {}, "rope_parameters"
    if len(blocks) == 2:
        (n1, b1), (n2, b2) = blocks
        clash = sorted(k for k in set(b1) & set(b2) if b1[k] != b2[k])
        if clash:
            raise ValueError(
                f"rope_parameters and rope_scaling disagree on {', '.join(clash)}; give one of them"
            )
        return {**b1, **b2}, "rope_scaling"
    return blocks[0][1], blocks[0][0]


def _theta(cfg: _Config, block: Mapping[str, Any], where: str, keys: Sequence[str],
           default: float | None, source: str) -> float:
    """``rope_theta`` from the RoPE block or the top level (under any of ``keys``), or a documented default."""
    values = [(f"{where}.rope_theta", block.get("rope_theta"))] + [(k, cfg.data.get(k)) for k in keys]
    name0 = keys[0] if keys else f"{where}.rope_theta"
    stated = [(name, v) for name, v in values if v is not None]
    if len({float(v) if isinstance(v, numbers.Real) else repr(v) for _, v in stated}) > 1:
        raise ValueError(f"the config states different bases: {', '.join(f'{n} = {v!r}' for n, v in stated)}")
    if stated:
        name, value = stated[0]
        return _base(value, name)
    if default is None:
        raise ValueError(f"the {cfg.model_type!r} config is missing the field {name0!r} (the RoPE base)")
    cfg.defaults.append(f"{name0} = {default!r} ({source}; the config does not state it)")
    return default


def _base(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number > 1, got {value!r} of type {type(value).__name__}")
    if not math.isfinite(float(value)) or float(value) <= 1.0:
        raise ValueError(f"{name} must be a finite real number > 1, got {value}")
    return float(value)


def _param(block: Mapping[str, Any], name: str, where: str) -> Any:
    value = block.get(name)
    if value is None:
        rope_type = block.get("rope_type", "default")
        raise ValueError(f"{where} of rope_type {rope_type!r} is missing the field {name!r}")
    return value


def _original_length(cfg: _Config, block: Mapping[str, Any], where: str, *, top_level_first: bool = False) -> Any:
    """``original_max_position_embeddings`` as transformers' ``standardize_rope_params`` finds it."""
    if top_level_first and cfg.has("original_max_position_embeddings"):
        # Phi-3 keeps the pretraining length at the top level, and transformers gives it priority.
        return cfg.data["original_max_position_embeddings"]
    if block.get("original_max_position_embeddings") is not None:
        return block["original_max_position_embeddings"]
    # transformers' standardize_rope_params: defaults to max_position_embeddings for llama3/yarn/longrope
    value = cfg.require("max_position_embeddings", f" (needed because {where} does not state "
                                                   "original_max_position_embeddings)")
    cfg.defaults.append(
        f"{where}.original_max_position_embeddings = max_position_embeddings = {value!r} "
        "(transformers' standardize_rope_params; the config does not state it)"
    )
    return value


# One function per scaling type: the parameters rope_edu.scaling.scaled_frequencies takes.
def _default_params(cfg: _Config, block: dict, where: str, **_: Any) -> dict[str, Any]:
    return {}


def _linear_params(cfg: _Config, block: dict, where: str, **_: Any) -> dict[str, Any]:
    return {"factor": _param(block, "factor", where)}


def _dynamic_params(cfg: _Config, block: dict, where: str, **_: Any) -> dict[str, Any]:
    # transformers' dynamic NTK measures lengths against config.max_position_embeddings (not
    # original_max_position_embeddings): scale = factor * seq_len / max_position_embeddings - (factor - 1).
    return {
        "factor": _param(block, "factor", where),
        "original_max_position_embeddings": cfg.require(
            "max_position_embeddings", " (dynamic NTK rescales past max_position_embeddings)"
        ),
    }


def _yarn_params(cfg: _Config, block: dict, where: str, **_: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "factor": _param(block, "factor", where),
        "original_max_position_embeddings": _original_length(cfg, block, where),
    }
    # transformers: `rope_parameters.get("beta_fast") or 32`, `... or 1`, truncate defaults to True
    for name, default in (("beta_fast", 32.0), ("beta_slow", 1.0), ("truncate", True)):
        if block.get(name) is not None and (name == "truncate" or block[name]):
            params[name] = block[name]
        else:
            cfg.defaults.append(f"{where}.{name} = {default!r} (transformers' YaRN default; the config does not state it)")
    if block.get("attention_factor") is not None:
        params["attention_factor"] = block["attention_factor"]
    # transformers uses mscale / mscale_all_dim only when both are set and non-zero
    if block.get("mscale") and block.get("mscale_all_dim"):
        params["mscale"], params["mscale_all_dim"] = block["mscale"], block["mscale_all_dim"]
    return params


def _llama3_params(cfg: _Config, block: dict, where: str, **_: Any) -> dict[str, Any]:
    return {
        "factor": _param(block, "factor", where),
        "low_freq_factor": _param(block, "low_freq_factor", where),
        "high_freq_factor": _param(block, "high_freq_factor", where),
        "original_max_position_embeddings": _original_length(cfg, block, where),
    }


def _longrope_params(cfg: _Config, block: dict, where: str, *, top_level_first: bool = False, **_: Any) -> dict[str, Any]:
    original = _original_length(cfg, block, where, top_level_first=top_level_first)
    params: dict[str, Any] = {
        "short_factor": tuple(_param(block, "short_factor", where)),
        "long_factor": tuple(_param(block, "long_factor", where)),
        "original_max_position_embeddings": original,
    }
    if block.get("factor") is not None:
        params["factor"] = block["factor"]
    else:
        # transformers (_compute_longrope_parameters): factor = max_position_embeddings / original
        mpe = cfg.require("max_position_embeddings", f" (LongRoPE's factor is max_position_embeddings / "
                                                     f"original_max_position_embeddings when {where} has no factor)")
        params["factor"] = _positive_int(mpe, "max_position_embeddings") / _positive_int(
            original, "original_max_position_embeddings")
        cfg.defaults.append(
            f"{where}.factor = max_position_embeddings / original_max_position_embeddings = {params['factor']!r} "
            "(transformers' LongRoPE rule; the config does not state it)"
        )
    if block.get("attention_factor") is not None:
        params["attention_factor"] = block["attention_factor"]
    return params


#: transformers' ``rope_type`` -> (key of rope_edu.scaling.METHODS, parameter reader).
_SCALINGS: dict[str, tuple[str, Callable[..., dict[str, Any]]]] = {
    "default": ("default", _default_params),
    "linear": ("linear", _linear_params),
    "dynamic": ("dynamic", _dynamic_params),
    "yarn": ("yarn", _yarn_params),
    "llama3": ("llama3", _llama3_params),
    "longrope": ("longrope", _longrope_params),
}


def _read_rope(cfg: _Config, *, theta_keys: Sequence[str] = ("rope_theta",), default_theta: float | None = _HF_THETA,
               theta_source: str = "transformers' default_theta", block: dict | None = None, where: str | None = None,
               rename: Mapping[str, str] | None = None, allowed: Sequence[str] | None = None,
               top_level_original: bool = False) -> _Rope:
    if block is None:
        block, where = _rope_block(cfg)
    assert where is not None
    base = _theta(cfg, block, where, theta_keys, default_theta, theta_source)
    if block.get("rope_type") is None:
        rope_type = "default"
        if block:  # transformers: rope_type defaults to "default"
            cfg.defaults.append(f"{where}.rope_type = 'default' (transformers' default; the config does not state it)")
    else:
        rope_type = block["rope_type"]
    if isinstance(rope_type, str) and rename and rope_type in rename:
        rope_type = rename[rope_type]
    valid = list(allowed) if allowed is not None else list(_SCALINGS)
    if not isinstance(rope_type, str) or rope_type not in valid:
        raise ValueError(
            f"unknown {where}.rope_type {rope_type!r} for model_type {cfg.model_type!r}; "
            f"expected one of {', '.join(repr(v) for v in valid)}"
        )
    method, reader = _SCALINGS[rope_type]
    params = reader(cfg, block, where, top_level_first=top_level_original)
    return _Rope(base, method, params, where, dict(block))


def _fraction(cfg: _Config, rope: _Rope, names: Sequence[str], default: float | None, source: str) -> tuple[float, str]:
    """The rotated fraction of a head and the field it was read from."""
    for name in names:
        for value, label in ((rope.block.get(name), f"{rope.where}.{name}"), (cfg.data.get(name), name)):
            if value is not None:
                if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
                    raise TypeError(f"{label} must be a real number in (0, 1], got {value!r}")
                if not 0.0 < float(value) <= 1.0:
                    raise ValueError(f"{label} must be a real number in (0, 1] (the rotated fraction of a head), got {value}")
                return float(value), label
    if default is None:
        raise ValueError(f"the {cfg.model_type!r} config is missing the field {names[0]!r}")
    if default != 1.0:
        cfg.defaults.append(f"{names[0]} = {default!r} ({source}; the config does not state it)")
    return default, names[0]


def _rotated(head_dim: int, fraction: float, label: str) -> int:
    """``int(head_dim * fraction)`` as transformers computes it, which must be even and positive."""
    dims = int(head_dim * fraction)
    if dims <= 0 or dims % 2:
        raise ValueError(
            f"{label} = {fraction} gives int({head_dim} * {fraction}) = {dims} rotated dims; "
            "RoPE rotates pairs, so this must be a positive even number"
        )
    return dims


def _no_partial(cfg: _Config, rope: _Rope) -> None:
    """Families whose code rotates the whole head: a stated partial_rotary_factor != 1 is an error."""
    for value, label in ((rope.block.get("partial_rotary_factor"), f"{rope.where}.partial_rotary_factor"),
                         (cfg.data.get("partial_rotary_factor"), "partial_rotary_factor")):
        if value is not None and value != 1.0:
            raise ValueError(
                f"{label} = {value!r}, but {cfg.model_type!r} code rotates the whole head "
                "(its default rotary embedding ignores partial_rotary_factor while its scaled ones do not)"
            )


# --- layers -----------------------------------------------------------------------------------


def _layer_types(cfg: _Config, build: Callable[[int], list[str]] | None, needed: bool) -> list[str] | None:
    types = cfg.data.get("layer_types")
    if types is not None:
        if isinstance(types, str) or not all(isinstance(t, str) for t in types):
            raise TypeError(f"layer_types must be a list of strings, got {types!r}")
        return list(types)
    if build is None or not (needed or cfg.has("num_hidden_layers")):
        return None
    return build(cfg.size("num_hidden_layers"))


def _select_layer(cfg: _Config, layer_type: Any, layer: Any, types: list[str] | None,
                  known: Sequence[str] = ()) -> tuple[str | None, int | None]:
    """Check ``layer_type`` / ``layer`` against the config; return the layer's type and index."""
    if layer_type is not None and not isinstance(layer_type, str):
        raise TypeError(f"layer_type must be a string such as 'full_attention', got {layer_type!r}")
    if layer is not None:
        layer = check_int(layer, "layer", 0)
        n = len(types) if types is not None else cfg.size("num_hidden_layers")
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


def _rope_flags(cfg: _Config, source: str) -> list[bool]:
    """Per layer: does it use RoPE? ``no_rope_layers`` (1 = RoPE, 0 = NoPE), else every
    ``no_rope_layer_interval``-th layer is NoPE (the config class builds the list that way)."""
    flags = cfg.data.get("no_rope_layers")
    if flags is None:
        interval = _positive_int(cfg.default("no_rope_layer_interval", 4, source), "no_rope_layer_interval")
        flags = [int((i + 1) % interval != 0) for i in range(cfg.size("num_hidden_layers"))]
    if isinstance(flags, str) or not all(isinstance(f, (bool, numbers.Integral)) for f in flags):
        raise TypeError(f"no_rope_layers must be a list of 0/1 flags (1 = the layer uses RoPE), got {flags!r}")
    return [bool(f) for f in flags]


def _uses_rope(cfg: _Config, flags: list[bool], types: list[str] | None, layer_type: str | None,
               layer: int | None) -> bool:
    """Whether the selected layer uses RoPE; an error when the selection covers layers that differ."""
    if layer is not None:
        if layer >= len(flags):
            raise ValueError(f"layer {layer} is beyond no_rope_layers ({len(flags)} entries)")
        return flags[layer]
    chosen = flags
    if layer_type is not None and types is not None:
        chosen = [f for f, t in zip(flags, types) if t == layer_type]
    if len(set(chosen)) > 1:
        nope = [i for i, f in enumerate(flags) if not f]
        raise ValueError(
            f"layers of this {cfg.model_type!r} config differ: layers {nope} use no RoPE (no_rope_layers); "
            "pass layer=index to choose one"
        )
    return chosen[0] if chosen else True


def _plain_layers(cfg: _Config, layer_type: Any, layer: Any) -> tuple[str | None, int | None]:
    """Families whose RoPE is the same in every layer: only check the selection."""
    types = _layer_types(cfg, None, False)
    return _select_layer(cfg, layer_type, layer, types)


# --- family readers: one small function each ---------------------------------------------------


def _llama_like(qk_norm: str = "none", default_theta: float = _HF_THETA, theta_source: str = "transformers' default_theta"):
    def read(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
        layer_type, layer = _plain_layers(cfg, layer_type, layer)
        rope = _read_rope(cfg, default_theta=default_theta, theta_source=theta_source)
        _no_partial(cfg, rope)
        head_dim = _head_dim(cfg)
        return dict(head_dim=head_dim, rotary_dim=head_dim, layout="half", rope=rope, qk_norm=qk_norm,
                    layer_type=layer_type, layer=layer)
    return read


def _read_smollm3(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    types = _layer_types(cfg, None, False)
    layer_type, layer = _select_layer(cfg, layer_type, layer, types)
    flags = _rope_flags(cfg, "SmolLM3Config default")
    rope = _read_rope(cfg, default_theta=2_000_000.0, theta_source="SmolLM3Config.default_theta")
    _no_partial(cfg, rope)
    head_dim = _head_dim(cfg)
    return dict(head_dim=head_dim, rotary_dim=head_dim, layout="half", rope=rope, layer_type=layer_type,
                layer=layer, uses_rope=_uses_rope(cfg, flags, types, layer_type, layer))


def _read_llama4(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    flags = _rope_flags(cfg, "Llama4TextConfig default")
    types = cfg.data.get("layer_types")
    if types is None:
        # Llama4TextConfig builds them this way: RoPE layers do chunked attention, NoPE layers full attention
        types = ["chunked_attention" if f else "full_attention" for f in flags]
    types = _layer_types(_Config({"layer_types": types}, cfg.model_type), None, False)
    layer_type, layer = _select_layer(cfg, layer_type, layer, types)
    uses_rope = _uses_rope(cfg, flags, types, layer_type, layer)
    rope = _read_rope(cfg, default_theta=500_000.0, theta_source="Llama4TextConfig.default_theta")
    _no_partial(cfg, rope)
    head_dim = _head_dim(cfg)
    qk = bool(cfg.default("use_qk_norm", True, "Llama4TextConfig default"))
    temperature = None
    if not uses_rope and cfg.default("attn_temperature_tuning", True, "Llama4TextConfig default"):
        temperature = (float(cfg.default("floor_scale", 8192, "Llama4TextConfig default")),
                       float(cfg.default("attn_scale", 0.1, "Llama4TextConfig default")))
    return dict(head_dim=head_dim, rotary_dim=head_dim, layout="interleaved", rope=rope,
                qk_norm="after_rope" if (qk and uses_rope) else "none", layer_type=layer_type, layer=layer,
                uses_rope=uses_rope, temperature_tuning=temperature)


def _read_gemma3(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    known = ("sliding_attention", "full_attention")

    def build(n: int) -> list[str]:
        pattern = _positive_int(cfg.default("sliding_window_pattern", 6, "Gemma3TextConfig default"),
                                "sliding_window_pattern")
        return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]

    types = _layer_types(cfg, build, layer is not None)
    layer_type, layer = _select_layer(cfg, layer_type, layer, types, known=known)
    if layer_type is None:
        raise ValueError(
            "layer_type is required for Gemma 3: local layers ('sliding_attention') and global layers "
            "('full_attention') use different RoPE bases; pass layer_type=... or layer=index"
        )
    params = cfg.data.get("rope_parameters")
    if isinstance(params, Mapping) and any(k in params for k in known):
        # transformers v5: one RoPE dict per layer type
        block = params.get(layer_type)
        if not isinstance(block, Mapping):
            raise ValueError(f"rope_parameters has no dict for layer type {layer_type!r}")
        block = dict(block)
        rope = _read_rope(cfg, theta_keys=(), block=block, where=f"rope_parameters[{layer_type!r}]",
                          default_theta=1_000_000.0 if layer_type == "full_attention" else 10_000.0,
                          theta_source="Gemma3TextConfig.default_theta")
    elif layer_type == "full_attention":
        # config.json as published: rope_theta and rope_scaling belong to the global layers
        rope = _read_rope(cfg, default_theta=1_000_000.0, theta_source="Gemma3TextConfig.default_theta['global']")
    else:
        # ... and the local layers use plain RoPE with rope_local_base_freq
        rope = _read_rope(cfg, theta_keys=("rope_local_base_freq",), block={"rope_type": "default"},
                          where="(local layers)", default_theta=10_000.0,
                          theta_source="Gemma3TextConfig.default_theta['local']")
    _no_partial(cfg, rope)
    head_dim = _head_dim(cfg)
    return dict(head_dim=head_dim, rotary_dim=head_dim, layout="half", rope=rope, qk_norm="before_rope",
                layer_type=layer_type, layer=layer)


def _read_deepseek_v3(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    layer_type, layer = _plain_layers(cfg, layer_type, layer)
    rope_dim, nope_dim = cfg.size("qk_rope_head_dim"), cfg.size("qk_nope_head_dim")
    rope = _read_rope(cfg)
    _no_partial(cfg, rope)
    interleave = cfg.default("rope_interleave", True, "DeepseekV3Config default")
    # DeepseekV3Attention.scaling: qk_head_dim**-0.5 times mscale(factor, mscale_all_dim)**2 whenever
    # rope_type is not "default" and mscale_all_dim is set (yarn_get_mscale is 1 for factor <= 1).
    softmax = 1.0
    all_dim = rope.block.get("mscale_all_dim")
    if rope.method != "default" and all_dim:
        factor = float(_param(rope.block, "factor", rope.where))
        m = 1.0 if factor <= 1 else 0.1 * float(all_dim) * math.log(factor) + 1.0
        softmax = m * m
    return dict(head_dim=nope_dim + rope_dim, rotary_dim=rope_dim, rotary_offset=nope_dim,
                layout="interleaved" if interleave else "half", output_layout="half", rope=rope,
                softmax_scale_factor=softmax, layer_type=layer_type, layer=layer)


def _read_phi3(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    layer_type, layer = _plain_layers(cfg, layer_type, layer)
    # Phi3Config renames the old types "su" and "yarn" to "longrope" and accepts only default/longrope
    rope = _read_rope(cfg, rename={"su": "longrope", "yarn": "longrope"}, allowed=("default", "longrope"),
                      top_level_original=True)
    head_dim = _head_dim(cfg)
    fraction, label = _fraction(cfg, rope, ("partial_rotary_factor",), 1.0, "Phi3Config default")
    return dict(head_dim=head_dim, rotary_dim=_rotated(head_dim, fraction, label), layout="half", rope=rope,
                layer_type=layer_type, layer=layer)


def _read_phi(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    layer_type, layer = _plain_layers(cfg, layer_type, layer)
    rope = _read_rope(cfg)
    head_dim = _head_dim(cfg)
    fraction, label = _fraction(cfg, rope, ("partial_rotary_factor",), 0.5, "PhiConfig default")
    qk = bool(cfg.default("qk_layernorm", False, "PhiConfig default"))
    return dict(head_dim=head_dim, rotary_dim=_rotated(head_dim, fraction, label), layout="half", rope=rope,
                qk_norm="before_rope" if qk else "none", layer_type=layer_type, layer=layer)


def _read_gpt_neox(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    layer_type, layer = _plain_layers(cfg, layer_type, layer)
    rope = _read_rope(cfg, theta_keys=("rope_theta", "rotary_emb_base"))
    head_dim = _split_heads(cfg)  # GPTNeoXAttention: hidden_size // num_attention_heads
    fraction, label = _fraction(cfg, rope, ("partial_rotary_factor", "rotary_pct"), 0.25, "GPTNeoXConfig default")
    return dict(head_dim=head_dim, rotary_dim=_rotated(head_dim, fraction, label), layout="half", rope=rope,
                layer_type=layer_type, layer=layer)


def _read_gptj(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    layer_type, layer = _plain_layers(cfg, layer_type, layer)
    for name in ("rope_theta", "rope_scaling", "rope_parameters"):
        if cfg.has(name):
            raise ValueError(f"{name} is set, but GPT-J's code has no such field: its base is fixed at 10000 "
                             "and it has no scaling")
    hidden = "n_embd" if cfg.has("n_embd") else "hidden_size"
    heads = "n_head" if cfg.has("n_head") else "num_attention_heads"
    head_dim = _split_heads(cfg, hidden, heads)
    if "rotary_dim" in cfg.data and cfg.data["rotary_dim"] is None:
        raise ValueError("rotary_dim is None: GPT-J's code then builds its table over the whole hidden size "
                         "(n_embd), which only fits a single head; give rotary_dim")
    rotary_dim = _positive_int(cfg.default("rotary_dim", 64, "GPTJConfig default"), "rotary_dim")
    if rotary_dim % 2 or rotary_dim > head_dim:
        raise ValueError(f"rotary_dim must be an even number of dims <= head_dim = {head_dim}, got {rotary_dim}")
    positions = cfg.data.get("n_positions", cfg.data.get("max_position_embeddings"))
    if positions is None:
        positions = cfg.default("n_positions", 2048, "GPTJConfig default")
    rope = _Rope(10000.0, "default", {}, "(fixed in GPT-J's code)", {})
    return dict(head_dim=head_dim, rotary_dim=rotary_dim, layout="interleaved", rope=rope,
                max_positions=_positive_int(positions, "n_positions"), layer_type=layer_type, layer=layer)


def _read_glm(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    layer_type, layer = _plain_layers(cfg, layer_type, layer)
    rope = _read_rope(cfg)
    head_dim = _head_dim(cfg)
    fraction, label = _fraction(cfg, rope, ("partial_rotary_factor",), 0.5, "GlmConfig / Glm4Config default")
    return dict(head_dim=head_dim, rotary_dim=_rotated(head_dim, fraction, label), layout="interleaved", rope=rope,
                layer_type=layer_type, layer=layer)


def _read_gpt_oss(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    layer_type, layer = _plain_layers(cfg, layer_type, layer)
    block, where = _rope_block(cfg)
    if not block or set(block) <= {"rope_theta"}:
        # GptOssConfig fills in this YaRN setting when the config gives no RoPE parameters
        default = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                   "original_max_position_embeddings": 4096}
        cfg.defaults.append(f"rope_parameters = {default!r} (GptOssConfig default; the config does not state it)")
        block = {**default, **block}
    rope = _read_rope(cfg, block=block, where=where, default_theta=150_000.0,
                      theta_source="GptOssConfig.default_theta")
    _no_partial(cfg, rope)
    head_dim = _head_dim(cfg)
    return dict(head_dim=head_dim, rotary_dim=head_dim, layout="half", rope=rope, layer_type=layer_type, layer=layer)


def _read_minimind(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    if layer_type is not None or layer is not None:
        _select_layer(cfg, layer_type, layer, None)
    for old in ("dim", "n_heads"):
        if cfg.has(old) and not cfg.has("hidden_size"):
            raise ValueError(
                f"field {old!r}: this looks like the older MiniMind LMConfig (dim, n_heads), whose code rotates "
                "interleaved pairs with a fixed base; rope_spec reads the MiniMindConfig of model_minimind.py "
                "(hidden_size, num_attention_heads, rope_theta)"
            )
    head_dim = _head_dim(cfg)  # MiniMindConfig: head_dim, else hidden_size // num_attention_heads
    base = _base(cfg.require("rope_theta", " (MiniMind is not in transformers: no documented default)"),
                 "rope_theta")
    scaling = cfg.data.get("rope_scaling")
    if scaling is None and cfg.data.get("inference_rope_scaling"):
        raise ValueError("inference_rope_scaling is true but the config has no rope_scaling dict")
    if scaling is None:
        rope = _Rope(base, "default", {}, "rope_scaling", {})
    else:
        rope = _minimind_yarn(cfg, dict(scaling), base, head_dim)
    return dict(head_dim=head_dim, rotary_dim=head_dim, layout="half", rope=rope, qk_norm="before_rope")


def _minimind_yarn(cfg: _Config, block: dict[str, Any], base: float, dim: int) -> _Rope:
    where = "rope_scaling"
    kind = block.get("type", block.get("rope_type"))
    if kind != "yarn":
        raise ValueError(f"unknown rope_scaling.type {kind!r} for MiniMind; its code implements only 'yarn'")
    # MiniMind's own YaRN: every field stated (its code's defaults differ from transformers', e.g. its
    # attention_factor defaults to 1.0), applied only when max_position_embeddings exceeds the original.
    names = ("factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "attention_factor")
    params = {name: _param(block, name, where) for name in names}
    if cfg.size("max_position_embeddings") <= _positive_int(params["original_max_position_embeddings"],
                                                            "rope_scaling.original_max_position_embeddings"):
        return _Rope(base, "default", {}, where, block)
    # MiniMind clips the ramp's end at pair dim//2 - 1, transformers (and rope_edu.scaling) at dim - 1;
    # they agree when the unclipped end index lies in [0, dim//2 - 1]. Refuse rather than differ.
    original = params["original_max_position_embeddings"]
    end = math.ceil(dim * math.log(original / (float(params["beta_slow"]) * 2 * math.pi)) / (2 * math.log(base)))
    if not 0 <= end <= dim // 2 - 1:
        raise ValueError(
            f"rope_scaling.beta_slow = {params['beta_slow']}: MiniMind's YaRN ramp would end at pair {end}, outside "
            f"[0, {dim // 2 - 1}], where its clipping differs from transformers'; not supported"
        )
    params["truncate"] = True
    return _Rope(base, "yarn", params, where, block)


def _read_qwen_vl(assignment: str, default_section: tuple[int, int, int], qk_norm: str = "none"):
    """Language models of Qwen2-VL, Qwen2.5-VL, Qwen3-VL: M-RoPE (:func:`rope_edu.multidim.apply_mrope`)."""
    def read(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
        layer_type, layer = _plain_layers(cfg, layer_type, layer)
        rope = _read_rope(cfg, rename={"mrope": "default"})  # transformers reads rope_type "mrope" as default
        _no_partial(cfg, rope)
        head_dim = _head_dim(cfg)
        section = rope.block.get("mrope_section")
        if section is None:
            section = default_section
            cfg.defaults.append(f"{rope.where}.mrope_section = {list(default_section)} (the family's rotary "
                                "embedding default; the config does not state it)")
        if mrope_axes(section, assignment=assignment).size != head_dim // 2:
            raise ValueError(f"{rope.where}.mrope_section {list(section)} must add up to head_dim // 2 = {head_dim // 2}")
        return dict(head_dim=head_dim, rotary_dim=head_dim, layout="half", rope=rope, qk_norm=qk_norm,
                    layer_type=layer_type, layer=layer, mrope_section=tuple(int(v) for v in section),
                    mrope_assignment=assignment)
    return read


@dataclass(frozen=True)
class Family:
    """One model family that :func:`rope_spec` reads.

    Attributes
    ----------
    key : str
        Key in :data:`FAMILIES`.
    label : str
        The models it covers.
    model_types : tuple of str
        The ``model_type`` values of their configurations.
    code : str
        Where the family's RoPE code lives (the reference the tests compare with).
    read : callable
        ``read(cfg, layer_type, layer) -> dict`` of :class:`RopeSpec` ingredients.
    """

    key: str
    label: str
    model_types: tuple[str, ...]
    code: str
    read: Callable[[_Config, Any, Any], dict[str, Any]] = field(repr=False)


FAMILIES: dict[str, Family] = {f.key: f for f in [
    Family("llama", "Llama 2, Llama 3.x, Code Llama", ("llama",), "transformers.models.llama",
           _llama_like()),
    Family("mistral", "Mistral", ("mistral",), "transformers.models.mistral", _llama_like()),
    Family("qwen2", "Qwen2, Qwen2.5", ("qwen2",), "transformers.models.qwen2", _llama_like()),
    Family("qwen3", "Qwen3", ("qwen3",), "transformers.models.qwen3", _llama_like(qk_norm="before_rope")),
    Family("olmo2", "OLMo 2", ("olmo2",), "transformers.models.olmo2", _llama_like(qk_norm="before_rope")),
    Family("gemma3", "Gemma 3 (text)", ("gemma3_text",), "transformers.models.gemma3", _read_gemma3),
    Family("deepseek_v3", "DeepSeek-V3 (MLA)", ("deepseek_v3",), "transformers.models.deepseek_v3",
           _read_deepseek_v3),
    Family("phi3", "Phi-3, Phi-3.5, Phi-4-mini", ("phi3",), "transformers.models.phi3", _read_phi3),
    Family("phi", "Phi-1.5, Phi-2", ("phi",), "transformers.models.phi", _read_phi),
    Family("gpt_neox", "GPT-NeoX, Pythia", ("gpt_neox",), "transformers.models.gpt_neox", _read_gpt_neox),
    Family("gptj", "GPT-J", ("gptj",), "transformers.models.gptj", _read_gptj),
    Family("glm", "GLM-4 (glm, glm4)", ("glm", "glm4"), "transformers.models.glm, transformers.models.glm4",
           _read_glm),
    Family("smollm3", "SmolLM3", ("smollm3",), "transformers.models.smollm3", _read_smollm3),
    Family("llama4", "Llama 4 (text)", ("llama4_text",), "transformers.models.llama4", _read_llama4),
    Family("gpt_oss", "GPT-OSS", ("gpt_oss",), "transformers.models.gpt_oss", _read_gpt_oss),
    Family("minimind", "MiniMind (a plain dict; model_minimind.py)", ("minimind",),
           "jingyaogong/minimind model/model_minimind.py", _read_minimind),
    Family("qwen2_vl", "Qwen2-VL (language model, M-RoPE)", ("qwen2_vl_text",), "transformers.models.qwen2_vl",
           _read_qwen_vl("contiguous", (16, 24, 24))),
    Family("qwen2_5_vl", "Qwen2.5-VL (language model, M-RoPE)", ("qwen2_5_vl_text",),
           "transformers.models.qwen2_5_vl", _read_qwen_vl("contiguous", (16, 24, 24))),
    Family("qwen3_vl", "Qwen3-VL (language model, interleaved M-RoPE)", ("qwen3_vl_text",),
           "transformers.models.qwen3_vl", _read_qwen_vl("interleaved", (24, 20, 20), qk_norm="before_rope")),
]}

#: ``model_type`` -> key of :data:`FAMILIES`.
MODEL_TYPES: dict[str, str] = {mt: f.key for f in FAMILIES.values() for mt in f.model_types}

#: Multimodal wrappers whose language model sits in a sub-config: model_type -> (key, inner model_type).
_WRAPPERS: dict[str, tuple[str, str]] = {
    "gemma3": ("text_config", "gemma3_text"),
    "llama4": ("text_config", "llama4_text"),
    "qwen2_vl": ("text_config", "qwen2_vl_text"),
    "qwen2_5_vl": ("text_config", "qwen2_5_vl_text"),
    "qwen3_vl": ("text_config", "qwen3_vl_text"),
}

#: Wrappers whose hub config.json may keep the language model's fields at the top level (no text_config).
_FLAT_WRAPPERS = frozenset({"qwen2_vl", "qwen2_5_vl"})


# --- the spec ---------------------------------------------------------------------------------


def _reorder_interleaved_to_half(block: np.ndarray) -> np.ndarray:
    return block[..., layout_permutation(block.shape[-1])]


def _reorder_half_to_interleaved(block: np.ndarray) -> np.ndarray:
    return block[..., np.argsort(layout_permutation(block.shape[-1]))]


#: (layout read, layout written) -> how the rotated block is reordered when the two differ.
_REORDER: dict[tuple[str, str], Callable[[np.ndarray], np.ndarray]] = {
    ("interleaved", "half"): _reorder_interleaved_to_half,
    ("half", "interleaved"): _reorder_half_to_interleaved,
}


@dataclass(frozen=True)
class RopeSpec:
    """What one layer of a model does with RoPE, as its family's code does it.

    Attributes
    ----------
    family : str
        Key in :data:`FAMILIES`.
    model_type : str
        The configuration's ``model_type``.
    head_dim : int
        Size of a query/key head, the last axis of ``x`` in :meth:`apply` (DeepSeek-V3:
        ``qk_nope_head_dim + qk_rope_head_dim``).
    rotary_dim : int
        How many of those coordinates rotate (even). The frequencies are
        :math:`\\theta_i = b^{-2i/\\text{rotary\\_dim}}`.
    rotary_offset : int
        Index of the first rotated coordinate: 0 (the rotated block comes first, the rest passes
        through) except DeepSeek-V3, whose rotary part is the last ``qk_rope_head_dim`` coordinates.
    layout : {"half", "interleaved"}
        Which coordinates of the rotated block form pair :math:`i` (see :data:`rope_edu.LAYOUTS`).
    output_layout : {"half", "interleaved"}
        The order in which the code writes the rotated pairs back. Equal to ``layout`` except for
        DeepSeek-V3 with ``rope_interleave``: it reads interleaved pairs and writes them half-split
        (queries and keys alike, so every dot product is unchanged).
    base : float
        The RoPE base :math:`b` (``rope_theta``).
    scaling : str
        Key in :data:`rope_edu.scaling.METHODS`.
    scaling_params : mapping
        Its parameters (``seq_len`` excluded: :meth:`apply` computes it).
    attention_factor : float
        Multiplies cos and sin, so rotated queries and keys (logits of the rotated part times its square).
    softmax_scale_factor : float
        Multiplies the family's softmax scale (1 except DeepSeek-V3 with ``mscale_all_dim``, where
        YaRN's temperature is moved into the softmax scale: :math:`\\mathrm{mscale}^2`).
    uses_rope : bool
        False for NoPE layers (SmolLM3, Llama 4): queries and keys are not rotated.
    qk_norm : str
        Key in :data:`QK_NORM` (informational; :meth:`apply` does not normalise).
    layer_type, layer : str or None, int or None
        The layer selected (when the configuration has per-layer settings).
    temperature_tuning : tuple of float or None
        Llama 4 NoPE layers: ``(floor_scale, attn_scale)``; queries at position :math:`m` are
        multiplied by :math:`1 + \\text{attn\\_scale}\\,\\ln(1 + \\lfloor (m+1)/\\text{floor\\_scale}\\rfloor)`.
        ``transformers`` takes :math:`m` from the cache position (the token's index in its row plus
        the cached length), not from ``position_ids``; :meth:`apply` takes it from ``positions``,
        so pass the cache positions to reproduce it for padded or packed rows.
    max_positions : int or None
        GPT-J: its cos/sin table covers positions ``0 .. max_positions - 1`` only.
    defaults : tuple of str
        Fields the configuration left out, filled with the default ``transformers`` documents.
    mrope_section, mrope_assignment : tuple of 3 ints or None, str or None
        M-RoPE families (Qwen2-VL, Qwen2.5-VL, Qwen3-VL): pairs given to (time, height, width) and how
        (:data:`rope_edu.multidim.MROPE_ASSIGNMENTS`); :meth:`apply` then takes 3-D positions.
    """

    family: str
    model_type: str
    head_dim: int
    rotary_dim: int
    rotary_offset: int
    layout: str
    output_layout: str
    base: float
    scaling: str
    scaling_params: Mapping[str, Any] = field(hash=False)
    attention_factor: float
    softmax_scale_factor: float = 1.0
    uses_rope: bool = True
    qk_norm: str = "none"
    layer_type: str | None = None
    layer: int | None = None
    temperature_tuning: tuple[float, float] | None = None
    max_positions: int | None = None
    defaults: tuple[str, ...] = ()
    mrope_section: tuple[int, ...] | None = None
    mrope_assignment: str | None = None

    # --- frequencies ---------------------------------------------------------------------------

    @property
    def rotary_fraction(self) -> float:
        """``rotary_dim / head_dim``."""
        return self.rotary_dim / self.head_dim

    @property
    def depends_on_length(self) -> bool:
        """True when the frequencies change with the sequence length (dynamic NTK, LongRoPE)."""
        method = METHODS[self.scaling]
        return "seq_len" in (*method.required, *method.optional)

    def _frequencies(self, seq_len: int | None) -> tuple[np.ndarray, float]:
        if not self.uses_rope:
            raise ValueError(
                f"this layer uses no RoPE (uses_rope is False: a NoPE layer of {self.family!r}); "
                "it has no frequencies"
            )
        params = dict(self.scaling_params)
        if self.depends_on_length:
            if seq_len is not None:
                seq_len = check_int(seq_len, "seq_len", 1)
            elif self.scaling == "dynamic":
                # what transformers holds after loading: lengths up to max_position_embeddings, no change
                seq_len = params["original_max_position_embeddings"]
            params["seq_len"] = seq_len
        elif seq_len is not None:
            check_int(seq_len, "seq_len", 1)
        return scaled_frequencies(self.scaling, self.rotary_dim, self.base, **params)

    def inv_freq(self, seq_len: int | None = None) -> np.ndarray:
        """Frequencies :math:`\\theta_i` of the ``rotary_dim // 2`` pairs, in radians per position.

        Parameters
        ----------
        seq_len : int, optional
            Sequence length (positions ``0 .. seq_len - 1``). Only dynamic NTK and LongRoPE depend on
            it; without it they return what ``transformers`` holds after loading (plain frequencies,
            LongRoPE's short factors).

        Returns
        -------
        numpy.ndarray, shape (rotary_dim // 2,), float64
        """
        return self._frequencies(seq_len)[0]

    def wavelengths(self, seq_len: int | None = None) -> np.ndarray:
        """:math:`2\\pi/\\theta_i` in positions, shape ``(rotary_dim // 2,)``."""
        return 2.0 * np.pi / self.inv_freq(seq_len)

    def cos_sin(self, positions: Any, seq_len: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per-pair ``attention_factor * cos(m θ_i)`` and ``attention_factor * sin(m θ_i)``.

        Parameters
        ----------
        positions : array_like, shape (...)
            Token positions.
        seq_len : int, optional
            As in :meth:`inv_freq`; by default ``max(positions) + 1``, as ``transformers`` does.

        Returns
        -------
        cos, sin : numpy.ndarray, shape positions.shape + (rotary_dim // 2,), float64
            One value per pair (``transformers`` repeats them over the pair's two coordinates).
        """
        pos = finite_float64(real_array(positions, "positions"), "positions")
        inv_freq, factor = self._frequencies(self._length(pos, seq_len))
        angles = pos[..., None] * inv_freq
        return factor * np.cos(angles), factor * np.sin(angles)

    def _length(self, pos: np.ndarray, seq_len: int | None) -> int | None:
        if seq_len is not None or not self.depends_on_length or pos.size == 0:
            return seq_len
        return max(int(np.floor(np.max(pos))) + 1, 1)

    # --- applying it ---------------------------------------------------------------------------

    def apply(self, x: Any, positions: Any, *, seq_len: int | None = None, role: str = "query") -> np.ndarray:
        """What the family's code does to queries (or keys) ``x`` at ``positions``.

        The rotated block (``rotary_offset`` to ``rotary_offset + rotary_dim``) is rotated in
        ``layout`` pairs, written back in ``output_layout`` order and multiplied by
        ``attention_factor``; the other coordinates pass through unchanged. A NoPE layer returns
        ``x`` unchanged, except that Llama 4 multiplies queries by its temperature.

        Parameters
        ----------
        x : array_like, shape (batch, heads, seq, head_dim)
            Queries or keys after their projection (and QK-norm, where the family has one before RoPE).
        positions : array_like, shape (seq,) or (batch, seq)
            Position ids (a batch of 1 is broadcast). Reset them per document for packed sequences.
            Llama 4's NoPE temperature reads them as cache positions (see ``temperature_tuning``).
            M-RoPE families take (time, height, width) ids of shape ``(3, seq)`` or ``(3, batch, seq)``
            (:func:`rope_edu.multidim.mrope_position_ids`), or ``(seq,)`` for text.
        seq_len : int, optional
            The length that selects dynamic-NTK or LongRoPE frequencies; by default
            ``max(positions) + 1``, as ``transformers`` computes it from ``position_ids`` (its
            dynamic module also keeps the largest length seen until a sequence shorter than
            ``max_position_embeddings`` comes; pass ``seq_len`` to reproduce that).
        role : {"query", "key"}, default "query"
            Keys skip Llama 4's NoPE temperature; everything else is the same for both.

        Returns
        -------
        numpy.ndarray, shape x.shape
            Float input keeps its dtype (angles in float64); integer input becomes float64.
        """
        role = check_choice(role, ("query", "key"), "role")
        x = as_real_array(x, "x")
        if x.ndim != 4:
            raise ValueError(f"x must have shape (batch, heads, seq, head_dim), got a {x.ndim}-d array of shape {x.shape}")
        if x.shape[-1] != self.head_dim:
            raise ValueError(
                f"x.shape[-1] must be head_dim = {self.head_dim} for this {self.family!r} spec, got {x.shape[-1]}"
            )
        if self.mrope_section is not None:
            inv_freq, factor = self._frequencies(seq_len)
            out = apply_mrope(x, positions, mrope_section=self.mrope_section, inv_freq=inv_freq,
                              assignment=self.mrope_assignment, layout=self.layout)
            return (factor * out).astype(out.dtype, copy=False)
        pos = _positions(positions, x.shape[0], x.shape[2])
        out = x.astype(float_dtype(x.dtype), copy=True)
        if self.uses_rope:
            if self.max_positions is not None and pos.size and (pos.min() < 0 or pos.max() >= self.max_positions):
                raise ValueError(
                    f"positions must lie in [0, {self.max_positions}): {self.family!r} looks cos and sin up in a "
                    f"table of n_positions = {self.max_positions} rows"
                )
            inv_freq, factor = self._frequencies(self._length(pos, seq_len))
            part = slice(self.rotary_offset, self.rotary_offset + self.rotary_dim)
            block = apply_rope(x[..., part], pos[:, None, :], inv_freq=inv_freq, layout=self.layout)
            if self.output_layout != self.layout:
                block = _REORDER[(self.layout, self.output_layout)](block)
            out[..., part] = factor * block
        elif self.temperature_tuning is not None and role == "query":
            floor_scale, attn_scale = self.temperature_tuning
            scale = np.log1p(np.floor((pos + 1.0) / floor_scale)) * attn_scale + 1.0
            out = (out * scale[:, None, :, None]).astype(out.dtype, copy=False)
        return out

    # --- for people ------------------------------------------------------------------------------

    def describe(self) -> str:
        """A short readable summary (what to paste into a bug report)."""
        label = FAMILIES[self.family].label
        where = []
        if self.layer is not None:
            where.append(f"layer {self.layer}")
        if self.layer_type is not None:
            where.append(f"layer type {self.layer_type!r}")
        lines = [f"{label} (model_type {self.model_type!r})" + (", " + ", ".join(where) if where else "")]
        if not self.uses_rope:
            lines.append(f"  NoPE layer: queries and keys are not rotated (head_dim {self.head_dim})")
            if self.temperature_tuning is not None:
                fs, s = self.temperature_tuning
                lines.append(f"  queries scaled by 1 + {s:g} * ln(1 + floor((m + 1) / {fs:g})) at position m")
        else:
            start, r = self.rotary_offset, self.rotary_dim
            if self.layout == "half":
                pairs = f"half-split pairs ({start} + i, {start} + i + {r // 2})" if start else f"half-split pairs (i, i + {r // 2})"
            else:
                pairs = f"interleaved pairs ({start} + 2i, {start} + 2i + 1)" if start else "interleaved pairs (2i, 2i + 1)"
            lines.append(
                f"  head_dim {self.head_dim}: rotates {r} dims ({100 * self.rotary_fraction:.0f}%), "
                f"coordinates {start}..{start + r - 1}, in {pairs}"
            )
            if self.mrope_section is not None:
                lines.append(f"  M-RoPE: pairs split {list(self.mrope_section)} among (time, height, width), "
                             f"{self.mrope_assignment}; positions of shape (3, seq) or (3, batch, seq)")
            if self.output_layout != self.layout:
                lines.append(f"  writes the rotated pairs back in {self.output_layout!r} order (queries and keys alike)")
            if r < self.head_dim:
                lines.append(f"  {self.head_dim - r} coordinates pass through without position")
            params = ", ".join(f"{k}={_short(v)}" for k, v in self.scaling_params.items())
            lines.append(f"  base {self.base:,.0f}; scaling {self.scaling!r}" + (f": {params}" if params else ""))
            wl = self.wavelengths()
            lines.append(f"  wavelengths {wl.min():.3g} .. {wl.max():.3g} positions"
                         + (" (at loading; they change with the length)" if self.depends_on_length else ""))
            if self.attention_factor != 1.0:
                lines.append(f"  attention factor {self.attention_factor:.6g} on cos and sin "
                             f"(rotated logits x {self.attention_factor ** 2:.6g})")
        if self.softmax_scale_factor != 1.0:
            lines.append(f"  softmax scale x {self.softmax_scale_factor:.6g} (YaRN's mscale squared)")
        if self.max_positions is not None:
            lines.append(f"  positions limited to 0..{self.max_positions - 1} (precomputed table)")
        lines.append(f"  QK-norm: {QK_NORM[self.qk_norm]}")
        for text in self.defaults:
            lines.append(f"  default used: {text}")
        return "\n".join(lines)


def _short(value: Any) -> str:
    if isinstance(value, tuple) and len(value) > 4:
        return f"[{len(value)} values: {value[0]:.4g} .. {value[-1]:.4g}]"
    return repr(value)


def _positions(positions: Any, batch: int, seq: int) -> np.ndarray:
    """Position ids of shape (seq,) or (batch, seq) as a float64 (batch or 1, seq) array."""
    pos = real_array(positions, "positions")
    if pos.ndim == 1 and pos.shape == (seq,):
        pos = pos[None, :]
    elif not (pos.ndim == 2 and pos.shape[1] == seq and pos.shape[0] in (1, batch)):
        raise ValueError(
            f"positions must have shape (seq,) = ({seq},) or (batch, seq) = ({batch}, {seq}) for x of "
            f"batch {batch} and seq {seq}, got shape {pos.shape}"
        )
    return finite_float64(pos, "positions")


def _as_dict(config: Any) -> dict[str, Any]:
    if isinstance(config, Mapping):
        return dict(config)
    if hasattr(config, "to_dict") and hasattr(config, "model_type"):  # a transformers config object
        data = config.to_dict()
        data.setdefault("model_type", config.model_type)
        return data
    raise TypeError(
        "config must be a transformers configuration object or a dict of its fields (config.json), "
        f"got {type(config).__name__}"
    )


def rope_spec(config: Any, layer_type: str | None = None, *, layer: int | None = None) -> RopeSpec:
    """Read a model configuration and return what its RoPE does, as a :class:`RopeSpec`.

    Parameters
    ----------
    config : transformers config object or dict
        A configuration of a family in :data:`FAMILIES` (``MODEL_TYPES`` lists the ``model_type``
        values), or a plain dict of the same fields, e.g. a loaded ``config.json``; a dict must
        state its ``model_type``. Multimodal Gemma 3 and Llama 4 configs are read through their
        ``text_config``.
    layer_type : str, optional
        Selects per-layer settings: Gemma 3 needs ``"sliding_attention"`` (local) or
        ``"full_attention"`` (global); for Llama 4 ``"chunked_attention"`` layers use RoPE and
        ``"full_attention"`` layers do not. For other families it must be one of the config's
        ``layer_types`` and changes nothing.
    layer : int, optional
        A layer index, for families whose layers differ (Gemma 3, SmolLM3 and Llama 4 NoPE layers).

    Returns
    -------
    RopeSpec

    Raises
    ------
    TypeError
        ``config`` is neither a dict nor a config object; a field of the wrong type.
    ValueError
        Unknown ``model_type`` or scaling ``rope_type``; a missing field (the message names it); a
        rotated fraction that leaves an odd or zero number of dims; a per-layer family without
        ``layer_type``/``layer``.
    """
    data = _as_dict(config)
    model_type = data.get("model_type")
    if model_type in _WRAPPERS:
        key, inner = _WRAPPERS[model_type]
        sub = data.get(key)
        if sub is None and model_type in _FLAT_WRAPPERS:
            sub = {k: v for k, v in data.items() if k != "model_type"}
        if sub is None:
            raise ValueError(f"the {model_type!r} config is missing the field {key!r} (its language model)")
        data = _as_dict(sub)
        data.setdefault("model_type", inner)
        model_type = data["model_type"]
    if model_type is None:
        raise ValueError("the config is missing the field 'model_type' (which family it is, as in config.json)")
    if not isinstance(model_type, str) or model_type not in MODEL_TYPES:
        supported = ", ".join(repr(m) for m in MODEL_TYPES)
        raise ValueError(f"unknown model_type {model_type!r}; supported: {supported}")
    family = FAMILIES[MODEL_TYPES[model_type]]
    cfg = _Config(data, model_type)
    parts = family.read(cfg, layer_type, layer)
    rope: _Rope = parts.pop("rope")
    head_dim, rotary_dim = parts["head_dim"], parts["rotary_dim"]
    offset = parts.setdefault("rotary_offset", 0)
    parts.setdefault("output_layout", parts["layout"])
    for name in ("layout", "output_layout"):
        check_choice(parts[name], LAYOUTS, name)
    if rotary_dim <= 0 or rotary_dim % 2 or offset + rotary_dim > head_dim:
        raise ValueError(f"rotated dims {rotary_dim} at offset {offset} do not fit a head of {head_dim}")
    spec_params = MappingProxyType(dict(rope.params))
    # the frequencies and attention factor as the model holds them after loading (checks every value;
    # dynamic NTK at its own original length is plain RoPE)
    extra = {"seq_len": rope.params["original_max_position_embeddings"]} if rope.method == "dynamic" else {}
    _, attention_factor = scaled_frequencies(rope.method, rotary_dim, rope.base, **rope.params, **extra)
    return RopeSpec(
        family=family.key,
        model_type=model_type,
        base=rope.base,
        scaling=rope.method,
        scaling_params=spec_params,
        attention_factor=float(attention_factor),
        defaults=tuple(cfg.defaults),
        **parts,
    )


# --- released models ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Published:
    """A released model's configuration (the fields RoPE reads) and where its numbers come from.

    Attributes
    ----------
    name : str
        Key in :data:`PUBLISHED`.
    config : mapping
        The fields of its ``config.json`` that :func:`rope_spec` reads, with the released values.
    select : mapping
        Keyword arguments for :func:`rope_spec` (``layer_type`` or ``layer``) where layers differ.
    checkpoint : str
        How the released checkpoint lays out the rotated pairs, in the book's words.
    trained, extended : int or None
        Context length of pre-training, and the length reached by the model's long-context
        stage or scaling, in tokens, as its authors report them (None where not reported).
    sources : tuple of str
        Keys in ``book/references.bib``.
    note : str
        What the sources do not state, or what is a stand-in.
    """

    name: str
    config: Mapping[str, Any] = field(hash=False)
    select: Mapping[str, Any] = field(hash=False)
    checkpoint: str
    trained: int | None
    extended: int | None
    sources: tuple[str, ...]
    note: str = ""

    def spec(self) -> RopeSpec:
        """:func:`rope_spec` of :attr:`config` with :attr:`select`."""
        return rope_spec(dict(self.config), **self.select)


def _stand_in_longrope(n: int) -> dict[str, list[float]]:
    # Phi-3's searched factors are not reproduced here: smooth stand-ins of the right length, 1 for
    # the fastest pair rising to ~1.1 (short) and to ~32 (long, the extension factor) for the slowest.
    i = np.arange(n) / (n - 1)
    return {"short_factor": (1.0 + 0.1 * i**2).round(4).tolist(), "long_factor": (32.0 ** (i**2)).round(4).tolist()}


_LLAMA_HEADS = {"hidden_size": 4096, "num_attention_heads": 32}
_GEMMA3_4B = {
    "model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
    "num_hidden_layers": 34, "sliding_window": 1024, "sliding_window_pattern": 6, "rope_theta": 1_000_000.0,
    "rope_local_base_freq": 10_000.0, "rope_scaling": {"rope_type": "linear", "factor": 8.0},
}
_NOT_IN_REPORT = "the RoPE fields are those of the released config.json; the report does not list them"

#: Released models, by name. ``PUBLISHED[name].spec()`` is their RoPE; chapter 10 tabulates them.
PUBLISHED: dict[str, Published] = {p.name: p for p in [
    Published("Llama 2 7B", MappingProxyType({"model_type": "llama", **_LLAMA_HEADS, "rope_theta": 10_000.0,
                                              "max_position_embeddings": 4096}), MappingProxyType({}),
              "half (Meta's interleaved rows permuted by the Hugging Face conversion)", 4096, None,
              ("touvron2023llama2",), _NOT_IN_REPORT),
    Published("Code Llama 7B", MappingProxyType({"model_type": "llama", **_LLAMA_HEADS, "rope_theta": 1_000_000.0,
                                                 "max_position_embeddings": 16384}), MappingProxyType({}),
              "half (Hugging Face conversion)", 16384, 100_000, ("roziere2023codellama",)),
    Published("Llama 3.1 8B", MappingProxyType({
        "model_type": "llama", **_LLAMA_HEADS, "rope_theta": 500_000.0, "max_position_embeddings": 131072,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192}}), MappingProxyType({}),
              "half (Hugging Face conversion)", 8192, 131072, ("grattafiori2024llama3", "meta2024llamamodels")),
    Published("Llama 4 Scout", MappingProxyType({
        "model_type": "llama4_text", "hidden_size": 5120, "num_attention_heads": 40, "head_dim": 128,
        "num_hidden_layers": 48, "rope_theta": 500_000.0, "max_position_embeddings": 10485760,
        "no_rope_layer_interval": 4, "use_qk_norm": True, "attn_temperature_tuning": True, "floor_scale": 8192,
        "attn_scale": 0.1, "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                                            "high_freq_factor": 1.0, "original_max_position_embeddings": 8192}}),
              MappingProxyType({"layer": 0}), "interleaved (complex multiplication in its code)", 262144, 10_000_000,
              ("meta2025llama4",), "contexts as announced; the RoPE fields are those of the released config.json"),
    Published("Mistral 7B v0.1", MappingProxyType({"model_type": "mistral", **_LLAMA_HEADS, "head_dim": 128,
                                                   "rope_theta": 10_000.0, "max_position_embeddings": 32768}),
              MappingProxyType({}), "half (Hugging Face conversion)", 8192, None, ("jiang2023mistral",),
              "rope_theta from the released config.json"),
    Published("Qwen2.5 7B", MappingProxyType({
        "model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28, "rope_theta": 1_000_000.0,
        "max_position_embeddings": 32768,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}),
              MappingProxyType({}), "half", 32768, 131072, ("qwen2024qwen25",),
              "the YaRN block is the one the model card adds for inputs past 32K, not part of the default config"),
    Published("Qwen3 8B", MappingProxyType({
        "model_type": "qwen3", "hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128,
        "rope_theta": 1_000_000.0, "max_position_embeddings": 40960,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}),
              MappingProxyType({}), "half", 32768, 131072, ("yang2025qwen3",),
              "the YaRN block is the one the model card adds for inputs past 32K, not part of the default config"),
    Published("OLMo 2 7B", MappingProxyType({"model_type": "olmo2", **_LLAMA_HEADS, "rope_theta": 500_000.0,
                                             "max_position_embeddings": 4096}), MappingProxyType({}), "half", 4096,
              None, ("olmo2024olmo2",), "rope_theta from the released config.json (not verified here)"),
    Published("Gemma 3 4B, local layers", MappingProxyType(_GEMMA3_4B), MappingProxyType({"layer_type": "sliding_attention"}),
              "half", 32768, 131072, ("gemma2025gemma3",)),
    Published("Gemma 3 4B, global layers", MappingProxyType(_GEMMA3_4B), MappingProxyType({"layer_type": "full_attention"}),
              "half", 32768, 131072, ("gemma2025gemma3",)),
    Published("DeepSeek-V3", MappingProxyType({
        "model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "kv_lora_rank": 512, "rope_theta": 10_000.0,
        "max_position_embeddings": 163840,
        "rope_scaling": {"type": "yarn", "factor": 40, "beta_fast": 32, "beta_slow": 1, "mscale": 1.0,
                         "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096}}), MappingProxyType({}),
              "interleaved rotary part (rope_interleave)", 4096, 131072, ("deepseek2024v3", "deepseek2024v2")),
    Published("Phi-3 mini 128K", MappingProxyType({
        "model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "rope_theta": 10_000.0,
        "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
        "rope_scaling": {"type": "longrope", **_stand_in_longrope(48)}}), MappingProxyType({}), "half", 4096, 131072,
              ("abdin2024phi3", "ding2024longrope"),
              "short_factor and long_factor are smooth stand-ins of the right length (48 values), not the searched lists"),
    Published("Phi-2", MappingProxyType({"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32,
                                         "partial_rotary_factor": 0.4, "rope_theta": 10_000.0,
                                         "max_position_embeddings": 2048, "qk_layernorm": False}),
              MappingProxyType({}), "half", 2048, None, ("javaheripi2023phi2",),
              "the blog does not list the RoPE fields: they are those of the released config.json"),
    Published("GPT-NeoX-20B", MappingProxyType({"model_type": "gpt_neox", "hidden_size": 6144, "num_attention_heads": 64,
                                                "rotary_pct": 0.25, "rotary_emb_base": 10000,
                                                "max_position_embeddings": 2048}),
              MappingProxyType({}), "half", 2048, None, ("black2022gptneox",)),
    Published("Pythia 410M", MappingProxyType({"model_type": "gpt_neox", "hidden_size": 1024, "num_attention_heads": 16,
                                               "rotary_pct": 0.25, "rotary_emb_base": 10000,
                                               "max_position_embeddings": 2048}),
              MappingProxyType({}), "half", 2048, None, ("biderman2023pythia",)),
    Published("GPT-J 6B", MappingProxyType({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64,
                                            "n_positions": 2048}),
              MappingProxyType({}), "interleaved", 2048, None, ("wang2021gptj",)),
    Published("GLM-4 9B Chat", MappingProxyType({"model_type": "glm", "hidden_size": 4096, "num_attention_heads": 32,
                                                 "head_dim": 128, "partial_rotary_factor": 0.5,
                                                 "rope_theta": 5_000_000.0, "max_position_embeddings": 131072}),
              MappingProxyType({}), "interleaved pairs in the rotated half", None, 131072, ("glm2024chatglm",),
              "the released glm-4-9b-chat config.json states rope_ratio 500 and seq_length 131072; transformers' "
              "GLM converter writes rope_theta = 10000 * rope_ratio and max_position_embeddings = seq_length"),
    Published("SmolLM3 3B", MappingProxyType({"model_type": "smollm3", "hidden_size": 2048, "num_attention_heads": 16,
                                              "num_hidden_layers": 36, "rope_theta": 5_000_000.0,
                                              "max_position_embeddings": 65536, "no_rope_layer_interval": 4}),
              MappingProxyType({"layer": 0}), "half", 65536, 131072, ("hf2025smollm3",)),
    Published("GPT-OSS 20B", MappingProxyType({
        "model_type": "gpt_oss", "hidden_size": 2880, "num_attention_heads": 64, "head_dim": 64, "rope_theta": 150_000.0,
        "max_position_embeddings": 131072,
        "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                         "original_max_position_embeddings": 4096}}), MappingProxyType({}), "half", 4096, 131072,
              ("openai2025gptoss",), "trained length read from original_max_position_embeddings"),
    Published("MiniMind", MappingProxyType({"model_type": "minimind", "hidden_size": 768, "num_attention_heads": 8,
                                            "rope_theta": 1_000_000.0, "max_position_embeddings": 32768}),
              MappingProxyType({}), "half", None, None, ("gong2024minimind",),
              "the defaults of MiniMindConfig in model_minimind.py"),
]}
