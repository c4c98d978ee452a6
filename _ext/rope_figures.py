"""Serve the rope-edu figure engine from the built site (no CDN, no request to another host).

Every page gets the figures' stylesheet and ``loader.js`` (an ES module of a few dozen lines that
finds the figure placeholders written by :meth:`rope_edu.widgets.Figure.html` and mounts them).
After the build, ``_static/rope_figures/`` receives the loader, the stylesheet, the figure engine
as its own ES module (``core.js``) and one small ES module per figure that imports it
(:func:`rope_edu.widgets.static_modules`): a page with several figures loads the engine once, and a
second page takes it from the browser's cache. The code is the live widgets' (which anywidget loads
as one module per figure, :func:`rope_edu.widgets.bundle`), split in two.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from rope_edu.i18n import is_chinese

FOLDER = "rope_figures"


def _chinese(app: Sphinx) -> bool:
    return is_chinese(app.config.language)


def _add_assets(app: Sphinx) -> None:
    app.add_css_file(f"{FOLDER}/figures.css")
    if _chinese(app):  # the figures' Chinese characters, from this site (no font host)
        app.add_css_file(f"{FOLDER}/cjk.css")
    app.add_js_file(f"{FOLDER}/loader.js", type="module")


def _write_assets(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from rope_edu.widgets import JS_DIR, static_modules

    out = Path(app.outdir) / "_static" / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    for name in ("loader.js", "figures.css"):
        (out / name).write_text((JS_DIR / name).read_text(encoding="utf-8"), encoding="utf-8")
    for name, source in static_modules().items():
        (out / name).write_text(source, encoding="utf-8")
    # the figures' words for a Chinese page (loader.js reads <html lang>); in both editions, since
    # the Chinese site shares the English loader.js (scripts/i18n.py build), which reads it beside itself
    from rope_edu.i18n import LOCALES

    (out / "messages.zh_CN.json").write_bytes((LOCALES / "zh_CN.json").read_bytes())
    if _chinese(app):
        _write_cjk_font(out)


def _write_cjk_font(out: Path) -> None:
    """``cjk.css`` and ``NotoSansSC-rope.woff``: the package's Chinese font (the characters of the
    figure catalog) as a web font the figures fall back on for CJK characters only (unicode-range:
    a page without them downloads nothing)."""
    from fontTools.ttLib import TTFont

    from rope_edu.i18n import FONT, FONT_FAMILY

    font = TTFont(str(FONT), recalcTimestamp=False)
    font.flavor = "woff"
    font.save(str(out / f"{FONT.stem}.woff"))
    (out / "cjk.css").write_text(
        f'@font-face {{ font-family: "{FONT_FAMILY}"; src: url("{FONT.stem}.woff") format("woff"); font-display: swap;\n'
        f"  unicode-range: U+2E80-9FFF, U+F900-FAFF, U+FF00-FFEF; }}\n"
        f'.rope-fig {{ font-family: system-ui, -apple-system, "Segoe UI", Roboto, "{FONT_FAMILY}", sans-serif; }}\n',
        encoding="utf-8")


def _translate_placeholders(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """On a Chinese page, the figure placeholders' names and their no-JavaScript line in Chinese
    (the executed outputs are the English build's; loader.js translates the rest when it mounts)."""
    if app.builder.format != "html" or not _chinese(app) or "rope-fig-static" not in context.get("body", ""):
        return
    from dataclasses import replace

    from rope_edu.i18n import translate
    from rope_edu.widgets import replace_placeholders

    context["body"] = replace_placeholders(context["body"], lambda p: replace(
        p, label=translate(p.label, "zh_CN"), noscript=translate(p.noscript, "zh_CN")))


class RopeFigure(Directive):
    """``{rope-figure} name``: figure ``name``'s static markup on a page that is not a notebook
    (the landing page), exactly what ``rope_edu.widgets.<name>.DEMO.show()`` writes in a chapter."""

    required_arguments = 1
    has_content = False

    def run(self) -> list:
        import importlib

        name = self.arguments[0]
        try:
            demo = importlib.import_module(f"rope_edu.widgets.{name}").DEMO
        except (ImportError, AttributeError) as exc:
            raise self.error(f"rope-figure: no figure rope_edu.widgets.{name}.DEMO ({exc})")
        return [nodes.raw("", demo.html(), format="html")]


def setup(app: Sphinx) -> dict:
    app.add_directive("rope-figure", RopeFigure)
    app.connect("html-page-context", _translate_placeholders)
    app.connect("builder-inited", _add_assets)
    app.connect("build-finished", _write_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
