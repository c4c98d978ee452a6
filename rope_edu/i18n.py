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


def _js_strings(source: str) -> set[str]:
    source = re.sub(r"^\s*//.*$|(?<=[;,)}\]])\s*//.*$", "", source, flags=re.M)
    found = set()
    for m in _LITERAL.finditer(source):
        s = m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else _template(m.group(3))
        s = s.replace('\\"', '"').replace("\\'", "'").replace("\\n", "\n")
        if _shown(s):
            found.add(s)
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
    return out
