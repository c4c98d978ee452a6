"""The chapters read as a book: checks folded with a verdict, figures without their code, lines
that fit the column, the title first, nothing of the build on the page.

Structure is read from each notebook (cell tags and sources); what the reader sees is read from
the built page, in a real browser where widths matter (1280 px, every folded cell opened).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from conftest import notebook_paths, page_soup
from test_prose import numbered_chapters
from rope_edu.verdicts import PREFIX

pytestmark = pytest.mark.book

CHAPTERS = notebook_paths()
IDS = [p.stem for p in CHAPTERS]
MAX_VISIBLE_CHECKS = 8
CHECK_CODE = re.compile(r"\bverify\(|^\s*assert\b|np\.testing\.assert_", re.MULTILINE)
HIDDEN = {"hide-input", "remove-input", "remove-cell"}
# what a reader should never see: paths of the machine that built the book, object reprs
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|tmp|home|root|usr|opt|var)/[\w.-]+|site-packages|\.venv/")
REPR = re.compile(
    r"<[\w.]+ object at 0x[0-9a-fA-F]+>|^Text\(-?[\d.]+, |<Figure size \d|<matplotlib\.[\w.]+ at 0x"
    r"|^\[<matplotlib|<Axes: |^<IPython\.core|^(?:Anywidget|Figure)\(",
    re.MULTILINE,
)


def _cells(path, *, in_solutions: bool = True):
    """(source, tags) of each code cell; cells inside an exercise's folded solution on request."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    solution = False
    for cell in nb["cells"][1:]:  # the shared set-up cell is removed from the book
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            for marker in re.findall(r"\{solution-(start|end)\}", source):
                solution = marker == "start"
        elif in_solutions or not solution:
            yield source, set(cell.get("metadata", {}).get("tags", []))


def _page(built_book, chapter) -> BeautifulSoup:
    html = (built_book / "notebooks" / f"{chapter.stem}.html").read_text(encoding="utf-8")
    return BeautifulSoup(html, "html.parser").select_one("article.bd-article")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_checks_are_folded_and_few_are_shown(chapter):
    """At most 8 check cells show their source (outside the folded solutions of exercises); none
    is hidden without its output."""
    visible, removed = [], []
    for source, tags in _cells(chapter, in_solutions=False):
        if not CHECK_CODE.search(source):
            continue
        if not tags & HIDDEN:
            visible.append(source.splitlines()[0][:60])
        elif tags & {"remove-input", "remove-cell"} or "remove-output" in tags:
            removed.append(source.splitlines()[0][:60])
    assert not removed, f"checks whose source is not one click away, or whose verdict is removed: {removed}"
    assert len(visible) <= MAX_VISIBLE_CHECKS, f"{len(visible)} visible check cells: {visible}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_every_folded_check_prints_its_verdict(built_book, chapter):
    """A folded check cell prints `checked: ...` (what it verified and how closely)."""
    silent = []
    for cell in _page(built_book, chapter).select("div.cell.tag_hide-input"):
        source = cell.select_one(".cell_input")
        if source is None or not CHECK_CODE.search(source.get_text()):
            continue
        outputs = " ".join(o.get_text() for o in cell.select(".cell_output, .rope-verdict"))
        if PREFIX.strip() not in outputs:
            silent.append(source.get_text().strip().splitlines()[0][:70])
    assert not silent, f"folded checks that print no verdict: {silent}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_figures_show_without_their_code(built_book, chapter):
    for source, tags in _cells(chapter):
        if "DEMO.show(" in source:
            assert "remove-input" in tags, f"a figure cell shows its code: {source.strip()[:60]}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_title_first_and_nothing_of_the_build(built_book, chapter):
    article = _page(built_book, chapter)
    first = article.find(lambda tag: tag.name == "h1" or "cell" in (tag.get("class") or []))
    assert first is not None and first.name == "h1", f"the page starts with {first and first.name}, not its title"
    outputs = "\n".join(o.get_text() for o in article.select(".cell_output"))
    assert not MACHINE_PATH.search(article.get_text()), MACHINE_PATH.search(article.get_text()).group(0)
    bad = REPR.search(outputs)
    assert not bad, f"an object repr on the page: {outputs[max(0, bad.start() - 40):bad.end() + 40]!r}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_code_and_output_fit_the_column(page_survey, chapter):
    """At 1280 px and at 390 px, with every fold open, no code or output needs sideways scrolling,
    and a table wider than the column scrolls in its own box with the cue that says so (measured
    by the page survey: test_surfaces._COLUMN_JS)."""
    columns = page_survey["reports"][f"notebooks/{chapter.stem}.html"].get("columns")
    assert columns, "the page survey measured no column on this page"
    for view in ("laptop", "phone"):
        cut = columns[view]["cut"]
        assert not cut, f"{view}: " + "\n".join(cut[:15]) + (f"\n... and {len(cut) - 15} more" if len(cut) > 15 else "")


def test_landing_page_has_chapter_cards_and_reading_paths(built_book):
    """A card per chapter, and at least four reading paths whose section links all resolve."""
    html = (built_book / "book" / "intro.html").read_text(encoding="utf-8")
    article = BeautifulSoup(html, "html.parser").select_one("article.bd-article")
    cards = article.select(".sd-card")
    linked = {a["href"].split("#")[0].split("/")[-1] for card in cards for a in card.select("a[href]")}
    # a card per chapter: the numbered part's entries, not the further pages (sections) of a chapter
    chapters = {f"{Path(f).name}.html" for f in numbered_chapters()}
    assert len(chapters) >= 13 and chapters <= linked, f"chapters without a card: {chapters - linked}"
    assert all(card.select_one(".sd-card-footer") for card in cards), "every card says what you can do after it"
    section = article.find(id="reading-paths")
    assert section is not None, "no 'Reading paths' section"
    paths = section.find_all("ol")
    assert len(paths) >= 4, f"{len(paths)} reading paths"
    targets = set()
    for ol in paths:
        for a in ol.select("a[href]"):
            page, _, anchor = a["href"].partition("#")
            assert anchor, f"a reading path links a whole page, not a section: {a['href']}"
            target = (built_book / "book" / page).resolve()
            assert target.exists(), a["href"]
            ids = {t.get("id") for t in page_soup(target).select("[id]")}
            assert anchor in ids, f"{a['href']}: no section with id {anchor!r}"
            targets.add((target.name, anchor))
    assert len(targets) >= 8, f"reading paths link only {len(targets)} distinct sections"


def test_proof_index_names_results_by_number_and_title(built_book):
    """The proof index reads 'Theorem 4.1 · RoPE rotations form a group ...', grouped by chapter."""
    html = (built_book / "prf-prf.html").read_text(encoding="utf-8")
    article = BeautifulSoup(html, "html.parser").select_one("article") or BeautifulSoup(html, "html.parser")
    text = article.get_text(" ", strip=True)
    assert "Chapter 4. The relative-position proof" in text
    assert re.search(r"Theorem 4\.1\s+RoPE rotations form a group", text), text[:500]
    labels = re.findall(r"\b(?:thm|lem|cor|ch\d\d)-[a-z0-9-]+\b", text)
    assert not labels, f"raw labels in the proof index: {labels[:5]}"


def test_a_folded_proof_says_proof_once():
    """A proof folded in a "Proof" dropdown opened on "Proof" and then sphinx-proof's "Proof." (issue
    45): on the HTML pages _ext/proof_index.py drops the second, in English and in Chinese; a proof
    that is not folded, and the gettext builder's catalogs, keep it."""
    import sys
    from types import SimpleNamespace

    from docutils import nodes
    from sphinx_proof.nodes import proof_node

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "_ext"))
    import proof_index

    def page(fold_title: str | None, first: str) -> tuple[nodes.document, nodes.paragraph]:
        doc = nodes.document(None, None)
        body = nodes.admonition(classes=["proof", "proof"])
        para = nodes.paragraph("", "", nodes.Text(first), nodes.emphasis("", "x"), nodes.Text(" sees no position."))
        body += para
        proof = proof_node()
        proof += body
        if fold_title is None:
            doc += proof
        else:
            fold = nodes.admonition(classes=["dropdown"])
            fold += nodes.title("", fold_title)
            fold += proof
            doc += fold
        return doc, para

    html, gettext = SimpleNamespace(builder=SimpleNamespace(format="html")), SimpleNamespace(builder=SimpleNamespace(format=""))
    for title, first in (("Proof", "Proof. "), ("证明", "证明。"), ("证明", "证明：")):
        doc, para = page(title, first)
        proof_index.drop_repeated_proof_word(html, doc, "x")
        assert para.astext() == "x sees no position.", (title, para.astext())
    for app, title in ((html, None), (html, "Why it holds"), (gettext, "Proof")):
        doc, para = page(title, "Proof. ")
        proof_index.drop_repeated_proof_word(app, doc, "x")
        assert para.astext() == "Proof. x sees no position.", (title, para.astext())


def test_folded_proofs_on_the_built_pages_say_proof_once(built_book):
    """Every proof in a "Proof" fold, on both editions' chapter pages, starts with its argument."""
    folded = 0
    for page in sorted((built_book / "notebooks").glob("*.html")) + sorted((built_book / "zh" / "notebooks").glob("*.html")):
        for fold in page_soup(page).select("div.dropdown.admonition"):
            proof = fold.select_one("div.proof")
            title = fold.select_one(".admonition-title")
            if proof is None or title is None or title.get_text(strip=True) not in ("Proof", "证明"):
                continue
            folded += 1
            first = proof.select_one("p").get_text(" ", strip=True)
            assert not re.match(r"(?:Proof|证明)\s*[.。:：]", first), f"{page.name}: {first[:60]}"
    assert folded >= 20, folded
