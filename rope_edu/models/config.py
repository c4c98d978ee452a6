"""Reading a configuration: the fields a family's RoPE reads, with errors that name the field.

:class:`_Config` wraps a config dict and records every default it uses; :func:`_read_rope` reads one
layer type's base, scaling type and scaling parameters (one parameter reader per ``rope_type`` in
:data:`_SCALINGS`: a new scaling rule goes there, with its frequencies in :mod:`rope_edu.scaling`);
:func:`_fraction` and :func:`_rotated` read how much of a head rotates. Nothing here knows a family:
:mod:`.reader` passes each family's data in.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

#: The ``transformers`` RotaryEmbeddingConfigMixin default for ``rope_theta`` (``default_theta``).
_HF_THETA = 10000.0



class _Config:
    """A configuration as a dict: errors name the field, used defaults are recorded."""

    def __init__(self, data: Mapping[str, Any], model_type: str, family: Any = None) -> None:
        self.data = data
        self.model_type = model_type
        self.family = family  # the Family row being read (its class_defaults)
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

    def class_default(self, name: str) -> Any:
        """The field's value, or the family's config class default for it (:attr:`Family.class_defaults`), recorded."""
        if self.family is None or name not in self.family.class_defaults:
            raise KeyError(f"the family row has no class_defaults entry for {name!r}")
        return self.default(name, self.family.class_defaults[name], f"{self.family.label} config class default")

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


def _rope_block(cfg: _Config, ignored: Sequence[str] = (), label: str = "") -> tuple[dict[str, Any], str]:
    """The RoPE parameter dict: v5 ``rope_parameters`` or v4 ``rope_scaling``; with both (and no conflict), ``rope_scaling``
    alone, as transformers 5 reads it (what only ``rope_parameters`` states is recorded as not read). A field in
    ``ignored`` (a family's :attr:`Family.ignored_scaling`) is not read, and a note says so."""
    blocks = []
    for name in ("rope_parameters", "rope_scaling"):
        value = cfg.data.get(name)
        if value is None:
            continue
        if name in ignored:
            cfg.defaults.append(f"{name} = {value!r} is not read: {label}'s config class keeps {name} as a field of "
                                "its own and never moves it into rope_parameters, so its code uses plain RoPE at "
                                "rope_theta")
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
            # transformers 5 replaces rope_parameters by rope_scaling wholesale, so a base stated only in
            # rope_parameters is silently lost (and the config class's default_theta used instead)
            values = "; ".join(f"{n1}.{k} = {b1[k]!r} but {n2}.{k} = {b2[k]!r}" for k in clash)
            raise ValueError(
                f"rope_parameters and rope_scaling disagree: {values}. transformers 5 would keep rope_scaling "
                "only and drop the rest of rope_parameters (its rope_theta included); give one of them"
            )
        # no clash, but transformers 5 still keeps rope_scaling alone (and transformers 4 never reads
        # rope_parameters): what only rope_parameters states is not read, and the base comes from the top level
        # or the config class's default
        for k in sorted(set(b1) - set(b2)):
            cfg.defaults.append(f"{n1}.{k} = {b1[k]!r} is not read: transformers 5 keeps {n2} alone when a config "
                                f"has both (and transformers 4 never reads {n1})")
        return b2, n2
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


def _yarn_params(cfg: _Config, block: dict, where: str, *, nested: bool = False, **_: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "factor": _param(block, "factor", where),
        "original_max_position_embeddings": _original_length(cfg, block, where),
    }
    # transformers: `rope_parameters.get("beta_fast") or 32`, `... or 1`, truncate defaults to True
    for name, default in (("beta_fast", 32.0), ("beta_slow", 1.0)):
        if block.get(name):
            params[name] = block[name]
        else:
            cfg.defaults.append(f"{where}.{name} = {default!r} (transformers' YaRN default; the config does not state it)")
    if nested:
        # transformers' YaRN reads `config.rope_parameters.get("truncate", True)`: with parameters nested
        # by layer type that is the outer dict, so a per-layer-type truncate is never read (nor a flat
        # v4 rope_scaling's, once the config class has nested it: OLMo 3)
        outer = cfg.data.get("rope_parameters")
        truncate = outer.get("truncate", True) if isinstance(outer, Mapping) and block is not outer else True
        if block.get("truncate") is not None and block["truncate"] != truncate:
            cfg.defaults.append(f"{where}.truncate = {block['truncate']!r} is not read: transformers' YaRN reads "
                                f"truncate from the top level of rope_parameters ({truncate!r})")
        params["truncate"] = truncate
    elif block.get("truncate") is not None:
        params["truncate"] = block["truncate"]
    else:
        cfg.defaults.append(f"{where}.truncate = True (transformers' YaRN default; the config does not state it)")
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


def _proportional_params(cfg: _Config, block: dict, where: str, **_: Any) -> dict[str, Any]:
    # transformers: `rope_parameters.get("factor", 1.0)` divides every frequency
    if block.get("factor") is None:
        return {}
    return {"factor": block["factor"]}


def _ntk_alpha_params(cfg: _Config, block: dict, where: str, **_: Any) -> dict[str, Any]:
    # Hunyuan: a "dynamic" block with a truthy alpha stretches the base to rope_theta * alpha**(d / (d - 2)),
    # d = config.head_dim, the same at every length. transformers' validation of "dynamic" still requires
    # factor, which this type never uses; without head_dim the code fails.
    factor = _param(block, "factor", where)
    cfg.require("head_dim", " (the NTK-alpha base rope_theta * alpha**(d / (d - 2)) reads d = head_dim; "
                            "without it transformers fails)")
    cfg.defaults.append(f"{where}.factor = {factor!r} is not used: with alpha = {block['alpha']!r} the code stretches "
                        "the base (NTK-alpha) instead of dynamic NTK")
    return {"alpha": _param(block, "alpha", where)}


#: transformers' ``rope_type`` -> (key of rope_edu.scaling.METHODS or :data:`EXTRA_SCALINGS`, parameter reader).
_SCALINGS: dict[str, tuple[str, Callable[..., dict[str, Any]]]] = {
    "default": ("default", _default_params),
    "linear": ("linear", _linear_params),
    "dynamic": ("dynamic", _dynamic_params),
    "yarn": ("yarn", _yarn_params),
    "llama3": ("llama3", _llama3_params),
    "longrope": ("longrope", _longrope_params),
    "proportional": ("proportional", _proportional_params),
    "ntk_alpha": ("ntk_alpha", _ntk_alpha_params),
}

#: Types of :data:`_SCALINGS` a config reaches only through a family's ``retype`` (Hunyuan's "dynamic" with
#: alpha): a config that states them is refused, as transformers' validation refuses it.
_RETYPED_ONLY = frozenset({"ntk_alpha"})


def _read_rope(cfg: _Config, *, theta_keys: Sequence[str] = ("rope_theta",), default_theta: float | None = _HF_THETA,
               theta_source: str = "transformers' default_theta", block: dict | None = None, where: str | None = None,
               rename: Mapping[str, str] | None = None, allowed: Sequence[str] | None = None,
               top_level_original: bool = False, nested: bool = False,
               retype: Mapping[str, tuple[str, str]] | None = None, note: str = "") -> _Rope:
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
    reached = set()
    for stated, (name, new) in (retype or {}).items():
        reached.add(new)
        if rope_type == stated and block.get(name):  # the code tests `rope_parameters.get(name)`
            rope_type = new
    valid = list(allowed) if allowed is not None else [t for t in _SCALINGS if t not in _RETYPED_ONLY or t in reached]
    if not isinstance(rope_type, str) or rope_type not in valid:
        raise ValueError(
            f"unknown {where}.rope_type {rope_type!r} for model_type {cfg.model_type!r}; "
            f"expected one of {', '.join(repr(v) for v in valid)}" + (f" ({note})" if note else "")
        )
    method, reader = _SCALINGS[rope_type]
    params = reader(cfg, block, where, top_level_first=top_level_original, nested=nested)
    return _Rope(base, method, params, where, dict(block))


def _fraction(cfg: _Config, rope: _Rope, names: Sequence[str], default: float | None, source: str) -> tuple[float, str]:
    """The rotated fraction of a head and the field it was read from (stated twice: they must agree)."""
    stated = []
    for name in names:
        for value, label in ((rope.block.get(name), f"{rope.where}.{name}"), (cfg.data.get(name), name)):
            if value is not None:
                if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
                    raise TypeError(f"{label} must be a real number in (0, 1], got {value!r}")
                if not 0.0 < float(value) <= 1.0:
                    raise ValueError(f"{label} must be a real number in (0, 1] (the rotated fraction of a head), got {value}")
                stated.append((float(value), label))
    if len({v for v, _ in stated}) > 1:
        raise ValueError("the config states different rotated fractions: "
                         + ", ".join(f"{label} = {v!r}" for v, label in stated))
    if stated:
        return stated[0]
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

