"""The Chinese plots and their font (``scripts/i18n.py font``): the figures' font cut to the catalog's
characters, a plot's SVG labels through the catalog, and the check that every label draws in that font."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from i18n_common import ROOT
from rope_edu.i18n import CJK_RANGE


# --- the Chinese font of the figures and plots ---------------------------------------------------

#: Where Debian's fonts-noto-cjk puts Noto Sans CJK (a collection; its "SC" face is Simplified Chinese).
NOTO_CJK = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
_CJK = re.compile(f"[{CJK_RANGE}]")


def cjk_characters(texts) -> str:
    """The CJK characters and full-width punctuation of ``texts``, sorted, each once."""
    return "".join(sorted({c for t in texts for c in _CJK.findall(t)}))


def make_font(root: Path, source: Path = NOTO_CJK) -> int:
    """``rope_edu/locales/NotoSansSC-rope.otf``: Noto Sans CJK SC (OFL-1.1) cut down to the CJK
    characters of the figure catalogs, renamed (rope_edu.i18n.FONT_FAMILY). Run after the catalog
    gained characters (``check`` says so); needs Debian's fonts-noto-cjk, CI does not."""
    import json

    from fontTools import subset
    from fontTools.ttLib import TTCollection

    sys.path.insert(0, str(root))
    from rope_edu.i18n import FONT, FONT_FAMILY, LANGUAGES, LOCALES

    if not source.is_file():
        print(f"no {source}: apt-get install fonts-noto-cjk")
        return 1
    texts = [v for lang in LANGUAGES for part in ("messages", "templates")
             for v in json.loads((LOCALES / f"{lang}.json").read_text(encoding="utf-8")).get(part, {}).values()]
    chars = cjk_characters(texts)
    font = next(f for f in TTCollection(str(source)).fonts if f["name"].getDebugName(1) == "Noto Sans CJK SC")
    options = subset.Options()
    options.hinting = False
    options.desubroutinize = True
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]
    options.notdef_outline = True
    sub = subset.Subsetter(options)
    sub.populate(text=chars)
    sub.subset(font)
    for record in font["name"].names:
        if record.nameID in (1, 4, 16):
            record.string = FONT_FAMILY
        elif record.nameID == 6:
            record.string = FONT_FAMILY.replace(" ", "") + "-Regular"
        elif record.nameID == 3:
            record.string = f"{FONT_FAMILY}; subset of Noto Sans CJK SC"
    font.recalcTimestamp = False   # the same characters give the same file
    font.save(str(FONT))
    print(f"{FONT.relative_to(root)}: {len(chars)} characters, {FONT.stat().st_size / 1024:.1f} KiB")
    return 0


_SVG_TEXT = None


# A regular expression over matplotlib's SVG, not an XML tree: matplotlib writes one <text> element
# per label in a fixed form, and only their contents (and the font stack) change; a parse and
# re-serialisation would rewrite every path of the figure.
def translate_svg(svg: str, lang: str | None = None) -> str:
    """A plot's SVG (saved with ``svg.fonttype: none``: its words are ``<text>``) with its words in
    ``lang`` (default :func:`rope_edu.i18n.language`), each through the catalog
    (:func:`rope_edu.i18n.translate`); unchanged where nothing translates (and in English).

    A plot is shown by an ``<img>``, which loads nothing else (not the page's fonts): when the
    translation has Chinese characters, the SVG carries the Chinese font (:data:`rope_edu.i18n.FONT`)
    cut down to those characters, as a ``data:`` URL, and its translated texts name that font
    first, before their own (it has no Latin letters, digits or symbols: those keep their font).
    """
    import base64
    import html
    import re

    sys.path.insert(0, str(ROOT))
    from rope_edu.i18n import FONT, FONT_FAMILY, translate

    global _SVG_TEXT
    if _SVG_TEXT is None:
        _SVG_TEXT = re.compile(r"<text\b([^>]*)>([^<]+)</text>")
    cjk = _CJK
    family = f"'{FONT_FAMILY}'"
    used: set[str] = set()

    def with_font(style: re.Match) -> str:
        body = style.group(1)
        if "font-family:" not in body:
            return f'style="{body}; font-family: {family}"'
        # the Chinese font first: it holds only the label's CJK characters, so Latin letters, digits and
        # symbols still come from the named fonts after it. Named after them, Chromium drew the first
        # label of a plot before the embedded font had loaded, with a Latin font's empty boxes, and kept it.
        return 'style="' + re.sub(r"font-family:\s*", f"font-family: {family}, ", body, count=1) + '"'

    def one(m: re.Match) -> str:
        attrs, words = m.group(1), html.unescape(m.group(2))
        out = translate(words, lang)
        if out == words:
            return m.group(0)
        found = set(cjk.findall(out))
        if found:
            used.update(found)
            attrs = re.sub(r'style="([^"]*)"', with_font, attrs, count=1) if "style=" in attrs \
                else f' style="font-family: {family}"{attrs}'
        return f"<text{attrs}>{html.escape(out, quote=False)}</text>"

    out = _SVG_TEXT.sub(one, svg)
    if not used:
        return out
    import io
    import logging

    from fontTools import subset
    from fontTools.ttLib import TTFont

    logging.getLogger("fontTools").setLevel(logging.WARNING)  # its INFO lines are not the build's news

    font = TTFont(str(FONT), recalcTimestamp=False)
    options = subset.Options()
    options.flavor = "woff"
    options.hinting = False
    cutter = subset.Subsetter(options)
    cutter.populate(text="".join(sorted(used)))
    cutter.subset(font)
    buf = io.BytesIO()
    font.flavor = "woff"
    font.save(buf)
    face = (f'<style>@font-face {{ font-family: "{FONT_FAMILY}"; '
            f'src: url(data:font/woff;base64,{base64.b64encode(buf.getvalue()).decode()}) format("woff"); }}</style>')
    return re.sub(r"(<svg\b[^>]*>)", lambda s: s.group(1) + face, out, count=1)


def svg_font_problems(svg: str) -> list[str]:
    """Why a Chinese plot (:func:`translate_svg`'s SVG) could show an empty box for a Chinese character
    where no Chinese font is installed: a label with CJK characters whose font-family does not name the
    embedded face first, or a character that the embedded font lacks."""
    import base64
    import html
    import io

    from fontTools.ttLib import TTFont

    sys.path.insert(0, str(ROOT))
    from rope_edu.i18n import FONT_FAMILY

    face = re.search(r"url\(data:font/woff;base64,([^)]+)\)", svg)
    have = {chr(c) for c in TTFont(io.BytesIO(base64.b64decode(face.group(1)))).getBestCmap()} if face else set()
    out = []
    for attrs, words in re.findall(r"<text\b([^>]*)>([^<]+)</text>", svg):
        chars = cjk_characters([html.unescape(words)])
        if not chars:
            continue
        family = re.search(r"font-family:\s*([^;\"]*)", attrs)
        if not family or family.group(1).split(",")[0].strip(" '\"") != FONT_FAMILY:
            out.append(f"{html.unescape(words)!r}: font-family {family.group(1) if family else None!r} does not start with {FONT_FAMILY!r}")
        missing = "".join(c for c in chars if c not in have)
        if missing:
            out.append(f"{html.unescape(words)!r}: the embedded font lacks {missing!r}")
    return out
