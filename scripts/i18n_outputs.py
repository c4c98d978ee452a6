"""The code cells' outputs of the built English site, as messages of ``outputs.po``: plot captions and
alt texts, table captions, headers and cells, the checks' claims, what cells print and compute (templates:
``_ext/output_words.py``); ``update_outputs`` merges them into the catalog."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from i18n_common import LANG, LOCALES, OUTPUTS, ROOT, save_if_changed


# --- the code cells' outputs: plot captions and alt texts, table captions, headers and cells -------
#
# A chapter's outputs come from the English build's executed notebooks (the Chinese build reuses
# them): their words are not in the pages' catalogs. ``update`` gathers them from the built English
# pages into one catalog, locales/zh_CN/LC_MESSAGES/outputs.po (``#:`` the pages that show each);
# the Chinese build puts them through it (_ext/editions.py, _OutputTexts).

_PLOT = re.compile(r'<figure class="rope-plot[^"]*"[^>]*>(.*?)</figure>', re.S)
_TABLE = re.compile(r'<div class="rope-table"[^>]*>(.*?)</table>', re.S)


def output_messages(page: str) -> list[tuple[str, str]]:
    """(kind, English text) of each plot caption and alt text (``_ext/book_plots.py``'s figures)
    and each folded table's line, table caption, column header and cell that holds words (``rope_edu.table``; a cell as
    a template, its numbers ``{0}``, ``{1}``, ...) of a built page's HTML, in page order; a
    figure's caption is its alt text where the plot has none."""
    import html

    cell = _ext_module("output_words").table_cell
    found = []
    for m in sorted([*_PLOT.finditer(page), *_TABLE.finditer(page)], key=lambda m: m.start()):
        part = m.group(1)
        if m.re is _PLOT:
            caption = re.search(r'<span class="caption-text">(.*?)</span>', part, re.S)
            alt = re.search(r'<img\b[^>]*?\balt="([^"]*)"', part)
            found += [("plot caption", caption and caption.group(1)), ("plot alt text", alt and alt.group(1))]
        else:
            fold = re.search(r"<summary\b[^>]*>(.*?)</summary>", part, re.S)   # a folded table's line
            found.append(("table fold", fold and fold.group(1)))
            caption = re.search(r"<caption>(.*?)</caption>", part, re.S)
            found.append(("table caption", caption and caption.group(1)))
            found += [("table header", h) for h in re.findall(r"<th\b[^>]*>(.*?)</th>", part, re.S)]
            # a cell that holds words, as a template (its numbers {0}, {1}, ...: _ext/output_words.py)
            found += [("table cell", cell(html.unescape(c))) for c in re.findall(r"<td>(.*?)</td>", part, re.S)]
    return [(kind, text if kind == "table cell" else html.unescape(text).strip())
            for kind, text in found if text and text.strip()]


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
    save_if_changed(polib.pofile(str(path), wrapwidth=0), path)   # one line a message, as the pages' catalogs
    print(f"{OUTPUTS}.po: {len(pot)} texts of the chapters' outputs (plot captions and alt texts, table captions, headers and cells, claims, printed lines, computed sentences)")
    return len(pot)
