"""Serve the "Check your model" page's scripts from the built site (book/model_check.md).

After the build, ``_static/model_check/`` receives the interpreter of rope_spec's rules
(``rope_spec.js``, ``reader.js``, ``layers.js``, ``config.js``, ``scaling.js``, ``python.js``: one per
module of ``rope_edu/models/``), the page's checks and code (``checks.js``, ``page.js``, ``page.css``), all from
``_ext/model_check/``, and ``registry.js``: the rules themselves, exported from the package by
:func:`rope_edu.spec_export.registry_json`, so the page always reads the rules of the package the
book was built with. Only the page that includes ``page.js`` loads them.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx

SOURCE = Path(__file__).parent / "model_check"
FILES = ("python.js", "scaling.js", "config.js", "layers.js", "reader.js", "rope_spec.js", "checks.js", "page.js",
         "page.css")


def _write_assets(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from rope_edu.spec_export import registry_json

    out = Path(app.outdir) / "_static" / "model_check"
    out.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        (out / name).write_text((SOURCE / name).read_text(encoding="utf-8"), encoding="utf-8")
    (out / "registry.js").write_text(
        "// rope_spec's rules as data: rope_edu.spec_export.registry(), written by the book build\n"
        f"export default {registry_json()};\n", encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", _write_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
