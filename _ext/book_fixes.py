"""Local Sphinx fixes for Jupyter Book 1 on Sphinx 7.4 and sphinx-book-theme 1.3.

1. **Duplicate inline scripts.** Sphinx 7.4 emits inline scripts that were registered with
   ``filename=None`` twice (once from the registry, once from the builder), so every page threw
   ``Identifier 'THEBE_JS_URL' has already been declared`` in the browser console. Normalising those
   entries to ``''`` lets Sphinx's own de-duplication see that they are the same script.

2. **Lighter pages** (issue 21). The theme's ``fontawesome.js`` (1.5 MB: every Font Awesome icon as
   SVG data) is dropped: the theme's stylesheet already draws the same ``<i class="fa-...">``
   icons from the Font Awesome web fonts, and those fonts are cut down, at build time, to the
   glyphs the site uses (``_static/rope_book/icons.css`` re-declares the font faces with the
   subsets, a few KB instead of 270 KB). MathJax loads as separate components (TeX input with
   the AMS, newcommand and configmacros packages, CommonHTML output, assistive MathML for screen
   readers) instead of ``tex-chtml.js``, whose 425 KB context menu also made every formula a tab
   stop.

3. **Plots with captions and alt text.** A notebook's matplotlib plot is displayed (by
   ``rope_edu.plots.use_style``, see :func:`rope_edu.plots.figure_image`) as an SVG or 2x PNG that
   carries its caption and alt text; :class:`PlotFigures` makes each such output a numbered
   figure ("Fig. 3.1") with that caption, and gives its ``<img>`` that alt text.

4. **Accessibility** (axe-core, keyboard). The search field's button is named by its visible
   text (its ``aria-label`` "Search" left out "Ctrl+K"); bibliography entries are list items of
   their ``role="list"`` (``doc-biblioentry`` is not an allowed child); ``_ext/book_static/book.css``
   holds the CSS fixes: display equations scroll inside their own box beside their number, link
   colours with enough contrast inside theorem boxes.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.builders.html._assets import _JavaScript
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

FOLDER = "rope_book"
STATIC = Path(__file__).with_name("book_static")

# MathJax 3 components served from the site (sphinx-mathjax-offline ships them). startup.js holds
# the loader; core and the font data come in as dependencies. A TeX command outside these packages
# shows as a red error in the page (noundefined), which tests/test_surfaces.py looks for.
MATHJAX_PATH = "mathjax/startup.js"
MATHJAX_LOAD = ["input/tex-base", "[tex]/ams", "[tex]/newcommand", "[tex]/configmacros",
                "[tex]/noundefined", "[tex]/boldsymbol", "output/chtml", "a11y/assistive-mml"]
MATHJAX_PACKAGES = ["base", "ams", "newcommand", "configmacros", "noundefined", "boldsymbol"]

# KaTeX (npm package, installed by scripts/install_test_tools.sh) typesets the formulas instead of
# MathJax when the Sphinx config value rope_math_renderer is "katex": 300 KB of script, style and
# the fonts a page uses, against MathJax's 860 KB; formulas are not tab stops, and KaTeX's MathML
# is read by screen readers.
NODE_TOOLS_ENV = "ROPE_EDU_NODE_TOOLS"


def katex_dist() -> Path:
    """Folder of KaTeX's built files (katex.min.js, katex.min.css, fonts/)."""
    import os

    tools = Path(os.environ.get(NODE_TOOLS_ENV, Path.home() / ".cache" / "rope-edu" / "node-tools"))
    return tools / "node_modules" / "katex" / "dist"


# Font Awesome faces the theme's stylesheet declares, by the file it points at.
FA_FONTS = {
    "fa-solid-900": ("Font Awesome 6 Free", 900),
    "fa-regular-400": ("Font Awesome 6 Free", 400),
    "fa-brands-400": ("Font Awesome 6 Brands", 400),
}
# Icons that the theme's scripts create at run time (not in any page's HTML).
FA_SCRIPT_ICONS = {"xmark"}


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


def _choose_math_renderer(app: Sphinx, config) -> None:
    if config.rope_math_renderer not in ("mathjax", "katex"):
        raise ValueError(f"rope_math_renderer must be 'mathjax' or 'katex', got {config.rope_math_renderer!r}")
    if config.rope_math_renderer == "katex":
        if not (katex_dist() / "katex.min.js").exists():
            raise RuntimeError(
                f"rope_math_renderer is 'katex' but KaTeX is not in {katex_dist()}: "
                "run `bash scripts/install_test_tools.sh` (or set ROPE_EDU_NODE_TOOLS)"
            )
        config.html_math_renderer = "rope_katex"
    elif not config.html_math_renderer:
        # said explicitly: with two renderers registered Sphinx would pick the one that is not MathJax
        config.html_math_renderer = "mathjax"


def _install_katex(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """On a page with math, KaTeX's style and script and math.js, which typesets the formulas."""
    if app.builder.math_renderer_name != "rope_katex":
        return
    if doctree is None or not app.env.get_domain("math").has_equations(pagename):
        return
    app.add_css_file(f"{FOLDER}/katex/katex.min.css")
    app.add_js_file(f"{FOLDER}/katex/katex.min.js", loading_method="defer")
    app.add_js_file(f"{FOLDER}/math.js", loading_method="defer")


# The KaTeX renderer writes the same markup as MathJax's (as myst-parser overrides it for amsmath
# blocks): math.js reads the TeX from it in the browser.
def _visit_math(self, node) -> None:
    visit, _ = self.builder.app.registry.html_inline_math_renderers["mathjax"]
    visit(self, node)


def _visit_displaymath(self, node) -> None:
    visit, _ = self.builder.app.registry.html_block_math_renderers["mathjax"]
    visit(self, node)


def _copy_katex(out: Path) -> None:
    dist, target = katex_dist(), out / "katex"
    (target / "fonts").mkdir(parents=True, exist_ok=True)
    for name in ("katex.min.js", "katex.min.css"):
        shutil.copyfile(dist / name, target / name)
    for font in (dist / "fonts").glob("*.woff2"):  # the first source of each face: browsers stop there
        shutil.copyfile(font, target / "fonts" / font.name)


def _configure(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    app.add_css_file(f"{FOLDER}/icons.css")
    app.add_css_file(f"{FOLDER}/book.css")
    app.add_js_file(f"{FOLDER}/book.js", loading_method="defer")
    if str(app.config.mathjax_path).endswith("mathjax/tex-chtml.js"):  # sphinx-mathjax-offline's
        app.config.mathjax_path = MATHJAX_PATH
        config = app.config.mathjax3_config = dict(app.config.mathjax3_config or {})
        loader = config.setdefault("loader", {})
        loader["load"] = sorted(set(loader.get("load", [])) | set(MATHJAX_LOAD), key=MATHJAX_LOAD.index)
        tex = config.setdefault("tex", {})
        tex["packages"] = MATHJAX_PACKAGES
    elif str(app.config.mathjax_path).endswith(("tex-chtml.js", "tex-mml-chtml.js", "tex-svg.js")):
        # a combined file with the context menu: formulas must not be tab stops
        config = app.config.mathjax3_config = dict(app.config.mathjax3_config or {})
        options = config.setdefault("options", {})
        options.setdefault("menuOptions", {}).setdefault("settings", {})["inTabOrder"] = False


# --- plots: numbered captions and alt text ------------------------------------------------------


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


# --- Font Awesome: the glyphs the site uses ----------------------------------------------------

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
    from fontTools import subset

    static = outdir / "_static"
    fonts = static / "vendor" / "fontawesome" / "webfonts"
    css_files = [p for p in static.rglob("*.css") if "mathjax" not in p.parts]
    html_files = [p for p in outdir.rglob("*.html") if "_static" not in p.parts]
    points = _icon_codepoints(css_files, html_files)
    theme_css = static / "styles" / "pydata-sphinx-theme.css"
    if theme_css.exists():
        _drop_unused_icon_rules(theme_css, _icons_used(html_files))
    out = static / FOLDER
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
        "/* Font Awesome faces cut down to the icons this site uses (generated by _ext/book_fixes.py;\n"
        "   later @font-face rules win over the theme's full fonts, which are then never loaded). */\n"
        + "\n".join(faces) + "\n",
        encoding="utf-8",
    )


# --- pages ---------------------------------------------------------------------------------------

_PAGE_FIXES = [
    # the 1.5 MB icon script: the stylesheet draws the same icons from the (subset) web fonts
    (re.compile(r'<script[^>]*scripts/fontawesome\.js[^>]*></script>\s*'), ""),
    # Sphinx's search index (115 KB) and tools, loaded on every page for the theme's search-as-you-
    # type, which is off: the search dialog submits to search.html, which loads them itself
    (re.compile(r'<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)[^"]*"></script>\s*'), ""),
    # the search field's button shows "Search Ctrl+K": let that visible text name it
    (re.compile(r'(<button class="btn search-button-field[^>]*?) aria-label="Search"'), r"\1"),
    # a hidden cell's toggle shows "Show code cell source": let that visible text name it
    (re.compile(r'<summary aria-label="Toggle hidden content">'), "<summary>"),
    # a role="list" may only hold list items
    (re.compile(r'(<div class="citation" id="[^"]*") role="doc-biblioentry"'), r'\1 role="listitem"'),
]


def _fix_pages(outdir: Path) -> None:
    for page in outdir.rglob("*.html"):
        if "_static" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        fixed = text
        for pattern, replacement in _PAGE_FIXES:
            if page.name == "search.html" and "searchindex" in pattern.pattern:
                continue  # the search page itself needs the index
            fixed = pattern.sub(replacement, fixed)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def _finish(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    out = outdir / "_static" / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    for path in STATIC.iterdir():
        shutil.copyfile(path, out / path.name)
    if app.builder.math_renderer_name == "rope_katex":
        _copy_katex(out)
    _fix_pages(outdir)
    _subset_icon_fonts(outdir)


def setup(app: Sphinx) -> dict:
    app.add_config_value("rope_math_renderer", "mathjax", "html", types=[str])
    app.add_html_math_renderer("rope_katex", (_visit_math, None), (_visit_displaymath, None))
    app.connect("config-inited", _choose_math_renderer)
    app.connect("html-page-context", _install_katex)
    app.connect("env-updated", _dedupe_inline_scripts)
    app.add_transform(PlotFigures)
    # after myst-parser's and sphinx-mathjax-offline's settings (builder-inited, default priority 500)
    app.connect("builder-inited", _configure, priority=900)
    app.connect("build-finished", _finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
