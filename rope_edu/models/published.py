"""Released models: their RoPE fields as data (``rope_edu/data/published*.json``), read through rope_spec.

Each table is a JSON file of rows with named fields (those of :class:`Published`): a new released
model is a new row there, and ``tests/test_models.py`` checks what the book says about it. The
files hold exactly what a ``config.json`` holds (full ``layer_types`` lists, LongRoPE factor lists).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from importlib import resources
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from .spec import RopeSpec, rope_spec


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
        Rows are read from JSON: ``select`` and ``sources`` may be left out (no selection, no source), as
    may ``note`` and ``verified``.
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
    """How the Phi-3 row's LongRoPE factors were made (tests/test_models.py checks the data against it).

    Phi-3's searched factors are not reproduced: smooth stand-ins of the right length, 1 for the fastest
    pair rising to ~1.1 (short) and to ~32 (long, the extension factor) for the slowest."""
    i = np.arange(n) / (n - 1)
    return {"short_factor": (1.0 + 0.1 * i**2).round(4).tolist(), "long_factor": (32.0 ** (i**2)).round(4).tolist()}


def _load(name: str) -> dict[str, Published]:
    """The rows of ``rope_edu/data/<name>.json`` by name, as read-only :class:`Published` records."""
    text = resources.files("rope_edu").joinpath("data", f"{name}.json").read_text(encoding="utf-8")
    names = {f.name for f in fields(Published)}
    table: dict[str, Published] = {}
    for row in json.loads(text)["models"]:
        unknown = sorted(set(row) - names)
        if unknown:
            raise ValueError(f"rope_edu/data/{name}.json, row {row.get('name')!r}: unknown fields {unknown}; "
                             f"expected {sorted(names)}")
        row = {**row, "config": MappingProxyType(row["config"]), "select": MappingProxyType(row.get("select", {})),
               "sources": tuple(row.get("sources", ()))}
        table[row["name"]] = Published(**row)
    return table


#: Released models, by name. ``PUBLISHED[name].spec()`` is their RoPE; chapter 10 tabulates them.
PUBLISHED: dict[str, Published] = _load("published")

#: Families released in 2025 and 2026, by name: the RoPE fields of their config.json as released
#: (chapter 10's second table reads each layer type through :func:`rope_spec`). Where a model's layers
#: repeat a pattern, OLMo 3, Tiny Aya and Command A list one period. ``verified`` is False for a row
#: whose values could not be checked against a released file (its ``note`` says why).
PUBLISHED_2025: dict[str, Published] = _load("published_2025")
