"""Every interactive figure of the built book lays out for the width it gets (issue 34).

Each chapter page with figures is opened in headless Chromium at 1280 px and, again, at 390×844
with touch (a phone), by the page survey (``test_surfaces.survey``), which measures it. For every
figure (``figure_driver.FIT_JS``): its box and everything inside it are no wider than the viewport
(no element's ``scrollWidth`` past its box: nothing scrolls sideways), all text drawn in its SVG is
at least 10 px as shown (font size times the drawing's scale), and on the phone its sliders and
menus are at least 44 px tall. At 1280 px every figure shows its first (wide) layout; resizing the
window lays it out again, for the narrow screen and back. The page loads the figure engine
(``core.js``) once, whatever the number of figures.
"""

from __future__ import annotations

import pytest

import figure_driver
from conftest import notebook_paths

pytestmark = [pytest.mark.book, pytest.mark.browser]

CHAPTERS = [nb.stem for nb in notebook_paths() if "DEMO.show(" in nb.read_text(encoding="utf-8")]


@pytest.fixture(scope="module")
def fit(page_survey):
    """Per chapter: the fit reports on a phone and a laptop, after a resize each way, and the
    engine's requests, from the page survey's two visits to the page (``test_surfaces.survey``:
    opened at 1280 px, resized to 390 px and back; opened again on a phone with touch, resized to
    1280 px and back)."""
    return {stem: page_survey["reports"][f"notebooks/{stem}.html"].get("fit") or {} for stem in CHAPTERS}


def test_chapters_with_figures_are_found():
    assert len(CHAPTERS) >= 10


def test_every_figure_fits_a_phone(fit):
    """390 px: nothing scrolls sideways, text >= 10 px, sliders and menus >= 44 px tall."""
    problems = [f"{stem}: {p}" for stem, r in fit.items() for rep in r["phone"] for p in figure_driver.fit_problems(rep, phone=True)]
    assert not problems, problems
    assert sum(len(r["phone"]) for r in fit.values()) >= 15


def test_every_figure_keeps_its_wide_layout_on_a_laptop(fit):
    """1280 px: each figure's first (wide) layout, fitting, with text >= 10 px."""
    problems = [f"{stem}: {p}" for stem, r in fit.items() for rep in r["laptop"] for p in figure_driver.fit_problems(rep, phone=False)]
    assert not problems, problems
    narrow = [(stem, rep["name"], rep["view"]) for stem, r in fit.items() for rep in r["laptop"] if rep["layout"] != "0"]
    assert not narrow, f"figures not in their wide layout at 1280 px: {narrow}"


def test_every_figure_has_a_narrow_layout(fit):
    """On a phone no figure shows its wide layout (a wide one would need a wider screen for its text)."""
    wide = [(stem, rep["name"]) for stem, r in fit.items() for rep in r["phone"] if rep["layout"] == "0"]
    assert not wide, wide


def test_figures_lay_out_again_when_the_window_resizes(fit):
    """Phone -> laptop -> phone and laptop -> phone -> laptop: each figure takes the layout it
    has when the page opens at that width, and fits."""
    def same(a, b):
        return [(x["name"], x["layout"], x["view"]) for x in a] == [(x["name"], x["layout"], x["view"]) for x in b]

    for stem, r in fit.items():
        for start, other in (("phone", "laptop"), ("laptop", "phone")):
            assert same(r[f"{start} resized"], r[other]), (stem, start, r[f"{start} resized"], r[other])
            assert same(r[f"{start} back"], r[start]), (stem, start)
            for rep in r[f"{start} resized"] + r[f"{start} back"]:
                assert not figure_driver.fit_problems(rep, phone=False), (stem, start, rep)


def test_the_engine_is_loaded_once_per_page(fit):
    """Each page requests core.js once and each figure's own module once (not core n times)."""
    for stem, r in fit.items():
        urls = r["laptop requests"]
        cores = [u for u in urls if u.endswith("/rope_figures/core.js")]
        assert len(cores) == 1, (stem, urls)
        names = {rep["name"] for rep in r["laptop"]}
        modules = [u.rsplit("/", 1)[1] for u in urls if u.endswith(".js") and not u.endswith(("/core.js", "/loader.js"))]
        assert sorted(modules) == sorted(f"{n}.js" for n in names), (stem, modules)
