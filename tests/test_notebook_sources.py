"""Rules on the chapter sources that need no build (CONTRIBUTING, "Checks, figures and results on
the page"): every static plot carries an author-written caption and alt text, and a folded exercise
solution does not fold its code a second time."""

from __future__ import annotations

import json
import re

import pytest

from conftest import ROOT

SOURCES = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.ipynb"))
MAKES_PLOT = re.compile(r"\bnew_figure\(|\bplt\.(subplots|figure)\(")


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_every_plot_has_caption_and_alt(path):
    missing = []
    for i, cell in enumerate(_cells(path)):
        text = "".join(cell["source"])
        if cell["cell_type"] == "code" and MAKES_PLOT.search(text):
            call = text[text.find("describe("):] if "describe(" in text else ""
            if not ("caption=" in call and "alt=" in call):
                missing.append(i)
    assert not missing, f"plot cells without describe(fig, caption=..., alt=...): {missing}"


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_no_fold_inside_a_solution(path):
    inside, folded = False, []
    for i, cell in enumerate(_cells(path)):
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith(":::{solution-start}"):
                    inside = True
                elif line.startswith(":::{solution-end}"):
                    inside = False
        elif inside and "hide-input" in cell.get("metadata", {}).get("tags", []):
            folded.append(i)
    assert not folded, f"code cells folded inside an already folded solution: {folded}"
