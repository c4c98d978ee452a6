"""Notebooks for readers: each chapter lowered from MyST to what every Jupyter front end renders.

The chapters are written for Jupyter Book: ``{cite}`` roles, ``{prf:ref}``, ``{eq}``, proof and
exercise directives, ``(label)=`` targets. Colab, JupyterLab and VS Code show those as raw text. After
each build this extension writes, for every notebook page, a copy whose Markdown uses only
CommonMark, HTML and MathJax, with the numbers and links of the built site:

* citations become author–year links to the site's bibliography;
* references to theorems, equations, sections and pages become their numbers or titles, linked;
* theorems, lemmas and proofs become formatted Markdown; exercises are numbered, and each
  solution is folded: its Markdown in a ``<details>`` block, its code cells collapsed;
* labelled display equations carry ``\\tag{n}``; label targets and directive options are gone.

The copy replaces ``_sources/<page>.ipynb`` in the site, which is what the page's download button
serves; each page's Colab and Binder buttons open that published copy (``reader_notebooks_branch``
of the repository, where the built site is published; see README, "Publishing"). So that a reader
sees the results before running anything, and runs the code the results came from:

* the notebook opens with the chapter's first Markdown cell (its ``# Title``), then the set-up cell,
  folded; the set-up cell installs ``rope_edu`` from the wheel this build publishes beside the
  notebooks (``wheels/``), at the same repository and branch as the Colab link: one setting,
  ``reader_notebooks_branch``, for both;
* code cells carry the book build's outputs (text, tables, plots), taken from the jupyter-cache
  the build executed the chapters into; each interactive figure's placeholder becomes a PNG of the
  figure as the site draws it in its default state (Chromium, at the site's desktop width, cached
  by what it depends on) and a line saying to run the cell to move it; each SVG plot becomes a PNG
  too (JupyterLab shows no SVG output of a notebook it does not trust); a solution's outputs are
  left out (the solution is folded), as are those of cells the book removes;
* the site also gets ``binder/requirements.txt``, Binder's environment for the published branch:
  the repository's ``binder/requirements.txt`` with the package taken from that same wheel.

This module puts a reader notebook together (the set-up cell, the outputs, the figures' pictures in
their place) and writes them after the build; one concern each, beside it: ``reader_myst.py`` (MyST
lowered), ``reader_words.py`` (an edition's wording, the Markdown through its catalog),
``reader_publish.py`` (where it is published: Colab, Binder, the wheel) and ``reader_pictures.py``
(Chromium's pictures of the figures and plots).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Callable

from sphinx.application import Sphinx
from sphinx.util import logging

from reader_myst import EMPTY_DETAILS, Resolver, lower_directives, lower_footnotes, lower_roles
from reader_pictures import svg_key, take_pictures
from reader_publish import Published, publish_wheel, write_binder
from reader_words import ENGLISH, Words, edition_words, markdown_translator, page_messages

LOGGER = logging.getLogger(__name__)

# --- the set-up cell, outputs and figures -------------------------------------------------------

#: The set-up cell's line that sets the figures' and plots' language (rope_edu.i18n), put before
#: the plots' style (which registers the Chinese font in Chinese).
STYLE_LINE = re.compile(r"^(?P<indent>[ \t]*)rope_edu\.plots\.use_style\(\)", re.M)
#: The first line of the shared set-up cell (scripts/notebooks.py writes it into every chapter).
SETUP_MARKER = "# rope-edu set-up cell"
#: The source set-up cell's install line: from the repository's main branch, for `make lab`.
INSTALL = re.compile(r'^(?P<indent>[ \t]*)%pip install --quiet "rope_edu @ git\+[^"]+"[ \t]*$', re.M)
SETUP_COMMENT = """\
# rope-edu set-up cell (the same in every chapter)
# On Colab, or anywhere rope_edu is missing, install the rope_edu this notebook was built and
# run with, published beside it; where rope_edu is installed already, the install is skipped."""
#: Cells whose outputs the book does not show, so neither does the reader notebook.
NO_OUTPUT_TAGS = {"remove-output", "remove-cell"}


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def reader_setup_source(source: str, wheel_url: str, words: Words | None = None) -> str:
    """The shared set-up cell as the reader notebook has it: a titled form (folded), installing the
    published wheel instead of the repository's main branch; in another language (``words``),
    titled in that language and setting the figures' and plots' language (rope_edu.i18n) before
    the plots' style."""
    words = words or ENGLISH
    lines = source.split("\n")
    if not lines[0].startswith(SETUP_MARKER) or len(INSTALL.findall(source)) != 1:
        raise ValueError("the set-up cell (scripts/notebooks.py) must start with "
                         f"{SETUP_MARKER!r} and hold one `%pip install --quiet \"rope_edu @ git+...\"` line")
    body = lines[1:]
    while body and body[0].startswith("#"):
        body.pop(0)
    code = INSTALL.sub(lambda m: f'{m["indent"]}%pip install --quiet "rope_edu @ {wheel_url}"', "\n".join(body))
    if words.lang != "en":
        if len(STYLE_LINE.findall(code)) != 1:
            raise ValueError("the set-up cell (scripts/notebooks.py) must call rope_edu.plots.use_style() once")
        code = STYLE_LINE.sub(lambda m: f"{m['indent']}import rope_edu.i18n\n\n"
                              f"{m['indent']}# the figures and plots speak this notebook's language\n"
                              f'{m["indent"]}rope_edu.i18n.set_language("{words.lang}")\n{m[0]}', code)
    return f"{words.setup_title}\n{SETUP_COMMENT}\n{code}"


def figure_placeholders(cell: dict) -> list[tuple[int, str, str]]:
    """(output index, figure name, label) of each figure placeholder in a code cell's outputs."""
    from rope_edu.widgets import placeholders  # the one reader of Figure.html's markup

    found = []
    for i, output in enumerate(cell.get("outputs", [])):
        shown = placeholders(_text(output.get("data", {}).get("text/html", "")))
        if shown:
            found.append((i, shown[0].name, shown[0].label))
    return found


def _shows_outputs(cell: dict) -> bool:
    return not NO_OUTPUT_TAGS & set(cell.get("metadata", {}).get("tags", []))


def figure_outputs(png: bytes, width: int, label: str, words: Words | None = None) -> list[dict]:
    """The line that says the figure is a picture (first: read before anyone tries its controls),
    then the picture."""
    words = words or ENGLISH
    caption = words.figure_caption
    return [
        {"output_type": "display_data", "metadata": {},
         "data": {"text/markdown": [caption], "text/plain": [caption.strip("*")]}},
        {"output_type": "display_data", "metadata": {"image/png": {"width": width}},
         "data": {"image/png": base64.b64encode(png).decode("ascii"),
                  "text/plain": [words.picture(label)]}},
    ]


def reader_notebook(nb: dict, docname: str, r: Resolver, executed: dict | None = None,
                    pictures: dict | None = None, wheel_url: str | None = None,
                    translate: Callable[[str], str] | None = None, words: Words | None = None) -> dict:
    """The reader's copy of chapter ``nb``: MyST lowered; with ``executed`` (the book build's run of
    the same notebook), its outputs, each figure placeholder replaced by ``pictures[(docname, k)]``
    (``(png, width)`` of the page's k-th figure) and each SVG plot by its PNG
    (``pictures[svg_key(svg)]``); the set-up cell moved after the title and, with
    ``wheel_url``, installing that wheel. Another edition's notebook passes ``translate`` (its
    catalog's messages put into each Markdown cell's source before the MyST is lowered:
    :func:`markdown_translator`) and ``words`` (its labels: :func:`edition_words`); code stays."""
    words = words or ENGLISH
    state: dict = {}
    cells = []
    ran = iter([c for c in executed["cells"] if c["cell_type"] == "code"]) if executed else None
    figures = 0
    for cell in nb["cells"]:
        cell = json.loads(json.dumps(cell))
        source = _text(cell["source"])
        in_solution = "solution" in state
        if cell["cell_type"] == "code" and ran is not None:
            done = next(ran)
            if _text(done["source"]) != source:
                raise ValueError(f"{docname}: the executed notebook's code differs from the chapter's")
            outputs = []
            for output in done.get("outputs", []) if _shows_outputs(cell) else []:
                output = json.loads(json.dumps(output))
                placeholder = figure_placeholders({"outputs": [output]})
                if placeholder:
                    picture = (pictures or {}).get((docname, figures))
                    if picture is None:
                        raise ValueError(f"{docname}: no picture of figure {figures + 1} ({placeholder[0][1]})")
                    outputs += figure_outputs(*picture, placeholder[0][2], words)
                    figures += 1
                elif "image/svg+xml" in output.get("data", {}):
                    png, width = (pictures or {})[svg_key(_text(output["data"]["image/svg+xml"]))]
                    output["data"] = {"image/png": base64.b64encode(png).decode("ascii"),
                                      **{k: v for k, v in output["data"].items() if k != "image/svg+xml"}}
                    output["metadata"] = {**output.get("metadata", {}), "image/png": {"width": width}}
                    output["metadata"].pop("image/svg+xml", None)
                    outputs.append(output)
                else:
                    outputs.append(output)
            # a solution's outputs stay folded with it: the reader runs the cell to see them
            cell["outputs"] = [] if in_solution else outputs
            cell["execution_count"] = done.get("execution_count") if cell["outputs"] else None
        if cell["cell_type"] == "markdown":
            title = state.get("solution")
            if translate is not None:
                source = translate(source)
            text = lower_directives(lower_footnotes(lower_roles(source, docname, r), state), docname, r, state,
                                    words)
            if in_solution:  # a solution that began in an earlier cell goes on here
                text = f"<details>\n<summary>{words.continued(title)}</summary>\n\n{text}"
            if "solution" in state:  # ... and goes on after this cell: fold this part on its own
                text += "\n\n</details>"
            text = EMPTY_DETAILS.sub("", text)
            cell["source"] = re.sub(r"\n{3,}", "\n\n", text).strip("\n")
            if not cell["source"].strip():  # only a marker (a solution's end): nothing to read
                continue
        elif cell["cell_type"] == "code" and source.startswith(SETUP_MARKER):
            if wheel_url:
                cell["source"] = reader_setup_source(source, wheel_url, words)
                meta = cell.setdefault("metadata", {})
                meta.setdefault("jupyter", {})["source_hidden"] = True
                meta["cellView"] = "form"
                # the book hides it (its pages start with the title); here it is shown, folded
                meta["tags"] = [t for t in meta.get("tags", []) if t != "remove-cell"]
                if not meta["tags"]:
                    del meta["tags"]
        elif cell["cell_type"] == "code" and in_solution:
            meta = cell.setdefault("metadata", {})
            meta.setdefault("jupyter", {})["source_hidden"] = True
            meta["cellView"] = "form"  # Colab shows a form cell's title, not its code
            cell["source"] = f"#@title {words.solution_code(state['solution'])}\n" + source
        elif cell["cell_type"] == "code" and "hide-input" in cell.get("metadata", {}).get("tags", []):
            cell["metadata"].setdefault("jupyter", {})["source_hidden"] = True  # folded, as in the book
        cells.append(cell)
    # the chapter's title first, then the set-up cell
    setup = [i for i, c in enumerate(cells)
             if c["cell_type"] == "code" and _text(c["source"]).startswith((SETUP_MARKER, words.setup_title))]
    title = next((i for i, c in enumerate(cells) if c["cell_type"] == "markdown"), None)
    if setup and title is not None and setup[0] < title:
        if not _text(cells[title]["source"]).startswith("# "):
            raise ValueError(f"{docname}: the first Markdown cell must start with the chapter's `# Title`")
        cells.insert(title, cells.pop(setup[0]))
    return {**nb, "cells": cells}


def _notebook_docs(app: Sphinx) -> list[str]:
    return sorted(d for d in app.env.all_docs if str(app.env.doc2path(d)).endswith(".ipynb"))


def executed_notebook(app: Sphinx, docname: str) -> dict | None:
    """The book build's run of ``docname``, from the jupyter-cache myst-nb read its outputs from."""
    import nbformat
    from jupyter_cache import get_cache

    folder = getattr(getattr(app.env, "mystnb_config", None), "execution_cache_path", "")
    if not folder or not Path(folder).exists():
        return None
    nb = nbformat.read(str(app.env.doc2path(docname)), as_version=4)
    try:
        _, merged = get_cache(folder).merge_match_into_notebook(nb, cell_meta=())
    except KeyError:
        return None
    return json.loads(nbformat.writes(merged))


# --- after the build ---------------------------------------------------------------------------------

def write_reader_notebooks(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    r = Resolver(app)
    out = Path(app.outdir)
    branch = app.config.reader_notebooks_branch
    theme = app.config.html_theme_options or {}
    published = Published(theme.get("repository_url", ""), branch)
    wheel = publish_wheel(app)
    write_binder(app, wheel)
    sources, executed, wanted, svgs = {}, {}, {}, []
    for docname in _notebook_docs(app):
        sources[docname] = json.loads(Path(app.env.doc2path(docname)).read_text(encoding="utf-8"))
        executed[docname] = executed_notebook(app, docname)
        if executed[docname] is None:
            LOGGER.warning(f"reader notebooks: no executed copy of {docname} in the jupyter-cache; "
                           "its reader notebook has no outputs")
            continue
        figures = []
        for cell, ran in zip((c for c in sources[docname]["cells"] if c["cell_type"] == "code"),
                             (c for c in executed[docname]["cells"] if c["cell_type"] == "code")):
            if _shows_outputs(cell):
                outputs = ran.get("outputs", [])
                figures += [(name, _text(outputs[i]["data"]["text/html"])) for i, name, _ in figure_placeholders(ran)]
                svgs += [_text(o["data"]["image/svg+xml"]) for o in outputs if "image/svg+xml" in o.get("data", {})]
        if figures:
            wanted[docname] = figures
    try:
        pictures = take_pictures(app, wanted, svgs)
    except Exception as exc:  # (any failure is the build's warning, an error under -W)
        LOGGER.warning(f"reader notebooks: no pictures of the figures: {exc}")
        pictures = None
    # the edition's folder on the published branch ("zh/" for the Chinese site); its notebooks
    # install the one wheel, published with the English site at the branch's root
    edition = app.config.reader_notebooks_edition.strip("/")
    edition = f"{edition}/" if edition else ""
    wheel_url = published.raw(wheel)
    words = edition_words(app)
    binderhub = ((theme.get("launch_buttons") or {}).get("binderhub_url") or "").rstrip("/")
    for docname, nb in sources.items():
        target = out / "_sources" / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        ran = executed[docname] if pictures is not None else None
        translate = markdown_translator(page_messages(app, docname)) if words.lang != "en" else None
        reader = reader_notebook(nb, docname, r, ran, pictures, wheel_url, translate, words)
        target.write_text(json.dumps(reader, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        page = out / f"{docname}.html"
        if page.exists():
            html = page.read_text(encoding="utf-8")
            path = f"{edition}_sources/{docname}.ipynb"
            fixed = re.sub(r'https://colab\.research\.google\.com/github/[^"]+?/' + re.escape(docname) + r"\.ipynb",
                           lambda m: published.colab(path), html)
            if binderhub:
                binder = re.escape(binderhub) + r'/v2/gh/[^"?]+\?urlpath=(?P<ui>[a-z/]+?)/' + re.escape(docname) + r"\.ipynb"
                fixed = re.sub(binder, lambda m: published.binder(binderhub, m["ui"], path), fixed)
            if fixed != html:
                page.write_text(fixed, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.add_config_value("reader_notebooks_branch", "gh-pages", "html")
    # where this edition's site lies on that branch: "" (the English site), "zh/" (the Chinese one)
    app.add_config_value("reader_notebooks_edition", "", "html")
    # after _ext/rope_figures.py has written the figure engine into _static (default priority 500)
    app.connect("build-finished", write_reader_notebooks, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
