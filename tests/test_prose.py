"""Cross-references in the prose resolve.

The book's pages are the markdown cells of every chapter notebook and ``book/*.md``. In them:

* every "chapter N" (also "chapters 4 and 6", "Chapter 9's") names a chapter of the numbered
  ``Chapters`` part of ``_toc.yml``; the count comes from the TOC, so a reference to a chapter
  becomes valid the day the chapter is listed there;
* every "section N" or "§N" names a numbered heading (``## N. Title``) of the same page, unless
  a citation stands just before or after it (then it is a section of the cited paper);
* every relative markdown link ``[text](path)`` and every ``{doc}`` target is an existing file.

Sphinx checks ``{ref}``, ``{prf:ref}`` and ``{eq}`` targets itself in the book build.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

CHAPTER = re.compile(r"\b[Cc]hapters?\s+(\d+(?:\s*(?:,|and|or|to|–|—|-)\s*\d+)*)")
SECTION = re.compile(r"(?:\b[Ss]ections?\s+|§\s*)(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#{2,6}\s+(\d+(?:\.\d+)*)\.?\s", re.MULTILINE)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
DOC = re.compile(r"\{doc\}`(?:[^`<]*<)?([^`>]+)>?`")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_OR_ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`|``[^`]+``|`[^`]+`")  # a role first, so its `...` stays
CITE_WINDOW = (200, 100)  # characters before and after a section number searched for a citation


@dataclass(frozen=True)
class Page:
    """One page of the book: its source file and its prose (markdown only)."""

    path: Path
    text: str


def numbered_chapters(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """Files of the numbered part of the TOC, in order: chapter ``k`` is entry ``k - 1``."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    for part in toc.get("parts", []):
        if part.get("numbered"):
            return [entry["file"] for entry in part.get("chapters", [])]
    raise AssertionError(f"{toc_path} has no numbered part")


def pages(root: Path = ROOT) -> list[Page]:
    """The markdown of every chapter notebook and every ``book/*.md`` page."""
    out = []
    for path in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        out.append(Page(path, text))
    out += [Page(path, path.read_text(encoding="utf-8")) for path in sorted((root / "book").glob("*.md"))]
    return out


def _prose(text: str) -> str:
    """Text with fenced code blocks and inline code removed; roles such as {cite}`key` are kept."""
    text = FENCE.sub("", text)
    return CODE_OR_ROLE.sub(lambda m: m.group(0) if m.group(0).startswith("{") else " ", text)


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    snippet = " ".join(text[max(0, pos - 40):pos + 40].split())
    return f"line {line} of its prose: ...{snippet}..."


def dangling_chapters(page: Page, n_chapters: int) -> list[str]:
    """Every "chapter N" of ``page`` with N outside 1..n_chapters."""
    text = _prose(page.text)
    problems = []
    for match in CHAPTER.finditer(text):
        for number in map(int, re.findall(r"\d+", match.group(1))):
            if not 1 <= number <= n_chapters:
                problems.append(f"chapter {number} does not exist (the TOC numbers {n_chapters}): "
                                f"{_where(text, match.start())}")
    return problems


def dangling_sections(page: Page) -> list[str]:
    """Every "section N" / "§N" of ``page`` that is neither a numbered heading there nor cited."""
    text = _prose(page.text)
    headings = set(HEADING.findall(text))
    problems = []
    for match in SECTION.finditer(text):
        before, after = CITE_WINDOW
        nearby = text[max(0, match.start() - before):match.end() + after]
        if "{cite" in nearby or match.group(1) in headings:
            continue
        problems.append(f"section {match.group(1)} is not a numbered heading of this page and cites "
                        f"no paper: {_where(text, match.start())}")
    return problems


def dangling_links(page: Page, root: Path = ROOT) -> list[str]:
    """Relative markdown links and {doc} targets of ``page`` that name no existing file."""
    text = FENCE.sub("", page.text)
    problems = []
    for match in LINK.finditer(text):
        target = match.group(1).split("#", 1)[0]
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target):  # an anchor, or http:, mailto:, ...
            continue
        if not (page.path.parent / target).exists():
            problems.append(f"link target {target} does not exist: {_where(text, match.start())}")
    for match in DOC.finditer(text):
        target = match.group(1).strip()
        base = root / target.lstrip("/") if target.startswith("/") else page.path.parent / target
        candidates = [base, base.with_name(base.name + ".md"), base.with_name(base.name + ".ipynb")]
        if not any(c.exists() for c in candidates):
            problems.append(f"{{doc}} target {target} does not exist: {_where(text, match.start())}")
    return problems


# --- the book --------------------------------------------------------------------------------


def test_toc_lists_the_chapter_notebooks():
    chapters = numbered_chapters()
    assert chapters, "no chapters in the numbered part of _toc.yml"
    for file in chapters:
        assert (ROOT / f"{file}.ipynb").exists() or (ROOT / f"{file}.md").exists(), file


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.path.relative_to(ROOT)))
def test_cross_references_resolve(page):
    problems = dangling_chapters(page, len(numbered_chapters()))
    problems += dangling_sections(page)
    problems += dangling_links(page)
    assert not problems, f"{page.path.relative_to(ROOT)}:\n  " + "\n  ".join(problems)


# --- the checks themselves can fail ----------------------------------------------------------


def _page(tmp_path: Path, text: str, name: str = "book/page.md") -> Page:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return Page(path, text)


def test_chapter_numbers_come_from_the_toc(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text(
        "format: jb-book\nroot: book/intro\nparts:\n"
        "  - caption: Getting started\n    chapters:\n      - file: book/notation\n"
        "  - caption: Chapters\n    numbered: 1\n    chapters:\n"
        "      - file: notebooks/01_a\n      - file: notebooks/02_b\n      - file: notebooks/03_c\n",
        encoding="utf-8",
    )
    n = len(numbered_chapters(toc))
    assert n == 3
    page = _page(tmp_path, "See chapter 2, chapters 1 and 3, Chapter 3's figure. Later: chapter 4.")
    problems = dangling_chapters(page, n)
    assert len(problems) == 1 and "chapter 4 does not exist" in problems[0]
    assert dangling_chapters(_page(tmp_path, "Chapters 2–5 build on it."), n)  # 5 is out of range
    assert not dangling_chapters(_page(tmp_path, "Chapters 1–3, and `chapter 7` in code."), n)
    assert not dangling_chapters(_page(tmp_path, "Code:\n```\n# chapter 12\n```\nDone."), n)


def test_section_numbers_need_a_heading_or_a_citation(tmp_path):
    page = _page(tmp_path, "## 1. Start\n\nAs section 1 shows, and section 2 will.\n")
    problems = dangling_sections(page)
    assert len(problems) == 1 and "section 2" in problems[0]
    cited = _page(tmp_path, "RoFormer {cite}`su2021roformer`, section 3.4.1, and §2 of the same paper.")
    assert not dangling_sections(cited)
    assert dangling_sections(_page(tmp_path, "The derivation is in §3.4.1."))


def test_links_and_doc_targets_must_exist(tmp_path):
    _page(tmp_path, "# Notation", name="book/notation.md")
    _page(tmp_path, "{}", name="notebooks/01_a.ipynb")
    page = _page(
        tmp_path,
        "[notation](notation.md#direction), [web](https://example.org), {doc}`01_a <../notebooks/01_a>`,\n"
        "[gone](missing.md), {doc}`../notebooks/10_models`, [top](#top)\n",
    )
    problems = dangling_links(page, root=tmp_path)
    assert len(problems) == 2
    assert "missing.md" in problems[0] and "10_models" in problems[1]
