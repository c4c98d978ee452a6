"""Local Sphinx fixes for Jupyter Book 1 on Sphinx 7.4 and sphinx-book-theme 1.3.

1. **Duplicate inline scripts.** Sphinx 7.4 emits inline scripts that were registered with
   ``filename=None`` twice (once from the registry, once from the builder), so every page threw
   ``Identifier 'THEBE_JS_URL' has already been declared`` in the browser console. Normalising those
   entries to ``''`` lets Sphinx's own de-duplication see that they are the same script.

2. **Lighter pages** (issue 21). The theme's ``fontawesome.js`` (1.5 MB: every Font Awesome icon as
   SVG data) is dropped: the theme's stylesheet already draws the same ``<i class="fa-...">``
   icons from the Font Awesome web fonts, and those fonts are cut down, at build time, to the
   glyphs the site uses (``_static/rope_book/icons.css`` re-declares the font faces with the
   subsets, a few KB instead of 270 KB). MathJax loads as separate components (CommonHTML output,
   assistive MathML for screen readers) instead of ``tex-chtml.js``, whose 425 KB context menu also
   made every formula a tab stop; with the ``quickjs`` package each formula's TeX becomes MathML at
   build time (:class:`_MathML`), so the browser loads MathJax's MathML input (15 KB) instead of its
   TeX input and packages (171 KB). The stylesheets keep only rules that can match a page or a class
   that a script adds (:func:`_purge_stylesheets`, 457 -> ~145 KB); highlighting spans drawn in the
   code block's own colour are unwrapped (:func:`_unwrap_plain_tokens`, a third of a chapter's HTML);
   plots load lazily, with their size stated (:func:`_lazy_images`).

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

import math
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
# (no \newcommand or configured macros in the book: the newcommand and configmacros packages, 17 KB
# on every first visit, are left out)
MATHJAX_LOAD = ["input/tex-base", "[tex]/ams", "[tex]/noundefined", "[tex]/boldsymbol", "output/chtml",
                "a11y/assistive-mml"]
MATHJAX_PACKAGES = ["base", "ams", "noundefined", "boldsymbol"]

# With the PyPI package quickjs installed (requirements.txt), each formula's TeX becomes MathML at build
# time, by MathJax's own TeX input (the same files, run in QuickJS), and the browser loads MathJax's
# MathML input (15 KB) instead of the TeX input and its packages (171 KB on every first visit). The
# MathML keeps MathJax's TeX classes (data-mjx-texclass), so the formulas look as the TeX input
# makes them; assistive MathML for screen readers is generated as before.
MATHJAX_MML_LOAD = ["input/mml", "output/chtml", "a11y/assistive-mml"]
MATHJAX_BUILD_LOAD = ["adaptors/liteDOM", "input/tex-base", "[tex]/ams", "[tex]/noundefined", "[tex]/boldsymbol"]


class _MathML:
    """TeX -> MathML with MathJax's TeX input in QuickJS; results kept between builds."""

    context = None
    originals: tuple = ()
    cache: dict[str, str] = {}
    cache_path: Path | None = None
    dirty = False

    @staticmethod
    def available() -> bool:
        try:
            import quickjs  # noqa: F401
        except ImportError:
            return False
        return (_MathML.mathjax_dir() / "startup.js").exists()

    @staticmethod
    def mathjax_dir() -> Path:
        import importlib.util

        spec = importlib.util.find_spec("sphinx-mathjax-offline")
        roots = list(spec.submodule_search_locations or []) if spec else []
        return Path(roots[0]) / "static" / "mathjax" if roots else Path("/nonexistent")

    @classmethod
    def open_cache(cls, path: Path) -> None:
        import json

        cls.cache_path = path
        try:
            cls.cache = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        except ValueError:
            cls.cache = {}

    @classmethod
    def save_cache(cls) -> None:
        import json

        if cls.dirty and cls.cache_path is not None:
            cls.cache_path.parent.mkdir(parents=True, exist_ok=True)
            cls.cache_path.write_text(json.dumps(cls.cache, ensure_ascii=False), encoding="utf-8")
            cls.dirty = False

    @classmethod
    def _start(cls):
        import json

        import quickjs

        root = cls.mathjax_dir()
        ctx = quickjs.Context()
        ctx.add_callable("ropeRead", lambda path: Path(path).read_text(encoding="utf-8"))
        config = {"loader": {"paths": {"mathjax": str(root)}, "load": MATHJAX_BUILD_LOAD},
                  "tex": {"packages": MATHJAX_PACKAGES}, "startup": {"typeset": False}}
        ctx.eval(f"globalThis.MathJax = {json.dumps(config)};"
                 "MathJax.loader.require = (url) => { (0, eval)(ropeRead(url)); };")
        ctx.eval((root / "startup.js").read_text(encoding="utf-8"))
        for _ in range(10_000):
            if not ctx.execute_pending_job():
                break
        if ctx.eval("typeof MathJax.tex2mml") != "function":
            raise RuntimeError("MathJax's TeX input did not start in QuickJS")
        ctx.eval("globalThis.ropeMML = (tex, display) => MathJax.tex2mml(tex, {display});")
        cls.context = ctx

    @classmethod
    def convert(cls, tex: str, display: bool) -> str:
        key = ("D" if display else "I") + tex
        if key not in cls.cache:
            if cls.context is None:
                cls._start()
            mml = cls.context.get("ropeMML")(tex, display)
            if "<merror" in mml or 'mathcolor="red"' in mml:  # a TeX error, or an undefined macro (noundefined)
                raise ValueError(f"MathJax cannot typeset this formula: {tex!r}")
            mml = re.sub(r">\s+<", "><", mml.strip())
            cls.cache[key] = mml.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)
            cls.dirty = True
        return cls.cache[key]


_MATH_BOX = re.compile(r'^(\s*<(span|div)[^>]*>)(.*?)(</\2>\s*)$', re.S)


def _with_mathml(markup: str, display: bool, node) -> str:
    """The formula box the MathJax visitor wrote, its TeX replaced by MathML (its number kept)."""
    import html as html_lib

    m = _MATH_BOX.match(markup)
    if not m:
        return markup
    inner = m.group(3)
    number = re.search(r'<span class="eqno">.*?</span>', inner, re.S)
    tex = html_lib.unescape(re.sub(r"<[^>]+>", "", inner.replace(number.group(0), "") if number else inner)).strip()
    for open_, close in (("\\(", "\\)"), ("\\[", "\\]")):
        if tex.startswith(open_) and tex.endswith(close):
            tex = tex[2:-2]
    try:
        mml = _MathML.convert(tex, display)
    except Exception as exc:  # noqa: BLE001 - reported as a build warning (an error under -W)
        logger.warning(f"formula not converted to MathML ({exc})", location=node)
        return markup
    return m.group(1) + (number.group(0) if number else "") + mml + m.group(4)


def _visit_math_mml(self, node) -> None:
    start = len(self.body)
    try:
        _MathML.originals[0][0](self, node)
    except nodes.SkipNode:
        pass
    self.body[start:] = [_with_mathml("".join(self.body[start:]), False, node)]
    raise nodes.SkipNode


def _visit_displaymath_mml(self, node) -> None:
    start = len(self.body)
    try:
        _MathML.originals[1][0](self, node)
    except nodes.SkipNode:
        pass
    self.body[start:] = [_with_mathml("".join(self.body[start:]), True, node)]
    raise nodes.SkipNode


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
        if app.builder.math_renderer_name == "mathjax" and _MathML.available():
            # the pages carry MathML made at build time: the browser needs MathJax's MathML input only
            loader["load"] = [c for c in MATHJAX_MML_LOAD if c not in loader.get("load", [])] + [
                c for c in loader.get("load", []) if not c.startswith(("input/tex", "[tex]"))]
            config.pop("tex", None)
            registry = app.registry
            _MathML.originals = (registry.html_inline_math_renderers["mathjax"],
                                 registry.html_block_math_renderers["mathjax"])
            registry.html_inline_math_renderers["mathjax"] = (_visit_math_mml, None)
            registry.html_block_math_renderers["mathjax"] = (_visit_displaymath_mml, None)
            _MathML.open_cache(Path(app.doctreedir).parent / "rope_mathml.json")
        else:
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


# --- stylesheets: the rules that can match ---------------------------------------------------------
#
# The theme's stylesheets carry all of Bootstrap and every component the theme, sphinx-design and
# myst-nb offer (470 KB on every first visit). A selector that names a class which no page and no
# script of the site contains can never match, so it is cut; a rule with no selector left goes.
# Classes inside :not(), :is(), :where() or :has() are not counted (their absence need not stop a
# match), and every word that appears anywhere in the site's scripts counts as used (scripts add
# classes at run time), so the cut is conservative.

PURGED_CSS = ("styles/pydata-sphinx-theme.css", "sphinx-design.min.css", "mystnb.*.css", "basic.css",
              "styles/sphinx-book-theme.css", "togglebutton.css", "copybutton.css", "proof.css",
              "exercise.css", "sphinx-thebe.css", "pygments.css")
_FUNCTIONAL_PSEUDO = re.compile(r":(?:not|is|where|has|matches|-webkit-any|-moz-any|nth-[a-z-]+|host|host-context|"
                                r"slotted|lang|dir)\(")
_CLASS_IN_SELECTOR = re.compile(r"\.((?:[A-Za-z0-9_-]|\\.)+)")


_JS_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'|`([^`]*)`')
_JS_PREFIX = re.compile(r'([A-Za-z][\w-]*-)(?:\$\{|["\']\s*\+)')  # `bs-${name}-auto`, "col-" + n


def _used_words(outdir: Path) -> tuple[set[str], tuple[str, ...]]:
    """Class names on the pages and every word in the string literals of the site's scripts (which
    may add classes), and the prefixes of class names the scripts build (``bs-${...}``)."""
    used: set[str] = set()
    prefixes: set[str] = set()
    for page in outdir.rglob("*.html"):
        if "_static" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        for value in re.findall(r'\bclass="([^"]*)"', text):
            used.update(value.split())
        for script in re.findall(r"<script[^>]*>(.*?)</script>", text, re.S):
            used.update(re.findall(r"[A-Za-z_][\w-]*", script))
    for script in (outdir / "_static").rglob("*.js"):
        if "mathjax" in script.parts:
            continue
        text = script.read_text(encoding="utf-8", errors="replace")
        for literal in _JS_STRING.finditer(text):
            used.update(re.findall(r"[A-Za-z_][\w-]*", "".join(part or "" for part in literal.groups())))
        prefixes.update(_JS_PREFIX.findall(text))
    return used, tuple(sorted(prefixes))


def _split_top(text: str, sep: str) -> list[str]:
    """Split at ``sep`` outside parentheses, brackets and strings."""
    parts, depth, quote, start = [], 0, "", 0
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def _without_functional_pseudos(selector: str) -> str:
    out, i = [], 0
    while True:
        m = _FUNCTIONAL_PSEUDO.search(selector, i)
        if not m:
            out.append(selector[i:])
            return "".join(out)
        out.append(selector[i:m.start()])
        depth, j = 1, m.end()
        while j < len(selector) and depth:
            depth += {"(": 1, ")": -1}.get(selector[j], 0)
            j += 1
        i = j


def _can_match(selector: str, used: set[str], prefixes: tuple[str, ...] = ()) -> bool:
    plain = re.sub(r"\[[^\]]*\]", "", _without_functional_pseudos(selector))  # attribute values are not classes
    for name in _CLASS_IN_SELECTOR.findall(plain):
        name = re.sub(r"\\(.)", r"\1", name)
        if name not in used and not name.startswith(prefixes):
            return False
    return True


def _block_end(text: str, start: int) -> int:
    """Index just past the '}' that closes the block whose '{' is at ``start``."""
    depth, quote, i = 0, "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif text.startswith("/*", i):
            i = text.find("*/", i + 2) + 1
            if i == 0:
                return len(text)
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def _purge_rules(text: str, used: set[str], prefixes: tuple[str, ...] = ()) -> str:
    out, i, n = [], 0, len(text)
    while i < n:
        brace, semi = text.find("{", i), text.find(";", i)
        if brace < 0:
            out.append(text[i:])
            break
        prelude = text[i:brace]
        if prelude.lstrip().startswith("@") and 0 <= semi < brace:  # @import, @charset ...;
            out.append(text[i:semi + 1])
            i = semi + 1
            continue
        end = _block_end(text, brace)
        head = re.sub(r"/\*.*?\*/", "", prelude, flags=re.S).strip()
        body = text[brace + 1:end - 1]
        if head.startswith(("@media", "@supports", "@container", "@layer", "@document")):
            inner = _purge_rules(body, used, prefixes)
            if inner.strip():
                out.append(f"{head}{{{inner}}}")
        elif head.startswith("@"):
            out.append(text[i:end])  # @font-face, @keyframes, @page, @property ...
        else:
            keep = [sel for sel in _split_top(head, ",") if _can_match(sel.strip(), used, prefixes)]
            if keep:
                out.append(",".join(sel.strip() for sel in keep) + "{" + body + "}")
        i = end
    return "".join(out)


def _stylesheets(outdir: Path) -> list[Path]:
    return [css for pattern in PURGED_CSS for css in (outdir / "_static").glob(pattern)]


def _stash(outdir: Path, css: Path) -> tuple[Path, Path]:
    key = css.relative_to(outdir / "_static").as_posix().replace("/", "__")
    stash = outdir.parent / ".rope_css"
    return stash / key, stash / f"{key}.cut"


def _restore_stylesheets(outdir: Path) -> None:
    """Start from the stylesheets as the theme ships them: a build that did not copy them again finds
    the ones this extension cut last time (its hash is kept beside a copy of the original)."""
    import hashlib

    for css in _stylesheets(outdir):
        original, mark = _stash(outdir, css)
        data = css.read_bytes()
        if mark.exists() and original.exists() and mark.read_text() == hashlib.sha256(data).hexdigest():
            css.write_bytes(original.read_bytes())
        else:
            original.parent.mkdir(parents=True, exist_ok=True)
            original.write_bytes(data)


def _purge_stylesheets(outdir: Path) -> None:
    import hashlib

    used, prefixes = _used_words(outdir)
    for css in _stylesheets(outdir):
        text = css.read_text(encoding="utf-8")
        text = re.sub(r"/\*#\s*sourceMappingURL=[^*]*\*/", "", text)
        css.write_text(_purge_rules(text, used, prefixes), encoding="utf-8")
        _stash(outdir, css)[1].write_text(hashlib.sha256(css.read_bytes()).hexdigest())


# --- code: highlighting spans that change nothing -------------------------------------------------
#
# Pygments wraps every token of a code cell in a <span class="...">, even names and punctuation,
# which the site's styles (light and dark) draw in the code block's own colour: a third of a
# chapter's bytes. Those spans are unwrapped; spans whose class is drawn differently stay.


def _plain_token_classes(pygments_css: Path) -> set[str]:
    """Token classes drawn exactly like the code block around them, in every theme."""
    text = pygments_css.read_text(encoding="utf-8")
    base = dict(re.findall(r'html\[data-theme="(\w+)"\] \.highlight \{[^}]*?color: (#[0-9A-Fa-f]+)', text))
    styles: dict[str, dict[str, str]] = {}
    for theme, cls, body in re.findall(r'html\[data-theme="(\w+)"\] \.highlight \.([A-Za-z0-9]+) \{([^}]*)\}', text):
        styles.setdefault(cls, {})[theme] = body.strip()
    return {cls for cls, by_theme in styles.items()
            if base and set(by_theme) == set(base) and all(body == f"color: {base[t]}" for t, body in by_theme.items())}


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


PLOT_MIN_SCALE = 0.75  # as book.js: a plot is not shown narrower than 3/4 of its display width


def _lazy_images(text: str, page: Path) -> str:
    plot = False

    def fix(m: re.Match) -> str:
        attrs = m.group(1) + m.group(3)
        if "loading=" in attrs:
            return m.group(0)
        path = (page.parent / m.group(2)).resolve()
        style = re.search(r'style="([^"]*)"', attrs)
        size = _image_size(path, style.group(1) if style else "") if path.is_file() else None
        extra = ' loading="lazy" decoding="async"'
        head, tail = m.group(1), m.group(3)
        if size:
            w, h = size
            extra += f' width="{round(w)}" height="{round(h)}"'
            # an SVG gets its display width as a 2x PNG states it; a plot its minimum width (book.js
            # sets the same once the image loads, too late for one that has not loaded yet)
            css = "" if style else f"width: {round(w)}px;"
            if plot:
                css += f" min-width: {math.ceil(w * PLOT_MIN_SCALE)}px;"
            if css and style:
                head, tail = (s.replace(style.group(0), f'style="{style.group(1).rstrip()} {css.strip()}"')
                              for s in (head, tail))
            elif css:
                extra += f' style="{css.strip()}"'
        return f'<img {head}src="{m.group(2)}"{tail}{extra} />'

    def fix_figure(m: re.Match) -> str:
        nonlocal plot
        plot = True
        try:
            return _PAGE_IMAGE.sub(fix, m.group(0))
        finally:
            plot = False

    text = re.sub(r'<figure class="rope-plot[^"]*"[^>]*>.*?</figure>', fix_figure, text, flags=re.S)
    return _PAGE_IMAGE.sub(fix, text)


_CODE_BLOCK = re.compile(r'(<div class="highlight[^"]*"><pre>)(.*?)(</pre></div>)', re.S)


def _unwrap_plain_tokens(text: str, plain: set[str]) -> str:
    if not plain:
        return text
    span = re.compile(r'<span class="(?:%s)">([^<]*)</span>' % "|".join(sorted(map(re.escape, plain))))
    return _CODE_BLOCK.sub(lambda m: m.group(1) + span.sub(r"\1", m.group(2)) + m.group(3), text)


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
    # Navigation on phones (issue 34): pydata-sphinx-theme 0.17 puts its own ☰ and on-this-page
    # buttons in the page header, which sphinx-book-theme always hides (it shows its own in the
    # article header), and binds the drawers to the first `.primary-toggle` / `.secondary-toggle`
    # of the page: the hidden ones, so the visible buttons opened nothing
    # (https://github.com/pydata/pydata-sphinx-theme/issues/2451,
    # https://github.com/executablebooks/sphinx-book-theme/issues/988). Without the hidden
    # duplicates both themes' handlers find the visible buttons; book.js returns focus to them.
    (re.compile(r'<button class="pst-navbar-icon sidebar-toggle (?:primary|secondary)-toggle"[^>]*>\s*'
                r'<span class="fa-solid fa-[a-z-]+"></span>\s*</button>\s*'), ""),
    # the visible buttons are named by their tooltip alone ("Toggle primary sidebar"): name them as
    # the theme named the hidden ones
    (re.compile(r'(<button class="sidebar-toggle primary-toggle btn btn-sm")(?! aria-label)'), r'\1 aria-label="Site navigation"'),
    (re.compile(r'(<button class="sidebar-toggle secondary-toggle btn btn-sm pst-navbar-icon")(?! aria-label)'), r'\1 aria-label="On this page"'),
]


def _fix_pages(outdir: Path) -> None:
    pygments_css = outdir / "_static" / "pygments.css"
    plain = _plain_token_classes(pygments_css) if pygments_css.exists() else set()
    for page in outdir.rglob("*.html"):
        if "_static" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        fixed = text
        for pattern, replacement in _PAGE_FIXES:
            if page.name == "search.html" and "searchindex" in pattern.pattern:
                continue  # the search page itself needs the index
            fixed = pattern.sub(replacement, fixed)
        fixed = _unwrap_plain_tokens(fixed, plain)
        fixed = _lazy_images(fixed, page)
        # the launch menu's logos (Colab, Binder) show only when the menu opens
        fixed = re.sub(r'(<img [^>]*?src="[^"]*_static/images/logo_[a-z]+\.(?:png|svg)")(?![^>]*loading=)',
                       r'\1 loading="lazy"', fixed)
        if 'class="sd-tab-set' not in fixed:  # sphinx-design's tab script, on a page without tabs
            fixed = re.sub(r'<script[^>]*_static/design-tabs\.js[^>]*></script>\s*', "", fixed)
        if "thebe-launch-button" not in fixed:  # thebe is off (launch_buttons.thebe: false)
            fixed = re.sub(r'<script[^>]*_static/sphinx-thebe\.js[^>]*></script>\s*', "", fixed)
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
    _MathML.save_cache()
    _restore_stylesheets(outdir)
    _fix_pages(outdir)
    _subset_icon_fonts(outdir)
    _purge_stylesheets(outdir)


def setup(app: Sphinx) -> dict:
    app.add_config_value("rope_math_renderer", "mathjax", "html", types=[str])
    app.add_html_math_renderer("rope_katex", (_visit_math, None), (_visit_displaymath, None))
    app.connect("config-inited", _choose_math_renderer)
    app.connect("html-page-context", _install_katex)
    app.connect("env-updated", _dedupe_inline_scripts)
    app.add_transform(PlotFigures)
    # after myst-parser's and sphinx-mathjax-offline's settings (builder-inited, default priority 500)
    app.connect("builder-inited", _configure, priority=900)
    # after pydata-sphinx-theme writes its light and dark pygments.css (build-finished, priority 500)
    app.connect("build-finished", _finish, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
