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

from sphinx.application import Sphinx

FOLDER = "rope_figures"


def _add_assets(app: Sphinx) -> None:
    app.add_css_file(f"{FOLDER}/figures.css")
    app.add_js_file(f"{FOLDER}/loader.js", type="module")


def _write_assets(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from rope_edu.widgets._core import JS_DIR, static_modules

    out = Path(app.outdir) / "_static" / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    for name in ("loader.js", "figures.css"):
        (out / name).write_text((JS_DIR / name).read_text(encoding="utf-8"), encoding="utf-8")
    for name, source in static_modules().items():
        (out / name).write_text(source, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", _add_assets)
    app.connect("build-finished", _write_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
