"""scripts/notebooks.py: `from-percent` (jupytext reads the percent script) and `sync`.

The book's own sources are the reference: every chapter and book notebook written out as a
percent script by jupytext and read back by `from-percent` gives the stored notebook again (cell
types, sources, tags; cell ids are not part of the percent format). tests/test_book.py runs
`notebooks.py check` over the chapters and checks the set-up cell against `_config.yml`."""

from __future__ import annotations

import importlib.util
import json
import sys

import jupytext
import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("notebooks_script", ROOT / "scripts" / "notebooks.py")
notebooks = sys.modules["notebooks_script"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(notebooks)

SOURCES = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.ipynb"))

SCRIPT = '''\
# %% [markdown]
# # A chapter
#
# Prose with $x$ and a list:
# - one

# %%
import numpy as np
%matplotlib inline


x = np.arange(3)

# %% tags=["hide-input"]
# %time print(x)
print(x)
# %% [markdown] tags=["remove-cell"]
# hidden
'''


def _convert(tmp_path, script: str) -> dict:
    src, dst = tmp_path / "ch.py", tmp_path / "ch.ipynb"
    src.write_text(script, encoding="utf-8")
    notebooks.from_percent(src, dst)
    text = dst.read_text(encoding="utf-8")
    assert text == notebooks.dump(json.loads(text))  # stored as `sync` stores it
    return json.loads(text)


def test_from_percent_cells_tags_and_shared_first_cell(tmp_path):
    nb = _convert(tmp_path, SCRIPT)
    assert nb["cells"][0] == notebooks.setup_cell()
    assert nb["cells"][1:] == [
        {"cell_type": "markdown", "metadata": {}, "id": "c001",
         "source": ["# A chapter\n", "\n", "Prose with $x$ and a list:\n", "- one"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "id": "c002",
         "source": ["import numpy as np\n", "%matplotlib inline\n", "\n", "\n", "x = np.arange(3)"]},
        {"cell_type": "code", "execution_count": None, "metadata": {"tags": ["hide-input"]}, "outputs": [],
         "id": "c003", "source": ["%time print(x)\n", "print(x)"]},  # jupytext's escaped magic
        {"cell_type": "markdown", "metadata": {"tags": ["remove-cell"]}, "id": "c004", "source": ["hidden"]},
    ]
    assert nb["metadata"] == {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }


def test_from_percent_replaces_a_set_up_cell_in_the_script(tmp_path):
    setup = "".join(f"# {line}".rstrip() + "\n" if line.startswith("%") else line + "\n"
                    for line in notebooks.setup_source().splitlines())
    nb = _convert(tmp_path, "# %%\n" + setup + "\n# %%\nx = 1\n")
    assert [c["source"] for c in nb["cells"]] == [notebooks.setup_cell()["source"], ["x = 1"]]


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_stored_notebook_round_trips_through_percent(path, tmp_path):
    stored = json.loads(path.read_text(encoding="utf-8"))
    back = _convert(tmp_path, jupytext.writes(jupytext.read(path), fmt="py:percent"))

    def content(nb):
        return [{k: v for k, v in c.items() if k != "id"} for c in nb["cells"]]

    assert content(back) == content(stored)
    assert back["metadata"] == stored["metadata"]


def test_sync_sets_the_first_cell_and_strips_outputs():
    code = {"cell_type": "code", "execution_count": 3, "id": "c001",
            "metadata": {"execution": {"iopub.status.busy": "x"}, "tags": ["hide-input"]},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}], "source": ["x = 1"]}
    nb = {"cells": [code], "metadata": {"widgets": {}}, "nbformat": 4, "nbformat_minor": 5}
    out = notebooks.synced(nb)
    assert out["cells"][0] == notebooks.setup_cell()
    assert out["cells"][1] == {**code, "execution_count": None, "outputs": [], "metadata": {"tags": ["hide-input"]}}
    assert "widgets" not in out["metadata"]
    assert notebooks.synced(json.loads(notebooks.dump(out))) == out  # a second sync changes nothing
