"""Reading a configuration: the fields a family's RoPE reads, with errors that name the field.

:class:`ConfigReader` wraps a config dict and records every default it uses (and, through
:meth:`ConfigReader.class_default`, reads the family row's ``class_defaults``); :func:`rope_block` finds
the RoPE block and :func:`read_theta` the base; :func:`rotated_fraction` and :func:`rotated_dims` read how much of a
head rotates. The parameters of each ``rope_type`` are read by its entry of
:data:`~rope_edu.models.rope_types.ROPE_TYPES`. No family is named here: :mod:`.reader` passes each
family's data in.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

#: The ``transformers`` RotaryEmbeddingConfigMixin default for ``rope_theta`` (``default_theta``).
HF_THETA = 10000.0


#: What a :class:`Default` may record (``config.js``'s ``KINDS``).
DEFAULT_KINDS = ("default", "unread", "fixed")


@dataclass(frozen=True)
class Default:
    """A value the reader filled in for a field the config leaves out, or a stated value the family's
    code does not read: one line of :attr:`RopeSpec.defaults` (``str(record)``).

    Attributes
    ----------
    field : str
        The field, as the line names it (``"rope_theta"``, ``"rope_scaling.beta_fast"``).
    value : Any
        The value used (``kind`` "default", "fixed"), or the stated value left unread ("unread").
    source : str
        Where the value comes from (``"transformers' YaRN default"``); for "unread", what happens to
        the stated value and why (``"is not read: ..."``, ``"is ignored: ..."``); for "fixed", why,
        in parentheses.
    kind : {"default", "unread", "fixed"}
        "fixed": the config class fixes the value for some layers, whatever the config states.
    rule : str
        For a default computed from other fields: how (``"max_position_embeddings"``).
    """

    field: str
    value: Any
    source: str
    kind: str = "default"
    rule: str = ""

    def __post_init__(self) -> None:
        if self.kind not in DEFAULT_KINDS:
            raise ValueError(f"a Default's kind must be one of {', '.join(DEFAULT_KINDS)}, got {self.kind!r}")
        for name in ("field", "source", "rule"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"a Default's {name} must be a string, got {getattr(self, name)!r}")

    def __str__(self) -> str:
        if self.kind == "unread":
            return f"{self.field} = {self.value!r} {self.source}"
        if self.kind == "fixed":
            return f"{self.field} = {self.value!r}, no scaling {self.source}"
        rule = f"{self.rule} = " if self.rule else ""
        return f"{self.field} = {rule}{self.value!r} ({self.source}; the config does not state it)"


class ConfigReader:
    """A configuration as a dict: errors name the field, used defaults are recorded (:class:`Default`)."""

    def __init__(self, data: Mapping[str, Any], model_type: str, family: Any = None,
                 records: list[Default] | None = None) -> None:
        self.data = data
        self.model_type = model_type
        self.family = family  # the Family row being read (its class_defaults)
        self.records: list[Default] = [] if records is None else records

    @property
    def defaults(self) -> tuple[str, ...]:
        """The records as :attr:`RopeSpec.defaults` shows them, in the order they were made."""
        return tuple(str(r) for r in self.records)

    def record(self, field: str, value: Any, source: str, *, kind: str = "default", rule: str = "") -> None:
        """Record a :class:`Default`."""
        self.records.append(Default(field, value, source, kind, rule))

    def forget(self, field: str) -> None:
        """Drop the records of ``field`` (a value read again from another field)."""
        self.records[:] = [r for r in self.records if r.field != field]

    def derive(self, data: Mapping[str, Any]) -> ConfigReader:
        """The same config with ``data`` instead (per-layer overrides), recording into the same records."""
        return ConfigReader(data, self.model_type, self.family, self.records)

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
        self.record(name, value, source)
        return value

    def class_default(self, name: str) -> Any:
        """The field's value, or the family's config class default for it (:attr:`Family.class_defaults`), recorded."""
        if self.family is None or name not in self.family.class_defaults:
            raise KeyError(f"the family row has no class_defaults entry for {name!r}")
        return self.default(name, self.family.class_defaults[name], f"{self.family.label} config class default")

    def size(self, name: str) -> int:
        return positive_int(self.require(name), name)


def positive_int(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {value!r} of type {type(value).__name__}")
    if int(value) <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def read_head_dim(cfg: ConfigReader, hidden: str = "hidden_size", heads: str = "num_attention_heads") -> int:
    """``head_dim`` when the config states it, else ``hidden_size // num_attention_heads``."""
    if cfg.has("head_dim"):
        return positive_int(cfg.data["head_dim"], "head_dim")
    return head_dim_from_hidden(cfg, hidden, heads)


def head_dim_from_hidden(cfg: ConfigReader, hidden: str = "hidden_size", heads: str = "num_attention_heads") -> int:
    size, n = cfg.size(hidden), cfg.size(heads)
    if size % n:
        raise ValueError(f"{hidden} = {size} is not a multiple of {heads} = {n}")
    return size // n


@dataclass
class RopeBlock:
    """The RoPE parameters of one layer type: base, ``rope_type`` (a key of
    :data:`~rope_edu.models.rope_types.ROPE_TYPES`), its parameters, field names."""

    base: float
    rope_type: str
    params: dict[str, Any]
    where: str  # the dict the values came from, for messages: "rope_scaling", "rope_parameters"...
    block: dict[str, Any]


def rope_block(cfg: ConfigReader, ignored: Sequence[str] = (), label: str = "") -> tuple[dict[str, Any], str]:
    """The RoPE parameter dict: v5 ``rope_parameters`` or v4 ``rope_scaling``; with both (and no conflict), ``rope_scaling``
    alone, as transformers 5 reads it (what only ``rope_parameters`` states is recorded as not read). A field in
    ``ignored`` (a family's :attr:`Family.ignored_scaling`) is not read, and a note says so."""
    blocks = []
    for name in ("rope_parameters", "rope_scaling"):
        value = cfg.data.get(name)
        if value is None:
            continue
        if name in ignored:
            cfg.record(name, value, f"is not read: {label}'s config class keeps {name} as a field of its own and "
                       "never moves it into rope_parameters, so its code uses plain RoPE at rope_theta", kind="unread")
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
            cfg.record(f"{n1}.{k}", b1[k], f"is not read: transformers 5 keeps {n2} alone when a config has both "
                       f"(and transformers 4 never reads {n1})", kind="unread")
        return b2, n2
    return blocks[0][1], blocks[0][0]


def read_theta(cfg: ConfigReader, block: Mapping[str, Any], where: str, keys: Sequence[str],
           default: float | None, source: str) -> float:
    """``rope_theta`` from the RoPE block or the top level (under any of ``keys``), or a documented default."""
    values = [(f"{where}.rope_theta", block.get("rope_theta"))] + [(k, cfg.data.get(k)) for k in keys]
    name0 = keys[0] if keys else f"{where}.rope_theta"
    stated = [(name, v) for name, v in values if v is not None]
    if len({float(v) if isinstance(v, numbers.Real) else repr(v) for _, v in stated}) > 1:
        raise ValueError(f"the config states different bases: {', '.join(f'{n} = {v!r}' for n, v in stated)}")
    if stated:
        name, value = stated[0]
        return valid_base(value, name)
    if default is None:
        raise ValueError(f"the {cfg.model_type!r} config is missing the field {name0!r} (the RoPE base)")
    cfg.record(name0, default, source)
    return default


def valid_base(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number > 1, got {value!r} of type {type(value).__name__}")
    if not math.isfinite(float(value)) or float(value) <= 1.0:
        raise ValueError(f"{name} must be a finite real number > 1, got {value}")
    return float(value)


def required_param(block: Mapping[str, Any], name: str, where: str) -> Any:
    value = block.get(name)
    if value is None:
        rope_type = block.get("rope_type", "default")
        raise ValueError(f"{where} of rope_type {rope_type!r} is missing the field {name!r}")
    return value


def original_length(cfg: ConfigReader, block: Mapping[str, Any], where: str, *, top_level_original: bool = False) -> Any:
    """``original_max_position_embeddings`` as transformers' ``standardize_rope_params`` finds it."""
    if top_level_original and cfg.has("original_max_position_embeddings"):
        # Phi-3 keeps the pretraining length at the top level, and transformers gives it priority.
        return cfg.data["original_max_position_embeddings"]
    if block.get("original_max_position_embeddings") is not None:
        return block["original_max_position_embeddings"]
    # transformers' standardize_rope_params: defaults to max_position_embeddings for llama3/yarn/longrope
    value = cfg.require("max_position_embeddings", f" (needed because {where} does not state "
                                                   "original_max_position_embeddings)")
    cfg.record(f"{where}.original_max_position_embeddings", value, "transformers' standardize_rope_params",
               rule="max_position_embeddings")
    return value


def rotated_fraction(cfg: ConfigReader, rope: RopeBlock, names: Sequence[str], default: float | None, source: str) -> tuple[float, str]:
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
        cfg.record(names[0], default, source)
    return default, names[0]


def rotated_dims(head_dim: int, fraction: float, label: str) -> int:
    """``int(head_dim * fraction)`` as transformers computes it, which must be even and positive."""
    dims = int(head_dim * fraction)
    if dims <= 0 or dims % 2:
        raise ValueError(
            f"{label} = {fraction} gives int({head_dim} * {fraction}) = {dims} rotated dims; "
            "RoPE rotates pairs, so this must be a positive even number"
        )
    return dims


def no_partial(cfg: ConfigReader, rope: RopeBlock) -> None:
    """Families whose code rotates the whole head: a stated partial_rotary_factor != 1 is an error."""
    for value, label in ((rope.block.get("partial_rotary_factor"), f"{rope.where}.partial_rotary_factor"),
                         (cfg.data.get("partial_rotary_factor"), "partial_rotary_factor")):
        if value is not None and value != 1.0:
            raise ValueError(
                f"{label} = {value!r}, but {cfg.model_type!r} code rotates the whole head "
                "(its default rotary embedding ignores partial_rotary_factor while its scaled ones do not)"
            )

