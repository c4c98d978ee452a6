"""Pictures for the reader notebooks, taken by Chromium from the built site: each interactive
figure as the site draws it in its default state, and each SVG plot as a PNG (:func:`take_pictures`)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import json
import os
import threading
import time
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from reader_publish import digest_bytes, files_under

LOGGER = logging.getLogger(__name__)

#: Debian's Chromium builds, as the browser tests take them (tests/conftest.py): the headless shell
#: first (the same Blink for less CPU), which Playwright starts headless.
CHROMIUM = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium", "/usr/bin/chromium-browser")
BROWSER = next((p for p in CHROMIUM if os.access(p, os.X_OK)), None)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
                 "--disable-dev-shm-usage"]
#: The site at its desktop width; pictures taken at twice the pixels and shown at the figure's width.
VIEWPORT = {"width": 1280, "height": 900}
PIXEL_RATIO = 2
QUANTIZER = "fastoctree-256"  # part of the pictures' cache key
#: Requests the pictures' pages do without: MathJax typesets the page's formulas, none of which is
#: inside a figure, and took 40 % of each page's load (0.6 s a page, about 20 s a build). Part of
#: the key.
SKIPPED = ("/_static/mathjax/",)
#: Which build takes the pictures: part of the key (another rasteriser may draw other pixels).
_BROWSER_NAME = Path(BROWSER).name if BROWSER else ""


def _snapshot_key(html: str, assets: str) -> str:
    return hashlib.sha256(f"{assets}\0{_BROWSER_NAME}\0{PIXEL_RATIO}\0{VIEWPORT}\0{QUANTIZER}\0{SKIPPED}\0{html}".encode()).hexdigest()[:24]


def _small_png(png: bytes) -> bytes:
    """The screenshot as a 256-colour PNG (flat colours and lines: a fraction of the bytes)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    out = io.BytesIO()
    # the octree quantizer: a fifth of median cut's time, and smaller files of the same look here
    small = image.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    # zlib level 6: 8 % more bytes than level 9 in a quarter of the time (79 pictures a fresh build)
    small.save(out, "PNG", compress_level=6)
    return out.getvalue()


def svg_key(svg: str) -> str:
    return "svg-" + hashlib.sha256(f"{_BROWSER_NAME}\0{PIXEL_RATIO}\0{QUANTIZER}\0{svg}".encode()).hexdigest()[:24]


def take_pictures(app: Sphinx, wanted: dict[str, list[tuple[str, str]]], svgs: list[str]) -> dict:
    """Pictures, as ``key -> (png, width in CSS px)``:

    * ``(docname, k)``: the k-th figure of each page as the built site draws it, in its default
      state (``wanted`` maps each page to its placeholders' (name, html), in page order);
    * ``svg_key(svg)``: each SVG plot, as a PNG. JupyterLab shows no SVG output of a notebook it
      does not trust (a downloaded one, or Binder's) and falls back to ``<Figure size ...>``; a PNG
      it shows.

    Taken by Chromium from the built site served on 127.0.0.1 (no other host), at twice the
    pixels, cached in ``_build/.reader_figures`` by what they show, the figure engine's files and
    the site's stylesheets."""
    out = Path(app.outdir)
    # the figure engine, and every stylesheet of the site (the theme's column sets a figure's width)
    static = out / "_static"
    from book_css import shipped_stylesheet  # the stylesheets as shipped: the cut depends on every page

    assets = digest_bytes([*((p.relative_to(out).as_posix(), p.read_bytes()) for p in files_under(static, ["rope_figures"])),
                           *((p.relative_to(out).as_posix(), shipped_stylesheet(out, p)) for p in sorted(static.rglob("*.css")))])
    cache = out.parent / ".reader_figures"
    cache.mkdir(exist_ok=True)
    keys = {(docname, k): _snapshot_key(html, assets)
            for docname, figures in wanted.items() for k, (_, html) in enumerate(figures)}
    keys.update({svg_key(svg): svg_key(svg) for svg in svgs})
    pictures, todo = {}, set()
    for what, key in keys.items():
        path = cache / f"{key}.png"
        if path.exists() and path.with_suffix(".json").exists():
            pictures[what] = (path.read_bytes(), json.loads(path.with_suffix(".json").read_text())["width"])
        else:
            todo.add(what)
    if todo:
        started = time.perf_counter()
        _take_pictures(app, wanted, {k: s for s in svgs if (k := svg_key(s)) in todo}, todo, keys, cache, pictures)
        LOGGER.info(f"reader notebooks: {len(todo)} pictures taken in {time.perf_counter() - started:.1f} s "
                    f"({len(keys) - len(todo)} from {cache})")
    for stale in cache.iterdir():  # keep only this build's pictures
        if stale.stem not in set(keys.values()):
            stale.unlink()
    return pictures


def _take_pictures(app, wanted, svgs, todo, keys, cache, pictures) -> None:
    chromium = BROWSER
    if chromium is None:
        raise RuntimeError("the reader notebooks' pictures need Debian's chromium "
                           "(apt-get install chromium-headless-shell, or chromium), which the browser tests use too")
    from playwright.sync_api import sync_playwright

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    def keep(what, host, label) -> None:
        width = round(host.bounding_box()["width"])
        png = _small_png(host.screenshot(animations="disabled", caret="hide"))
        key = keys[what]
        (cache / f"{key}.png").write_bytes(png)
        (cache / f"{key}.json").write_text(json.dumps({"width": width, "what": label}))
        pictures[what] = (png, width)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(app.outdir)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
            context = browser.new_context(viewport=VIEWPORT, device_scale_factor=PIXEL_RATIO,
                                          reduced_motion="reduce", color_scheme="light")
            context.route("**/*", lambda route: (  # no other host, and no typesetting
                route.continue_() if route.request.url.startswith(base)
                and not any(part in route.request.url for part in SKIPPED) else route.abort()))
            for docname, figures in wanted.items():
                ks = [k for k in range(len(figures)) if (docname, k) in todo]
                if not ks:
                    continue
                page = context.new_page()
                page.goto(f"{base}/{docname}.html", wait_until="load", timeout=120_000)
                page.wait_for_function(
                    "() => [...document.querySelectorAll('.rope-fig-static')].every("
                    "f => f.dataset.state || f.classList.contains('rope-fig-error'))", timeout=120_000)
                # nothing sticky over a figure; fonts loaded
                page.add_style_tag(content=".bd-header, .bd-header-article, .header-article"
                                           " { position: static !important; }")
                page.evaluate("() => document.fonts.ready.then(() => true)")
                hosts = page.locator(".rope-fig-static")
                names = hosts.evaluate_all(
                    "els => els.map(e => [e.dataset.figure, e.classList.contains('rope-fig-error')])")
                if [n for n, _ in names] != [name for name, _ in figures]:
                    raise RuntimeError(f"{docname}: the page shows figures {[n for n, _ in names]}, "
                                       f"the executed notebook {[name for name, _ in figures]}")
                for k in ks:
                    if names[k][1]:
                        raise RuntimeError(f"{docname}: figure {k + 1} ({names[k][0]}) failed to draw on the site")
                    hosts.nth(k).scroll_into_view_if_needed()
                    keep((docname, k), hosts.nth(k), f"{docname}: {names[k][0]}")
                page.close()
            if svgs:
                page = context.new_page()
                for key, svg in svgs.items():
                    page.set_content('<!DOCTYPE html><html><body style="margin:0;background:#fff">'
                                     f'<div id="plot" style="display:inline-block">{svg}</div></body></html>')
                    keep(key, page.locator("#plot"), "SVG plot")
                page.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
