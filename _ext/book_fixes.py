"""Local Sphinx fixes for Jupyter Book 1 on Sphinx 7.4.

Sphinx 7.4 emits inline scripts that were registered with ``filename=None`` twice (once from the
registry, once from the builder), so every page threw ``Identifier 'THEBE_JS_URL' has already
been declared`` in the browser console. Normalising those entries to ``''`` lets Sphinx's own
de-duplication see that they are the same script.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.builders.html._assets import _JavaScript


def _dedupe_inline_scripts(app: Sphinx, env) -> None:
    builder = app.builder
    files = getattr(builder, "_js_files", None)
    if files is None:
        return
    seen: list[_JavaScript] = []
    for js in files:
        if js.filename is None:
            js = _JavaScript("", priority=js.priority, **js.attributes)
        if js not in seen:
            seen.append(js)
    files[:] = seen
    app.registry.js_files = [
        ("" if name is None else name, attrs) for name, attrs in app.registry.js_files
    ]


def setup(app: Sphinx) -> dict:
    app.connect("env-updated", _dedupe_inline_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
