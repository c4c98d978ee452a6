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
(``scripts/i18n_strings.py``): missing keys, placeholders or numbers changed by a translation.

This module is the package's ground floor: it imports nothing of ``rope_edu`` (the widgets and
plots import it), and reads only the package's own ``locales/``.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path

__all__ = ["LOCALES", "LANG_ENV", "LANGUAGES", "language", "is_chinese", "set_language", "catalog", "translate", "templates", "message",
           "placeholders", "html_strings", "translate_html", "HOLE", "WORDS", "HAN_RANGE", "CJK_RANGE", "FONT",
           "FONT_FAMILY"]

#: Folder of the catalogs (``<lang>.json``) and the plots' CJK font. A real path, not an
#: ``importlib.resources`` Traversable: matplotlib registers the font by file name and the book's
#: build copies the folder (the package is installed as files, never zipped).
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


def _check_text(value: object, name: str, expected: str = "a string") -> None:
    """``TypeError`` naming ``name`` unless ``value`` is a string."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be {expected}, got {value!r} of type {type(value).__name__}")


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


def is_chinese(lang: str | None) -> bool:
    """Whether ``lang`` (a build's ``language``: ``"zh_CN"``, ``"zh-cn"``, ``"zh"``; None or ``""``:
    English) is Chinese: the one test of the build steps that differ by edition."""
    if lang is not None and not isinstance(lang, str):
        raise TypeError(f"lang must be a string such as 'zh_CN' or 'en', or None, got {lang!r}")
    return lang is not None and lang.strip().replace("-", "_").lower().startswith("zh")


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


#: A placeholder of a key or translation: ``{0}``, ``{1}``, ...
HOLE = re.compile(r"\{(\d+)\}")
#: The Chinese characters (CJK Unified Ideographs), as the body of a regex character class.
HAN_RANGE = "\u4e00-\u9fff"
#: Everything a CJK font draws: radicals, punctuation, kana, ideographs, compatibility ideographs
#: and full-width forms (a regex character class body): what the plots' Chinese font must cover.
CJK_RANGE = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
#: What makes a string words a reader sees (two Latin letters in a row, or a Chinese character).
WORDS = re.compile(f"[A-Za-z]{{2,}}|[{HAN_RANGE}]")


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
    _check_text(key, "key")
    lang = language() if lang is None else _normal(lang)
    text = templates(lang).get(key, key) if lang != "en" else key
    return HOLE.sub(lambda h: str(values[int(h.group(1))]) if int(h.group(1)) < len(values) else h.group(0), text)


def placeholders(message: str) -> list[str]:
    """The placeholders of a catalog key or translation, sorted: ``"{1} of {0}"`` -> ``["{0}", "{1}"]``."""
    _check_text(message, "message")
    return sorted(HOLE.findall(message), key=int)


@lru_cache(maxsize=None)
def _patterns(lang: str) -> tuple[dict[str, str], tuple[tuple[re.Pattern, str], ...]]:
    exact, patterns = {}, []
    for key, value in catalog(lang).items():
        if HOLE.search(key):
            parts = HOLE.split(key)    # literal, index, literal, index, ..., literal
            regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<p{p}>.+?)" for i, p in enumerate(parts))
            patterns.append((re.compile(f"^{regex}$", re.S), value, len(HOLE.sub("", key))))
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
            return HOLE.sub(lambda h: values.get(h.group(1), h.group(0)), value)
    return text


# --- a raw HTML form (the "Check your model" page of the book) ----------------------------------------

_HTML_WORDS = re.compile(r"(<(label|option|button|h2|p)\b[^>]*>)(.*?)(</\2>)|(\baria-label=\")([^\"]*)(\")", re.S)


def html_strings(html: str) -> set[str]:
    """The English of a raw HTML form as a reader sees it, the strings :func:`translate_html` looks
    up: the contents of its labels, options, buttons, headings and paragraphs (their inline markup
    kept, white space as one space) and its ``aria-label`` values, those with words."""
    from html import unescape

    _check_text(html, "html", "a string of HTML")
    found = set()
    for m in _HTML_WORDS.finditer(html):
        text = " ".join((m.group(3) if m.group(1) else unescape(m.group(6))).split())
        if WORDS.search(re.sub(r"<[^>]*>", "", text)):
            found.add(text)
    return found


def translate_html(html: str, lang: str) -> str:
    """``html`` with the strings :func:`html_strings` finds in ``lang`` (each element's contents
    and ``aria-label`` as a whole; markup and attributes otherwise as they are)."""
    from html import escape, unescape

    _check_text(html, "html", "a string of HTML")
    _check_text(lang, "lang", "a language code such as 'zh_CN' or 'en'")

    def one(m: re.Match) -> str:
        if m.group(1):
            text = " ".join(m.group(3).split())
            out = translate(text, lang)
            return m.group(0) if out == text else m.group(1) + out + m.group(4)
        text = " ".join(unescape(m.group(6)).split())
        out = translate(text, lang)
        return m.group(0) if out == text else m.group(5) + escape(out, quote=True) + m.group(7)

    return _HTML_WORDS.sub(one, html)
