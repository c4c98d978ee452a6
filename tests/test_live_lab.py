"""Live figures in a real Jupyter server, in JupyterLab 4 and in Notebook 7.

For every chapter notebook with figures (in JupyterLab, one notebook after another in one
running app; in Notebook 7, the chapters of NOTEBOOK7_CHAPTERS): open it, run all cells in a fresh
kernel, wait for every figure to be drawn by its anywidget front end, then move each control by keyboard (the figure must
redraw), set random states and compare the printed readouts with the package's Python, and check
that the control values reach the kernel. The kernel is shut down before the next notebook.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

import figure_driver
from conftest import ROOT, notebook_paths

pytestmark = pytest.mark.browser

FIGURE_NOTEBOOKS = [p for p in notebook_paths() if "DEMO.show(" in p.read_text(encoding="utf-8")]


def figure_cells(nb: dict) -> dict:
    """``nb`` with its set-up cell (the first) and the cells that show a figure, in order.

    Running a chapter top to bottom in a fresh kernel is what the book build does to every
    chapter (scripts/build_book.py, in this environment) and test_reader_notebooks does under the
    lower bounds; here the front end runs what a live figure needs, so the chapters' computations
    are not run a third time."""
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    keep = [code[0]] + [c for c in code[1:] if "DEMO.show(" in "".join(c["source"])]
    return {**nb, "cells": keep}


def live_copy(notebook: Path, work: Path) -> Path:
    """The figure cells of ``notebook`` (:func:`figure_cells`) as ``live_<name>`` in ``work``."""
    path = work / f"live_{notebook.name}"
    if not path.exists():
        nb = json.loads(notebook.read_text(encoding="utf-8"))
        path.write_text(json.dumps(figure_cells(nb), indent=1), encoding="utf-8")
    return path


def test_figure_cells_keep_every_figure_and_the_set_up():
    for notebook in FIGURE_NOTEBOOKS:
        nb = json.loads(notebook.read_text(encoding="utf-8"))
        live = figure_cells(nb)
        assert live["cells"][0]["source"] == nb["cells"][0]["source"], notebook.name
        assert "set-up cell" in "".join(live["cells"][0]["source"]), notebook.name
        shown = sum("".join(c["source"]).count("DEMO.show(") for c in live["cells"])
        assert shown == notebook.read_text(encoding="utf-8").count("DEMO.show("), notebook.name


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory, chromium_path):
    """A Jupyter server (JupyterLab and Notebook 7) on a temporary copy of the notebooks."""
    server = figure_driver.JupyterServer(tmp_path_factory.mktemp("jupyter"), ROOT / "notebooks")
    try:
        server.url = server.start()
        yield server
    except RuntimeError as exc:
        pytest.fail(str(exc))
    finally:
        server.stop()


def _kernel_value(page, code: str) -> str:
    """Run ``code`` in the notebook's kernel and return the text/plain result."""
    return page.evaluate(
        """async (code) => {
            const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
            let out = null;
            const future = kernel.requestExecute({code, store_history: false, silent: false});
            future.onIOPub = (msg) => {
                if (msg.header.msg_type === 'execute_result') out = msg.content.data['text/plain'];
                if (msg.header.msg_type === 'error') out = 'ERROR ' + msg.content.ename + ': ' + msg.content.evalue;
            };
            await future.done;
            return out;
        }""",
        code,
    )


# Every chapter runs in JupyterLab. Notebook 7 is JupyterLab's own notebook panel with another
# shell around it: the figures reach it through the same anywidget renderer, so what can differ is
# the page around them, not one figure from another. It runs the one page that shows two figures
# (their ids and styles must not collide), which covers that shell at a fifteenth of the cost of
# every chapter (about 17 s each on 2 cores).
NOTEBOOK7_CHAPTERS = ("05_frequencies",)
LIVE_RUNS = [(nb, front_end) for nb in FIGURE_NOTEBOOKS for front_end in figure_driver.FRONT_ENDS
             if front_end == "lab" or nb.stem in NOTEBOOK7_CHAPTERS]


def test_notebook7_runs_a_page_with_several_figures():
    """The chapter chosen for Notebook 7 shows more than one figure."""
    shown = [(ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8").count("DEMO.show(")
             for stem in NOTEBOOK7_CHAPTERS]
    assert min(shown) >= 2, dict(zip(NOTEBOOK7_CHAPTERS, shown))


class LabPage:
    """One browser page per front end that stays open from chapter to chapter: JupyterLab starts
    once and each chapter's notebook opens in it (``figure_driver.open_and_run``), as a reader
    opens one notebook after another. Errors from our figures' code (anywidget loads each module
    from a blob: URL) are collected per chapter; the front ends' own start-up noise in a bare test
    profile is not ours to fix. After a chapter that failed, the next starts on a fresh page."""

    def __init__(self, browser) -> None:
        self.browser, self.context, self.errors = browser, None, []

    def page(self):
        if self.context is None:
            self.context = self.browser.new_context(viewport={"width": 1300, "height": 1000})
            page = self.context.new_page()
            page.on("pageerror", lambda e: "blob:" in (e.stack or "") and self.errors.append(e.stack))
            page.on("console", lambda m: m.type == "error" and "rope-edu" in m.text and self.errors.append(m.text))
        self.errors.clear()
        return self.context.pages[0]

    def close(self) -> None:
        if self.context is not None:
            self.context.close()
            self.context = None


@pytest.fixture(scope="module")
def lab_pages(browser):
    pages = {front_end: LabPage(browser) for front_end in figure_driver.FRONT_ENDS}
    yield pages
    for lab in pages.values():
        lab.close()


@pytest.mark.parametrize(("notebook", "front_end"), LIVE_RUNS, ids=[f"{nb.stem}-{fe}" for nb, fe in LIVE_RUNS])
def test_figures_work_live(notebook, front_end, jupyter, lab_pages):
    """Each chapter's set-up and figure cells run in a fresh kernel in the front end (the whole
    chapter runs in the book build: :func:`figure_cells`); then every figure is driven."""
    jupyter_url = jupyter.url
    notebook = live_copy(notebook, jupyter.work)
    lab = lab_pages[front_end]
    page = lab.page()
    errors = lab.errors
    passed = False
    try:
        expected = figure_driver.open_and_run(page, jupyter_url, front_end, notebook)
        stderr = page.locator(f"{figure_driver.PANEL} [data-mime-type='application/vnd.jupyter.stderr']")
        assert stderr.count() == 0, stderr.first.inner_text()[:2000]
        figures = page.locator(f"{figure_driver.PANEL} {figure_driver.FIGURE_SELECTOR}")
        assert figures.count() == expected
        for i in range(expected):
            host = figures.nth(i)
            host.scroll_into_view_if_needed()
            report = figure_driver.exercise(page, host, n_random=3, seed=i)
            assert report["controls"] > 0, report
            assert not report["unchanged"], f"controls that did not change the figure: {report}"
            assert not report["problems"], report["problems"]
        # the kernel sees the controls: the last figure's state reached its widget's traits
        # (the figure is the value of its cell, so it is in Out[]; find it by its traits)
        state = json.loads(figures.nth(expected - 1).get_attribute("data-state"))
        name = figures.nth(expected - 1).get_attribute("data-figure")
        # the front end throttles its messages to the kernel, so the last ones may still be on
        # their way: ask again for a few seconds
        code = (
            "import json as _j\nfrom ipywidgets.widgets.widget import _instances as _w\n"
            f"_figs = [w for w in _w.values() if getattr(w, '_name', None) == {name!r}]\n"
            f"_j.dumps([{{k: getattr(w, k) for k in {list(state)!r}}} for w in _figs])"
        )
        for _ in range(20):
            synced = _kernel_value(page, code)
            assert synced and not synced.startswith("ERROR"), synced
            if state in json.loads(ast.literal_eval(synced)):
                break
            page.wait_for_timeout(500)
        assert state in json.loads(ast.literal_eval(synced)), (state, synced)
        shots = os.environ.get("ROPE_EDU_SCREENSHOT_DIR")  # optional: look at what the test saw
        if shots:
            figures.nth(0).screenshot(path=str(Path(shots) / f"live_{front_end}_{notebook.stem}.png"))
        assert not errors, errors
        passed = True
    finally:
        if passed:
            figure_driver.close_notebook(page)
        else:
            lab.close()
        figure_driver.shutdown_kernels(jupyter.url)


# --- the chapter sources' MyST, rendered by jupyterlab-myst (`make lab`) -----------------------

MYST_SOURCE = (":::{", "```{", "{cite}", "{prf:ref}", "{doc}", "{ref}", "{eq}", "(label)=")


def _myst_cells(notebook: Path) -> dict[str, int]:
    """The index of the first Markdown cell holding each kind of MyST construct the book uses."""
    kinds = {"theorem": "{prf:theorem}", "exercise": "{exercise}", "citation": "{cite}", "reference": "{prf:ref}"}
    found: dict[str, int] = {}
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for i, cell in enumerate(cells):
        text = "".join(cell["source"])
        for kind, marker in kinds.items():
            if cell["cell_type"] == "markdown" and marker in text:
                found.setdefault(kind, i)
    return found


def test_lab_renders_the_chapters_myst(jupyter, browser):
    """`make lab` opens the chapter sources: jupyterlab-myst must render their theorems, proofs,
    exercises (solutions folded), citations and references, leaving no MyST source as text."""
    notebook = ROOT / "notebooks" / "04_relative_proof.ipynb"
    cells = _myst_cells(notebook)
    assert set(cells) == {"theorem", "exercise", "citation", "reference"}, cells
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    try:
        page.goto(f"{jupyter.url}/{figure_driver.FRONT_ENDS['lab'].format(name=notebook.name)}")
        page.wait_for_function("(n) => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                               " && window.jupyterapp.shell.currentWidget.content"
                               " && window.jupyterapp.shell.currentWidget.content.widgets.length > n",
                               arg=max(cells.values()), timeout=60_000)
        for kind, index in cells.items():
            # JupyterLab renders only the cells near the view: bring each one there first
            page.evaluate("(i) => window.jupyterapp.shell.currentWidget.content.scrollToItem(i, 'center')", index)
            page.wait_for_function(
                # (scrolled there again on every poll: right after the notebook opens a scroll may
                # not take, and an off-screen rendered cell has no text a reader sees yet)
                "(i) => { const w = window.jupyterapp.shell.currentWidget.content; w.scrollToItem(i, 'center');"
                " const n = w.widgets[i].node; n.scrollIntoView({block: 'center'});"
                " const m = n.querySelector('.myst');"
                " return m !== null && m.parentElement.innerText.trim().length > 0; }",
                arg=index, timeout=30_000)
            shown = page.evaluate(
                "(i) => { const n = window.jupyterapp.shell.currentWidget.content.widgets[i].node"
                ".querySelector('.myst').parentElement; return {text: n.innerText,"
                " proofs: n.querySelectorAll('.myst-proof').length,"
                " links: n.querySelectorAll('a[href^=\"#\"]').length}; }", index)
            leftovers = [m for m in MYST_SOURCE if m in shown["text"]]
            assert not leftovers, f"{kind} cell {index} shows MyST source {leftovers}: {shown['text'][:300]}"
            if kind == "theorem":
                assert shown["proofs"] >= 2, f"theorem and proof not rendered as blocks: {shown}"
            if kind == "exercise":
                assert "Exercise" in shown["text"] and "Solution" in shown["text"], shown["text"][:300]
            if kind == "reference":
                assert shown["links"] >= 1, f"{{prf:ref}} did not become a link: {shown['text'][:300]}"
    finally:
        context.close()
