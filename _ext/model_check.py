"""Serve the "Check your model" page's scripts from the built site (book/model_check.md).

After the build, ``_static/model_check/`` receives the interpreter of rope_spec's rules
(``rope_spec.js``, ``reader.js``, ``layers.js``, ``config.js``, ``scaling.js``, ``python.js``: one per
module of ``rope_edu/models/``), the page's checks and code (``checks.js``, ``page.js``, ``page.css``), all from
``_ext/model_check/``, and ``registry.js``: the rules themselves, exported from the package by
:func:`rope_edu.spec_export.registry_json`, so the page always reads the rules of the package the
book was built with. Only the page that includes ``page.js`` loads them.

On the Chinese site the page's raw HTML form (labels, button, headings, ``aria-label``) is written in
Chinese through the figures' catalog (:func:`rope_edu.i18n.translate_html`), so it reads in Chinese
without JavaScript too; ``page.js`` shows what it writes through the same catalog.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from rope_edu.i18n import is_chinese

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


def _translate_form(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """The form of the page in the site's language (a Chinese build; English: as written)."""
    if app.builder.format != "html" or not is_chinese(app.config.language) or 'id="model-check"' not in context.get("body", ""):
        return
    from rope_edu.i18n import translate_html

    body = context["body"]
    start = body.index('<div id="model-check">')
    end = body.index('<script type="module"', start)
    context["body"] = body[:start] + translate_html(body[start:end], "zh_CN") + body[end:]


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", _translate_form)
    app.connect("build-finished", _write_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
