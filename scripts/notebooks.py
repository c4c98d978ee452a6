"""Maintain the chapter notebooks.

    python scripts/notebooks.py sync [NB...]    # set the shared first cell, strip outputs
    python scripts/notebooks.py check           # fail if a notebook is out of sync (run by tests)
    python scripts/notebooks.py from-percent SRC.py notebooks/NN_slug.ipynb

The shared first cell is generated from the repository URL in ``_config.yml``, the one place
that holds it. ``from-percent`` turns a "percent" script (cells separated by ``# %%`` and
``# %% [markdown]`` lines, optional ``tags=["hide-input"]`` after them), read by jupytext, into
a notebook with the shared first cell prepended and no outputs.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
MARKER = "# rope-edu set-up cell"


def repository_url() -> str:
    """The repository URL from ``_config.yml`` (read without a YAML dependency)."""
    text = (ROOT / "_config.yml").read_text(encoding="utf-8")
    match = re.search(r"^repository:\s*\n(?:[ \t]+.*\n)*?[ \t]+url:\s*(\S+)", text, re.MULTILINE)
    if not match:
        raise SystemExit("_config.yml has no repository.url")
    return match.group(1).strip("'\"")


def setup_source() -> str:
    url = repository_url()
    return f'''{MARKER} (the same in every chapter)
# On Colab, or anywhere rope_edu is missing, install it from the book's repository;
# locally, after `make lab`, the install is skipped.
import importlib.util
import sys

if importlib.util.find_spec("rope_edu") is None:
    %pip install --quiet "rope_edu @ git+{url}@main"
if "google.colab" in sys.modules:  # Colab needs this once for ipywidgets 8
    from google.colab import output

    output.enable_custom_widget_manager()

%matplotlib inline
import numpy as np
import rope_edu

rope_edu.plots.use_style()'''


def setup_cell() -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": "rope-edu-setup",
        # run everywhere, shown nowhere in the book: each chapter page starts with its title
        "metadata": {"tags": ["remove-cell"]},
        "outputs": [],
        "source": setup_source().splitlines(keepends=True),
    }


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def synced(nb: dict) -> dict:
    cells = [c for c in nb["cells"] if not _text(c.get("source", "")).startswith(MARKER)]
    for cell in cells:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cell.get("metadata", {}).pop("execution", None)
    nb["cells"] = [setup_cell(), *cells]
    for i, cell in enumerate(nb["cells"]):
        cell.setdefault("id", f"c{i:03d}")
    nb.setdefault("metadata", {}).pop("widgets", None)
    nb["metadata"]["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb["metadata"]["language_info"] = {"name": "python"}
    return nb


def dump(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def notebook_paths() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def sync(paths: list[Path] | None = None) -> None:
    for path in paths or notebook_paths():
        nb = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(dump(synced(nb)), encoding="utf-8")
        print(f"synced {path.relative_to(ROOT)}")


def check() -> list[str]:
    problems = []
    for path in notebook_paths():
        text = path.read_text(encoding="utf-8")
        nb = json.loads(text)
        if text != dump(synced(json.loads(text))):
            first = _text(nb["cells"][0]["source"]) if nb["cells"] else ""
            why = "first cell is not the shared set-up cell" if first != setup_source() else "outputs or metadata stored"
            problems.append(f"{path.relative_to(ROOT)}: {why}; run `python scripts/notebooks.py sync`")
    return problems


#: What jupytext's percent reader records about the script's layout (blank lines, markers):
#: not part of the notebook.
JUPYTEXT_LAYOUT = ("lines_to_next_cell", "lines_to_end_of_cell_marker", "cell_marker")


def _stored(cell) -> dict:
    """A cell read by jupytext as the notebooks store it: source as lines without surrounding
    blank lines, no layout keys in its metadata, no outputs; ids are given by :func:`synced`."""
    meta = {k: v for k, v in cell.metadata.items() if k not in JUPYTEXT_LAYOUT}
    source = cell.source.strip("\n").splitlines(keepends=True)
    if cell.cell_type == "code":
        return {"cell_type": "code", "execution_count": None, "metadata": meta, "outputs": [], "source": source}
    return {"cell_type": cell.cell_type, "metadata": meta, "source": source}


def from_percent(src: Path, dst: Path) -> None:
    """Write the percent script ``src`` (read by jupytext) as the notebook ``dst``, with the
    shared first cell prepended (a set-up cell in the script is replaced by it)."""
    import jupytext

    text = jupytext.reads(src.read_text(encoding="utf-8"), fmt="py:percent")
    cells = [_stored(c) for c in text.cells]
    nb = synced({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    dst.write_text(dump(nb), encoding="utf-8")
    print(f"wrote {dst} ({len(nb['cells'])} cells)")


def main(argv: list[str]) -> int:
    if argv[:1] == ["sync"]:
        sync([Path(a).resolve() for a in argv[1:]])
        return 0
    if argv[:1] == ["check"]:
        problems = check()
        print("\n".join(problems) or "all notebooks in sync")
        return 1 if problems else 0
    if argv[:1] == ["from-percent"] and len(argv) == 3:
        from_percent(Path(argv[1]), Path(argv[2]))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
