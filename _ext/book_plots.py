"""Plots: numbered figures with captions and alt text, loaded as the reader reaches them.

A notebook's matplotlib plot is displayed (by ``rope_edu.plots.use_style``, see
:func:`rope_edu.plots.figure_image`) as an SVG or 2x PNG that carries its caption and alt text;
:class:`PlotFigures` makes each such output a numbered figure ("Fig. 3.1") with that caption, and
gives its ``<img>`` that alt text. After the build, the pages' images load lazily with their size
stated (:func:`_lazy_images`); ``_ext/book_static/book.css`` and ``book.js`` keep a plot's text
readable on a phone.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

def _plot_text(path: Path) -> tuple[str, str] | None:
    """(caption, alt text) embedded in a plot's image by rope_edu.plots.figure_image, if any."""
    import html

    if path.suffix == ".svg":
        text = path.read_text(encoding="utf-8", errors="replace")[:20_000]
        # the creator agent has a dc:title of its own ("Matplotlib v3.x, https://...")
        text = re.sub(r"<dc:creator>.*?</dc:creator>", "", text, flags=re.S)
        found = [re.search(rf"<dc:{key}>(.*?)</dc:{key}>", text, re.S) for key in ("title", "description")]
        if not all(found):
            return None
        return html.unescape(found[0].group(1)).strip(), html.unescape(found[1].group(1)).strip()
    if path.suffix == ".png":
        from PIL import Image

        with Image.open(path) as image:
            info = getattr(image, "text", {})
        if "Description" not in info:
            return None
        return info.get("Title", "").strip(), info["Description"].strip()
    return None


class PlotFigures(SphinxTransform):
    """Wrap each notebook plot that carries a caption and alt text in a numbered figure."""

    default_priority = 800

    def apply(self, **kwargs) -> None:
        for image in list(self.document.findall(nodes.image)):
            if isinstance(image.parent, nodes.figure):
                continue
            uri = image.get("uri", "")
            if not uri.endswith((".svg", ".png")):
                continue
            path = Path(self.env.relfn2path(uri, self.env.docname)[1])
            found = _plot_text(path) if path.is_file() else None
            if not found:
                continue
            caption, alt = found
            image["alt"] = alt
            figure = nodes.figure("", classes=["rope-plot"])
            image.replace_self(figure)
            figure += image
            figure += nodes.caption(caption or alt, caption or alt)
            self.document.set_id(figure)


# --- images: loaded as the reader reaches them ------------------------------------------------------
#
# A chapter's plots are most of what a second chapter page adds (up to 600 KB). They load lazily (the
# browser fetches an image when it comes near the window), with their size stated, so nothing moves
# when they arrive and a plot's display width is known before it loads.

_PAGE_IMAGE = re.compile(r'<img ([^>]*?)src="([^"]*_images/[^"]+\.(?:svg|png))"([^>]*?)\s*/?>')
_SVG_SIZE = re.compile(r'<svg[^>]*?\bwidth="([\d.]+)(pt|px)?"[^>]*?\bheight="([\d.]+)(pt|px)?"', re.S)


def _image_size(path: Path, style: str) -> tuple[float, float] | None:
    """Display size in CSS px: an SVG's own width and height; a 2x PNG's style width and its aspect."""
    if path.suffix == ".svg":
        m = _SVG_SIZE.search(path.read_text(encoding="utf-8", errors="replace")[:4000])
        if not m:
            return None
        scale = [4 / 3 if unit == "pt" else 1.0 for unit in (m.group(2), m.group(4))]
        return float(m.group(1)) * scale[0], float(m.group(3)) * scale[1]
    from PIL import Image

    with Image.open(path) as image:
        width, height = image.size
    shown = re.search(r"width:\s*([\d.]+)px", style)
    if not shown:
        return None
    w = float(shown.group(1))
    return w, w * height / width


PLOT_MIN_SCALE = 0.75  # as book.js: shown narrower than 3/4 of its display width, a plot shows its cue

#: The cue of a plot scaled down to its column (a phone): a link to the image at full size.
ENLARGE = {"en": "Tap to enlarge", "zh": "点按放大"}


def _lazy_images(text: str, page: Path) -> str:
    plot = False
    source = None

    def fix(m: re.Match) -> str:
        nonlocal source
        attrs = m.group(1) + m.group(3)
        if "loading=" in attrs:
            return m.group(0)
        path = (page.parent / m.group(2)).resolve()
        style = re.search(r'style="([^"]*)"', attrs)
        size = _image_size(path, style.group(1) if style else "") if path.is_file() else None
        extra = ' loading="lazy" decoding="async"'
        head, tail = m.group(1), m.group(3)
        if plot:
            source = m.group(2)
        if size:
            w, h = size
            extra += f' width="{round(w)}" height="{round(h)}"'
            # an SVG gets its display width as a 2x PNG states it (a plot scales down from it to
            # its column: book.css; book.js shows the cue to enlarge it when its text gets small)
            if not style:
                extra += f' style="width: {round(w)}px;"'
        return f'<img {head}src="{m.group(2)}"{tail}{extra} />'

    def fix_figure(m: re.Match) -> str:
        nonlocal plot, source
        plot, source = True, None
        try:
            out = _PAGE_IMAGE.sub(fix, m.group(0))
        finally:
            plot = False
        if source and "rope-plot-enlarge" not in out:
            lang = "zh" if re.search(r'<html[^>]*\blang="zh', text[:2000]) else "en"
            cue = f'<a class="rope-plot-enlarge" href="{source}">{ENLARGE[lang]}</a>\n'
            out = out.replace("<figcaption>", cue + "<figcaption>", 1)
        return out

    text = re.sub(r'<figure class="rope-plot[^"]*"[^>]*>.*?</figure>', fix_figure, text, flags=re.S)
    return _PAGE_IMAGE.sub(fix, text)


def _finish(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for page in outdir.rglob("*.html"):
        if "_static" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        fixed = _lazy_images(text, page)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.add_transform(PlotFigures)
    app.connect("build-finished", _finish, priority=897)  # the order of the build-finished work: book_pages.py
    return {"parallel_read_safe": True, "parallel_write_safe": True}
