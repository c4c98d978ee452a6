"""Formulas: MathML made at build time, and the MathJax components the pages load (issue 21).

MathJax loads as separate components (CommonHTML output, assistive MathML for screen readers)
instead of ``tex-chtml.js``, whose 425 KB context menu also made every formula a tab stop. With the
``quickjs`` package each formula's TeX becomes MathML at build time (:class:`_MathML`), by MathJax's
own TeX input run in QuickJS, so the browser loads MathJax's MathML input (15 KB) instead of its TeX
input and packages (171 KB). The conversions are kept between builds in ``_build/rope_mathml.json``
(the Chinese edition's build reads the same file: scripts/i18n.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

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
    except Exception as exc:  # reported as a build warning (an error under -W)
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


def _configure(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
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


def _save(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        _MathML.save_cache()


def setup(app: Sphinx) -> dict:
    # after myst-parser's and sphinx-mathjax-offline's settings (builder-inited, default priority 500)
    app.connect("builder-inited", _configure, priority=900)
    app.connect("build-finished", _save, priority=894)  # the order of the build-finished work: book_pages.py
    return {"parallel_read_safe": True, "parallel_write_safe": True}
