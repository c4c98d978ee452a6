"""The notebooks readers open outside the site (Colab, JupyterLab, VS Code): no MyST left, every
number and link taken from the built site, solutions folded, and each runs top to bottom.

They are written by _ext/reader_notebooks.py into the built site as ``_sources/<page>.ipynb``:
what the download button serves and what the Colab button opens once the site is published.

They run in the lower-bound environment (``tests/lower_bounds.py``): rope_edu installed from its
wheel next to the lowest versions pyproject.toml declares, with ipywidgets 7 and the kernel Colab
ships, and live figures. Not also in the pinned environment: their code is the chapters' code
(checked below), which the book build executes in the pinned environment, and ``test_live_lab.py``
runs every chapter with figures live there, in JupyterLab and in Notebook 7; a second pinned run
would only repeat them.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import os
import pkgutil
import re
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

import lower_bounds
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


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_reader_code_is_the_chapters_code(built_book, chapter):
    """The reader notebook runs the chapter's code, cell for cell (a solution's code cell only gains
    its ``#@title`` line): so the book build, which executes the chapter in the pinned environment,
    has run this code there, and the test below runs it at the lower bounds."""
    reader = [c for c in _reader(built_book, chapter)["cells"] if c["cell_type"] == "code"]
    source = [c for c in json.loads(chapter.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    assert len(reader) == len(source)
    for r, s in zip(reader, source):
        code = "".join(r["source"])
        if code.startswith("#@title "):
            code = code.split("\n", 1)[1]
        assert code == "".join(s["source"])


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


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_reader_notebook_runs_top_to_bottom(built_book, chapter, tmp_path, lower_bound_env):
    """In a fresh kernel of the lower-bound environment, in an empty folder (as on Colab), with live
    figures: no error, nothing on stderr, every figure's widget built by ipywidgets 7 and anywidget
    0.9 with the pinned package's controls and data."""
    import nbformat

    path = tmp_path / chapter.name
    shutil.copy(built_book / "_sources" / "notebooks" / chapter.name, path)
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
NEEDS_TORCH = {
    m.name for m in pkgutil.walk_packages(importlib.import_module("rope_edu").__path__, "rope_edu.")
    if re.search(r"^(?:import|from) torch\b", Path(importlib.util.find_spec(m.name).origin).read_text(encoding="utf-8"), re.M)
}
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
