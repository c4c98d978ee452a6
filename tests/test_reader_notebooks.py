"""The notebooks readers open outside the site (Colab, JupyterLab, VS Code): no MyST left, every
number and link taken from the built site, solutions folded, and each runs top to bottom.

They are written by _ext/reader_notebooks.py into the built site as ``_sources/<page>.ipynb``:
what the download button serves and what the Colab button opens once the site is published.
"""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from bs4 import BeautifulSoup

from conftest import ROOT, notebook_paths

pytestmark = pytest.mark.book

CHAPTERS = notebook_paths()
SITE = re.search(r"^\s+baseurl:\s*(\S+)", (ROOT / "_config.yml").read_text(encoding="utf-8"), re.M).group(1)
MYST = re.compile(
    r"\{[a-z]+(?::[a-z]+)?\}`"      # roles: {cite}`x`, {prf:ref}`x`, {eq}`x`
    r"|^\s*:{3,}"                    # colon-fenced directives
    r"|^\s*`{3,}\{"                  # backtick-fenced directives
    r"|^\(\S+\)=\s*$"                # label targets
    r"|^:(?:label|class|nonumber):"  # directive options
    r"|\$\$\s*\(\S+\)",              # labelled display math
    re.M,
)


def _reader(built_book, chapter) -> dict:
    return json.loads((built_book / "_sources" / "notebooks" / chapter.name).read_text(encoding="utf-8"))


def _markdown(nb: dict) -> str:
    return "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_myst_left_and_links_resolve(built_book, chapter):
    nb = _reader(built_book, chapter)
    source = json.loads(chapter.read_text(encoding="utf-8"))
    assert [c["cell_type"] for c in nb["cells"]] == [c["cell_type"] for c in source["cells"]]
    md = _markdown(nb)
    left = [m.group(0) for m in MYST.finditer(md)]
    assert not left, f"MyST syntax left for Jupyter front ends: {left[:5]}"
    for url in re.findall(r"\]\((" + re.escape(SITE) + r"[^)\s]*)\)", md):
        page, _, anchor = url[len(SITE):].partition("#")
        target = built_book / page
        assert target.exists(), f"link to a page the site does not have: {url}"
        if anchor:
            ids = {t.get("id") for t in BeautifulSoup(target.read_text(encoding="utf-8"), "html.parser").select("[id]")}
            assert anchor in ids, f"link to a missing anchor: {url}"
    # what the source cites and references is in the reader's text as links to the site
    source_md = _markdown(source)
    assert md.count(SITE) >= len(re.findall(r"\{(?:cite|cite:p|cite:t|prf:ref|ref|eq|doc)\}`", source_md))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_theorems_numbered_and_solutions_folded(built_book, chapter):
    nb = _reader(built_book, chapter)
    md = _markdown(nb)
    source_md = _markdown(json.loads(chapter.read_text(encoding="utf-8")))
    exercises = len(re.findall(r"^:{3,}\{exercise\}", source_md, re.M))
    assert len(re.findall(r"^\*\*Exercise \d+\.\d+\*\*", md, re.M)) == exercises
    solutions = len(re.findall(r"^:{3,}\{solution(?:-start)?\}", source_md, re.M))
    assert len(re.findall(r"<summary>Solution to Exercise \d+\.\d+</summary>", md)) == solutions
    assert md.count("<details>") == md.count("</details>")
    # every code cell of a solution is collapsed (JupyterLab) and a titled form (Colab)
    html = (built_book / "notebooks" / f"{chapter.stem}.html").read_text(encoding="utf-8")
    theorems = len(re.findall(r"^:{3,}\{prf:(?:theorem|lemma|corollary|proposition|definition)\}", source_md, re.M))
    assert len(re.findall(r"^\*\*(?:Theorem|Lemma|Corollary|Proposition|Definition) \d+\.\d+\*\*", md, re.M)) == theorems
    for number in re.findall(r"^\*\*Theorem (\d+\.\d+)\*\*", md, re.M):
        assert f"Theorem {number}" in html, f"Theorem {number} is not numbered so on the site"
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and "".join(cell["source"]).startswith("#@title Solution"):
            assert cell["metadata"]["jupyter"]["source_hidden"] and cell["metadata"]["cellView"] == "form"


def test_buttons_open_the_reader_notebooks(built_book):
    """The download button serves the reader notebook; the Colab button opens its published copy."""
    for chapter in CHAPTERS:
        html = (built_book / "notebooks" / f"{chapter.stem}.html").read_text(encoding="utf-8")
        assert f'href="../_sources/notebooks/{chapter.name}"' in html
        assert re.search(rf"colab\.research\.google\.com/github/[^\"]+/_sources/notebooks/{re.escape(chapter.name)}", html)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_reader_notebook_runs_top_to_bottom(built_book, chapter, tmp_path):
    """In a fresh kernel, in an empty folder (as on Colab), with live figures (no static mode)."""
    import nbformat
    from nbclient import NotebookClient

    path = tmp_path / chapter.name
    shutil.copy(built_book / "_sources" / "notebooks" / chapter.name, path)
    nb = nbformat.read(path, as_version=4)
    env_before = dict(os.environ)
    os.environ.pop("ROPE_EDU_STATIC", None)
    os.environ["MPLBACKEND"] = "Agg"
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    stderr = [o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("name") == "stderr"]
    assert not stderr, stderr[:3]
