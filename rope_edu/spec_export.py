"""The data part of :func:`rope_edu.rope_spec`'s rules, as JSON, for the book's "Check your model" page.

The page reads a ``config.json`` in the reader's browser with a JavaScript interpreter of the same
rules. So that the two cannot drift, the rules exist once, in :mod:`rope_edu.models`
(:data:`~rope_edu.models.FAMILIES` and the tables beside it, :data:`~rope_edu.models.ROPE_TYPES`)
and :mod:`rope_edu.scaling` (:data:`~rope_edu.scaling.METHODS`); :func:`registry` turns them into
plain JSON data, which the book build writes next to the interpreter (``_ext/model_check.py``). Only
the interpreter is written twice. A function in a row (a family's ``extra`` or ``read``) or in a
``rope_type``'s entry (its parameter reader and frequency function) is exported by its name, and the
interpreter implements each name (:data:`rope_edu.models.mirrored.CALLABLES` lists them); a family's
layer rule is exported as
it is written, a list ``[tag, *arguments]``, and the interpreter implements each tag of
:data:`~rope_edu.models.layers.LAYER_RULES` (``_ext/model_check/layers.js``).
``tests/test_model_check.py`` feeds the same configurations to both and requires the same spec.

::

    from rope_edu.spec_export import registry, registry_json
    data = registry()            # dict: families, model_types, wrappers, rope_types, published...
    text = registry_json()       # the same, as compact JSON text
"""

from __future__ import annotations

import dataclasses
import json
import math
from types import MappingProxyType
from typing import Any, Mapping

from . import models as M
from .models.mirrored import TABLES, callable_name
from .scaling import METHODS

__all__ = ["VERSION", "callable_names", "family_defaults", "published_tables", "registry", "registry_json"]

#: Bumped when the shape of :func:`registry`'s output changes (the interpreter checks it).
VERSION = 4


def _plain(value: Any, where: str) -> Any:
    """``value`` as JSON data: tuples and mapping proxies become lists and dicts, callables their names."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {value!r} has no JSON form")
        return value
    if isinstance(value, (Mapping, MappingProxyType)):
        return {str(k): _plain(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        items = sorted(value) if isinstance(value, (frozenset, set)) else value
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(items)]
    if callable(value):
        return {"callable": callable_name(value, where)}
    raise TypeError(f"{where}: cannot export {value!r} of type {type(value).__name__} as JSON data")


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING


def family_defaults() -> dict[str, Any]:
    """Every optional field of :class:`~rope_edu.models.Family` and its default, as JSON data."""
    return {f.name: _plain(_default(f), f"Family.{f.name}") for f in dataclasses.fields(M.Family)
            if _default(f) is not dataclasses.MISSING}


def _family(family: M.Family, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """A row's fields, less those equal to their default (the interpreter completes a row from ``family_defaults``)."""
    row = {f.name: _plain(getattr(family, f.name), f"FAMILIES[{family.key!r}].{f.name}")
           for f in dataclasses.fields(family)}
    return {k: v for k, v in row.items() if k not in defaults or v != defaults[k]}


def published_tables() -> dict[str, Mapping[str, M.Published]]:
    """The tables of released models in :mod:`rope_edu.models`, by name (``PUBLISHED``, ``PUBLISHED_2025``)."""
    return {name: getattr(M, name) for name in ("PUBLISHED", "PUBLISHED_2025") if isinstance(getattr(M, name, None), Mapping)}


def registry() -> dict[str, Any]:
    """Everything the JavaScript interpreter of :func:`rope_edu.rope_spec` reads, as JSON data.

    Returns
    -------
    dict
        ``family_defaults`` (every optional :class:`~rope_edu.models.Family` field and its default),
        ``families`` (every row, the fields that differ from their default, callables as
        ``{"callable": name}``), ``model_types``, ``wrappers`` (multimodal model_type -> [sub-config
        key, inner model_type]), ``flat_wrappers``, ``unsupported``, ``not_attention``,
        ``local_global``, ``hf_theta`` (the four of :data:`rope_edu.models.mirrored.TABLES`), ``qk_norm``, ``layer_rules`` (tag -> summary of
        :data:`rope_edu.models.layers.LAYER_RULES`; a family's ``layers`` is ``[tag, *arguments]``),
        ``rope_types`` (:data:`rope_edu.models.ROPE_TYPES`: rope_type -> the names of its
        parameter reader and frequency function, ``depends_on_length``, ``retyped_only``,
        ``summary``, ``loaded_seq_len``, ``older_transformers``, ``llama_cpp_name``), ``methods`` (:data:`rope_edu.scaling.METHODS`: required and optional
        parameters) and ``published`` (every row of :data:`rope_edu.models.PUBLISHED` and
        ``PUBLISHED_2025``: config, selection, trained and extended context, whether it is verified).
    """
    defaults = family_defaults()
    methods = {name: {"required": list(m.required), "optional": _plain(dict(m.optional), f"METHODS[{name!r}]"),
                      "summary": m.summary}
               for name, m in METHODS.items()}
    published = [{"name": p.name, "table": table, "config": _plain(dict(p.config), f"{table}[{p.name!r}].config"),
                  "select": _plain(dict(p.select), f"{table}[{p.name!r}].select"),
                  "checkpoint": p.checkpoint, "trained": p.trained, "extended": p.extended, "note": p.note,
                  "verified": bool(getattr(p, "verified", True))}
                 for table, rows in published_tables().items() for p in rows.values()]
    return {
        "version": VERSION,
        "family_defaults": defaults,
        "families": {key: _family(f, defaults) for key, f in M.FAMILIES.items()},
        "model_types": dict(M.MODEL_TYPES),
        "wrappers": _plain(dict(TABLES["wrappers"]), "wrappers"),
        "flat_wrappers": sorted(TABLES["flat_wrappers"]),
        "unsupported": dict(M.UNSUPPORTED),
        "not_attention": sorted(M.NOT_ATTENTION),
        "local_global": list(TABLES["local_global"]),
        "hf_theta": TABLES["hf_theta"],
        "qk_norm": dict(M.QK_NORM),
        "layer_rules": {tag: rule.summary for tag, rule in M.LAYER_RULES.items()},
        "rope_types": {name: {"read": callable_name(t.read, f"ROPE_TYPES[{name!r}].read"),
                              "frequencies": callable_name(t.frequencies, f"ROPE_TYPES[{name!r}].frequencies"),
                              "depends_on_length": t.depends_on_length, "retyped_only": t.retyped_only,
                              "summary": t.summary, "loaded_seq_len": t.loaded_seq_len,
                              "older_transformers": t.older_transformers, "llama_cpp_name": t.llama_cpp_name}
                       for name, t in M.ROPE_TYPES.items()},
        "methods": methods,
        "published": published,
    }


def callable_names(data: Mapping[str, Any] | None = None) -> list[str]:
    """The names of every callable :func:`registry` exports (the interpreter must implement each)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if set(value) == {"callable"}:
                found.add(value["callable"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    data = registry() if data is None else data
    if not isinstance(data, Mapping) or not isinstance(data.get("rope_types"), Mapping):
        raise TypeError(f"data must be the dict registry() returns (with its 'rope_types'), got {type(data).__name__}"
                        + ("" if not isinstance(data, Mapping) else f" with keys {sorted(data)}"))
    walk(data)
    found.update(name for entry in data["rope_types"].values() for name in (entry["read"], entry["frequencies"]))
    return sorted(found)


def registry_json() -> str:
    """:func:`registry` as compact JSON text, keys in the package's order (the interpreter's messages list
    them in that order, as rope_spec's do)."""
    return json.dumps(registry(), separators=(",", ":"), allow_nan=False)
