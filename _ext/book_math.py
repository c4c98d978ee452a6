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


# --- one display equation, two renderings ----------------------------------------------------------
#
# A display equation is written on one line. Where it has relations (=, ≤, ...) or a condition
# after \quad at its top level, the build also renders it broken there: the relation starts a
# new, indented line. The page carries both; book.js shows the one line when it fits the room
# beside the equation's number and the broken one only when it does not (a phone), and again
# whenever the column changes width. Without JavaScript the one line shows (and scrolls in its
# box). A derivation the source writes in rows (an aligned block) keeps its rows where they fit;
# its narrow rendering breaks each row the same way (reflow_rows, below).

_RELATIONS = ("=", "<", ">", r"\le", r"\leq", r"\ge", r"\geq", r"\ne", r"\neq", r"\approx",
              r"\equiv", r"\sim", r"\simeq", r"\propto", r"\mapsto", r"\iff", r"\Rightarrow",
              r"\Longrightarrow", r"\implies", r"\leftarrow", r"\gets")
_SPACES = (r"\quad", r"\qquad")
_TOKEN = re.compile(r"\\[a-zA-Z]+|\\.|.", re.S)
_OPEN = {"{", "(", "[", r"\{", r"\langle", r"\lVert", r"\left", r"\begin"}
_CLOSE = {"}", ")", "]", r"\}", r"\rangle", r"\rVert", r"\right", r"\end"}


#: A piece (between two breaks) longer than this many glyph-like tokens is broken again before its
#: top-level + and − (issue 45: a sum of products was still cut in a proof on a phone); what fits
#: a phone's narrowest box (a proof in a fold, about 300 px) at the formula's size.
_LONG_PIECE = 24
_NOT_GLYPHS = {"{", "}", "^", "_", r"\,", r"\;", r"\!", r"\left", r"\right", r"\big", r"\Big", r"\bigg",
               r"\Bigg", r"\mathrm", r"\text", r"\operatorname", r"\mathbf", r"\boldsymbol"}


#: Bars that open and close an absolute value or a norm (|x|, \|x\|): a bar closes the one before
#: it at the same level, else opens; after ``\left`` or ``\right`` it is that delimiter's own.
_BARS = {"|", r"\|", r"\vert", r"\Vert", r"\lvert", r"\rvert"}


def _nesting(tokens: list[str]) -> list[str | None]:
    """Per token: "open", "close" or None. A formula is never cut inside |h_{i+1} − h_i| (issue 45:
    a phone showed "|h_{i+1} −" on one line and "h_i|" on the next)."""
    kinds: list[str | None] = []
    stack: list[str] = []
    previous = None
    for tok in tokens:
        kind = None
        if tok in _BARS and previous not in (r"\left", r"\right"):
            kind = "close" if stack and stack[-1] == tok else "open"
        elif tok in _CLOSE:
            kind = "close"
        elif tok in _OPEN:
            kind = "open"
        if kind == "close" and stack:
            stack.pop()
        elif kind == "open":
            stack.append(tok)
        kinds.append(kind)
        if not tok.isspace():
            previous = tok
    return kinds


def _weight(tokens: list[str]) -> int:
    return sum(1 for t in tokens if not t.isspace() and t not in _NOT_GLYPHS)


def _break_long(piece: str, limit: int = _LONG_PIECE) -> list[str]:
    """``piece`` cut before its top-level binary + and − so that each part holds at most
    ``limit`` glyph-like tokens where a cut allows (the parts after the first start with
    their sign); where it has no such place, before the + and − directly inside its round or
    square brackets (``\\big(`` too, never ``\\left(`` or braces, which cannot span two lines);
    ``[piece]`` when it is short or has neither."""
    tokens = _TOKEN.findall(piece)
    if _weight(tokens) <= limit:
        return [piece]
    top, inner, stack, previous = [], [], [], None
    for i, (tok, kind) in enumerate(zip(tokens, _nesting(tokens))):
        if kind == "close":
            stack = stack[:-1]
        elif tok in ("+", "-") and previous is not None and previous not in _RELATIONS + (
                "+", "-", "(", "[", ",", r"\quad", r"\qquad"):
            if not stack:
                top.append(i)
            elif stack in (["("], ["["]):
                inner.append(i)
        if kind == "open":
            stack.append(tok)
        if not tok.isspace():
            previous = tok
    cuts = top or inner
    parts, start, last = [], 0, 0
    for cut in cuts:  # greedy: cut at the last place that keeps the part short enough
        if _weight(tokens[start:cut]) > limit and last > start:
            parts.append(tokens[start:last])
            start = last
        last = cut
    if _weight(tokens[start:]) > limit and last > start:
        parts.append(tokens[start:last])
        start = last
    parts.append(tokens[start:])
    return ["".join(p).strip() for p in parts]


def _pieces(tex: str) -> list[str] | None:
    """``tex`` cut before each relation and each ``\\quad`` at its top level (a cut needs something
    on each side, and two relations in a row stay together); ``None`` when ``tex`` is broken by
    hand (``\\\\`` or ``&`` at its top level)."""
    tokens = _TOKEN.findall(tex)
    depth, pieces, current = 0, [], []
    for i, (tok, kind) in enumerate(zip(tokens, _nesting(tokens))):
        if kind == "close":
            depth = max(0, depth - 1)
        elif depth == 0 and tok in (r"\\", "&"):
            return None  # broken by hand already
        elif depth == 0 and tok in _RELATIONS + _SPACES:
            before = "".join(current).strip()
            after = "".join(tokens[i + 1:]).strip()
            if before and after and not before.endswith(("=", r"\le", r"\ge", "<", ">")):
                pieces.append(before)
                current = []
        if kind == "open":
            depth += 1
        current.append(tok)
    pieces.append("".join(current).strip())
    return pieces


def _lines(pieces: list[str], indented: bool = False) -> list[str]:
    """The lines of one statement cut into ``pieces``: the first as it is (indented when the
    statement continues a line above), each further piece on its own indented line, a long piece
    cut again before its top-level + and − (indented further)."""
    lines = []
    for n, piece in enumerate(pieces):
        if n:
            for space in _SPACES:
                if piece.startswith(space) and not piece[len(space):len(space) + 1].isalpha():
                    piece = piece[len(space):].strip()
                    break
        first, *rest = _break_long(piece)
        inner = bool(n) or indented
        lines.append((r"\quad " if inner else "") + first)
        lines += [(r"\qquad " if inner else r"\quad ") + part for part in rest]
    return lines


def _aligned(lines: list[str]) -> str:
    return r"\begin{aligned}" + r"\\".join("&" + line for line in lines) + r"\end{aligned}"


def break_at_relations(tex: str) -> str | None:
    """``tex`` broken before each relation and each ``\\quad`` at its top level, as an
    ``aligned`` block (first piece, then each break on its own line, indented), a piece still
    long also before its top-level + and − (indented further); ``None`` when there is nowhere to
    break, or the formula is broken in its source already.

    >>> break_at_relations(r"a + b = c \\le d")
    '\\begin{aligned}&a + b\\\\&\\quad = c\\\\&\\quad \\le d\\end{aligned}'
    """
    pieces = _pieces(tex)
    if pieces is None:
        return None
    lines = _lines(pieces)
    return _aligned(lines) if len(lines) >= 2 else None


# A derivation written on several lines (an ``aligned`` block: ``lhs &= a \\ &= b``) keeps its rows
# where they fit. Its narrow rendering puts each row's left-hand side on a line of its own and each
# relation at the start of a new, indented line (a row that starts with its relation continues the
# one above), so that a phone's column holds it: the same mechanism as a one-line equation's.

_LEADING_SPACE = re.compile(r"^(?:\\[,;:!]|\\q?quad(?![a-zA-Z])|\s)+")


def _split_rows(tex: str) -> tuple[list[str], bool]:
    """``tex`` cut at its top-level ``\\\\``, each row without its top-level ``&``; and whether it
    had any ``&`` there."""
    rows, current, depth, amp = [], [], 0, False
    for tok in _TOKEN.findall(tex):
        if tok in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 and tok == r"\\":
            rows.append("".join(current))
            current = []
            continue
        elif depth == 0 and tok == "&":
            amp = True
            current.append(" ")
            continue
        if tok in _OPEN:
            depth += 1
        current.append(tok)
    rows.append("".join(current))
    return [r.strip() for r in rows if r.strip()], amp


def reflow_rows(tex: str) -> str | None:
    """A formula broken by hand into rows (``\\begin{aligned} ... \\end{aligned}`` alone, a full
    stop or comma after it kept, or rows with ``&`` and ``\\\\`` at its top level), broken again
    for a narrow column: each row as :func:`break_at_relations` breaks a line, a row that starts
    with its relation indented under the one before. ``None`` when it has no rows, or no row
    breaks further.

    >>> reflow_rows(r"\\begin{aligned}f(x) &= a + b = c\\\\ &= d\\end{aligned}.")
    '\\begin{aligned}&f(x)\\\\&\\quad = a + b\\\\&\\quad = c\\\\&\\quad = d.\\end{aligned}'
    """
    body, tail = tex.strip(), ""
    m = re.fullmatch(r"\\begin\{aligned\}(.*)\\end\{aligned\}\s*([.,;:]?)", body, re.S)
    if m:
        body, tail = m.group(1), m.group(2)
        # the first \begin{aligned} must close at the end: no text between two blocks
        depth = 0
        for env in re.findall(r"\\(begin|end)\{aligned\}", body):
            depth += 1 if env == "begin" else -1
            if depth < 0:
                return None
    rows, amp = _split_rows(body)
    if len(rows) < 2 and not amp:
        return None
    if tail:
        rows[-1] += tail
    lines = []
    for row in rows:
        row = _LEADING_SPACE.sub("", row)
        pieces = _pieces(row)
        if pieces is None:
            return None
        starts_with_relation = (_TOKEN.findall(row) or [""])[0] in _RELATIONS
        lines += _lines(pieces, indented=starts_with_relation and bool(lines))
    return _aligned(lines) if len(lines) > len(rows) else None


def narrow_rendering(tex: str) -> str | None:
    """The rendering of a display formula for a column narrower than its line: broken at its
    relations (:func:`break_at_relations`), or, written in rows, its rows broken
    (:func:`reflow_rows`); ``None`` when it has none. Sphinx puts a formula that holds a
    ``\\\\`` anywhere (in a matrix too) into ``\\begin{split}``: that wrapper is looked through."""
    t = tex.strip()
    if t.startswith(r"\begin{split}") and t.endswith(r"\end{split}") and t.count(r"\begin{split}") == 1:
        t = t[len(r"\begin{split}"):-len(r"\end{split}")]
    return break_at_relations(t) or reflow_rows(t)


#: An inline formula with more glyph-like tokens than this is cut at its relations
#: (:func:`inline_parts`); a shorter one stays whole. A part is cut again before its + and −
#: above _INLINE_PIECE tokens (a fold's column on a phone holds about 18 at the text's size).
_INLINE_SPLIT = 12
_INLINE_PIECE = 16


def inline_parts(tex: str) -> list[str]:
    """An inline formula as the parts a line may break between: cut after each top-level
    relation (and before a ``\\quad``), a long part again after its top-level + and − (where TeX
    breaks a formula in a paragraph; a display formula's narrow rendering, :func:`_lines`, breaks
    before them); ``[tex]`` when it is short or has
    nowhere to cut. MathJax 3 never breaks a formula inside a line, so a long one in a phone's
    column (a proof in a fold: about 290 px) was cut (issue 45: 64 formulas on 13 chapter pages).

    >>> inline_parts("a + b + c + d + e + f = g + h = i")
    ['a + b + c + d + e + f =', 'g + h =', 'i']
    """
    if _weight(_TOKEN.findall(tex)) <= _INLINE_SPLIT:
        return [tex]
    pieces = _pieces(tex)
    if pieces is None:
        return [tex]
    parts: list[str] = []
    for piece in pieces:
        for part in _break_long(piece, _INLINE_PIECE):
            tokens = _TOKEN.findall(part.strip())
            if parts and tokens and tokens[0] in _RELATIONS + ("+", "-"):  # a line breaks after
                parts[-1] += " " + tokens[0]                                   # its relation, as TeX's
                part = "".join(tokens[1:]).strip()
            if part:
                parts.append(part)
    return parts


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
        narrow = narrow_rendering(tex) if display else None
        if narrow is not None:  # the same formula broken at its relations, for a narrow column
            mml += _MathML.convert(narrow, display)
    except Exception as exc:  # reported as a build warning (an error under -W)
        logger.warning(f"formula not converted to MathML ({exc})", location=node)
        return markup
    head = m.group(1)
    if narrow is not None:
        head = head.replace('class="math', 'class="math rope-2way', 1)
    return head + (number.group(0) if number else "") + mml + m.group(4)


def _visit_math_mml(self, node) -> None:
    start = len(self.body)
    try:
        _MathML.originals[0][0](self, node)
    except nodes.SkipNode:
        pass
    markup = "".join(self.body[start:])
    self.body[start:] = [_inline_with_mathml(markup, node)]
    raise nodes.SkipNode


def _inline_with_mathml(markup: str, node) -> str:
    """An inline formula box as MathML; a long one as one box per part (:func:`inline_parts`),
    separated by spaces where a line may break, in a ``rope-math-run`` that reads as one formula."""
    import html as html_lib

    m = _MATH_BOX.match(markup)
    tex = html_lib.unescape(m.group(3)).strip() if m else ""
    if not (tex.startswith("\\(") and tex.endswith("\\)")) or "<" in m.group(3):
        return _with_mathml(markup, False, node)
    parts = inline_parts(tex[2:-2])
    if len(parts) < 2:
        return _with_mathml(markup, False, node)
    boxes = [_with_mathml(m.group(1) + html_lib.escape("\\(" + part + "\\)", quote=False) + m.group(4).rstrip(),
                          False, node) for part in parts]
    return '<span class="rope-math-run">' + " ".join(boxes) + "</span>"


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
