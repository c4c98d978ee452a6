"""The gate (``scripts/i18n.py check``): what a translation may not change (maths, roles, code, links,
numbers), what reads wrongly once parsed (markup, punctuation, digit grouping), the term table's
terms, the figures' and plots' catalog, and the outputs of the English build the catalog lacks."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from i18n_common import LANG, LOCALES, OUTPUTS, ROOT, TERMS, _is_math, load_terms
from i18n_fonts import cjk_characters
from i18n_outputs import outputs_pot
from rope_edu.i18n import HAN_RANGE


# --- the gate ------------------------------------------------------------------------------------

_ROLE = re.compile(r"\{[a-z:-]+\}`[^`]*`")
_CODE = re.compile(r"(?<![`{}a-z])`[^`]+`")
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
_LINK = re.compile(r"\]\(([^)\s]+)\)|<(https?://[^>]+)>")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")


_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_MONTH = re.compile(r"\b(?:%s)(?= \d{4}\b)" % "|".join(_MONTHS))
_TEXT = re.compile(r"\\text\{[^{}]*\}")
_TITLED = re.compile(r"^(\{[a-z:-]+\}`)[^`<]*<([^>`]+)>`$")


def _parts(text: str) -> dict[str, list[str]]:
    # {doc}`chapter 2 <target>`: its title is prose, translated; the role and its target are kept
    roles = [_TITLED.sub(r"\1<\2>`", r) for r in _ROLE.findall(text)]
    rest = _ROLE.sub(" ", text)
    # the words inside \text{...} are prose, translated with the rest; the maths around them is not
    maths = [_TEXT.sub(r"\\text{}", m) for m in _MATH.findall(rest)]
    rest = _MATH.sub(" ", rest)
    code = _CODE.findall(rest)
    rest = _CODE.sub(" ", rest)
    links = ["".join(m) for m in _LINK.findall(rest)]
    rest = _LINK.sub(" ", rest)
    # a month is a number in Chinese (March 2021 -> 2021 年 3 月)
    rest = _MONTH.sub(lambda m: f" {_MONTHS.index(m.group(0)) + 1} ", rest)
    numbers = [n.replace(",", "").lstrip("0") or "0" for n in _NUMBER.findall(rest)]   # 2026-08-30: 8
    return {"roles": sorted(roles), "maths": sorted(maths), "code spans": sorted(code),
            "link targets": sorted(links), "numbers": sorted(numbers)}


# A message is parsed again as MyST; one that then is not a paragraph (a heading "6. 多模态…" read as a
# list item) is dropped by Sphinx's Locale transform, which keeps the English: write "6\\. ".
_BLOCK_START = re.compile(r"\s*(?:\d+[.)]\s|[-*+]\s|#{1,6}\s|>\s)")
_STRONG = re.compile(r"(?<!\*)\*\*(?!\*)")


def _punct(c: str) -> bool:
    import unicodedata
    return unicodedata.category(c)[0] in "PS"


def _unclosed_strong(text: str) -> bool:
    """Whether a ``**`` of ``text`` is no delimiter for CommonMark: a closing one after punctuation
    (。, a code span's backtick) and before a letter (a Han character), or an opening one after a
    letter and before punctuation. Those show as literal asterisks."""
    inside = [m.span() for p in (_ROLE, _MATH, _CODE) for m in p.finditer(text)]
    runs = [m.start() for m in _STRONG.finditer(text) if not any(a <= m.start() < b for a, b in inside)]
    for k, i in enumerate(runs):
        before, after = text[i - 1:i] or " ", text[i + 2:i + 3] or " "
        if k % 2:   # closing: right-flanking
            if _punct(before) and not (after.isspace() or _punct(after)):
                return True
        elif _punct(after) and not (before.isspace() or _punct(before)):   # opening: left-flanking
            return True
    return False
# half-width , : ; ( ) next to a Chinese character, outside maths, code, roles and links
_HALF_WIDTH = re.compile(f"(?<=[{HAN_RANGE}])[,:;()]|[,:;()](?=[{HAN_RANGE}])")


#: A per cent sign after a space: the Chinese edition writes 41% (and {3}% in a template), as Chinese
#: technical writing does, not 41 % (issue 42).
_SPACED_PERCENT = re.compile(r"(?:\d[\d,.]*|\{\d+\})[ \u00a0\u2009\u202f]+%")


def markup_problems(msgid: str, msgstr: str) -> list[str]:
    """What in a Chinese translation reads wrongly once parsed or shown: a paragraph or heading that
    starts like a list item or heading (its translation is dropped), a ``**`` after 。 before a Han
    character (shown literally), half-width punctuation next to Chinese characters, a space before
    a per cent sign (41 %, where the Chinese edition writes 41%)."""
    out = []
    if _BLOCK_START.match(msgstr) and msgstr != msgid:   # Sphinx keeps an unchanged message as it is
        out.append(f"markup: {msgstr[:20]!r} starts like a list item or heading (escape it: 6\\. )")
    if _unclosed_strong(msgstr) and not _unclosed_strong(msgid):
        out.append("markup: a ** that CommonMark does not take as bold, shown as it is (a closing ** after 。 "
                   "and before a Han character: put it before the 。)")
    bad = _HALF_WIDTH.findall(_prose(msgstr))
    if bad:
        out.append(f"punctuation: half-width {''.join(sorted(set(bad)))} next to a Chinese character (use ，：；（）)")
    if msgstr != msgid and re.search(f"[{HAN_RANGE}]", msgstr):
        out += [f"per cent: {m.group(0)!r}, a space before % (the Chinese edition writes 41%)"
                for m in _SPACED_PERCENT.finditer(_prose(msgstr))]
    return out


#: Digit grouping, the same in both editions (CONTRIBUTING, "The Chinese edition"): an integer part of
#: five or more digits is grouped in threes with a comma (16,384; 100,000; 131,071), four digits may
#: stand alone (4096) or be grouped (4,096); never a space (32 768). Maths ($10\,000$), code, link
#: targets, an issue number (#56446) and the digits inside a name (SmolLM2-135M) are not prose.
_SPACE_GROUPED = re.compile(r"(?<![\w.,#/-])\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?![\d\w])")
_UNGROUPED = re.compile(r"(?<![\w.,#/\\-])\d{5,}(?![\d\w])")


def grouping_problems(text: str) -> list[str]:
    """The numbers of ``text``'s prose (a message or its translation) not grouped as the book groups
    digits: ``32 768`` (a space) and ``16384`` (five digits or more, ungrouped), each to be ``32,768``."""
    prose = _prose(text)
    out = [f"digits: {m.group(0)!r} grouped with a space (write {re.sub(r'[^0-9]', ',', m.group(0))})"
           for m in _SPACE_GROUPED.finditer(prose)]
    out += [f"digits: {m.group(0)!r} not grouped (write {int(m.group(0)):,})" for m in _UNGROUPED.finditer(prose)]
    return out


def problems(msgid: str, msgstr: str) -> list[str]:
    """How a translation differs from its English message in what must not change, and what in it
    reads wrongly (:func:`markup_problems`)."""
    if not msgstr:
        return []
    if _is_math(msgid):   # a display maths block: only the words inside its \text{} may change
        bare = lambda tex: re.sub(r"\s+", "", _TEXT.sub("", tex))  # noqa: E731
        if bare(msgid) != bare(msgstr):
            return [f"maths: {msgid.strip()[:60]!r} -> {msgstr.strip()[:60]!r} (outside \\text{{}})"]
        return []
    a, b = _parts(msgid), _parts(msgstr)
    return ([f"{kind}: {a[kind]} -> {b[kind]}" for kind in a if a[kind] != b[kind]] + markup_problems(msgid, msgstr)
            + [f"English {p}" for p in grouping_problems(msgid)]
            + ([] if msgstr == msgid else grouping_problems(msgstr)))


def check(root: Path, *, strict: bool = True) -> int:
    import polib

    terms = load_terms(root)
    bad = untranslated = fuzzy = total = 0
    for po_path in sorted((root / LOCALES / LANG / "LC_MESSAGES").rglob("*.po")):
        for entry in polib.pofile(str(po_path)):
            if entry.obsolete:
                continue
            total += 1
            if not entry.msgstr:
                untranslated += 1
            elif "fuzzy" in entry.flags:
                fuzzy += 1
            # maths (whose \text{} words alone are translated), names: no terms to find
            same = entry.msgstr == entry.msgid or _is_math(entry.msgid)
            for p in problems(entry.msgid, entry.msgstr) + ([] if same else term_problems(entry.msgid, entry.msgstr, terms)):
                bad += 1
                print(f"{po_path.relative_to(root)}: {entry.msgid[:60]!r}: {p}")
    print(f"{total} messages: {total - untranslated - fuzzy} translated, {untranslated} untranslated, "
          f"{fuzzy} fuzzy, {bad} translations that change the English message's maths, roles, code, links or numbers "
          f"or miss a term of {TERMS}")
    bad += check_figures(root)
    missing = check_outputs(root)   # what the local English build shows: the gate's, not a unit test's
    return 1 if bad or (strict and (untranslated or fuzzy or missing)) else 0


def check_outputs(root: Path) -> int:
    """The outputs of the built English site (plot and table words, the checks' claims, what cells
    print and compute) that ``outputs.po`` lacks (``update`` not run since they changed), printed;
    returns how many (0 without a site)."""
    import polib

    pot = outputs_pot(root / "_build" / "html")
    path = root / LOCALES / LANG / "LC_MESSAGES" / f"{OUTPUTS}.po"
    if pot is None or not path.is_file():
        return 0
    have = {e.msgid for e in polib.pofile(str(path)) if not e.obsolete}
    missing = [e for e in pot if e.msgid not in have]
    for e in missing:
        print(f"{path.relative_to(root)}: {e.msgid[:60]!r} ({e.comment}, {e.occurrences[0][0]}): "
              f"not in the catalog (python scripts/i18n.py update)")
    print(f"outputs of the built English site: {len(pot)} texts, {len(missing)} not in {OUTPUTS}.po")
    return len(missing)


def _prose(text: str) -> str:
    """``text`` without its roles, maths, code spans and link targets (what a term may be found in)."""
    for pattern in (_ROLE, _MATH, _CODE):
        text = pattern.sub(" ", text)
    return re.sub(r"\]\([^)]*\)|<https?://[^>]*>", " ", text)


def term_problems(msgid: str, msgstr: str, terms) -> list[str]:
    """The terms of the table that the English message uses (as words, any case, plural or not; a
    longer term before the shorter ones inside it) and whose Chinese term its translation lacks."""
    if not msgstr:
        return []
    prose, taken, out, used = _prose(msgid), [], [], []
    for en, zh, _ in terms:
        for m in re.finditer(rf"(?<![\w-]){re.escape(en)}(?:e?s)?(?![\w-])", prose, re.I):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            taken.append((m.start(), m.end()))
            # a shorter term said for a longer one ("the key" for "the pass key"): the longer term's
            # Chinese says it, whether the message names the longer term or (a computed sentence about
            # the pass-key test) only the short one
            longer = any(re.search(rf"(?<![\w-]){re.escape(en)}(?![\w-])", other, re.I) and other_zh in msgstr
                         for other, other_zh, *_ in [*used, *terms] if other.lower() != en.lower())
            if zh not in msgstr and not longer:
                out.append(f"term {en!r}: the translation does not use {zh!r}")
            used.append((en, zh))
            break
    return out


# --- the figures' and plots' catalog (rope_edu/locales/zh_CN.json, rope_edu.i18n) -----------------

def figure_problems(data: dict, english: dict[str, set[str]], keys: dict[str, set[str]] | None = None,
                    terms=()) -> list[str]:
    """What is wrong with a figure catalog ``data`` (the JSON's content) against the English strings
    the figures show (:func:`i18n_strings.english_strings`) and the Python helpers' template keys
    (:func:`i18n_strings.template_keys`): a shown string or key with no translation (and not
    listed as "not shown"), an empty translation, a translation whose placeholders or numbers are
    not its key's."""
    from rope_edu.i18n import placeholders

    messages, hidden = data.get("messages", {}), set(data.get("not shown", []))
    templates = data.get("templates", {})
    page = data.get("page messages", {})   # the model check page's own: checked as the others
    out = []
    for where, strings in sorted(english.items()):
        for text in sorted(strings - set(messages) - hidden):
            out.append(f"{where}: no translation of {text!r}")
    for where, strings in sorted((keys or {}).items()):
        for text in sorted(strings - set(templates)):
            out.append(f"{where}: no template {text!r}")
    for key, value in [*messages.items(), *templates.items(), *page.items()]:
        if not isinstance(value, str) or (not value.strip() and key.strip()):
            out.append(f"untranslated: {key!r}")
            continue
        if placeholders(key) != placeholders(value):
            out.append(f"{key!r}: placeholders {placeholders(key)} -> {placeholders(value)} in {value!r}")
        a = _parts(re.sub(r"\{\d+\}", " ", key))["numbers"]
        b = _parts(re.sub(r"\{\d+\}", " ", value))["numbers"]
        if a != b:
            out.append(f"{key!r}: numbers {a} -> {b} in {value!r}")
        if value != key:
            out += [f"{key!r}: {p}" for p in term_problems(key, value, terms)]
    return out


def font_problems(data: dict) -> list[str]:
    """The catalog's CJK characters that the package's Chinese font lacks (run ``font``)."""
    from fontTools.ttLib import TTFont

    from rope_edu.i18n import FONT

    texts = [v for part in ("messages", "templates") for v in data.get(part, {}).values()]
    have = {chr(c) for c in TTFont(str(FONT), recalcTimestamp=False).getBestCmap()} if FONT.is_file() else set()
    missing = "".join(c for c in cjk_characters(texts) if c not in have)
    return [f"{FONT.name} lacks {missing!r}: python scripts/i18n.py font"] if missing else []


def plot_strings(site: Path) -> set[str]:
    """The words of the English site's plots (their SVGs' ``<text>``, as drawn): what the catalog
    must hold for the Chinese plots to be in Chinese."""
    import html

    out = set()
    for path in sorted((site / "_images").glob("*.svg")):
        for words in re.findall(r"<text\b[^>]*>([^<]+)</text>", path.read_text(encoding="utf-8")):
            words = html.unescape(words)
            if re.search(r"[A-Za-z]{2,}", words):
                out.add(words)
    return out


def maths_labels(site: Path) -> dict[str, str]:
    """The English site's plot labels with matplotlib maths (``$...$``) and words, by SVG name: drawn
    one glyph per ``<tspan>``, each placed on its own, so no catalog entry can translate them (the
    plot's code must write them without ``$...$``, as Unicode, to be translated)."""
    import html

    out = {}
    for path in sorted((site / "_images").glob("*.svg")):
        for body in re.findall(r"<text\b[^>]*>\s*(<tspan.*?)</text>", path.read_text(encoding="utf-8"), re.S):
            glyphs = html.unescape("".join(re.findall(r"<tspan[^>]*>([^<]*)</tspan>", body))).replace("\xa0", " ")
            if re.search(r"[A-Za-z]{2,}", glyphs):
                out.setdefault(glyphs, path.name)
    return out


def plot_labels(site: Path) -> tuple[list[str], list[str], dict[str, str]]:
    """The English site's plot labels that no catalog entry translates, those the catalog keeps as
    they are (maps to themselves: a model's name, a dtype, a config value, maths), both sorted, and
    :func:`maths_labels`."""
    sys.path.insert(0, str(ROOT))
    from rope_edu.i18n import catalog, translate

    same = {k for k, v in catalog(LANG).items() if k == v}
    words = plot_strings(site)
    left = sorted(w for w in words if translate(w, LANG) == w and w not in same)
    return left, sorted(words & same), maths_labels(site)


def check_figures(root: Path) -> int:
    """Problems of every figure catalog, printed; returns how many."""
    import json

    sys.path.insert(0, str(root))
    from i18n_strings import english_strings, template_keys
    from rope_edu.i18n import LANGUAGES, LOCALES

    english, keys = english_strings(), template_keys()
    bad = 0
    for lang in LANGUAGES:
        path = LOCALES / f"{lang}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        found = figure_problems(data, english, keys, load_terms(root)) + font_problems(data)
        for p in found:
            print(f"{path.name}: {p}")
        bad += len(found)
    print(f"figure catalogs: {bad} problems")
    site = root / "_build" / "html"
    if (site / "_images").is_dir():
        left, kept, maths = plot_labels(site)
        print(f"plots of the built English site: {len(left)} labels with no translation in the catalog"
              + (f" (e.g. {left[:3]})" if left else "") + f"; {len(kept)} kept as they are by the catalog")
        if maths:
            readable = sorted(maths, key=lambda w: -sum(c.isascii() and c.isalpha() for c in w) / len(w))
            print(f"  and {len(maths)} labels with $...$ maths in {len(set(maths.values()))} plots, drawn glyph "
                  f"by glyph, stay English (their code must write them in Unicode to be translated), "
                  f"e.g. {readable[:2]}")
    return bad
