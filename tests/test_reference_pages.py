"""The reference pages: the bug atlas, the cheat sheet and the glossary.

From the sources: both notebooks start with the shared set-up cell (tagged ``remove-cell``), are
stored without outputs, fold every check, and keep code within the column. From the built site:
the atlas has at least 12 bugs, each with a symptom, a cause, a link to the chapter that explains
it, a link to the public issue or pull request it comes from, and a verdict line; every link from
the three pages into a chapter resolves to an existing page and, where it names one, an existing
anchor; every glossary term links to a chapter.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import pytest
from bs4 import BeautifulSoup

from conftest import ROOT
from rope_edu.verdicts import PREFIX

NOTEBOOKS = {"bug_atlas": ROOT / "book" / "bug_atlas.ipynb", "cheat_sheet": ROOT / "book" / "cheat_sheet.ipynb"}
PAGES = ["book/bug_atlas.html", "book/cheat_sheet.html", "book/glossary.html"]
MIN_BUGS = 12
FIELDS = ("Symptom.", "Cause.", "Explained in.", "Source.")
SOURCE = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+$")
CHAPTER_PAGE = re.compile(r"(?:^|/)notebooks/\d\d_[\w-]+\.html$")
WIDTH = 75
GLOSSARY_TERMS = [
    "RoPE", "base", "inv_freq", "pair layout", "interleaved layout", "half-split layout", "rotate_half",
    "partial rotary", "NTK-aware scaling", "YaRN", "attention factor", "mscale", "LongRoPE", "M-RoPE",
    "NoPE", "ALiBi", "KV cache", "position_ids", "GQA", "MLA", "p-RoPE", "proportional RoPE", "head_dim",
    "wavelength", "critical dimension",
]


# --- the sources ------------------------------------------------------------------------------


def _cells(name: str) -> list[dict]:
    return json.loads(NOTEBOOKS[name].read_text(encoding="utf-8"))["cells"]


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_sources(name):
    cells = _cells(name)
    first = cells[0]
    assert first["cell_type"] == "code" and "remove-cell" in first["metadata"].get("tags", [])
    assert "import rope_edu" in "".join(first["source"]) and "import numpy" in "".join(first["source"])
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        assert not cell["outputs"] and cell["execution_count"] is None, f"{name}: outputs stored"
        if cell is first:
            continue
        source = "".join(cell["source"])
        long = [line for line in source.splitlines() if len(line) > WIDTH]
        assert not long, f"{name}: code lines over {WIDTH} characters: {long}"
        if "verify(" in source:
            assert "hide-input" in cell["metadata"].get("tags", []), f"{name}: a check is not folded:\n{source[:200]}"


def test_atlas_checks_one_per_bug():
    """Every bug section of the atlas is followed by exactly one check cell."""
    cells = _cells("bug_atlas")
    bugs = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and re.match(r"## \d+\. ", "".join(c["source"]))]
    assert len(bugs) >= MIN_BUGS
    for start, end in zip(bugs, bugs[1:] + [len(cells)]):
        checks = [c for c in cells[start:end] if c["cell_type"] == "code" and "verify(" in "".join(c["source"])]
        assert len(checks) == 1, "".join(cells[start]["source"]).splitlines()[0]


# --- the built pages --------------------------------------------------------------------------


def _soup(root: Path, page: str) -> BeautifulSoup:
    path = root / page
    assert path.exists(), f"{page} was not built (is it in _toc.yml?)"
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _main(soup: BeautifulSoup):
    return soup.find("article") or soup.find("main") or soup


def _chapter_links(node, page: str) -> list[str]:
    """Targets (relative to the site root) of the links in ``node`` that lead into a chapter."""
    out = []
    for a in node.find_all("a", href=True):
        href = a["href"]
        if re.match(r"^[a-z]+:", href) or href.startswith("#"):
            continue
        target = urljoin(page, href)
        if CHAPTER_PAGE.search(urldefrag(target)[0]):
            out.append(target)
    return out


def _h2(section):
    """The section's own heading if it is an h2 (not one of a nested section)."""
    heading = section.find(["h1", "h2", "h3"], recursive=False)
    return heading if heading is not None and heading.name == "h2" else None


def _bug_sections(soup: BeautifulSoup) -> list:
    return [s for s in _main(soup).find_all("section") if _h2(s) and re.match(r"\d+\.\s", _h2(s).get_text(" ", strip=True))]


@pytest.mark.book
def test_atlas_has_enough_documented_bugs(built_book):
    soup = _soup(built_book, "book/bug_atlas.html")
    assert "Bug atlas" in soup.find("h1").get_text()
    sections = _bug_sections(soup)
    assert len(sections) >= MIN_BUGS, f"{len(sections)} bugs in the atlas, want >= {MIN_BUGS}"
    for section in sections:
        title = _h2(section).get_text(" ", strip=True)
        fields = {}
        for p in section.find_all("p"):
            strong = p.find("strong")
            if strong and strong.get_text(strip=True) in FIELDS:
                fields[strong.get_text(strip=True)] = p
        missing = [f for f in FIELDS if f not in fields]
        assert not missing, f"{title}: missing {missing}"
        assert _chapter_links(fields["Explained in."], "book/bug_atlas.html"), f"{title}: no link to a chapter"
        sources = [a["href"] for a in fields["Source."].find_all("a", href=True) if SOURCE.match(a["href"])]
        assert sources, f"{title}: no link to a public issue or pull request"
        verdicts = [v for v in section.select("pre, .rope-verdict") if v.get_text().lstrip().startswith(PREFIX)]
        assert len(verdicts) == 1, f"{title}: {len(verdicts)} verdict lines, want 1"


@pytest.mark.book
@pytest.mark.parametrize("page", PAGES)
def test_chapter_links_resolve(built_book, page):
    """Every link into a chapter names an existing page and, if it has one, an existing anchor."""
    soup = _soup(built_book, page)
    links = _chapter_links(_main(soup), page)
    assert links, f"{page} links to no chapter"
    ids: dict[str, set[str]] = {}
    for target in links:
        path, anchor = urldefrag(target)
        file = built_book / path
        assert file.exists(), f"{page}: link to {path}, which was not built"
        if anchor:
            if path not in ids:
                ids[path] = {t["id"] for t in _soup(built_book, path).find_all(id=True)}
            assert anchor in ids[path], f"{page}: {path} has no anchor #{anchor}"


@pytest.mark.book
def test_cheat_sheet_sections_link_chapters_and_check(built_book):
    soup = _soup(built_book, "book/cheat_sheet.html")
    sections = [s for s in _main(soup).find_all("section") if _h2(s)]
    assert len(sections) >= 4
    for section in sections:
        title = _h2(section).get_text(" ", strip=True)
        assert _chapter_links(section, "book/cheat_sheet.html"), f"{title}: no link to a chapter"
        verdicts = [v for v in section.select("pre, .rope-verdict") if v.get_text().lstrip().startswith(PREFIX)]
        assert verdicts, f"{title}: no checked verdict"


@pytest.mark.book
def test_glossary_terms_link_chapters(built_book):
    soup = _soup(built_book, "book/glossary.html")
    glossary = _main(soup).find("dl", class_="glossary")
    assert glossary is not None, "no {glossary} directive on the glossary page"
    terms = {}
    for dt in glossary.find_all("dt"):
        dd = dt.find_next_sibling("dd")
        for link in dt.find_all("a", class_="headerlink"):
            link.decompose()  # the "#" permalink
        terms[dt.get_text(" ", strip=True)] = dd
    missing = [t for t in GLOSSARY_TERMS if t not in terms]
    assert not missing, f"glossary lacks {missing}"
    for term, dd in terms.items():
        assert dd is not None and _chapter_links(dd, "book/glossary.html"), f"{term}: no link to a chapter"


@pytest.mark.book
@pytest.mark.parametrize("page", PAGES)
def test_code_and_output_fit_the_column(built_book, page):
    """No line of code or output on the page is wider than the 75-character column."""
    soup = _soup(built_book, page)
    long = [line for pre in _main(soup).find_all("pre") for line in pre.get_text().splitlines() if len(line) > WIDTH]
    assert not long, f"{page}: lines over {WIDTH} characters: {long[:3]}"
