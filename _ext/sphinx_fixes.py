"""Fixes of Sphinx 7.4 and MyST-Parser 3 that the book's build needs, each found by measuring.

- **A throwaway document per parse** (time). MyST's renderer (``setup_render`` in
  ``myst_parser.mdit_to_docutils.base``) makes a new docutils document with default settings
  each time it renders, even when it is handed the document to fill, and docutils builds those
  settings from a whole option parser (0.5 ms). Sphinx parses each translated message on its own,
  so the Chinese edition did that some 3,900 times a build from nothing (cProfile). Here the
  default settings are built once per parser class and each document gets its own copy.
- **Index entries lost by a build of some pages** (stale output). Sphinx's search index keeps
  the glossary's index entries per page, but reloads everything but them from the last build's
  ``searchindex.js``: after ``make book`` rebuilt one chapter, a search for "YaRN" no longer
  offered the glossary entry first. Here they are reloaded too (lower-cased, as the index keeps
  them) and dropped with their page when it is rebuilt or removed.
- **Every citation looks its plugin up again** (time). sphinxcontrib-bibtex asks pybtex for the
  docutils backend each time it resolves a citation (``find_plugin("pybtex.backends",
  "docutils")``), and pybtex reads every installed distribution's entry points to answer: 2.6 s
  of the Chinese edition's 46 s build (py-spy; the English resolves the same citations). Here the
  answer is kept per (group, name) for the build: the installed plugins do not change during it.
"""

from __future__ import annotations

import copy
import io
from typing import Any

from sphinx.application import Sphinx

_SETTINGS: dict[Any, Any] = {}


def make_document(source_path: str = "notset", parser_cls: Any = None) -> Any:
    """``myst_parser``'s ``make_document``: a new document with ``parser_cls``'s default settings
    (docutils' reStructuredText parser by default), made from settings built once."""
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser as RSTParser
    from docutils.utils import new_document

    parser_cls = parser_cls or RSTParser
    if parser_cls not in _SETTINGS:
        _SETTINGS[parser_cls] = get_default_settings(parser_cls)
    return new_document(source_path, settings=copy.deepcopy(_SETTINGS[parser_cls]))


def _keep_index_entries(indexer_class: type) -> None:
    """Make ``IndexBuilder.load`` reload the index entries and ``prune`` drop those of the pages
    not kept."""
    if getattr(indexer_class.load, "_rope_entries", False):
        return
    load, prune = indexer_class.load, indexer_class.prune

    def load_with_entries(self, stream, format) -> None:
        if isinstance(format, str):
            format = self.formats[format]
        text = stream.read()
        load(self, io.StringIO(text) if isinstance(text, str) else io.BytesIO(text), format)
        frozen = format.loads(text)
        names = frozen["docnames"]
        entries: dict[str, list[tuple[str, str, str]]] = {}
        for entry, places in (frozen.get("indexentries") or {}).items():
            for doc, target, main in places:
                entries.setdefault(names[doc], []).append((entry, target, "main" if main else ""))
        self._index_entries.clear()
        self._index_entries.update(entries)

    def prune_with_entries(self, docnames) -> None:
        docnames = set(docnames)
        prune(self, docnames)
        for docname in [d for d in self._index_entries if d not in docnames]:
            del self._index_entries[docname]

    load_with_entries._rope_entries = True  # type: ignore[attr-defined]
    indexer_class.load, indexer_class.prune = load_with_entries, prune_with_entries


def _keep_plugins() -> None:
    """Make pybtex's ``find_plugin``, as sphinxcontrib-bibtex's modules hold it, remember each
    (group, name) it found."""
    import functools
    import importlib

    import pybtex.plugin

    find = pybtex.plugin.find_plugin
    if getattr(find, "_rope_kept", False):
        return

    @functools.lru_cache(maxsize=None)
    def found(group: str, name: str | None) -> Any:
        return find(group, name)

    @functools.wraps(find)
    def find_plugin(plugin_group: str, name: str | None = None, filename: str | None = None) -> Any:
        return find(plugin_group, name, filename) if filename is not None else found(plugin_group, name)

    find_plugin._rope_kept = True  # type: ignore[attr-defined]
    pybtex.plugin.find_plugin = find_plugin
    for module in ("roles", "transforms", "foot_roles"):  # they imported the name itself
        held = importlib.import_module(f"sphinxcontrib.bibtex.{module}")
        if getattr(held, "find_plugin", None) is find:
            held.find_plugin = find_plugin


def setup(app: Sphinx) -> dict:
    from myst_parser.mdit_to_docutils import base
    from sphinx.search import IndexBuilder

    base.make_document = make_document
    _keep_index_entries(IndexBuilder)
    _keep_plugins()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
