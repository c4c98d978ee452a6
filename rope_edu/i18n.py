"""The figures' and plots' own words in other languages: one message catalog for Python and JavaScript.

The book's interactive figures draw their labels, readouts and notes in the reader's browser
(``widgets/js/*.js``), and take their control labels and titles from Python (:mod:`rope_edu.widgets`);
the plotting helpers label plots in Python. Both read one catalog per language,
``rope_edu/locales/<lang>.json``::

    {"language": "zh_CN", "messages": {"pair {0}": "第 {0} 对", ...}}

A key is an English string exactly as the figure shows it, with ``{0}``, ``{1}``, ... where the
figure fills in a value (a number, a symbol, another label); the translation uses the same
placeholders, in any order. A string that matches no key is shown as it is (numbers, symbols), so
the English figures are unchanged: English has no catalog.

The language: :func:`set_language`, else the environment variable ``ROPE_EDU_LANG`` (``zh_CN``),
else English. In the static book the page's ``<html lang>`` chooses instead (the site's loader).
``scripts/i18n.py check`` compares every catalog with the strings the figures show
(:func:`english_strings`): missing keys, placeholders or numbers changed by a translation.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path

__all__ = ["LOCALES", "LANG_ENV", "LANGUAGES", "language", "set_language", "catalog", "translate", "templates", "message", "template_keys",
           "english_strings", "placeholders", "FONT", "FONT_FAMILY"]

#: Folder of the catalogs (``<lang>.json``) and the plots' CJK font.
LOCALES = Path(__file__).with_name("locales")
#: Environment variable naming the language (``zh_CN``) when :func:`set_language` was not called.
LANG_ENV = "ROPE_EDU_LANG"
#: The languages with a catalog, besides English.
LANGUAGES = ("zh_CN",)
#: The plots' and figures' Chinese font: Noto Sans SC cut down to the characters of the catalog
#: (``scripts/i18n.py font``), OFL-1.1; registered with matplotlib for Chinese plots only.
FONT = LOCALES / "NotoSansSC-rope.otf"
#: Its family name (in matplotlib and in the site's ``@font-face``).
FONT_FAMILY = "RoPE Noto Sans SC"

_chosen: str | None = None


def _normal(lang: str | None) -> str:
    """``"zh-CN"``, ``"zh_cn"``, ``"zh"`` -> ``"zh_CN"``; English (or ``""``/``None``) -> ``"en"``."""
    if lang is None or not str(lang).strip():
        return "en"
    if not isinstance(lang, str):
        raise TypeError(f"lang must be a string such as 'zh_CN' or 'en', got {lang!r}")
    code = lang.strip().replace("-", "_").lower()
    if code == "en" or code.startswith("en_"):
        return "en"
    for known in LANGUAGES:
        if code == known.lower() or code == known.split("_")[0].lower():
            return known
    raise ValueError(f"lang must be 'en' or one of {list(LANGUAGES)}, got {lang!r}")


def set_language(lang: str | None) -> None:
    """The language of the figures and plots made from now on (``"zh_CN"``, ``"en"``; ``None``:
    back to ``ROPE_EDU_LANG``)."""
    global _chosen
    _chosen = None if lang is None else _normal(lang)


def language() -> str:
    """The current language: ``"en"`` or one of :data:`LANGUAGES`."""
    return _chosen if _chosen is not None else _normal(os.environ.get(LANG_ENV))


@lru_cache(maxsize=None)
def catalog(lang: str) -> dict[str, str]:
    """The messages of ``lang`` (English key -> translation); ``{}`` for English."""
    lang = _normal(lang)
    if lang == "en":
        return {}
    data = json.loads((LOCALES / f"{lang}.json").read_text(encoding="utf-8"))
    return {k: v for k, v in data["messages"].items() if v}


_HOLE = re.compile(r"\{(\d+)\}")


@lru_cache(maxsize=None)
def templates(lang: str) -> dict[str, str]:
    """The Python helpers' sentence templates of ``lang`` (the catalog's "templates": keys
    looked up exactly by :func:`message`, never matched against what a figure shows)."""
    lang = _normal(lang)
    if lang == "en":
        return {}
    data = json.loads((LOCALES / f"{lang}.json").read_text(encoding="utf-8"))
    return {k: v for k, v in data.get("templates", {}).items() if isinstance(v, str)}


def message(key: str, *values, lang: str | None = None) -> str:
    """Template ``key`` in ``lang`` (default :func:`language`) with ``{0}``, ``{1}``, ... replaced by
    ``values`` (as ``str``); in English the key itself, filled in."""
    lang = language() if lang is None else _normal(lang)
    text = templates(lang).get(key, key) if lang != "en" else key
    return _HOLE.sub(lambda h: str(values[int(h.group(1))]) if int(h.group(1)) < len(values) else h.group(0), text)


def placeholders(message: str) -> list[str]:
    """The placeholders of a catalog key or translation, sorted: ``"{1} of {0}"`` -> ``["{0}", "{1}"]``."""
    return sorted(_HOLE.findall(message), key=int)


@lru_cache(maxsize=None)
def _patterns(lang: str) -> tuple[dict[str, str], tuple[tuple[re.Pattern, str], ...]]:
    exact, patterns = {}, []
    for key, value in catalog(lang).items():
        if _HOLE.search(key):
            parts = _HOLE.split(key)    # literal, index, literal, index, ..., literal
            regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<p{p}>.+?)" for i, p in enumerate(parts))
            patterns.append((re.compile(f"^{regex}$", re.S), value, len(_HOLE.sub("", key))))
        else:
            exact[key] = value
    # the most specific pattern first (more literal text), as core.js orders them
    patterns.sort(key=lambda p: -p[2])
    return exact, tuple((r, v) for r, v, _ in patterns)


def translate(text: str, lang: str | None = None) -> str:
    """``text`` in ``lang`` (default :func:`language`): its catalog entry, with the values of its
    placeholders (themselves translated) put in; ``text`` itself where no key matches."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {text!r}")
    lang = language() if lang is None else _normal(lang)
    if lang == "en" or not text:
        return text
    exact, patterns = _patterns(lang)
    if text in exact:
        return exact[text]
    for regex, value in patterns:
        m = regex.match(text)
        if m:
            values = {k[1:]: translate(v, lang) for k, v in m.groupdict().items()}
            return _HOLE.sub(lambda h: values.get(h.group(1), h.group(0)), value)
    return text


# --- the English strings the figures show (what a catalog must cover) ------------------------------

_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'|`((?:[^`\\]|\\.)*)`')
_CODE_LIKE = re.compile(r"^[\w.#:-]*$|^[\d\s.,-]+$|=>|[{}]|;\s*$|^M[\d$]|^\s|\s$|^https?:|^(?:rgba?|translate|rotate)\(")
_WORDS = re.compile(r"[A-Za-z]{2,}|[\u4e00-\u9fff]")


def _template(body: str) -> str:
    """A template literal's text with each ``${...}`` as ``{0}``, ``{1}``, ... (nested braces allowed)."""
    out, n, i = [], 0, 0
    while i < len(body):
        if body.startswith("${", i):
            depth, j = 1, i + 2
            while j < len(body) and depth:
                depth += {"{": 1, "}": -1}.get(body[j], 0)
                j += 1
            out.append(f"{{{n}}}")
            n += 1
            i = j
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def _shown(s: str) -> bool:
    """A literal a reader sees: words, not an attribute, class name, path or number."""
    bare = _HOLE.sub("X", s)
    return bool(_WORDS.search(_HOLE.sub("", s))) and (" " in bare or bool(re.search(r"[^\x00-\x7f]", bare))) \
        and not _CODE_LIKE.search(bare)


#: What core.js draws as text, by call and argument (``text(parent, x, y, str)``, a readout's label
#: and unit, a note, a heading, ``tr(str)`` itself) and by option (``plot()``'s labels and title).
_DRAWN_ARGS = {"text": {3}, "textLines": {3}, "readout": {1, 4}, "note": {0}, "heading": {0}, "tr": {0}}
_DRAWN_KEYS = {"xlabel", "ylabel", "title", "unit", "heading"}


def _skip_string(source: str, i: int) -> int:
    """The index just after the string or template literal that opens at ``source[i]``."""
    quote, j, depth = source[i], i + 1, 0
    while j < len(source):
        c = source[j]
        if c == "\\":
            j += 2
        elif quote == "`" and source.startswith("${", j):
            depth, j = depth + 1, j + 2
        elif quote == "`" and depth:
            if c in "\"'`":
                j = _skip_string(source, j)
                continue
            depth -= c == "}"
            j += 1
        elif c == quote:
            return j + 1
        elif c == "\n" and quote != "`":
            return j + 1          # a stray quote: the line's end closes it
        else:
            j += 1
    return j


def _literals(source: str):
    """The string and template literals of JavaScript ``source``, as (text, context, compared), and the
    array frames: literals joined by ``+`` are one (their texts concatenated, each ``${...}`` as
    ``{0}``, ``{1}``, ... in order); a literal's context is the chain of brackets around it,
    innermost last, each ``(bracket, name, position, frame)``: ``("(", callee, argument index)``,
    ``("[", None, element index)``, ``("{", key, entry index)``; ``frames[frame]`` tells whether an
    array holds literals only, and which (their indices in the list returned); ``compared``: the
    literal is an operand of ``===``, ``!==``, ``==`` or ``!=``."""
    out: list = []
    frames: list[dict] = []
    stack: list[list] = []
    i, n, last, pending = 0, len(source), "", None
    while i < n:
        c = source[i]
        if source.startswith("//", i) or source.startswith("/*", i):
            end = source.find("\n" if c == "/" and source[i + 1] == "/" else "*/", i + 2)
            i = n if end < 0 else end + (0 if source[i + 1] == "/" else 2)
            continue
        if c in "\"'`":
            j = _skip_string(source, i)
            body = source[i + 1:j - 1]
            text = (_template(body) if c == "`" else body).replace('\\"', '"').replace("\\'", "'").replace("\\n", "\n")
            if pending is not None and re.fullmatch(r"\s*\+\s*", source[pending[2]:i]):
                pending[0].append(text)
                pending[2] = j
            else:
                if pending is not None:
                    out.append(pending)
                if stack and stack[-1][0] == "[":
                    frames[stack[-1][3]]["literals"].append(len(out))
                # a literal compared with something is a value of the code, not a label
                compared = bool(re.search(r"[!=]=\s*$", source[max(0, i - 8):i]) or re.match(r"\s*[!=]=", source[j:j + 8]))
                pending = [[text], [tuple(f) for f in stack], j, compared]
            i, last = j, "x"
            continue
        if c == "/" and (last == "" or last in "(,=:[!&|?{};+-*%<>~^"):
            j, in_class = i + 1, False        # a regular expression literal
            while j < n and source[j] != "\n" and (source[j] != "/" or in_class):
                in_class = (in_class or source[j] == "[") and source[j] != "]"
                j += 2 if source[j] == "\\" else 1
            i, last = j + 1, "x"
            continue
        if c in "([{":
            callee = re.search(r"([A-Za-z_$][\w$]*)\s*$", source[max(0, i - 80):i]) if c == "(" else None
            frames.append({"literals only": True, "literals": []})
            stack.append([c, callee.group(1) if callee else None, 0, len(frames) - 1])
        elif c in ")]}":
            if stack:
                stack.pop()
        elif c == "," and stack:
            stack[-1][2] += 1
            if stack[-1][0] == "{":
                stack[-1][1] = None
        elif c == ":" and stack and stack[-1][0] == "{" and stack[-1][1] is None:
            key = re.search(r"([A-Za-z_$][\w$]*|\"[^\"]*\"|'[^']*')\s*$", source[max(0, i - 80):i])
            stack[-1][1] = key.group(1).strip("\"'") if key else ""
        if not c.isspace():
            if stack and stack[-1][0] == "[" and c not in "[{(,)]}":
                frames[stack[-1][3]]["literals only"] = False     # an element that is not a literal
            last = c
        i += 1
    if pending is not None:
        out.append(pending)
    literals = []
    for parts, context, _, compared in out:
        text, k = "", 0
        for part in parts:        # each part's placeholders numbered after the earlier parts'
            text += _HOLE.sub(lambda h, k=k: f"{{{int(h.group(1)) + k}}}", part)
            k += len(set(_HOLE.findall(part)))
        literals.append((text, context, compared))
    return literals, frames


def _drawn(text: str, context, compared: bool, frames, literals) -> bool:
    """A literal that holds a word but looks like code (one word, a trailing ``;``) and that the
    figure draws: an argument core.js draws as text (``text``, a readout's label or unit, a note,
    a heading), a plot's label or title, a legend item's label, a tick's label, or an element of
    an array of literals only, one of which is shown (the lines of a text)."""
    if not context or compared or text != text.strip() or "\n" in text:
        return False
    kind, name, position, frame = context[-1]
    if kind == "(":
        return position in _DRAWN_ARGS.get(name, ())
    if kind == "{":
        return name in _DRAWN_KEYS
    # legend(parent, x, y, [[label, colour, dashed?], ...]); xticks: [[value, label], ...]
    items, owner = context[-2:-1], context[-3:-2]
    if items and owner and items[0][0] == "[":
        if owner[0][:3] == ("(", "legend", 3) and position == 0:
            return True
        if owner[0][0] == "{" and owner[0][1] in ("xticks", "yticks") and position == 1:
            return True
    array = frames[frame]
    return array["literals only"] and any(_shown(literals[k][0]) for k in array["literals"])


def _js_strings(source: str) -> set[str]:
    """The English strings a figure's JavaScript shows: literals with words (``${...}`` as ``{0}``,
    ...; literals joined by ``+`` as one string) that read as prose, and those that look like code
    (one word, a trailing ``;``) but sit where the figure draws them (:func:`_drawn`)."""
    literals, frames = _literals(source)
    found = set()
    for text, context, compared in literals:
        if _WORDS.search(_HOLE.sub("", text)) and (_shown(text) or _drawn(text, context, compared, frames, literals)):
            found.add(text)
    return found


_TEMPLATE_CALL = re.compile(r"\b(?:_m|message)\(\s*((?:\"[^\"]*\"(?:\s+if\s[^\"]*?\selse\s+)?)+)")


def template_keys() -> dict[str, set[str]]:
    """Every template key the package's Python passes to :func:`message` (as ``message(...)`` or
    ``_m(...)``), by module (``plots.py``)."""
    out: dict[str, set[str]] = {}
    root = Path(__file__).parent
    for path in sorted(root.rglob("*.py")):
        if path.name == "i18n.py":
            continue
        keys = {k for m in _TEMPLATE_CALL.finditer(path.read_text(encoding="utf-8")) for k in re.findall(r'"([^"]*)"', m.group(1))}
        if keys:
            out[str(path.relative_to(root))] = keys
    return out


# --- the "Check your model" page of the book (book/model_check.md, _ext/model_check/) ------------------

#: The page's folder of scripts in a checkout of the book (absent from an installed package): the
#: English strings of ``MODEL_CHECK_SCRIPTS`` there and of the page's raw HTML form
#: (``MODEL_CHECK_PAGE``) go through this catalog on the Chinese site too.
MODEL_CHECK = Path(__file__).resolve().parents[1] / "_ext" / "model_check"
MODEL_CHECK_SCRIPTS = ("page.js", "checks.js")
MODEL_CHECK_PAGE = Path(__file__).resolve().parents[1] / "book" / "model_check.md"

_HTML_WORDS = re.compile(r"(<(label|option|button|h2|p)\b[^>]*>)(.*?)(</\2>)|(\baria-label=\")([^\"]*)(\")", re.S)


def html_strings(html: str) -> set[str]:
    """The English of a raw HTML form as a reader sees it: the contents of its labels, options,
    buttons, headings and paragraphs (their inline markup kept, white space as one space) and its
    ``aria-label`` values, those with words."""
    from html import unescape

    found = set()
    for m in _HTML_WORDS.finditer(html):
        text = " ".join((m.group(3) if m.group(1) else unescape(m.group(6))).split())
        if _WORDS.search(re.sub(r"<[^>]*>", "", text)):
            found.add(text)
    return found


def translate_html(html: str, lang: str) -> str:
    """``html`` with the strings :func:`html_strings` finds in ``lang`` (each element's contents
    and ``aria-label`` as a whole; markup and attributes otherwise as they are)."""
    from html import escape, unescape

    def one(m: re.Match) -> str:
        if m.group(1):
            text = " ".join(m.group(3).split())
            out = translate(text, lang)
            return m.group(0) if out == text else m.group(1) + out + m.group(4)
        text = " ".join(unescape(m.group(6)).split())
        out = translate(text, lang)
        return m.group(0) if out == text else m.group(5) + escape(out, quote=True) + m.group(7)

    return _HTML_WORDS.sub(one, html)


def _model_check_strings() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    if MODEL_CHECK.is_dir():
        for name in MODEL_CHECK_SCRIPTS:
            out[f"model_check/{name}"] = _js_strings((MODEL_CHECK / name).read_text(encoding="utf-8"))
        # the notes of the published models (rope_edu.models), shown beside the one picked
        from .spec_export import published_tables

        out["models.PUBLISHED notes"] = {p.note for rows in published_tables().values() for p in rows.values() if p.note}
    if MODEL_CHECK_PAGE.is_file():
        source = MODEL_CHECK_PAGE.read_text(encoding="utf-8")
        out["book/model_check.md"] = {s for block in re.findall(r"```\{raw\} html\n(.*?)```", source, re.S)
                                      for s in html_strings(block)}
    return out


def english_strings() -> dict[str, set[str]]:
    """Every English string the figures show, by where it comes from (``js/clock.js``,
    ``widgets/clock.py``): the string and template literals of the figures' JavaScript that hold
    words (``${...}`` as ``{0}``, ``{1}``, ...), and each figure's title, control labels and
    drop-down labels."""
    import importlib
    import pkgutil

    from . import widgets
    from .widgets._core import JS_DIR, NOSCRIPT, Figure

    out: dict[str, set[str]] = {"widgets/_core.py": {NOSCRIPT}}
    for path in sorted(JS_DIR.glob("*.js")):
        out[f"js/{path.name}"] = _js_strings(path.read_text(encoding="utf-8"))
    for info in pkgutil.iter_modules(widgets.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{widgets.__name__}.{info.name}")
        strings: set[str] = set()
        for value in vars(module).values():
            if isinstance(value, Figure):
                strings.add(value.title)
                for c in value.controls:
                    strings.add(c.label)
                    strings.update(c.labels)
        out[f"widgets/{info.name}.py"] = {s for s in strings if s}
    # in a checkout of the book: the "Check your model" page's words (its form and its scripts)
    out.update(_model_check_strings())
    return out
