"""The Chinese edition: one source (the English chapters), gettext catalogs under locales/zh_CN/.

    python scripts/i18n.py update        # after the English changed: refresh the catalogs, list what to translate
                                         # (the pages' and outputs.po, the built English chapters' plot captions,
                                         # alt texts, table captions and headers)
    python scripts/i18n.py check         # untranslated or fuzzy messages, and translations that changed the maths,
                                         # roles, code spans, link targets or numbers of their English message
    python scripts/i18n.py build         # the Chinese site into _build/html/zh (make book runs it after the English)
    python scripts/i18n.py font          # the figures' Chinese font, cut to the catalog's characters (fonts-noto-cjk)

Messages are Sphinx's: one paragraph, list item, heading or theorem title each, in MyST source
(roles, ``$...$``, backticks), parsed again after translation. Display maths blocks are messages
too; ``update`` fills them with their own text (maths is not translated). The Chinese build reads
the English build's executed outputs from the same jupyter-cache (nothing runs twice) and, once
built, shares every static file and image that is byte-for-byte the English one.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from rope_edu.i18n import CJK_RANGE, HAN_RANGE

ROOT = Path(__file__).resolve().parents[1]
LANG = "zh_CN"
LOCALES = "locales"
SUBDIR = "zh"   # the Chinese site: _build/html/zh/


# --- configuration -------------------------------------------------------------------------------

def config(root: Path, *, gettext: bool = False) -> dict:
    """The Chinese edition's Jupyter Book configuration, made from ``_config.yml``."""
    cfg = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    sphinx = cfg.setdefault("sphinx", {})
    # a configuration file outside the root: extension folders given absolutely
    sphinx["local_extensions"] = {k: str((root / v).resolve()) + "/" for k, v in sphinx.get("local_extensions", {}).items()}
    extra = sphinx.setdefault("config", {})
    extra["gettext_compact"] = False
    extra["gettext_uuid"] = False
    extra["gettext_location"] = False
    if gettext:
        cfg.setdefault("execute", {})["execute_notebooks"] = "off"
        return cfg
    extra.update({
        "language": LANG,
        "locale_dirs": [str((root / LOCALES).resolve())],
        "gettext_allow_fuzzy_translations": False,
        "html_search_language": "zh",
        # the Chinese reader notebooks, opened by the Chinese pages' Colab and Binder buttons
        "reader_notebooks_edition": f"{SUBDIR}/",
        # jieba splits the text into words for the search index; it knows the book's terms
        # (位置编码, 外推, ...) from the term table, else it cuts them into characters or pairs; the
        # query is cut the same way, with the table's other names for its terms (_ext/editions.py)
        "html_search_options": {"dict": str((root / SEARCH_DICT).resolve()), "terms": str((root / TERMS).resolve())},
        # sphinx-togglebutton's hint on proofs, solutions and other dropdowns
        "togglebutton_hint": "点击展开",
        "togglebutton_hint_hide": "点击收起",
        # the footer's date: 2026 年 12 月 2 日 (Sphinx's Chinese default pads: 12 月 02 日)
        "html_last_updated_fmt": "%Y 年 %-m 月 %-d 日",
    })
    cfg["title"] = "RoPE 旋转位置编码：从第一性原理讲起"
    cfg["author"] = "rope-edu 作者"  # the footer's "By ..." and copyright line
    # the English build's executed outputs: the same cache, nothing executed again
    cfg.setdefault("execute", {})["cache"] = str((root / "_build" / ".jupyter_cache").resolve())
    html = cfg.setdefault("html", {})
    html["baseurl"] = html.get("baseurl", "").rstrip("/") + f"/{SUBDIR}/" if html.get("baseurl") else ""
    return cfg


def _jupyter_book(root: Path, cfg: dict, out: Path, *extra: str) -> int:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "_config.yml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False), encoding="utf-8")
    jb = Path(sys.executable).with_name("jupyter-book")
    # as make book runs it (scripts/build_book.py): a chapter executed here (its English outputs not
    # cached) writes the figures' static markup, not live widgets
    env = {**os.environ, "ROPE_EDU_STATIC": "1", "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([str(jb), "build", "--path-output", str(out), "--config", str(path), *extra, str(root)],
                          cwd=root, env=env).returncode


#: jieba's user dictionary for the Chinese search index: the term table's Chinese terms
#: (written by ``build`` from locales/zh_CN/terms.csv).
SEARCH_DICT = Path("_build") / SUBDIR / "search_terms.txt"


def write_search_dict(root: Path) -> int:
    """jieba's dictionary of the term table's Chinese terms (those written without spaces: jieba
    reads a line as "word [frequency] [tag]"); returns how many."""
    words = sorted({zh for _, zh, _ in load_terms(root) if re.fullmatch(f"[{HAN_RANGE}\\w-]+", zh)})
    path = root / SEARCH_DICT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{w}\n" for w in words), encoding="utf-8")
    return len(words)


# --- catalogs ------------------------------------------------------------------------------------

def _is_math(msgid: str) -> bool:
    """A display maths block (its message is the LaTeX itself)."""
    text = msgid.strip()
    return bool(text) and "\n" in msgid and not re.search(r"[.:;,]\s*$", text.splitlines()[0]) \
        and not re.search(r"\s[a-z]{3,}\s[a-z]{3,}\s", re.sub(r"\\text\{[^}]*\}", "", text)) and "\\" in text


def tidy(po) -> int:
    """What makes a catalog invalid gettext (``msgfmt --check``), though polib and Sphinx read it:
    an obsolete entry whose msgid is also a live one (a message that came back), and gettext's
    guess that prose with a "%" is a Python format string (``#, python-format``, which msgfmt then
    checks). Removes both from ``po`` (a polib catalog); returns how many it changed."""
    live = {e.msgid for e in po if not e.obsolete}
    changed = 0
    for entry in [e for e in po if e.obsolete and e.msgid in live]:
        po.remove(entry)
        changed += 1
    for entry in po:
        if "python-format" in entry.flags:
            entry.flags.remove("python-format")
            changed += 1
    return changed


def update(root: Path) -> int:
    import polib
    from sphinx_intl import basic

    pot = root / "_build" / "i18n_pot"
    shutil.rmtree(pot, ignore_errors=True)
    if _jupyter_book(root, config(root, gettext=True), pot, "--builder", "custom", "--custom-builder", "gettext"):
        return 1
    basic.update(str(root / LOCALES), str(pot / "_build" / "gettext"), (LANG,))
    update_outputs(root)
    print(f"glossary: {fill_glossary(root)} terms set from {TERMS}")
    todo = 0
    for po_path in sorted((root / LOCALES / LANG / "LC_MESSAGES").rglob("*.po")):
        po = polib.pofile(str(po_path), wrapwidth=0)
        tidy(po)
        for entry in po:
            if _is_math(entry.msgid) and (not entry.msgstr or "fuzzy" in entry.flags):
                entry.msgstr = entry.msgid   # maths is not translated (a fuzzy match is old maths)
                if "fuzzy" in entry.flags:
                    entry.flags.remove("fuzzy")
        po.save()
        left = [e for e in po if (not e.msgstr or "fuzzy" in e.flags) and not e.obsolete]
        todo += len(left)
        if left:
            print(f"{po_path.relative_to(root)}: {len(left)} to translate")
    print(f"{todo} messages to translate")
    return 0


# --- the code cells' outputs: plot captions and alt texts, table captions and headers ------------
#
# A chapter's outputs come from the English build's executed notebooks (the Chinese build reuses
# them): their words are not in the pages' catalogs. ``update`` gathers them from the built English
# pages into one catalog, locales/zh_CN/LC_MESSAGES/outputs.po (``#:`` the pages that show each);
# the Chinese build puts them through it (_ext/editions.py, _OutputTexts).

#: The outputs' catalog: its domain (locales/zh_CN/LC_MESSAGES/outputs.po).
OUTPUTS = "outputs"

_PLOT = re.compile(r'<figure class="rope-plot[^"]*"[^>]*>(.*?)</figure>', re.S)
_TABLE = re.compile(r'<div class="rope-table"[^>]*>(.*?)</table>', re.S)


def output_messages(page: str) -> list[tuple[str, str]]:
    """(kind, English text) of each plot caption and alt text (``_ext/book_plots.py``'s figures)
    and each table caption and column header (``rope_edu.table``) of a built page's HTML, in
    page order; a figure's caption is its alt text where the plot has none."""
    import html

    found = []
    for m in sorted([*_PLOT.finditer(page), *_TABLE.finditer(page)], key=lambda m: m.start()):
        part = m.group(1)
        if m.re is _PLOT:
            caption = re.search(r'<span class="caption-text">(.*?)</span>', part, re.S)
            alt = re.search(r'<img\b[^>]*?\balt="([^"]*)"', part)
            found += [("plot caption", caption and caption.group(1)), ("plot alt text", alt and alt.group(1))]
        else:
            caption = re.search(r"<caption>(.*?)</caption>", part, re.S)
            found.append(("table caption", caption and caption.group(1)))
            found += [("table header", h) for h in re.findall(r"<th\b[^>]*>(.*?)</th>", part, re.S)]
    return [(kind, html.unescape(text).strip()) for kind, text in found if text and text.strip()]


_FOLDED_VERDICT = re.compile(r'<span class="rope-verdict">(.*?)</span>', re.S)
_STREAM = re.compile(r'<div class="output stream[^"]*"><div class="highlight"><pre>(.*?)</pre>', re.S)
_COMPUTED = re.compile(r'<div class="cell_output docutils container">\s*((?:<p>[^<]*</p>\s*)+)')


def _ext_module(name: str):
    sys.path.insert(0, str(ROOT / "_ext"))
    import importlib

    return importlib.import_module(name)


def _text(fragment: str) -> str:
    import html

    return html.unescape(re.sub(r"<[^>]*>", "", fragment))


def check_claims(page: str) -> list[str]:
    """The claims of the checks of a built English page, folded (``checked: <claim>; max error ...``:
    what ``rope_edu.verify`` was told it checks) or printed in the flow, as templates (their numbers
    ``{0}``, ``{1}``, ...: ``_ext/output_words.py``), in page order; the Chinese build shows them
    through the outputs catalog (_ext/check_folds.py)."""
    split_verdict = _ext_module("check_folds").split_verdict
    words = _ext_module("output_words")
    verdicts = [_text(v).strip() for v in _FOLDED_VERDICT.findall(page)]
    for block in _STREAM.findall(page):
        lines = _text(block).split("\n")
        for i, line in enumerate(lines):
            if line.startswith(words.VERDICT):
                j = i + 1
                while j < len(lines) and lines[j].startswith("    ") and lines[j].strip():
                    j += 1
                verdicts.append(" ".join([line] + [w.strip() for w in lines[i + 1:j]]))
    claims = [split_verdict(v)[0] for v in verdicts]
    return [words.template(c)[0] for c in claims if c]


def printed_texts(page: str) -> list[tuple[str, str]]:
    """(kind, template) of the prose a built English page's cells print ("printed line", not the
    verdicts) and compute ("computed sentence": Markdown an output writes), in page order."""
    words = _ext_module("output_words")
    found = [("printed line", t) for block in _STREAM.findall(page) for t in words.printed_lines(_text(block))]
    for group in _COMPUTED.findall(page):
        for para in re.findall(r"<p>([^<]*)</p>", group):
            found += [("computed sentence", t) for t in words.computed_sentences(_text(para))]
    return found


def outputs_pot(site: Path):
    """The outputs' template catalog (polib) from the built English chapter pages of ``site`` (plot
    captions and alt texts, table captions and headers, the checks' claims, what the cells print and
    compute): one message per text, ``#:`` the pages that show it, ``#.`` what it is; None without a site."""
    import polib

    pages = sorted([*(site / "notebooks").glob("*.html"), *(site / "book").glob("*.html")])
    if not pages:
        return None
    pot = polib.POFile(wrapwidth=0)
    pot.metadata = {"Project-Id-Version": "rope-edu", "MIME-Version": "1.0",
                    "Content-Type": "text/plain; charset=utf-8", "Content-Transfer-Encoding": "8bit"}
    entries: dict[str, polib.POEntry] = {}
    for path in pages:
        where = path.relative_to(site).with_suffix("").as_posix()
        page = path.read_text(encoding="utf-8")
        texts = [*output_messages(page), *(("check claim", c) for c in check_claims(page)), *printed_texts(page)]
        for kind, text in texts:
            entry = entries.get(text)
            if entry is None:
                entry = entries[text] = polib.POEntry(msgid=text, msgstr="", occurrences=[], comment=kind)
                pot.append(entry)
            if (where, "") not in entry.occurrences:
                entry.occurrences.append((where, ""))
            if kind not in entry.comment.split(", "):
                entry.comment += f", {kind}"
    return pot


def update_outputs(root: Path) -> int:
    """Merge the outputs' texts of the built English site into ``outputs.po`` as sphinx-intl merges
    the pages' (a changed text fuzzy, a gone one obsolete); returns how many messages it has, or
    -1 (catalog left alone) when there is no English build."""
    from sphinx_intl import basic

    pot = outputs_pot(root / "_build" / "html")
    if pot is None:
        print(f"{OUTPUTS}.po: no English build (_build/html/notebooks), left as it is")
        return -1
    folder = root / "_build" / "i18n_outputs"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    pot.save(str(folder / f"{OUTPUTS}.pot"))
    basic.update(str(root / LOCALES), str(folder), (LANG,))
    shutil.rmtree(folder)
    import polib

    path = root / LOCALES / LANG / "LC_MESSAGES" / f"{OUTPUTS}.po"
    polib.pofile(str(path), wrapwidth=0).save()   # one line a message, as the pages' catalogs
    print(f"{OUTPUTS}.po: {len(pot)} texts of the chapters' outputs (plot captions and alt texts, table captions and headers)")
    return len(pot)


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


def markup_problems(msgid: str, msgstr: str) -> list[str]:
    """What in a Chinese translation reads wrongly once parsed or shown: a paragraph or heading that
    starts like a list item or heading (its translation is dropped), a ``**`` after 。 before a Han
    character (shown literally), half-width punctuation next to Chinese characters."""
    out = []
    if _BLOCK_START.match(msgstr) and msgstr != msgid:   # Sphinx keeps an unchanged message as it is
        out.append(f"markup: {msgstr[:20]!r} starts like a list item or heading (escape it: 6\\. )")
    if _unclosed_strong(msgstr) and not _unclosed_strong(msgid):
        out.append("markup: a ** that CommonMark does not take as bold, shown as it is (a closing ** after 。 "
                   "and before a Han character: put it before the 。)")
    bad = _HALF_WIDTH.findall(_prose(msgstr))
    if bad:
        out.append(f"punctuation: half-width {''.join(sorted(set(bad)))} next to a Chinese character (use ，：；（）)")
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


# --- the term table (locales/zh_CN/terms.csv) ------------------------------------------------------

TERMS = Path(LOCALES) / LANG / "terms.csv"


def load_terms(root: Path) -> list[tuple[str, str, str]]:
    """The term table: (English, Chinese, note on usage) per row, the longest English first."""
    import csv

    with open(root / TERMS, encoding="utf-8", newline="") as f:
        rows = [(r["english"].strip(), r["chinese"].strip(), (r.get("note") or "").strip()) for r in csv.DictReader(f)]
    seen = set()
    for en, zh, _ in rows:
        if not en or not zh:
            raise ValueError(f"{TERMS}: a row needs an English and a Chinese term, got {en!r}, {zh!r}")
        if en.lower() in seen:
            raise ValueError(f"{TERMS}: {en!r} is listed twice")
        seen.add(en.lower())
    return sorted(rows, key=lambda r: -len(r[0]))


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


def fill_glossary(root: Path) -> int:
    """The glossary's terms in the Chinese catalog from the term table: "旋转位置编码（rotary
    position embedding）", the English beside the Chinese; returns how many it set."""
    import polib

    path = root / LOCALES / LANG / "LC_MESSAGES" / "book" / "glossary.po"
    if not path.is_file():
        return 0
    table = {en.lower(): zh for en, zh, _ in load_terms(root)}
    po = polib.pofile(str(path), wrapwidth=0)
    n = 0
    for entry in po:
        zh = table.get(entry.msgid.strip().lower())
        if zh and not entry.obsolete:
            want = f"{zh}（{entry.msgid}）"
            if entry.msgstr != want or "fuzzy" in entry.flags:
                entry.msgstr = want
                if "fuzzy" in entry.flags:
                    entry.flags.remove("fuzzy")
                n += 1
    po.save()
    return n


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


# --- the Chinese site ----------------------------------------------------------------------------

_URL = re.compile(r'((?:href|src)=")([^"#?:]+)')


def _share(en: Path, zh: Path) -> int:
    """Delete from the Chinese site every file under _static/ and _images/ that the English site
    has byte for byte, and point the Chinese pages at the English copy; returns bytes saved. The
    package's wheel and Binder's environment (wheels/, binder/) are the English site's too: the
    Chinese reader notebooks install that wheel, and Binder reads the branch's root."""
    shared: set[Path] = set()
    saved = 0
    for folder in ("_static", "_images", "wheels", "binder"):
        for path in sorted((zh / folder).rglob("*")):
            twin = en / path.relative_to(zh)
            if path.is_file() and twin.is_file() and filecmp.cmp(path, twin, shallow=False):
                shared.add(path.relative_to(zh))
                saved += path.stat().st_size
                path.unlink()
        for path in sorted((zh / folder).rglob("*"), reverse=True) + [zh / folder]:
            if path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    for page in zh.rglob("*.html"):
        here = page.parent
        text = page.read_text(encoding="utf-8")

        def up(m: re.Match) -> str:
            target = Path(os.path.normpath(here / m.group(2)))
            try:
                rel = target.relative_to(zh)
            except ValueError:
                return m.group(0)
            return m.group(1) + "../" + m.group(2) if rel in shared else m.group(0)

        page.write_text(_URL.sub(up, text), encoding="utf-8")
    return saved


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

    from fontTools import subset
    from fontTools.ttLib import TTFont

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


def translate_plots(root: Path, site: Path) -> int:
    """The plots of the Chinese site (SVG, text kept as text) with their labels through the figure
    catalog and the Chinese font they need embedded (translate_svg); returns how
    many changed. A plot no message matches stays byte for byte the English one (and is shared)."""
    changed = 0
    for path in sorted((site / "_images").glob("*.svg")):
        svg = path.read_text(encoding="utf-8")
        out = translate_svg(svg, LANG)
        if out != svg:
            path.write_text(out, encoding="utf-8")
            changed += 1
    return changed


#: What the Chinese build reads besides the English build's outputs (those are keyed below by the
#: output cache's records): sources, catalogs, extensions, the package and this script.
ZH_INPUTS = ["notebooks/*.ipynb", "book/**/*", "_config.yml", "_toc.yml", "_ext/**/*", f"{LOCALES}/**/*",
             "rope_edu/**/*", "scripts/i18n.py", "requirements.txt"]


def inputs_key(root: Path, patterns: list[str] = ZH_INPUTS) -> str:
    """A digest of everything an edition is made from: the files ``patterns`` match (default
    :data:`ZH_INPUTS`, the Chinese edition's) and the English build's executed outputs (the
    records of ``_build/.jupyter_cache``). scripts/build_book.py keys the English site on it too."""
    import hashlib

    digest = hashlib.sha256()
    files = sorted({p for pattern in patterns for p in root.glob(pattern)
                    if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"})
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    cache = root / "_build" / ".jupyter_cache"
    if cache.exists():
        digest.update(os.path.realpath(cache).encode())
        # the executed notebooks only: jupyter-cache's database is rewritten whenever a record is
        # read (its "accessed" time), so a build that only read the outputs would change the key
        for record in sorted(cache.rglob("*.ipynb")):
            digest.update(f"{record.relative_to(cache)}:{record.stat().st_size}:{record.stat().st_mtime_ns}".encode())
    return digest.hexdigest()[:20]


def build(root: Path, *, every_page: bool = False) -> int:
    out = root / "_build" / "zh"
    if not (root / LOCALES / LANG).is_dir():
        print("Chinese edition: no catalogs (python scripts/i18n.py update)")
        return 0
    stamp = out / ".inputs_key"
    key = inputs_key(root)
    site = root / "_build" / "html" / SUBDIR
    if not every_page and stamp.is_file() and stamp.read_text() == key and (site / "index.html").exists():
        print("Chinese edition: nothing it reads changed (sources, catalogs, outputs): kept as built")
        return 0
    stamp.unlink(missing_ok=True)
    if every_page:
        # every page again; the pictures of the Chinese figures (keyed on what they show) are kept
        for stale in (out / "_build").glob("*"):
            if stale.name != ".reader_figures":
                shutil.rmtree(stale) if stale.is_dir() and not stale.is_symlink() else stale.unlink()
    # formulas are not translated: the English build's MathML cache (_ext/book_math.py) serves both
    mathml = root / "_build" / "rope_mathml.json"
    if mathml.is_file():
        (out / "_build").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(mathml, out / "_build" / mathml.name)
    # the reader notebooks' pictures (_ext/reader_notebooks.py) are keyed on what they show: the
    # plots are the same in both editions, so the English build's pictures are not taken again
    pictures = root / "_build" / ".reader_figures"
    if pictures.is_dir():
        cache = out / "_build" / pictures.name
        cache.mkdir(parents=True, exist_ok=True)
        for picture in pictures.iterdir():
            if not (cache / picture.name).exists():
                shutil.copyfile(picture, cache / picture.name)
    # the package's wheel: the English build's (the Chinese notebooks install the one published
    # with the English site; the same file is then shared, not published twice)
    wheels = root / "_build" / ".reader_wheels"
    if wheels.is_dir():
        shutil.rmtree(out / "_build" / wheels.name, ignore_errors=True)
        shutil.copytree(wheels, out / "_build" / wheels.name)
    write_search_dict(root)
    status = _jupyter_book(root, config(root), out, "-W", "-n", "--keep-going")
    if status:
        return status
    site = root / "_build" / "html" / SUBDIR
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(out / "_build" / "html", site)
    plots = translate_plots(root, site)
    saved = _share(root / "_build" / "html", site)
    print(f"Chinese edition in _build/html/{SUBDIR} ({saved / 1e6:.1f} MB of static files shared with the English, "
          f"{plots} plots with Chinese labels)")
    stamp.write_text(key)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["update", "check", "build", "font"])
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.command == "update":
        return update(args.root)
    if args.command == "check":
        return check(args.root)
    if args.command == "font":
        return make_font(args.root)
    return build(args.root)


if __name__ == "__main__":
    sys.exit(main())
