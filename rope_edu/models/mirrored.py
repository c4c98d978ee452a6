"""What the "Check your model" page's JavaScript interpreter mirrors: functions by name, and tables.

The page (``book/model_check.md``, ``_ext/model_check/``) reads a ``config.json`` in the reader's
browser with a JavaScript twin of :func:`~rope_edu.models.rope_spec`. The data it reads is exported
from the package (:func:`rope_edu.spec_export.registry`); a function in that data (a family row's
``extra`` or ``read``, a ``rope_type``'s parameter reader or frequency function) is exported by
name, and the interpreter has a twin under the same name (its own ``CALLABLES``, in
``_ext/model_check/reader.js``, with the parameter readers in ``config.js`` and the frequency
functions in ``scaling.js``). :data:`CALLABLES` is that list on the Python side: a row or an entry
may name only a function listed here, and ``tests/test_model_check.py`` requires the two lists to be
the same.

A new function a row names (an ``extra`` in :mod:`.reader`, say) is added here and in the
interpreter, by the same name.

:data:`TABLES` are the package's own tables beside :data:`~rope_edu.models.FAMILIES` (private to
their modules, where the Python reader uses them) that the interpreter reads as data:
:func:`rope_edu.spec_export.registry` exports each under its key, so the export reads no private name.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, Mapping

from .config import HF_THETA
from .layers import LOCAL_GLOBAL
from .reader import (beam_extra, llama4_extra, mla_query_scale_extra, mla_softmax_extra, query_scale_extra,
                     read_gptj, read_minimind)
from .registry import FLAT_WRAPPERS, WRAPPERS
from .rope_types import ROPE_TYPES

__all__ = ["CALLABLES", "TABLES", "callable_name"]

_ROWS: tuple[Callable[..., Any], ...] = (
    # a family's ``extra``: what its attention adds to the spec
    beam_extra, llama4_extra, mla_softmax_extra, query_scale_extra, mla_query_scale_extra,
    # a family's own ``read``
    read_gptj, read_minimind,
)

#: Python name -> function, for every function the interpreter implements under that name: the
#: functions family rows name, then each ``rope_type``'s reader and frequency function.
CALLABLES: Mapping[str, Callable[..., Any]] = MappingProxyType({
    fn.__name__: fn
    for fn in (*_ROWS, *(f for entry in ROPE_TYPES.values() for f in (entry.read, entry.frequencies)))
})


def callable_name(fn: Callable[..., Any], where: str) -> str:
    """The name under which the interpreter implements ``fn`` (its Python name), or ``ValueError``
    naming ``where`` when ``fn`` is not in :data:`CALLABLES`."""
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str) or CALLABLES.get(name) is not fn:
        raise ValueError(f"{where}: a function in the page's registry must be one the interpreter mirrors, "
                         f"listed in rope_edu.models.mirrored.CALLABLES; got {fn!r}")
    return name


#: Key in the page's registry -> a table the interpreter reads as data: ``wrappers`` (multimodal
#: model_type -> (sub-config key, inner model_type)), ``flat_wrappers`` (wrappers whose config may
#: keep the language model's fields at the top level), ``local_global`` (the two layer types of the
#: local/global families), ``hf_theta`` (transformers' default ``rope_theta``).
TABLES: Mapping[str, Any] = MappingProxyType({
    "wrappers": MappingProxyType(WRAPPERS),
    "flat_wrappers": FLAT_WRAPPERS,
    "local_global": LOCAL_GLOBAL,
    "hf_theta": HF_THETA,
})
