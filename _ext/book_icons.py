"""Icons: the Font Awesome glyphs the site uses (issue 21).

The theme's ``fontawesome.js`` (1.5 MB: every Font Awesome icon as SVG data) is dropped from the
pages (_ext/book_pages.py): the theme's stylesheet already draws the same ``<i class="fa-...">``
icons from the Font Awesome web fonts, and those fonts are cut down, at build time, to the glyphs
the site uses. ``_static/rope_book/icons.css`` re-declares the font faces with the subsets (a few KB
instead of 270 KB), and the theme stylesheet's rules for icons no page shows are removed.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx

FOLDER = "rope_book"  # _static/rope_book/, beside the files of _ext/book_static/ (book_pages.py)

# Font Awesome faces the theme's stylesheet declares, by the file it points at.
FA_FONTS = {
    "fa-solid-900": ("Font Awesome 6 Free", 900),
    "fa-regular-400": ("Font Awesome 6 Free", 400),
    "fa-brands-400": ("Font Awesome 6 Brands", 400),
}
# Icons that the theme's scripts create at run time (not in any page's HTML).
FA_SCRIPT_ICONS = {"xmark"}

_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_FA_CLASS_SELECTOR = re.compile(r"^\.fa-([a-z0-9-]+)(?:::?before)?$")


def _private_use(css_string: str) -> set[int]:
    """Code points of the private-use area in a CSS string (escapes like \\f185 or literal)."""
    text = re.sub(r"\\([0-9a-fA-F]{1,6}) ?", lambda m: chr(int(m.group(1), 16)), css_string)
    return {ord(c) for c in text if 0xE000 <= ord(c) <= 0xF8FF}


def _icon_codepoints(css_files: list[Path], html_files: list[Path]) -> set[int]:
    """Glyphs drawn by the site: those of the ``fa-NAME`` classes used in a page or by the theme's
    scripts, and every icon the stylesheets draw by other rules (admonitions, toggles, links)."""
    by_class: dict[str, set[int]] = {}
    always: set[int] = set()
    for css in css_files:
        for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css.read_text(encoding="utf-8")):
            points = set().union(*(_private_use(s) for s in _STRING.findall(body))) if '"' in body else set()
            if not points:
                continue
            names = [_FA_CLASS_SELECTOR.match(s.strip()) for s in selectors.split(",")]
            if all(names):
                for m in names:
                    by_class.setdefault(m.group(1), set()).update(points)
            else:
                always |= points
    used = _icons_used(html_files)
    return always.union(*(by_class.get(name, set()) for name in used))


def _icons_used(html_files: list[Path]) -> set[str]:
    used = set(FA_SCRIPT_ICONS)
    for page in html_files:
        used.update(re.findall(r"\bfa-([a-z0-9-]+)", page.read_text(encoding="utf-8")))
    return used


def _drop_unused_icon_rules(css: Path, used: set[str]) -> None:
    """Remove the theme stylesheet's rules for icons no page shows (one per Font Awesome icon,
    about 2000): rules whose every selector is ``.fa-NAME:before`` of an unused NAME."""
    def keep(match: re.Match) -> str:
        names = [_FA_CLASS_SELECTOR.match(sel.strip()) for sel in match.group(1).split(",")]
        if all(names) and ":before" in match.group(1) and not any(m.group(1) in used for m in names):
            return ""
        return match.group(0)

    text = css.read_text(encoding="utf-8")
    css.write_text(re.sub(r"(?<=[}])([^{}@]+)\{([^{}]*)\}", keep, text), encoding="utf-8")


def _subset_icon_fonts(outdir: Path) -> None:
    import logging

    from fontTools import subset

    logging.getLogger("fontTools").setLevel(logging.WARNING)  # its INFO lines are not the build's news

    static = outdir / "_static"
    fonts = static / "vendor" / "fontawesome" / "webfonts"
    css_files = [p for p in static.rglob("*.css") if "mathjax" not in p.parts]
    html_files = [p for p in outdir.rglob("*.html") if "_static" not in p.parts]
    points = _icon_codepoints(css_files, html_files)
    theme_css = static / "styles" / "pydata-sphinx-theme.css"
    if theme_css.exists():
        _drop_unused_icon_rules(theme_css, _icons_used(html_files))
    out = static / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    faces = []
    for stem, (family, weight) in FA_FONTS.items():
        source = fonts / f"{stem}.ttf"
        if not source.exists():
            continue
        options = subset.Options()
        options.flavor = "woff"  # zlib; WOFF2 would need the brotli module
        options.layout_features = ["*"]
        font = subset.load_font(str(source), options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=sorted(points))
        subsetter.subset(font)
        subset.save_font(font, str(out / f"{stem}.woff"), options)
        faces.append(
            f'@font-face{{font-display:block;font-family:"{family}";font-style:normal;'
            f'font-weight:{weight};src:url({stem}.woff) format("woff")}}'
        )
    (out / "icons.css").write_text(
        "/* Font Awesome faces cut down to the icons this site uses (generated by _ext/book_icons.py;\n"
        "   later @font-face rules win over the theme's full fonts, which are then never loaded). */\n"
        + "\n".join(faces) + "\n",
        encoding="utf-8",
    )


def _add_assets(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.add_css_file(f"{FOLDER}/icons.css")  # before book.css (book_pages.py, priority 901)


def _finish(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        _subset_icon_fonts(Path(app.outdir))


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", _add_assets, priority=900)
    app.connect("build-finished", _finish, priority=898)  # the order of the build-finished work: book_pages.py
    return {"parallel_read_safe": True, "parallel_write_safe": True}
