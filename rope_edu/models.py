"""RoPE as the models you use configure it: read a configuration, get what the model's code does.

::

    from rope_edu import rope_spec
    spec = rope_spec(config)            # a transformers config object, or a config.json dict
    print(spec.describe())              # rotated dims, pair layout, base, scaling, attention factor
    q_rot = spec.apply(q, positions)    # what the family's code does to a query

Each supported family is one row of data in :data:`FAMILIES` (a :class:`Family`): how that family
names its RoPE fields (``rope_parameters``, flat or nested by layer type, or ``rope_scaling`` +
``rope_theta``, ``rotary_pct``, ``rotary_dim``, ``qk_rope_head_dim``, ``no_rope_layers``, ...) and
what its code in Hugging Face ``transformers`` (pinned 5.24.0 in ``requirements.txt``) does with
them: how many coordinates of a head rotate and where they sit, which coordinates form a pair (the
book's layouts, :data:`rope_edu.LAYOUTS`), the frequencies (every scaling method is an entry of
:data:`rope_edu.scaling.METHODS`, plus :data:`EXTRA_SCALINGS`), the factor on cos and sin, and
which layers use RoPE at all. One standard reader turns a row and a configuration into a
:class:`RopeSpec`; only GPT-J/CodeGen and MiniMind have readers of their own. Families of the
installed ``transformers`` that rope_spec refuses are listed, with what is missing, in
:data:`UNSUPPORTED`. ``tests/test_models.py`` checks families against their rotary-embedding class
and apply function; ``tests/test_model_sweep.py`` runs every decoder-only RoPE family of the
installed ``transformers`` layer by layer. This module imports neither ``transformers`` nor ``torch``.

What ``transformers`` 5.24 does silently, and what rope_spec does about it:

* Several config classes drop a ``rope_theta`` keyword and keep their default base
  (``GPTNeoXConfig``, which reads ``rotary_emb_base``; ``Gemma4TextConfig``, ``Ministral3Config``,
  ``ApertusConfig``, ``CwmConfig``...: :attr:`Family.ignored_theta`); ``Olmo3Config`` gives it to the
  full-attention layers only, the sliding ones keep 500000. rope_spec uses the base the code uses and
  records the ignored value in :attr:`RopeSpec.defaults`.
* A configuration with both ``rope_parameters`` and ``rope_scaling``: the config class keeps
  ``rope_scaling`` and drops the rest of ``rope_parameters``, its ``rope_theta`` included (a Qwen3
  config.json with the model card's YaRN block added reads base 10000 instead of 1e6). rope_spec
  refuses any two fields that state the same value differently, naming both values.
* For multi-head latent attention (DeepSeek-V3, Kimi K2, GLM-4.7-Flash, Mistral 4...) ``head_dim`` in
  ``to_dict()`` is only the rotary part (``qk_rope_head_dim``); rope_spec reads the query head as
  ``qk_nope_head_dim + qk_rope_head_dim``.
* YaRN reads ``truncate`` from the top level of ``rope_parameters``: with parameters nested by layer
  type (OLMo 3), a per-layer-type ``truncate`` is never read; rope_spec uses what the code reads.
* Config classes write into the ``rope_scaling`` / ``rope_parameters`` dicts passed to them
  (``rope_theta``, ``rope_type``...): pass copies.

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
    "EXTRA_SCALINGS",
    "FAMILIES",
    "NOT_ATTENTION",
    "UNSUPPORTED",
    "MODEL_TYPES",
    "PUBLISHED",
    "PUBLISHED_2025",
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
    """The RoPE parameter dict: v5 ``rope_parameters`` or v4 ``rope_scaling``; with both (and no conflict), ``rope_scaling``
    alone, as transformers 5 reads it (what only ``rope_parameters`` states is recorded as not read)."""
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


#: transformers' ``rope_type`` -> (key of rope_edu.scaling.METHODS or :data:`EXTRA_SCALINGS`, parameter reader).
_SCALINGS: dict[str, tuple[str, Callable[..., dict[str, Any]]]] = {
    "default": ("default", _default_params),
    "linear": ("linear", _linear_params),
    "dynamic": ("dynamic", _dynamic_params),
    "yarn": ("yarn", _yarn_params),
    "llama3": ("llama3", _llama3_params),
    "longrope": ("longrope", _longrope_params),
    "proportional": ("proportional", _proportional_params),
}


def _read_rope(cfg: _Config, *, theta_keys: Sequence[str] = ("rope_theta",), default_theta: float | None = _HF_THETA,
               theta_source: str = "transformers' default_theta", block: dict | None = None, where: str | None = None,
               rename: Mapping[str, str] | None = None, allowed: Sequence[str] | None = None,
               top_level_original: bool = False, nested: bool = False) -> _Rope:
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


# --- layers -----------------------------------------------------------------------------------

#: Layer types that are not softmax attention (linear attention, state-space, convolution or MLP-only
#: blocks): they have no RoPE, and ``rope_spec(config, layer=i)`` says so (``uses_rope`` False).
NOT_ATTENTION = frozenset({"linear_attention", "mamba", "mamba2", "conv", "ssm", "recurrent"})

#: The two layer types of the local/global families, for messages and configs that list none.
_LOCAL_GLOBAL = ("sliding_attention", "full_attention")


def _check_types(types: Any, name: str = "layer_types") -> list[str]:
    if isinstance(types, str) or not isinstance(types, Sequence) or not all(isinstance(t, str) for t in types):
        raise TypeError(f"{name} must be a list of strings, got {types!r}")
    return list(types)


def _rope_flags(cfg: _Config, source: str, interval_default: int = 4) -> list[bool]:
    """Per layer: does it use RoPE? ``no_rope_layers`` (1 = RoPE, 0 = NoPE), else every
    ``no_rope_layer_interval``-th layer is NoPE (the config class builds the list that way)."""
    flags = cfg.data.get("no_rope_layers")
    if flags is None:
        interval = _positive_int(cfg.default("no_rope_layer_interval", interval_default, source),
                                 "no_rope_layer_interval")
        flags = [int((i + 1) % interval != 0) for i in range(cfg.size("num_hidden_layers"))]
    if isinstance(flags, str) or not all(isinstance(f, (bool, numbers.Integral)) for f in flags):
        raise TypeError(f"no_rope_layers must be a list of 0/1 flags (1 = the layer uses RoPE), got {flags!r}")
    return [bool(f) for f in flags]


def _select_layer(cfg: _Config, layer_type: Any, layer: Any, types: list[str] | None,
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


# --- the families, as data ----------------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """One model family that :func:`rope_spec` reads, described by data.

    Most families differ only in data: where the rotated dims sit and how many, the pair layout,
    the default base, which layers rotate, how a per-layer-type config is keyed. The standard reader
    (:func:`_read_family`) turns a configuration and these fields into a :class:`RopeSpec`; a family
    whose code needs more (GPT-J's fixed table, MiniMind outside transformers) names its own ``read``.

    Attributes
    ----------
    key, label : str
        Key in :data:`FAMILIES`; the models it covers.
    model_types : tuple of str
        The ``model_type`` values of their configurations.
    code : str
        Where the family's RoPE code lives (the reference the tests compare with).
    layout : {"half", "interleaved"}
        Which coordinates of the rotated block form a pair in the family's apply function.
    rotary : {"head", "fraction", "rotary_dim", "mla"}
        How many dims rotate: the whole head (a stated ``partial_rotary_factor`` other than 1 is an
        error: the family's code would ignore it or fail); the leading ``int(head_dim * fraction)``
        dims (``fraction_keys``, default ``default_fraction``); the leading ``rotary_dim`` dims; or
        multi-head latent attention: ``qk_rope_head_dim`` dims after ``qk_nope_head_dim`` pass-through dims.
    fraction_keys : tuple of str
        Fields naming the rotated fraction (v5 ``partial_rotary_factor``, GPT-NeoX's v4 ``rotary_pct``).
    rotary_dim_key : str or None
        A legacy field naming the rotated dims instead (MiniMax-M2's released ``rotary_dim``): its
        config class turns it into ``partial_rotary_factor = rotary_dim / head_dim``.
    default_fraction : float
        The config class's default fraction.
    theta_keys : tuple of str
        Top-level fields naming the base (v4 ``rope_theta``, GPT-NeoX's ``rotary_emb_base``).
    ignored_theta : tuple of str
        Top-level fields naming a base that the config class silently drops (GPTNeoXConfig,
        Gemma4TextConfig, Ministral3Config... ignore a ``rope_theta`` keyword and keep their default):
        rope_spec uses the default too and says so in :attr:`RopeSpec.defaults`; stated together with
        a different ``rope_parameters`` base, it is an error.
    nested_only : bool
        The config class fills in ``rope_parameters`` nested by layer type when a config gives none
        (Gemma 4, LFM3...): a configuration without them is refused rather than guessed.
    default_theta : float or mapping
        The base transformers uses when a config states none, one value or one per layer type.
    head : str
        ``"head_dim"``: ``head_dim`` when stated, else ``head_default`` or, without one,
        ``hidden_size // num_attention_heads``; ``"split"``: always the latter; any other name: that
        field (JetMoE's ``kv_channels``).
    head_default : int or None
        The config class's own ``head_dim`` default, for a config that leaves ``head_dim`` out (Gemma 3:
        256, not ``hidden_size // num_attention_heads``; Qwen3: 128). A ``head_dim`` stated as null gets
        ``hidden_size // num_attention_heads`` (what the config classes that accept null compute).
    type_head : mapping or None
        Layer type -> ``(field, default)``: the config class builds a per-layer ``head_dim`` for the
        layers of that type from ``field`` (Gemma 4's ``global_head_dim``, default 512, for
        ``full_attention`` layers), unless the config gives its own ``per_layer_config``.
    qk_norm : str
        Key in :data:`QK_NORM`.
    rope_types : tuple of str or None
        Layer types whose attention rotates; other attention layers use no RoPE (Cohere 2 and
        EXAONE 4 rotate sliding-window layers only). None: every attention layer.
    windowless : {"keep", "all", "none"}
        With ``rope_types`` and a config whose ``sliding_window`` is None: ``rope_types`` still
        decide (``"keep"``), every layer rotates (EXAONE 4: the code tests the window), or none does
        (Cohere 2: only layers with a window rotate).
    nope_list : str or None
        A per-layer list field whose falsy entries mark NoPE layers (MuseGlimmer's ``layer_rope_theta``).
    nope_indices : str or None
        A field listing layer indices without RoPE (Mllama's ``cross_attention_layers``).
    attention_indices : str or None
        A field listing the layers that have attention (Bamba's ``attn_layer_indices``); the others
        are state-space layers without RoPE, when a config lists no ``layer_types``.
    rope_keys : mapping or None
        Layer type -> the key of its parameters in a nested ``rope_parameters``, where those keys are
        not the layer types (DeepSeek-V4: ``"main"`` for sliding-window layers, ``"compress"`` for
        the others; ``"*"`` is any other type). None: the layer type itself.
    rotary_at : {"start", "end"}
        Where a partially rotated head's rotated dims sit: leading (most families) or trailing
        (DeepSeek-V4).
    layer_notes : mapping or None
        Layer type -> what else its attention does with positions that the spec does not model.
    switch : tuple or None
        ``(field, value, default)``: the family uses RoPE only when ``field`` (default ``default``)
        equals ``value`` (GraniteMoeHybrid's ``position_embedding_type = "rope"``); otherwise no layer rotates.
    clockwise : bool
        The family's ``rotate_half`` has flipped signs: pairs turn by :math:`-m\\theta_i` (NanoChat).
    cycle_types : str or None
        A field listing a cycle of layer types that repeats over the layers (RecurrentGemma's
        ``block_types``), read when a config lists no ``layer_types``.
    pattern : tuple or None
        ``(field, default)`` or ``(field, default, other type)`` that builds ``layer_types`` when a
        config lists none: every ``field``-th layer is ``full_attention``, the others
        ``sliding_attention`` (Gemma 3) or the other type given (Qwen3-Next's
        ``full_attention_interval``: ``linear_attention``, layers without attention).
    nope_layers : tuple or None
        ``(interval default, RoPE layer type, NoPE layer type)``: the family reads ``no_rope_layers``
        or ``no_rope_layer_interval`` (SmolLM3, Llama 4), and names the layer types by them.
    local_theta : tuple or None
        ``(field, layer type)``: a v4 config's separate base for that layer type (Gemma 3's
        ``rope_local_base_freq``), whose layers then use plain RoPE.
    flat_types : tuple of str or None
        Layer types a v4 (flat) ``rope_theta``/``rope_scaling`` reaches; the other types keep the
        config class's default base and plain RoPE (OLMo 3's config class does this).
    interleave : tuple or None
        ``(field, default)``: a flag that switches MLA families between interleaved pairs written
        back half-split (``True``) and half-split pairs (DeepSeek-V3's ``rope_interleave``).
    output_layout : str or None
        The order the code writes the rotated pairs back, when it differs from ``layout``.
    mrope : tuple or None
        ``(assignment, default mrope_section)`` for M-RoPE families.
    scalings : tuple of str or None
        The ``rope_type`` values the family accepts (None: every one :func:`rope_spec` knows).
    rename : mapping
        ``rope_type`` aliases the config class rewrites (Phi-3: ``"su"`` -> ``"longrope"``).
    default_block : mapping or None
        RoPE parameters the config class fills in when a config gives none (GPT-OSS's YaRN).
    top_level_original : bool
        A top-level ``original_max_position_embeddings`` wins over the RoPE dict's (Phi-3).
    extra : callable or None
        ``extra(cfg, parts) -> dict`` for fields beyond RoPE itself that the family's attention
        applies (Llama 4's NoPE temperature, MLA's softmax scale).
    read : callable or None
        ``read(cfg, layer_type, layer) -> dict`` replacing the standard reader.
    """

    key: str
    label: str
    model_types: tuple[str, ...]
    code: str
    layout: str = "half"
    rotary: str = "head"
    fraction_keys: tuple[str, ...] = ("partial_rotary_factor",)
    rotary_dim_key: str | None = None
    default_fraction: float = 1.0
    theta_keys: tuple[str, ...] = ("rope_theta",)
    ignored_theta: tuple[str, ...] = ()
    nested_only: bool = False
    default_theta: float | Mapping[str, float] = _HF_THETA
    head: str = "head_dim"
    head_default: int | None = None
    type_head: Mapping[str, tuple[str, int]] | None = field(default=None, repr=False)
    qk_norm: str = "none"
    rope_types: tuple[str, ...] | None = None
    windowless: str = "keep"
    nope_list: str | None = None
    nope_indices: str | None = None
    attention_indices: str | None = None
    rope_keys: Mapping[str, str] | None = field(default=None, repr=False)
    rotary_at: str = "start"
    layer_notes: Mapping[str, str] | None = field(default=None, repr=False)
    switch: tuple[str, Any, Any] | None = None
    clockwise: bool = False
    pattern: tuple[str, int] | tuple[str, int, str] | None = None
    cycle_types: str | None = None
    nope_layers: tuple[int, str, str] | None = None
    local_theta: tuple[str, str] | None = None
    flat_types: tuple[str, ...] | None = None
    interleave: tuple[str, bool] | None = None
    output_layout: str | None = None
    mrope: tuple[str, tuple[int, int, int]] | None = None
    scalings: tuple[str, ...] | None = None
    rename: Mapping[str, str] = field(default_factory=dict, repr=False)
    default_block: Mapping[str, Any] | None = field(default=None, repr=False)
    top_level_original: bool = False
    extra: Callable[[_Config, dict[str, Any]], dict[str, Any]] | None = field(default=None, repr=False)
    read: Callable[[_Config, Any, Any], dict[str, Any]] | None = field(default=None, repr=False)

    def theta_default(self, layer_type: str | None) -> float:
        if isinstance(self.default_theta, Mapping):
            if layer_type in self.default_theta:
                return float(self.default_theta[layer_type])
            return float(self.default_theta["*"])
        return float(self.default_theta)


def _nested_keys(family: Family, block: Any, types: Sequence[str] | None) -> list[str]:
    """The keys ``rope_parameters`` is nested under (layer types), or [] for a flat dict."""
    if not isinstance(block, Mapping):
        return []
    labels = set(types or ()) | set(_LOCAL_GLOBAL) | set(family.rope_types or ()) | set((family.rope_keys or {}).values())
    if family.nope_layers:
        labels |= set(family.nope_layers[1:])
    return [k for k, v in block.items() if k in labels and (v is None or isinstance(v, Mapping))]


def _layer_types_of(family: Family, cfg: _Config, needed: bool) -> list[str] | None:
    types = cfg.data.get("layer_types")
    if types is not None:
        return _check_types(types)
    if family.nope_layers is not None and (needed or cfg.has("num_hidden_layers") or cfg.has("no_rope_layers")):
        interval, rope_type, nope_type = family.nope_layers
        flags = _rope_flags(cfg, f"{family.label} config default", interval)
        return [rope_type if f else nope_type for f in flags]
    if family.attention_indices is not None and cfg.has("num_hidden_layers"):
        listed = cfg.data.get(family.attention_indices) or ()
        return ["full_attention" if i in listed else "mamba" for i in range(cfg.size("num_hidden_layers"))]
    if family.cycle_types is not None and cfg.has(family.cycle_types) and cfg.has("num_hidden_layers"):
        cycle = _check_types(cfg.data[family.cycle_types], family.cycle_types)
        return [cycle[i % len(cycle)] for i in range(cfg.size("num_hidden_layers"))]
    if family.pattern is not None and (needed or cfg.has("num_hidden_layers")):
        name, default, *other = family.pattern
        every = _positive_int(cfg.default(name, default, f"{family.label} config default"), name)
        rest = other[0] if other else "sliding_attention"
        return [rest if (i + 1) % every else "full_attention" for i in range(cfg.size("num_hidden_layers"))]
    return None


def _layer_kind(family: Family, cfg: _Config, types: list[str] | None, nested: list[str], flags: list[bool] | None,
                index: int | None, layer_type: str | None) -> tuple[bool, str | None, str]:
    """(uses RoPE, the key of its RoPE parameters, why not) for one layer (or one layer type)."""
    if layer_type in NOT_ATTENTION:
        return False, None, f"a {layer_type!r} layer has no attention, so no RoPE"
    if family.switch is not None:
        name, on, default = family.switch
        value = cfg.default(name, default, f"{family.label} config default")
        if value != on:
            return False, None, f"{name} = {value!r}: {family.label} uses RoPE only when it is {on!r}"
    if family.rope_types is not None and family.windowless != "keep" and not cfg.has("sliding_window"):
        if family.windowless == "none":
            return False, None, f"{family.label} rotates only layers with a sliding window, and sliding_window is None"
    elif family.rope_types is not None and layer_type is not None and layer_type not in family.rope_types:
        return False, None, f"{family.label} applies RoPE only in {', '.join(map(repr, family.rope_types))} layers"
    if family.nope_list is not None and index is not None:
        marks = cfg.data.get(family.nope_list)
        if marks is None:
            raise ValueError(f"the {cfg.model_type!r} config has no {family.nope_list} (which layers use no RoPE); "
                             f"{family.label}'s config class builds one: pass the config object or its to_dict()")
        if marks is not None:
            if isinstance(marks, str) or not isinstance(marks, Sequence) or index >= len(marks):
                raise ValueError(f"{family.nope_list} must list one entry per layer, got {marks!r}")
            if not marks[index]:
                return False, None, f"{family.nope_list}[{index}] = {marks[index]!r} marks a NoPE layer"
    if family.nope_indices is not None and index is not None:
        listed = cfg.data.get(family.nope_indices)
        if listed is None:
            raise ValueError(f"the {cfg.model_type!r} config has no {family.nope_indices} (which layers use no RoPE); "
                             f"{family.label}'s config class builds one: pass the config object or its to_dict()")
        if index in listed:
            return False, None, f"layer {index} is in {family.nope_indices} (no self-attention, no RoPE)"
    if flags is not None and index is not None:
        if index >= len(flags):
            raise ValueError(f"layer {index} is beyond no_rope_layers ({len(flags)} entries)")
        if not flags[index]:
            return False, None, "no_rope_layers marks this layer NoPE"
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


def _dropped_theta(family: Family, cfg: _Config, block: Mapping[str, Any], where: str, key: str | None) -> None:
    """A base in a field the config class drops: an error beside a different stated base, else a note."""
    for name in family.ignored_theta:
        if not cfg.has(name):
            continue
        value = cfg.data[name]
        if block.get("rope_theta") is not None:
            if _base(value, name) != _base(block["rope_theta"], f"{where}.rope_theta"):
                raise ValueError(f"the config states different bases: {where}.rope_theta = {block['rope_theta']!r}, "
                                 f"{name} = {value!r} (transformers 5 keeps the first and drops {name})")
            continue
        default = family.theta_default(key)
        if _base(value, name) != default:
            cfg.defaults.append(f"{name} = {value!r} is ignored: {family.label}'s config class drops that keyword and "
                                f"keeps its default base {default!r}, which its code then uses")


def _rope_for(family: Family, cfg: _Config, key: str | None, nested: list[str]) -> _Rope:
    """The RoPE parameters of layers keyed ``key`` (a layer type, or None when all layers share them)."""
    common = dict(rename=family.rename, allowed=family.scalings, top_level_original=family.top_level_original)
    source = f"{family.label} config default_theta"
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
        rope = _read_rope(cfg, theta_keys=keys, block=block, where=where, default_theta=family.theta_default(key),
                          theta_source=source, nested=True, **common)
        return rope
    if family.local_theta is not None and key == family.local_theta[1]:
        # config.json as written by transformers 4: rope_theta and rope_scaling belong to the other
        # layers; these use plain RoPE with their own base
        return _read_rope(cfg, theta_keys=(family.local_theta[0],), block={"rope_type": "default"},
                          where=f"({key} layers)", default_theta=family.theta_default(key), theta_source=source)
    if family.flat_types is not None and key is not None and key not in family.flat_types:
        # the config class gives these layers plain RoPE at its default base, whatever rope_theta says
        base = family.theta_default(key)
        stated = [k for k in family.theta_keys if cfg.has(k)]
        note = (f" (it ignores {stated[0]} = {cfg.data[stated[0]]!r} for them)" if stated
                and float(cfg.data[stated[0]]) != base else "")
        cfg.defaults.append(f"{key} layers: rope_theta = {base!r}, no scaling ({family.label} config class; a flat "
                            f"rope_theta/rope_scaling reaches {', '.join(family.flat_types)} layers only){note}")
        return _Rope(base, "default", {}, f"({key} layers)", {"rope_type": "default", "rope_theta": base})
    block, where = _rope_block(cfg)
    _dropped_theta(family, cfg, block, where, key)
    if family.flat_types is not None and key is not None:
        # the config class nests a v4 flat block under these layer types (OLMo 3): read it as nested
        keys = tuple(k for k in family.theta_keys if k not in family.ignored_theta)
        return _read_rope(cfg, theta_keys=keys, block=block, where=where,
                          default_theta=family.theta_default(key), theta_source=source, nested=True, **common)
    if family.default_block is not None and (not block or set(block) <= {"rope_theta"}):
        cfg.defaults.append(f"rope_parameters = {dict(family.default_block)!r} ({family.label} config default; "
                            "the config does not state it)")
        block = {**family.default_block, **block}
    keys = tuple(k for k in family.theta_keys if k not in family.ignored_theta)
    return _read_rope(cfg, theta_keys=keys, block=block, where=where,
                      default_theta=family.theta_default(key), theta_source=source, **common)


def _head_size(family: Family, cfg: _Config) -> int:
    if family.head == "split":
        return _split_heads(cfg)
    if family.head != "head_dim":
        return cfg.size(family.head)
    if family.head_default is not None and "head_dim" not in cfg.data:
        # the config class's default, not hidden_size // num_attention_heads (Gemma 3 4B: 256, not 320)
        value = cfg.default("head_dim", family.head_default, f"{family.label} config class default")
        return _positive_int(value, "head_dim")
    return _head_dim(cfg)


def _rotary_part(family: Family, cfg: _Config, rope: _Rope) -> dict[str, Any]:
    """head_dim, rotary_dim, rotary_offset (and the proportional fields) from the family's rule."""
    if family.rotary == "mla":
        # the rotary part is qk_rope_head_dim (a config's partial_rotary_factor, where it states one, is
        # qk_rope_head_dim over the whole query head; DeepseekV3Config sets head_dim to the rotary part)
        rope_dim, nope_dim = cfg.size("qk_rope_head_dim"), cfg.size("qk_nope_head_dim")
        return dict(head_dim=nope_dim + rope_dim, rotary_dim=rope_dim, rotary_offset=nope_dim)
    head_dim = _head_size(family, cfg)
    if family.rotary == "head":
        _no_partial(cfg, rope)
        return dict(head_dim=head_dim, rotary_dim=head_dim)
    if family.rotary == "rotary_dim":
        rotary_dim = _positive_int(cfg.require("rotary_dim"), "rotary_dim")
        if rotary_dim % 2 or rotary_dim > head_dim:
            raise ValueError(f"rotary_dim must be an even number of dims <= head_dim = {head_dim}, got {rotary_dim}")
        return dict(head_dim=head_dim, rotary_dim=rotary_dim)
    fraction, label = _fraction(cfg, rope, family.fraction_keys, family.default_fraction,
                                f"{family.label} config default")
    if family.rotary_dim_key is not None and cfg.has(family.rotary_dim_key):
        legacy = _positive_int(cfg.data[family.rotary_dim_key], family.rotary_dim_key)
        stated = label in cfg.data or label.startswith(rope.where)
        if stated and int(head_dim * fraction) != legacy:
            raise ValueError(f"the config states {family.rotary_dim_key} = {legacy} and {label} = {fraction} "
                             f"(= {int(head_dim * fraction)} of head_dim {head_dim} dims); they must agree")
        cfg.defaults[:] = [d for d in cfg.defaults if not d.startswith(f"{label} = ")]
        fraction, label = legacy / head_dim, family.rotary_dim_key
    if rope.method == "proportional":
        # Gemma 4's global layers: the table covers the whole head (pairs (i, i + head_dim/2)); the
        # first int(fraction * head_dim) // 2 pairs turn at base**(-2i/head_dim), the others not at all
        pairs = int(fraction * head_dim // 2)
        if pairs <= 0:
            raise ValueError(f"{label} = {fraction} leaves no rotating pair in a head of {head_dim}")
        return dict(head_dim=head_dim, rotary_dim=head_dim, rotating_pairs=pairs)
    rotary_dim = _rotated(head_dim, fraction, label)
    return dict(head_dim=head_dim, rotary_dim=rotary_dim,
                rotary_offset=head_dim - rotary_dim if family.rotary_at == "end" else 0)


def _nope_parts(family: Family, cfg: _Config, nested: list[str], layer_type: str | None) -> tuple[_Rope, dict[str, Any]]:
    """A layer without RoPE: the RoPE the config states for it or, where it states none, the config
    class's default (:meth:`RopeSpec.apply` leaves such a layer alone; the rest is for reference)."""
    if nested:
        if family.rope_keys is not None:
            layer_type = family.rope_keys.get(layer_type, family.rope_keys.get("*"))  # type: ignore[arg-type]
        key = layer_type if cfg.data["rope_parameters"].get(layer_type) is not None else None
    else:
        key = layer_type if (family.local_theta or family.flat_types) else None
    if not nested or key is not None:
        rope = _rope_for(family, cfg, key, nested)
        return rope, _rotary_part(family, cfg, rope)
    rope = _Rope(family.theta_default(layer_type), "default", {}, "(no RoPE)", {})
    if family.rotary == "mla":
        nope_dim, rope_dim = cfg.size("qk_nope_head_dim"), cfg.size("qk_rope_head_dim")
        return rope, dict(head_dim=nope_dim + rope_dim, rotary_dim=rope_dim, rotary_offset=nope_dim)
    head_dim = _head_size(family, cfg)
    return rope, dict(head_dim=head_dim, rotary_dim=head_dim)


def _read_family(family: Family, cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    """The standard reader: a configuration and a family's data -> RopeSpec ingredients."""
    types = _layer_types_of(family, cfg, layer is not None)
    known: tuple[str, ...] = ()
    if family.pattern or family.local_theta or family.flat_types or family.rope_types:
        known = tuple(family.rope_types or ()) + _LOCAL_GLOBAL
    if family.nope_layers:
        known += tuple(family.nope_layers[1:])
    layer_type, layer = _select_layer(cfg, layer_type, layer, types, known=known)
    nested = _nested_keys(family, cfg.data.get("rope_parameters"), types)
    if family.nested_only and not nested:
        raise ValueError(
            f"the {cfg.model_type!r} config has no rope_parameters nested by layer type; {family.label}'s config "
            "class fills in per-layer-type defaults (base, scaling, rotated fraction) that rope_spec does not guess: "
            "pass the config object or its to_dict()"
        )
    flags = _rope_flags(cfg, f"{family.label} config default", family.nope_layers[0]) if family.nope_layers else None
    per_type = bool(nested) or family.local_theta is not None or family.flat_types is not None
    # the layers the selection covers, and what each does
    if types is None and layer is None and (family.nope_list or family.nope_indices) and cfg.has("num_hidden_layers"):
        types = [None] * cfg.size("num_hidden_layers")  # type: ignore[list-item]
    if layer is not None:
        chosen = [(layer, layer_type)]
    elif types is not None:
        chosen = [(i, t) for i, t in enumerate(types) if layer_type is None or t == layer_type]
    else:
        chosen = [(None, layer_type)]
    kinds = {}
    for i, t in chosen:
        if (per_type or family.rope_types is not None) and t is None:
            raise ValueError(
                f"layer_type is required for {family.label}: its layer types use different RoPE settings and this "
                f"config lists no layer_types; pass layer_type=... ({', '.join(map(repr, nested or _LOCAL_GLOBAL))}) "
                "or layer=index"
            )
        kinds.setdefault(_layer_kind(family, cfg, types, nested, flags, i, t), []).append(i)
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
            cfg.defaults.append(f"{rope.where}.mrope_section = {list(default_section)} (the family's rotary "
                                "embedding default; the config does not state it)")
        if mrope_axes(section, assignment=assignment).size != parts["rotary_dim"] // 2:
            raise ValueError(f"{rope.where}.mrope_section {list(section)} must add up to "
                             f"rotary_dim // 2 = {parts['rotary_dim'] // 2}")
        parts.update(mrope_section=tuple(int(v) for v in section), mrope_assignment=assignment)
    if family.clockwise:
        parts["clockwise"] = True
    if family.layer_notes and layer_type in family.layer_notes:
        parts["note"] = family.layer_notes[layer_type]
    if family.extra is not None:
        parts.update(family.extra(cfg, parts))
    return parts


def _type_head(family: Family, cfg: _Config, chosen: list[tuple[int | None, str | None]]) -> _Config:
    """The per-layer ``head_dim`` a config class builds for some layer types (:attr:`Family.type_head`:
    Gemma 4's ``global_head_dim`` for ``full_attention`` layers), where the config has no
    ``per_layer_config`` of its own (a config.json as released)."""
    if family.type_head is None or cfg.data.get("per_layer_config") is not None:
        return cfg
    types = {t for _, t in chosen}
    hit = types & set(family.type_head)
    if not hit:
        return cfg
    if len(types) > 1:
        raise ValueError(f"the selected layers of this {cfg.model_type!r} config have different head sizes "
                         f"({', '.join(sorted(map(str, types)))}); pass layer=index or layer_type=...")
    (layer_type,) = hit
    name, default = family.type_head[layer_type]
    value = _positive_int(cfg.default(name, default, f"{family.label} config class default"), name)
    out = _Config({**cfg.data, "head_dim": value}, cfg.model_type)
    out.defaults = cfg.defaults
    return out


def _overlay(cfg: _Config, layers: list[int | None]) -> _Config:
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
    out = _Config({**cfg.data, **found[0]}, cfg.model_type)
    out.defaults = cfg.defaults
    return out


# --- what some attention layers add (shared rules) ---------------------------------------------


def _llama4_extra(cfg: _Config, parts: dict[str, Any]) -> dict[str, Any]:
    """Llama 4: L2 QK-norm after RoPE (RoPE layers); NoPE layers scale queries by a temperature."""
    qk = bool(cfg.default("use_qk_norm", True, "Llama4TextConfig default"))
    out: dict[str, Any] = {"qk_norm": "after_rope" if (qk and parts["uses_rope"]) else "none"}
    if not parts["uses_rope"] and cfg.default("attn_temperature_tuning", True, "Llama4TextConfig default"):
        out["temperature_tuning"] = (float(cfg.default("floor_scale", 8192, "Llama4TextConfig default")),
                                     float(cfg.default("attn_scale", 0.1, "Llama4TextConfig default")))
    return out


def _mla_softmax_extra(cfg: _Config, parts: dict[str, Any]) -> dict[str, Any]:
    """DeepSeek-style attention: ``scaling = qk_head_dim**-0.5 * mscale(factor, mscale_all_dim)**2``
    whenever ``rope_type`` is not "default" and ``mscale_all_dim`` is set (1 for factor <= 1)."""
    rope: _Rope = parts["rope"]
    all_dim = rope.block.get("mscale_all_dim")
    if not parts["uses_rope"] or rope.method == "default" or not all_dim:
        return {}
    factor = float(_param(rope.block, "factor", rope.where))
    m = 1.0 if factor <= 1 else 0.1 * float(all_dim) * math.log(factor) + 1.0
    return {"softmax_scale_factor": m * m}


def _query_scale_extra(cfg: _Config, parts: dict[str, Any]) -> dict[str, Any]:
    """Ministral 3 / Mistral 4: after RoPE, queries are multiplied by
    ``1 + llama_4_scaling_beta * ln(1 + floor(position / original_max_position_embeddings))``."""
    rope: _Rope = parts["rope"]
    if not parts["uses_rope"]:
        return {}
    beta = rope.block.get("llama_4_scaling_beta")
    if beta is None:
        raise ValueError(f"{rope.where} has no llama_4_scaling_beta, which {cfg.model_type!r} attention multiplies "
                         "into its query scale (transformers fails without it)")
    length = rope.block.get("original_max_position_embeddings")
    if length is None:
        length = cfg.require("original_max_position_embeddings", " (the query scale's length)")
    return {"query_scale": (float(_positive_int(length, "original_max_position_embeddings")), float(beta))}


def _mla_query_scale_extra(cfg: _Config, parts: dict[str, Any]) -> dict[str, Any]:
    return {**_mla_softmax_extra(cfg, parts), **_query_scale_extra(cfg, parts)}


# --- family readers for code outside the standard rules ----------------------------------------


def _read_gptj(cfg: _Config, layer_type: Any, layer: Any) -> dict[str, Any]:
    layer_type, layer = _select_layer(cfg, layer_type, layer, None)
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


_F = Family
# RoPE parameters config classes fill in when a config gives none (what a dict without them gets)
_APERTUS_LLAMA3 = MappingProxyType({"rope_type": "llama3", "rope_theta": 12_000_000.0, "factor": 8.0,
                                    "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
                                    "high_freq_factor": 4.0})
_CWM_LLAMA3 = MappingProxyType({"rope_type": "llama3", "rope_theta": 1_000_000.0, "factor": 16.0,
                                "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0})
_MINISTRAL3_YARN = MappingProxyType({"rope_type": "yarn", "rope_theta": 1_000_000.0, "factor": 16.0,
                                     "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0,
                                     "mscale_all_dim": 1.0, "mscale": 1.0, "llama_4_scaling_beta": 0.1})
_MISTRAL4_YARN = MappingProxyType({"rope_type": "yarn", "rope_theta": 10_000.0, "factor": 128.0,
                                   "original_max_position_embeddings": 8192, "beta_fast": 32.0, "beta_slow": 1.0,
                                   "mscale_all_dim": 1.0, "mscale": 1.0, "llama_4_scaling_beta": 0.1})
_MISTRAL_LARGE4_YARN = MappingProxyType({"rope_type": "yarn", "rope_theta": 10_000.0, "factor": 2048.0,
                                         "original_max_position_embeddings": 512, "beta_fast": 32.0,
                                         "beta_slow": 1.0, "attention_factor": 1.0})
_DSV4_NOTE = ("its compressor also appends compressed key entries, each rotated (with these settings) at the "
              "position of its window; the attention output is rotated back by -m theta (keys are values)")
_MROPE_ALIAS = MappingProxyType({"mrope": "default"})  # transformers reads rope_type "mrope" as plain RoPE
# MLA families whose attention always reads interleaved pairs and writes them back half-split
_MLA_INTERLEAVED = dict(layout="interleaved", output_layout="half", extra=_mla_softmax_extra)
# Gemma 4's config classes give full-attention layers head_dim = global_head_dim (default 512)
_GLOBAL_HEAD = MappingProxyType({"full_attention": ("global_head_dim", 512)})
# Qwen3-Next / Qwen3.5 without layer_types: every full_attention_interval-th layer attends, the others are linear
_QWEN_HYBRID = ("full_attention_interval", 4, "linear_attention")
_GEMMA3_THETA = MappingProxyType({"sliding_attention": 10_000.0, "full_attention": 1_000_000.0, "*": 1_000_000.0})
_GPT_OSS_YARN = MappingProxyType({"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                  "truncate": False, "original_max_position_embeddings": 4096})

#: Every family :func:`rope_spec` reads, by key: one row of data each (see :class:`Family`).
FAMILIES: dict[str, Family] = {f.key: f for f in [
    # plain Llama-style RoPE: the whole head, half-split pairs
    _F("llama", "Llama 2, Llama 3.x, Code Llama", ("llama",), "transformers.models.llama"),
    _F("mistral", "Mistral", ("mistral",), "transformers.models.mistral"),
    _F("qwen2", "Qwen2, Qwen2.5", ("qwen2",), "transformers.models.qwen2"),
    _F("qwen3", "Qwen3", ("qwen3",), "transformers.models.qwen3", qk_norm="before_rope", head_default=128),
    _F("olmo2", "OLMo 2", ("olmo2",), "transformers.models.olmo2", qk_norm="before_rope"),
    _F("gemma3", "Gemma 3 (text)", ("gemma3_text",), "transformers.models.gemma3", qk_norm="before_rope",
       default_theta=_GEMMA3_THETA, pattern=("sliding_window_pattern", 6),
       local_theta=("rope_local_base_freq", "sliding_attention"), head_default=256),
    _F("deepseek_v3", "DeepSeek-V3, Kimi K2 / K2.5 (MLA)", ("deepseek_v3", "kimi_k2"), "transformers.models.deepseek_v3",
       rotary="mla", interleave=("rope_interleave", True), extra=_mla_softmax_extra),
    _F("phi3", "Phi-3, Phi-3.5, Phi-4-mini", ("phi3",), "transformers.models.phi3", rotary="fraction",
       scalings=("default", "longrope"), rename=MappingProxyType({"su": "longrope", "yarn": "longrope"}),
       top_level_original=True),
    _F("phi", "Phi-1.5, Phi-2", ("phi",), "transformers.models.phi", rotary="fraction", default_fraction=0.5),
    _F("gpt_neox", "GPT-NeoX, Pythia", ("gpt_neox",), "transformers.models.gpt_neox", rotary="fraction",
       fraction_keys=("partial_rotary_factor", "rotary_pct"), default_fraction=0.25,
       theta_keys=("rotary_emb_base",), ignored_theta=("rope_theta",), head="split"),
    _F("gptj", "GPT-J", ("gptj",), "transformers.models.gptj", read=_read_gptj),
    _F("glm", "GLM-4 (glm, glm4)", ("glm", "glm4"), "transformers.models.glm, transformers.models.glm4",
       layout="interleaved", rotary="fraction", default_fraction=0.5, head_default=128),
    _F("smollm3", "SmolLM3", ("smollm3",), "transformers.models.smollm3", default_theta=2_000_000.0,
       nope_layers=(4, "full_attention", "full_attention")),
    _F("llama4", "Llama 4 (text)", ("llama4_text",), "transformers.models.llama4", layout="interleaved",
       default_theta=500_000.0, nope_layers=(4, "chunked_attention", "full_attention"), extra=_llama4_extra,
       head_default=128),
    _F("gpt_oss", "GPT-OSS", ("gpt_oss",), "transformers.models.gpt_oss", default_theta=150_000.0,
       default_block=_GPT_OSS_YARN, head_default=64),
    _F("minimind", "MiniMind (a plain dict; model_minimind.py)", ("minimind",),
       "jingyaogong/minimind model/model_minimind.py", read=_read_minimind),
    _F("qwen2_vl", "Qwen2-VL (language model, M-RoPE)", ("qwen2_vl_text",), "transformers.models.qwen2_vl",
       default_theta=1_000_000.0, mrope=("contiguous", (16, 24, 24)), rename=MappingProxyType({"mrope": "default"})),
    _F("qwen2_5_vl", "Qwen2.5-VL (language model, M-RoPE)", ("qwen2_5_vl_text",), "transformers.models.qwen2_5_vl",
       default_theta=1_000_000.0, mrope=("contiguous", (16, 24, 24)), rename=MappingProxyType({"mrope": "default"})),
    _F("qwen3_vl", "Qwen3-VL (language model, interleaved M-RoPE)", ("qwen3_vl_text",), "transformers.models.qwen3_vl",
       default_theta=500_000.0, qk_norm="before_rope", mrope=("interleaved", (24, 20, 20)),
       rename=MappingProxyType({"mrope": "default"}), head_default=128),
    # families added for transformers 5.24 (checked by tests/test_model_sweep.py)
    _F("afmoe", "AFMoE", ("afmoe",), "transformers.models.afmoe", rope_types=("sliding_attention",),
       qk_norm="before_rope", head_default=128),
    _F("apertus", "Apertus", ("apertus",), "transformers.models.apertus", default_theta=12000000.0,
       ignored_theta=("rope_theta",), qk_norm="before_rope", default_block=_APERTUS_LLAMA3),
    _F("apertus1p5", "Apertus 1.5 (text)", ("apertus1p5_text",), "transformers.models.apertus1p5",
       default_theta=12000000.0, ignored_theta=("rope_theta",), qk_norm="before_rope",
       default_block=_APERTUS_LLAMA3),
    _F("arcee", "Arcee (AFM)", ("arcee",), "transformers.models.arcee"),
    _F("aria", "Aria (text)", ("aria_text",), "transformers.models.aria"),
    _F("axk1", "AXK1 (MLA)", ("axk1",), "transformers.models.axk1", rotary="mla",
       interleave=("rope_interleave", True), extra=_mla_softmax_extra),
    _F("axk2", "AXK2 (MLA)", ("axk2",), "transformers.models.axk2", rotary="mla", **_MLA_INTERLEAVED),
    _F("bamba", "Bamba (hybrid Mamba)", ("bamba",), "transformers.models.bamba", rotary="fraction",
       default_fraction=0.5, attention_indices="attn_layer_indices"),
    _F("bitnet", "BitNet", ("bitnet",), "transformers.models.bitnet", default_theta=500000.0),
    _F("codegen", "CodeGen", ("codegen",), "transformers.models.codegen", read=_read_gptj),
    _F("cohere", "Cohere Command R", ("cohere",), "transformers.models.cohere", default_theta=500000.0,
       layout="interleaved"),
    _F("cohere2", "Cohere Command R7B / A (Cohere 2)", ("cohere2",), "transformers.models.cohere2",
       layout="interleaved", rope_types=("sliding_attention",), windowless="none",
       pattern=("sliding_window_pattern", 4)),
    _F("cohere2_moe", "Cohere 2 MoE", ("cohere2_moe",), "transformers.models.cohere2_moe", layout="interleaved",
       rope_types=("sliding_attention",), windowless="none", pattern=("sliding_window_pattern", 4), head_default=128),
    _F("cosmos3_edge", "Cosmos 3 Edge (text)", ("cosmos3_edge_text",), "transformers.models.cosmos3_edge",
       default_theta=100000000.0, ignored_theta=("rope_theta",), mrope=("interleaved", (24, 20, 20)),
       rename=_MROPE_ALIAS, head_default=128),
    _F("cwm", "CWM", ("cwm",), "transformers.models.cwm", default_theta=1000000.0, ignored_theta=("rope_theta",),
       default_block=_CWM_LLAMA3, head_default=128),
    _F("deepseek_v2", "DeepSeek-V2 (MLA)", ("deepseek_v2",), "transformers.models.deepseek_v2", rotary="mla",
       layout="interleaved", extra=_mla_softmax_extra),
    _F("deepseek_v32", "DeepSeek-V3.2 (MLA)", ("deepseek_v32",), "transformers.models.deepseek_v32", rotary="mla",
       **_MLA_INTERLEAVED),
    _F("diffllama", "DiffLlama", ("diffllama",), "transformers.models.diffllama"),
    _F("doge", "Doge", ("doge",), "transformers.models.doge", qk_norm="before_rope"),
    _F("dots1", "dots.llm1", ("dots1",), "transformers.models.dots1", qk_norm="before_rope"),
    _F("embedding_gemma2", "EmbeddingGemma 2 (text)", ("embedding_gemma2_text",),
       "transformers.models.embedding_gemma2", ignored_theta=("rope_theta",), nested_only=True,
       qk_norm="before_rope", head_default=256, type_head=_GLOBAL_HEAD),
    _F("emu3", "Emu3 (text)", ("emu3_text_model",), "transformers.models.emu3", default_theta=1000000.0),
    _F("ernie4_5", "ERNIE 4.5", ("ernie4_5",), "transformers.models.ernie4_5", default_theta=500000.0,
       layout="interleaved", head_default=128),
    _F("ernie4_5_moe", "ERNIE 4.5 MoE", ("ernie4_5_moe",), "transformers.models.ernie4_5_moe",
       default_theta=500000.0, layout="interleaved"),
    _F("exaone4", "EXAONE 4.0", ("exaone4",), "transformers.models.exaone4", rope_types=("sliding_attention",),
       windowless="all", qk_norm="before_rope"),
    _F("exaone_moe", "EXAONE MoE", ("exaone_moe",), "transformers.models.exaone_moe",
       rope_types=("sliding_attention",), windowless="all", qk_norm="before_rope"),
    _F("flex_olmo", "FlexOlmo", ("flex_olmo",), "transformers.models.flex_olmo", default_theta=500000.0,
       qk_norm="before_rope"),
    _F("flint", "Flint", ("flint",), "transformers.models.flint", rope_types=("sliding_attention",),
       windowless="none", qk_norm="before_rope", head_default=128),
    _F("gemma", "Gemma", ("gemma",), "transformers.models.gemma", head_default=256),
    _F("gemma2", "Gemma 2", ("gemma2",), "transformers.models.gemma2", head_default=256),
    _F("gemma4", "Gemma 4 (text)", ("gemma4_text",), "transformers.models.gemma4", rotary="fraction",
       ignored_theta=("rope_theta",), nested_only=True, qk_norm="before_rope",
       head_default=256, type_head=_GLOBAL_HEAD),
    _F("gemma4_unified", "Gemma 4 unified (text)", ("gemma4_unified_text",), "transformers.models.gemma4_unified",
       rotary="fraction", ignored_theta=("rope_theta",), nested_only=True, qk_norm="before_rope",
       head_default=256, type_head=_GLOBAL_HEAD),
    _F("glm4_moe", "GLM-4.5 / 4.6 (MoE)", ("glm4_moe",), "transformers.models.glm4_moe", rotary="fraction",
       default_fraction=0.5),
    _F("glm4_moe_lite", "GLM-4.7-Flash (MLA)", ("glm4_moe_lite",), "transformers.models.glm4_moe_lite",
       rotary="mla", interleave=("rope_interleave", True), extra=_mla_softmax_extra),
    _F("deepseek_v4", "DeepSeek-V4 (text)", ("deepseek_v4",), "transformers.models.deepseek_v4", layout="interleaved",
       rotary="fraction", rotary_at="end", default_fraction=0.125, nested_only=True, theta_keys=(),
       rope_keys=MappingProxyType({"sliding_attention": "main", "*": "compress"}),
       layer_notes=MappingProxyType({"compressed_sparse_attention": _DSV4_NOTE,
                                     "heavily_compressed_attention": _DSV4_NOTE}), head_default=512),
    _F("falcon", "Falcon", ("falcon",), "transformers.models.falcon", head="split", switch=("alibi", False, False)),
    _F("falcon_h1", "Falcon-H1 (hybrid Mamba)", ("falcon_h1",), "transformers.models.falcon_h1"),
    _F("gemma3n", "Gemma 3n (text)", ("gemma3n_text",), "transformers.models.gemma3n", qk_norm="before_rope",
       default_theta=_GEMMA3_THETA, local_theta=("rope_local_base_freq", "sliding_attention"), head_default=256),
    _F("lfm2_moe", "LFM2 MoE", ("lfm2_moe",), "transformers.models.lfm2_moe", default_theta=1_000_000.0,
       qk_norm="before_rope"),
    _F("glm4v_moe", "GLM-4.5V (text)", ("glm4v_moe_text",), "transformers.models.glm4v_moe", rotary="fraction",
       default_fraction=0.5, mrope=("contiguous", (8, 12, 12)), rename=_MROPE_ALIAS),
    _F("glm4v", "GLM-4.1V (text)", ("glm4v_text",), "transformers.models.glm4v", rotary="fraction",
       layout="interleaved", mrope=("contiguous", (8, 12, 12)), rename=_MROPE_ALIAS),
    _F("glm_image", "GLM-Image (text)", ("glm_image_text",), "transformers.models.glm_image", rotary="fraction",
       mrope=("contiguous", (8, 12, 12)), rename=_MROPE_ALIAS),
    _F("glm_moe_dsa", "GLM MoE DSA (MLA)", ("glm_moe_dsa",), "transformers.models.glm_moe_dsa", rotary="mla",
       **_MLA_INTERLEAVED),
    _F("glm_ocr", "GLM-OCR (text)", ("glm_ocr_text",), "transformers.models.glm_ocr", rotary="fraction",
       layout="interleaved", mrope=("contiguous", (8, 12, 12)), rename=_MROPE_ALIAS),
    _F("granite", "Granite 3", ("granite",), "transformers.models.granite"),
    _F("granite_docling", "Granite-Docling (text)", ("granite_docling_text",), "transformers.models.granite_docling"),
    _F("granite_swa", "Granite SWA", ("granite_swa",), "transformers.models.granite_swa"),
    _F("granitemoe", "Granite MoE", ("granitemoe",), "transformers.models.granitemoe"),
    _F("granitemoe_swa", "Granite MoE SWA", ("granitemoe_swa",), "transformers.models.granitemoe_swa"),
    _F("granitemoehybrid", "Granite 4 (hybrid MoE)", ("granitemoehybrid",), "transformers.models.granitemoehybrid",
       switch=("position_embedding_type", "rope", None)),
    _F("granitemoeshared", "Granite MoE shared", ("granitemoeshared",), "transformers.models.granitemoeshared"),
    _F("helium", "Helium", ("helium",), "transformers.models.helium", default_theta=100000.0, layout="interleaved",
       head_default=128),
    _F("hrm_text", "HRM-Text", ("hrm_text",), "transformers.models.hrm_text", head_default=128),
    _F("hunyuan_v1_dense", "Hunyuan dense", ("hunyuan_v1_dense",), "transformers.models.hunyuan_v1_dense"),
    _F("hunyuan_v1_moe", "Hunyuan MoE", ("hunyuan_v1_moe",), "transformers.models.hunyuan_v1_moe"),
    _F("hy_v3", "HY-V3", ("hy_v3",), "transformers.models.hy_v3", default_theta=11158840.0, qk_norm="before_rope",
       head_default=128),
    _F("hy_v4", "HY-V4 (MLA)", ("hy_v4",), "transformers.models.hy_v4", rotary="mla", extra=_mla_softmax_extra),
    _F("hyperclovax", "HyperCLOVA X", ("hyperclovax",), "transformers.models.hyperclovax"),
    _F("jais2", "Jais 2", ("jais2",), "transformers.models.jais2"),
    _F("jetmoe", "JetMoE", ("jetmoe",), "transformers.models.jetmoe", head="kv_channels"),
    _F("kolibri1", "Kolibri 1", ("kolibri1",), "transformers.models.kolibri1", rope_types=("sliding_attention",),
       windowless="all", qk_norm="before_rope", head_default=128),
    _F("laguna", "Laguna", ("laguna",), "transformers.models.laguna", rotary="fraction",
       ignored_theta=("rope_theta",), nested_only=True, qk_norm="before_rope", head_default=128),
    _F("lara_mini", "Lara mini", ("lara_mini",), "transformers.models.lara_mini",
       rope_types=("sliding_attention",), qk_norm="before_rope", head_default=128),
    _F("lfm2", "LFM2", ("lfm2",), "transformers.models.lfm2", default_theta=1000000.0, qk_norm="before_rope"),
    _F("lfm3", "LFM3", ("lfm3",), "transformers.models.lfm3", default_theta=1000000.0, rotary="fraction",
       ignored_theta=("rope_theta",), nested_only=True, qk_norm="before_rope", head_default=128),
    _F("mellum", "Mellum", ("mellum",), "transformers.models.mellum", rotary="fraction",
       ignored_theta=("rope_theta",), nested_only=True, qk_norm="before_rope", head_default=128),
    _F("mimo_v2_flash", "MiMo-V2-Flash", ("mimo_v2_flash",), "transformers.models.mimo_v2_flash",
       rotary="fraction", ignored_theta=("rope_theta",), nested_only=True, head_default=192),
    _F("minicpm3", "MiniCPM3 (MLA)", ("minicpm3",), "transformers.models.minicpm3", rotary="mla",
       extra=_mla_softmax_extra),
    _F("minimax", "MiniMax-Text-01", ("minimax",), "transformers.models.minimax", default_theta=1000000.0),
    _F("minimax_m2", "MiniMax-M2", ("minimax_m2",), "transformers.models.minimax_m2", rotary="fraction",
       default_theta=5000000.0, rotary_dim_key="rotary_dim", qk_norm="before_rope", head_default=128),
    _F("minimax_m3_vl", "MiniMax-M3-VL (text)", ("minimax_m3_vl_text",), "transformers.models.minimax_m3_vl",
       rotary="fraction", default_theta=5000000.0, qk_norm="before_rope", head_default=128),
    _F("ministral", "Ministral", ("ministral",), "transformers.models.ministral"),
    _F("ministral3", "Ministral 3", ("ministral3",), "transformers.models.ministral3", extra=_query_scale_extra,
       ignored_theta=("rope_theta",), default_block=_MINISTRAL3_YARN, default_theta=1_000_000.0, head_default=128),
    _F("mistral4", "Mistral 4 (MLA)", ("mistral4",), "transformers.models.mistral4", rotary="mla",
       interleave=("rope_interleave", True), extra=_mla_query_scale_extra, ignored_theta=("rope_theta",),
       default_block=_MISTRAL4_YARN),
    _F("mistral_large4", "Mistral Large 4 (MLA, text)", ("mistral_large4_text",),
       "transformers.models.mistral_large4", rotary="mla", **_MLA_INTERLEAVED,
       nope_layers=(4, "indexed_attention", "indexed_attention"), ignored_theta=("rope_theta",),
       default_block=_MISTRAL_LARGE4_YARN),
    _F("mixtral", "Mixtral", ("mixtral",), "transformers.models.mixtral", default_theta=1000000.0),
    _F("mllama", "Llama 3.2 Vision (text)", ("mllama_text_model",), "transformers.models.mllama",
       default_theta=500000.0, nope_indices="cross_attention_layers"),
    _F("modernbert_decoder", "ModernBERT decoder", ("modernbert-decoder",),
       "transformers.models.modernbert_decoder",
       default_theta=MappingProxyType({"sliding_attention": 10000.0, "full_attention": 160000.0, "*": 160000.0}),
       ignored_theta=("rope_theta",), nested_only=True),
    _F("molmo2", "Molmo 2 (text)", ("molmo2_text",), "transformers.models.molmo2", qk_norm="before_rope",
       head_default=128),
    _F("moshi", "Moshi", ("moshi",), "transformers.models.moshi"),
    _F("muse_glimmer", "Muse Glimmer (text)", ("muse_glimmer_text",), "transformers.models.muse_glimmer",
       nope_list="layer_rope_theta", qk_norm="before_rope", head_default=128),
    _F("muse_spark", "Muse Spark (text)", ("muse_spark_text",), "transformers.models.muse_spark",
       nope_list="layer_rope_theta", ignored_theta=("rope_theta",), default_theta=500_000.0, qk_norm="before_rope",
       head_default=64),
    _F("nanochat", "nanochat", ("nanochat",), "transformers.models.nanochat", clockwise=True),
    _F("nemotron", "Nemotron", ("nemotron",), "transformers.models.nemotron", rotary="fraction",
       default_fraction=0.5),
    _F("olmo", "OLMo", ("olmo",), "transformers.models.olmo"),
    _F("olmo3", "OLMo 3", ("olmo3",), "transformers.models.olmo3", default_theta=500000.0,
       flat_types=("full_attention",), qk_norm="before_rope"),
    _F("olmo_hybrid", "OLMo hybrid", ("olmo_hybrid",), "transformers.models.olmo_hybrid", qk_norm="before_rope"),
    _F("olmoe", "OLMoE", ("olmoe",), "transformers.models.olmoe", qk_norm="before_rope"),
    _F("paddleocr_vl", "PaddleOCR-VL (text)", ("paddleocr_vl_text",), "transformers.models.paddleocr_vl",
       default_theta=500000.0, mrope=("contiguous", (16, 24, 24)), rename=_MROPE_ALIAS, head_default=128),
    _F("persimmon", "Persimmon / Fuyu", ("persimmon",), "transformers.models.persimmon", rotary="fraction",
       default_fraction=0.5),
    _F("phimoe", "Phi-3.5-MoE", ("phimoe",), "transformers.models.phimoe", default_theta=1000000.0),
    _F("qwen2_5_omni", "Qwen2.5-Omni (thinker text)", ("qwen2_5_omni_text",), "transformers.models.qwen2_5_omni",
       default_theta=1000000.0, mrope=("contiguous", (16, 24, 24)), rename=_MROPE_ALIAS),
    _F("qwen2_moe", "Qwen2 MoE", ("qwen2_moe",), "transformers.models.qwen2_moe"),
    _F("qwen3_5", "Qwen3.5 (text)", ("qwen3_5_text",), "transformers.models.qwen3_5", rotary="fraction",
       default_fraction=0.25, qk_norm="before_rope", mrope=("interleaved", (11, 11, 10)), rename=_MROPE_ALIAS,
       head_default=256,
       pattern=_QWEN_HYBRID),
    _F("qwen3_5_moe", "Qwen3.5 MoE (text)", ("qwen3_5_moe_text",), "transformers.models.qwen3_5_moe",
       rotary="fraction", default_fraction=0.25, qk_norm="before_rope", mrope=("interleaved", (11, 11, 10)),
       rename=_MROPE_ALIAS, head_default=256,
       pattern=_QWEN_HYBRID),
    _F("qwen3_moe", "Qwen3 MoE", ("qwen3_moe",), "transformers.models.qwen3_moe", qk_norm="before_rope"),
    _F("qwen3_next", "Qwen3-Next", ("qwen3_next",), "transformers.models.qwen3_next", rotary="fraction",
       default_fraction=0.25, qk_norm="before_rope", head_default=256,
       pattern=_QWEN_HYBRID),
    _F("qwen3_omni_moe", "Qwen3-Omni (thinker text)", ("qwen3_omni_moe_text",),
       "transformers.models.qwen3_omni_moe", default_theta=1000000.0, mrope=("interleaved", (24, 20, 20)),
       rename=_MROPE_ALIAS),
    _F("qwen3_vl_moe", "Qwen3-VL MoE (text)", ("qwen3_vl_moe_text",), "transformers.models.qwen3_vl_moe",
       default_theta=500000.0, qk_norm="before_rope", mrope=("interleaved", (24, 20, 20)), rename=_MROPE_ALIAS),
    _F("recurrent_gemma", "RecurrentGemma", ("recurrent_gemma",), "transformers.models.recurrent_gemma",
       rotary="fraction", default_fraction=0.5, cycle_types="block_types"),
    _F("seed_oss", "Seed-OSS", ("seed_oss",), "transformers.models.seed_oss", head_default=128),
    _F("solar_open", "Solar Open", ("solar_open",), "transformers.models.solar_open", rotary="fraction",
       default_theta=1000000.0, head_default=128),
    _F("stablelm", "StableLM", ("stablelm",), "transformers.models.stablelm", rotary="fraction",
       default_fraction=0.25),
    _F("starcoder2", "StarCoder2", ("starcoder2",), "transformers.models.starcoder2"),
    _F("step3p7", "Step 3.5 (text)", ("step3p5",), "transformers.models.step3p7", rotary="fraction",
       nested_only=True, head_default=128),
    _F("unlimited_ocr", "Unlimited-OCR (text)", ("unlimited_ocr_text",), "transformers.models.unlimited_ocr"),
    _F("vaultgemma", "VaultGemma", ("vaultgemma",), "transformers.models.vaultgemma", head_default=256),
    _F("youtu", "Youtu-LLM (MLA)", ("youtu",), "transformers.models.youtu", rotary="mla",
       interleave=("rope_interleave", True), extra=_mla_softmax_extra),
    _F("zaya", "ZAYA", ("zaya",), "transformers.models.zaya", rotary="fraction", ignored_theta=("rope_theta",),
       nested_only=True, qk_norm="before_rope", head_default=128),
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

# every registered "<parent>_text" model_type: its multimodal parent holds it in text_config
for _mt in list(MODEL_TYPES):
    if _mt.endswith("_text") and _mt != "hrm_text":  # HRM-Text is a text model of its own
        _WRAPPERS.setdefault(_mt[: -len("_text")], ("text_config", _mt))
_WRAPPERS["kimi_k25"] = ("text_config", "deepseek_v3")  # Kimi K2.5: its language model is DeepSeek-V3

#: Wrappers whose hub config.json may keep the language model's fields at the top level (no text_config).
_FLAT_WRAPPERS = frozenset({"qwen2_vl", "qwen2_5_vl"})


# --- frequencies beyond rope_edu.scaling --------------------------------------------------------


def _proportional(dim: int, base: float, pairs: int | None, factor: float = 1.0) -> tuple[np.ndarray, float]:
    """Proportional RoPE: pairs ``0..pairs-1`` at ``base**(-2i/dim)``, the others 0; all divided by ``factor``."""
    pairs = dim // 2 if pairs is None else pairs
    inv = np.zeros(dim // 2)
    inv[:pairs] = base ** (-2.0 * np.arange(pairs) / dim)
    factor = float(factor)
    if not math.isfinite(factor) or factor <= 0:
        raise ValueError(f"factor must be a finite real number > 0 for proportional RoPE, got {factor}")
    return inv / factor, 1.0


def _yarn_equal_betas(dim: int, base: float, params: Mapping[str, Any]) -> tuple[np.ndarray, float]:
    """YaRN with ``beta_fast == beta_slow`` (Kimi K2's released config: both 1), which transformers
    accepts: the ramp has zero width, widened by 0.001 as in its code, so pairs below the boundary
    keep their frequency and the others are divided by the factor."""
    from .scaling import _correction_index, frequencies

    factor = float(params["factor"])
    length = _positive_int(params["original_max_position_embeddings"], "original_max_position_embeddings")
    edge = _correction_index(float(params["beta_fast"]), dim, base, length)
    start, end = edge, edge
    if params.get("truncate", True):
        start, end = math.floor(edge), math.ceil(edge)
    start, end = max(start, 0), min(end, dim - 1)
    if start == end:
        end += 0.001
    keep = 1.0 - np.clip((np.arange(dim // 2) - start) / (end - start), 0.0, 1.0)
    theta = frequencies(dim, base)
    # the attention factor does not depend on the betas: take it from the standard method
    other = {**params, "beta_fast": float(params["beta_slow"]) + 1.0}
    _, attention_factor = scaled_frequencies("yarn", dim, base, **other)
    return theta / factor * (1.0 - keep) + theta * keep, attention_factor


def _frequencies(method: str, dim: int, base: float, params: Mapping[str, Any],
                 rotating_pairs: int | None = None) -> tuple[np.ndarray, float]:
    """:func:`rope_edu.scaling.scaled_frequencies`, plus the methods and cases it does not cover."""
    if method == "proportional":
        return _proportional(dim, base, rotating_pairs, **params)
    if method == "yarn" and params.get("beta_fast") is not None and params.get("beta_fast") == params.get("beta_slow"):
        return _yarn_equal_betas(dim, base, params)
    return scaled_frequencies(method, dim, base, **params)


#: Scaling types :func:`rope_spec` reads that :data:`rope_edu.scaling.METHODS` does not list.
EXTRA_SCALINGS: dict[str, str] = {
    "proportional": "Gemma 4's global layers: the first partial_rotary_factor of the pairs turn at frequencies "
                    "over the whole head, the rest not at all; every frequency divided by factor (default 1)",
}

#: Families of the installed transformers that rope_spec refuses, and what it would need.
UNSUPPORTED: dict[str, str] = {
    "beam": "Beam's full-attention layers use no RoPE but scale queries by a position-dependent factor "
            "(compute_attention_scaling), which rope_spec does not model",
    "hy_v4_vl_text": "HY-V4-VL applies M-RoPE sections to the rotary part of multi-head latent attention; "
                     "rope_spec applies M-RoPE to whole heads only",
    "dory": "Dory loops over shared layers and gives its 'mlp' layer types attention with their own rotary "
            "settings; rope_spec has no rule for looped layers",
}


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
    rotating_pairs : int or None
        Proportional RoPE (Gemma 4's global layers): only the first ``rotating_pairs`` of the
        ``rotary_dim // 2`` pairs turn, at :math:`\\theta_i = b^{-2i/\\text{rotary\\_dim}}` (the whole
        head's denominator); the other pairs have frequency 0. None: every pair turns.
    query_scale : tuple of float or None
        Ministral 3, Mistral 4: ``(length, beta)``; after RoPE, queries at position :math:`m` are
        multiplied by :math:`1 + \\beta\\,\\ln(1 + \\lfloor m/\\text{length}\\rfloor)` (from ``position_ids``).
    clockwise : bool
        True when the family's code turns pair :math:`i` by :math:`-m\\theta_i` (its ``rotate_half``
        has flipped signs, NanoChat): :meth:`apply` and :meth:`cos_sin` do the same.
    note : str
        What else the layer's attention does with positions that :meth:`apply` does not (DeepSeek-V4's
        compressed key entries).
    no_rope_reason : str
        Why a layer with ``uses_rope`` False has no RoPE (NoPE layer, global layer of a family that
        rotates sliding-window layers only, a layer without attention).
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
    rotating_pairs: int | None = None
    no_rope_reason: str = ""
    clockwise: bool = False
    query_scale: tuple[float, float] | None = None
    note: str = ""

    # --- frequencies ---------------------------------------------------------------------------

    @property
    def rotary_fraction(self) -> float:
        """``rotary_dim / head_dim``."""
        return self.rotary_dim / self.head_dim

    @property
    def depends_on_length(self) -> bool:
        """True when the frequencies change with the sequence length (dynamic NTK, LongRoPE)."""
        method = METHODS.get(self.scaling)
        return method is not None and "seq_len" in (*method.required, *method.optional)

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
        return _frequencies(self.scaling, self.rotary_dim, self.base, params, self.rotating_pairs)

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
        """:math:`2\\pi/\\theta_i` in positions, shape ``(rotary_dim // 2,)`` (inf for a pair that does
        not turn: proportional RoPE's unused pairs)."""
        with np.errstate(divide="ignore"):
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
        if self.clockwise:
            angles = -angles
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
            part = slice(self.rotary_offset, self.rotary_offset + self.rotary_dim)
            block = apply_mrope(x[..., part], positions, mrope_section=self.mrope_section, inv_freq=inv_freq,
                                assignment=self.mrope_assignment, layout=self.layout)
            out = x.astype(block.dtype, copy=True)
            out[..., part] = factor * block  # the rest of a partially rotated head passes (Qwen3.5)
            return out
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
            turns = -pos if self.clockwise else pos
            block = apply_rope(x[..., part], turns[:, None, :], inv_freq=inv_freq, layout=self.layout)
            if self.output_layout != self.layout:
                block = _REORDER[(self.layout, self.output_layout)](block)
            out[..., part] = factor * block
            if self.query_scale is not None and role == "query":
                length, beta = self.query_scale
                scale = 1.0 + beta * np.log1p(np.floor(pos / length))
                out = (out * scale[:, None, :, None]).astype(out.dtype, copy=False)
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
            lines.append(f"  NoPE layer: queries and keys are not rotated (head_dim {self.head_dim})"
                         + (f": {self.no_rope_reason}" if self.no_rope_reason else ""))
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
            if self.rotating_pairs is not None:
                lines.append(f"  proportional: only pairs 0..{self.rotating_pairs - 1} turn (frequencies over the whole "
                             f"head, b^(-2i/{self.rotary_dim})); pairs {self.rotating_pairs}..{r // 2 - 1} stay put")
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
            wl = wl[np.isfinite(wl)]
            lines.append(f"  wavelengths {wl.min():.3g} .. {wl.max():.3g} positions"
                         + (" (at loading; they change with the length)" if self.depends_on_length else ""))
            if self.attention_factor != 1.0:
                lines.append(f"  attention factor {self.attention_factor:.6g} on cos and sin "
                             f"(rotated logits x {self.attention_factor ** 2:.6g})")
        if self.note:
            lines.append(f"  note: {self.note}")
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
        # some config classes compute layer_types (an attribute_map alias such as Bamba's
        # layers_block_type) instead of storing them: take what the object says
        types = getattr(config, "layer_types", None)
        if data.get("layer_types") is None and isinstance(types, (list, tuple)) and all(isinstance(t, str) for t in types):
            data["layer_types"] = list(types)
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
        values), or a plain dict of the same fields, e.g. a loaded ``config.json`` as transformers 4
        (``rope_theta``, ``rope_scaling``, ``rotary_pct``...) or 5 (``rope_parameters``, possibly
        nested by layer type) wrote it; a dict must state its ``model_type``. Multimodal configs
        (Gemma 3 and 4, Llama 4, Qwen2-VL to Qwen3.5, Kimi K2.5, ...) are read through their
        ``text_config``.
    layer_type : str, optional
        Selects the layers of one type (one of the config's ``layer_types``, e.g.
        ``"sliding_attention"`` / ``"full_attention"`` for Gemma 3 and 4, OLMo 3, Cohere 2;
        ``"chunked_attention"`` for Llama 4). Required, with ``layer``, where layer types differ.
    layer : int, optional
        A layer index: for families whose layers differ (local/global bases, NoPE layers, layers
        without attention, per-layer head sizes). A layer without RoPE gives a spec with
        ``uses_rope`` False and the reason in ``no_rope_reason``.

    Returns
    -------
    RopeSpec

    Raises
    ------
    TypeError
        ``config`` is neither a dict nor a config object; a field of the wrong type.
    ValueError
        Unknown ``model_type`` (or one in :data:`UNSUPPORTED`, with what is missing) or scaling
        ``rope_type``; a missing field (the message names it); two fields stating the same value
        differently (both values named); a rotated fraction that leaves an odd or zero number of
        dims; a per-layer family without ``layer_type``/``layer`` where its layers differ.
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
    if isinstance(model_type, str) and model_type in UNSUPPORTED:
        raise ValueError(f"model_type {model_type!r} is not supported by rope_spec: {UNSUPPORTED[model_type]}")
    if not isinstance(model_type, str) or model_type not in MODEL_TYPES:
        supported = ", ".join(repr(m) for m in MODEL_TYPES)
        raise ValueError(f"unknown model_type {model_type!r}: rope_spec has no data for this family "
                         f"(its layout, rotated dims and layer rules); supported: {supported}")
    family = FAMILIES[MODEL_TYPES[model_type]]
    cfg = _Config(data, model_type)
    parts = family.read(cfg, layer_type, layer) if family.read else _read_family(family, cfg, layer_type, layer)
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
    _, attention_factor = _frequencies(rope.method, rotary_dim, rope.base, {**rope.params, **extra},
                                       parts.get("rotating_pairs"))
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
    verified : bool
        False where the values could not be checked against the released configuration (the book marks
        such a row with a double dagger).
    """

    name: str
    config: Mapping[str, Any] = field(hash=False)
    select: Mapping[str, Any] = field(hash=False)
    checkpoint: str
    trained: int | None
    extended: int | None
    sources: tuple[str, ...]
    note: str = ""
    verified: bool = True

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


def _every(n: int, size: int, first: str = "sliding_attention", last: str = "full_attention") -> list[str]:
    """``layer_types`` where every ``n``-th layer is ``last`` and the others ``first``."""
    return [last if (i + 1) % n == 0 else first for i in range(size)]


_DS_YARN = MappingProxyType({"type": "yarn", "factor": 40.0, "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0,
                             "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096})
_COPIES = "checked against copies of the released config.json in public repositories (they agree)"
_COPY = "checked against one copy of the released config.json in a public repository"

#: Families released in 2025 and 2026, by name: the RoPE fields of their config.json as released
#: (chapter 10's second table reads each layer type through :func:`rope_spec`). Where a model's layers
#: repeat a pattern, OLMo 3, Tiny Aya and Command A list one period. ``verified`` is False for a row
#: whose values could not be checked against a released file (its ``note`` says why).
PUBLISHED_2025: dict[str, Published] = {p.name: p for p in [
    Published("Gemma 4 26B-A4B", MappingProxyType({
        "model_type": "gemma4_text", "hidden_size": 2816, "num_attention_heads": 16, "head_dim": 256,
        "global_head_dim": 512, "num_hidden_layers": 30, "sliding_window": 1024,
        "max_position_embeddings": 262144, "layer_types": _every(6, 30),
        "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
                            "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                               "rope_theta": 1_000_000.0}}}),
              MappingProxyType({}), "half", None, None, (), _COPIES),
    Published("Qwen3.5 4B", MappingProxyType({
        "model_type": "qwen3_5_text", "hidden_size": 2560, "num_attention_heads": 16, "head_dim": 256,
        "num_hidden_layers": 32, "max_position_embeddings": 262144,
        "layer_types": _every(4, 32, first="linear_attention"),
        "rope_parameters": {"rope_type": "default", "rope_theta": 10_000_000.0, "partial_rotary_factor": 0.25,
                            "mrope_interleaved": True, "mrope_section": [11, 11, 10]}}),
              MappingProxyType({}), "half", None, None, (), _COPIES),
    Published("Qwen3-Next 80B-A3B", MappingProxyType({
        "model_type": "qwen3_next", "hidden_size": 2048, "num_attention_heads": 16, "head_dim": 256,
        "num_hidden_layers": 48, "full_attention_interval": 4, "partial_rotary_factor": 0.25,
        "rope_theta": 10_000_000.0, "max_position_embeddings": 262144}),
              MappingProxyType({}), "half", None, None, ("qwen2025next",),
              "copies disagree on rope_theta: one tied to a revision of the released repository gives 1e7, "
              "two others 5e6", verified=False),
    Published("GLM-4.5-Air", MappingProxyType({
        "model_type": "glm4_moe", "hidden_size": 4096, "num_attention_heads": 96, "head_dim": 128,
        "partial_rotary_factor": 0.5, "rope_theta": 1_000_000.0, "max_position_embeddings": 131072}),
              MappingProxyType({}), "half", None, None, (), _COPIES),
    Published("MiniMax-M2", MappingProxyType({
        "model_type": "minimax_m2", "hidden_size": 3072, "num_attention_heads": 48, "head_dim": 128,
        "rotary_dim": 64, "rope_theta": 5_000_000.0, "max_position_embeddings": 196608}),
              MappingProxyType({}), "half", None, None, (), _COPIES),
    Published("Kimi K2", MappingProxyType({
        "model_type": "kimi_k2", "hidden_size": 7168, "num_attention_heads": 64, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "kv_lora_rank": 512, "rope_theta": 50_000.0,
        "max_position_embeddings": 131072,
        "rope_scaling": {**_DS_YARN, "factor": 32.0, "beta_fast": 1.0}}),
              MappingProxyType({}), "interleaved rotary part", None, None, ("kimi2025k2",),
              _COPY + "; the report does not list these fields"),
    Published("DeepSeek-V3.2-Exp", MappingProxyType({
        "model_type": "deepseek_v32", "hidden_size": 7168, "num_attention_heads": 128, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "kv_lora_rank": 512, "rope_theta": 10_000.0,
        "max_position_embeddings": 163840, "rope_scaling": dict(_DS_YARN)}),
              MappingProxyType({}), "interleaved rotary part", None, None, ("deepseek2025v32",),
              "dimensions, base and YaRN settings as in the configuration and inference code DeepSeek "
              "published with it (the same as DeepSeek-V3's), copied in a public repository"),
    Published("DeepSeek-V3.1", MappingProxyType({
        "model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "kv_lora_rank": 512, "rope_theta": 10_000.0,
        "max_position_embeddings": 163840, "rope_scaling": dict(_DS_YARN)}),
              MappingProxyType({}), "interleaved rotary part", None, None, (),
              "assumes DeepSeek-V3's fields; no copy of the released file was found", verified=False),
    Published("ERNIE 4.5 21B-A3B", MappingProxyType({
        "model_type": "ernie4_5_moe", "hidden_size": 2560, "num_attention_heads": 20, "head_dim": 128,
        "rope_theta": 500_000.0, "max_position_embeddings": 131072}),
              MappingProxyType({}), "interleaved", None, None, ("baidu2025ernie45",), _COPIES),
    Published("EXAONE 4.0 32B", MappingProxyType({
        "model_type": "exaone4", "hidden_size": 5120, "num_attention_heads": 40, "head_dim": 128,
        "num_hidden_layers": 64, "sliding_window": 4096, "sliding_window_pattern": 4,
        "layer_types": _every(4, 64), "rope_theta": 1_000_000.0, "max_position_embeddings": 131072,
        "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192}}),
              MappingProxyType({}), "half", None, None, (), _COPY),
    Published("Command A (Cohere 2)", MappingProxyType({
        "model_type": "cohere2", "hidden_size": 12288, "num_attention_heads": 96, "head_dim": 128,
        "num_hidden_layers": 4, "sliding_window": 4096, "layer_types": _every(4, 4), "rope_theta": 50_000.0}),
              MappingProxyType({}), "interleaved", None, None, ("cohere2025commanda",),
              "no copy of the released file was found: three sliding-window RoPE layers to one global NoPE "
              "layer as its report describes, with Cohere 2's other values", verified=False),
    Published("OLMo 3 7B", MappingProxyType({
        "model_type": "olmo3", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 4,
        "sliding_window": 4096, "layer_types": _every(4, 4), "rope_theta": 500_000.0,
        "max_position_embeddings": 65536,
        "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "beta_fast": 32.0, "beta_slow": 1.0,
                         "attention_factor": 1.2079441541679836, "original_max_position_embeddings": 8192}}),
              MappingProxyType({}), "half", None, None, (),
              "values of a test fixture; its copy could not be tied to a released checkpoint", verified=False),
    Published("Tiny Aya (Cohere 2)", MappingProxyType({
        "model_type": "cohere2", "hidden_size": 2048, "num_attention_heads": 16, "head_dim": 128,
        "num_hidden_layers": 4, "sliding_window": 4096, "layer_types": _every(4, 4), "rope_theta": 50_000.0}),
              MappingProxyType({}), "interleaved", None, None, (),
              "values of a test fixture; its copy could not be tied to a released checkpoint", verified=False),
]}
