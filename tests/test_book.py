"""The rendered book: it builds, every page works in a real browser, and it is self-contained."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

import figure_driver
from conftest import ROOT, notebook_paths

pytestmark = pytest.mark.book


def test_notebooks_in_sync():
    """Every notebook starts with the shared set-up cell and is stored without outputs."""
    result = subprocess.run([sys.executable, "scripts/notebooks.py", "check"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_notebook_in_toc():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    listed = re.findall(r"file:\s*notebooks/(\S+)", toc)
    assert [p.stem for p in notebook_paths()] == listed, "chapters must be listed in _toc.yml in numeric order"


def test_setup_cell_uses_config_url():
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    url = re.search(r"^repository:\s*\n\s+url:\s*(\S+)", config, re.MULTILINE).group(1)
    for path in notebook_paths():
        first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
        assert f"git+{url}@main" in first, path.name


def test_book_builds(book_build):
    """`jupyter-book build -W -n --keep-going`: any warning, broken reference or failing cell fails."""
    log = book_build.stdout[-8000:] + book_build.stderr[-8000:]
    assert book_build.returncode == 0, log
    assert (ROOT / "_build/html/index.html").exists()


def _is_redirect(path: Path) -> bool:
    return 'http-equiv="Refresh"' in path.read_text(encoding="utf-8")


def _pages(html_root: Path) -> list[str]:
    """Every real page of the site (not Jupyter Book's index.html stub that redirects to the intro)."""
    pages = sorted(
        p.relative_to(html_root).as_posix()
        for p in html_root.rglob("*.html")
        if "_static" not in p.parts and not _is_redirect(p)
    )
    assert "book/intro.html" in pages
    return pages


def test_index_redirects_to_the_intro(built_book):
    html = (built_book / "index.html").read_text(encoding="utf-8")
    target = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', html).group(1)
    assert (built_book / target).exists(), target


def test_launch_buttons(built_book):
    """Notebook pages offer Colab (the published reader notebook) and Binder launch buttons."""
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    repo = urlparse(re.search(r"^repository:\s*\n\s+url:\s*(\S+)", config, re.MULTILINE).group(1)).path.strip("/")
    branch = re.search(r"reader_notebooks_branch:\s*(\S+)", config).group(1)
    for nb in notebook_paths():
        html = (built_book / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
        colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/_sources/notebooks/{nb.name}"
        assert colab in html, nb.name
        assert "mybinder.org" in html, nb.name


def test_no_external_assets_in_html(built_book):
    """No page links a script, stylesheet, font or image from another host (links to read are fine)."""
    asset = re.compile(r"<(?:script|link|img|iframe|source)\b[^>]*(?:src|href)=[\"'](https?:)?//", re.IGNORECASE)
    offenders = {}
    for page in _pages(built_book):
        text = (built_book / page).read_text(encoding="utf-8")
        hits = [m.group(0)[:120] for m in asset.finditer(text)]
        hits = [h for h in hits if not re.search(r"<link[^>]*rel=[\"'](?:canonical|alternate)", h)]
        if hits:
            offenders[page] = hits
    assert not offenders, offenders


def test_cross_references_show_no_raw_tex(built_book):
    """A bare {ref} takes its text from the heading it names; a heading with maths then shows its
    TeX source in the link ("turn by m\\theta"), in both editions. Such a reference names its text."""
    ref = re.compile(r'<span class="std std-ref">([^<]*)</span>')
    offenders = {}
    for page in _pages(built_book):
        hits = [t for t in ref.findall((built_book / page).read_text(encoding="utf-8")) if re.search(r"[\\$^_{}]", t)]
        if hits:
            offenders[page] = hits
    assert not offenders, offenders

# --- in a real browser ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def page_reports(page_survey):
    """Every page opened in headless Chromium (every English page, a sample of the Chinese ones):
    console errors, failed and foreign requests, maths, and every figure driven as a reader would.
    Recorded by the one visit per page that test_surfaces.py's measures share
    (conftest.page_survey, test_surfaces.survey)."""
    return page_survey["reports"]


def test_pages_have_no_console_errors(page_reports):
    bad = {p: r["console"] for p, r in page_reports.items() if r["console"]}
    assert not bad, bad


def test_pages_have_no_failed_requests(page_reports):
    bad = {p: r["failed"] for p, r in page_reports.items() if r["failed"]}
    assert not bad, bad


def test_pages_request_no_other_host(page_reports):
    bad = {p: r["foreign"] for p, r in page_reports.items() if r["foreign"]}
    assert not bad, bad


def test_math_is_typeset(page_reports):
    with_math = {p: r for p, r in page_reports.items() if r["math"]}
    assert with_math, "no page has math"
    bad = {p: (r["math"], r["mjx"], r["raw_tex"]) for p, r in with_math.items() if r["mjx"] == 0 or r["raw_tex"]}
    assert not bad, f"pages with untypeset math (math elements, mjx-containers, raw): {bad}"


def test_every_figure_works_in_the_static_book(page_reports):
    """Every chapter that shows figures has them on its page, mounted with no kernel; every control
    changes its figure when moved by keyboard; random states print the same numbers as Python."""
    for nb in notebook_paths():
        shown = nb.read_text(encoding="utf-8").count("DEMO.show(")
        report = page_reports[f"notebooks/{nb.stem}.html"]
        assert report["placeholders"] == shown, f"{nb.stem}: {shown} figures in the notebook, {report['placeholders']} on the page"
        assert len(report["figures"]) == shown, f"{nb.stem}: only {len(report['figures'])} of {shown} figures mounted"
    figures = [(p, f) for p, r in page_reports.items() for f in r["figures"]]
    assert figures, "no figure in the book"
    dead = [(p, f["name"], f["unchanged"]) for p, f in figures if f["unchanged"] or not f["controls"]]
    assert not dead, f"controls that do not change their figure: {dead}"
    wrong = [problem for _, f in figures for problem in f["problems"]]
    assert not wrong, wrong
    # labels and clip paths find their element by id: several figures on a page must not share one
    clashes = {p: r["duplicate_ids"] for p, r in page_reports.items() if r.get("duplicate_ids")}
    assert not clashes, clashes


def test_no_prerecorded_frames_remain(built_book):
    """The old matplotlib players (to_jshtml) are gone: figures are drawn in the browser."""
    for page in _pages(built_book):
        html = (built_book / page).read_text(encoding="utf-8")
        assert "anim-slider" not in html and "_anim_img" not in html, page


CHAPTER_PAGE_LIMIT = 1_000_000  # bytes: a chapter page's own HTML and images (issue 11)


def page_weight(built_book: Path, page: str) -> int:
    """A page's own bytes: its HTML plus the images it shows (not the shared _static/ assets)."""
    html = (built_book / page).read_text(encoding="utf-8")
    total = len(html.encode("utf-8"))
    for src in set(re.findall(r'<img[^>]+src="([^"]+)"', html)):
        if src.startswith("data:") or "_static/" in src:
            continue
        path = ((built_book / page).parent / src.split("#")[0].split("?")[0]).resolve()
        if path.exists():
            total += path.stat().st_size
    return total


def test_chapter_pages_are_light(built_book):
    weights = {nb.stem: page_weight(built_book, f"notebooks/{nb.stem}.html") for nb in notebook_paths()}
    heavy = {k: v for k, v in weights.items() if v > CHAPTER_PAGE_LIMIT}
    assert not heavy, f"chapter pages over {CHAPTER_PAGE_LIMIT} bytes: {heavy}"


def test_figures_resize_and_print(site_url, browser):
    """On a narrow screen a figure fits its column; a printout shows it in its default state."""
    chapters = [nb for nb in notebook_paths() if "DEMO.show(" in nb.read_text(encoding="utf-8")]
    context = browser.new_context(viewport={"width": 420, "height": 900}, device_scale_factor=2)
    page = context.new_page()
    try:
        for nb in chapters[:3]:
            page.goto(f"{site_url}/notebooks/{nb.stem}.html", wait_until="load")
            page.wait_for_selector(figure_driver.FIGURE_SELECTOR, timeout=30_000)
            host = page.locator(figure_driver.FIGURE_SELECTOR).first
            # the figure's box fits the column, and so does its drawing: the figure takes a layout
            # for the width it gets (tests/test_fig_fit.py checks every figure, at 390 and 1280 px)
            sizes = host.evaluate(
                "h => { const b = h.querySelector('.rope-fig-canvas'), s = h.querySelector('svg.rope-fig-svg').getBoundingClientRect();"
                " return [b.getBoundingClientRect().width, s.height, h.parentElement.getBoundingClientRect().width,"
                " s.width, getComputedStyle(b).overflowX]; }"
            )
            assert 0 < sizes[0] <= sizes[2] + 1 and sizes[1] > 0, (nb.stem, sizes)
            assert sizes[3] <= sizes[0] + 1, (nb.stem, sizes)
            defaults = json.loads(host.get_attribute("data-state"))
            first = host.locator("[data-control]").first
            first.focus()
            page.keyboard.press("End")
            moved = json.loads(host.get_attribute("data-state"))
            page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
            assert json.loads(host.get_attribute("data-state")) == defaults, nb.stem
            page.emulate_media(media="print")
            assert not host.locator(".rope-fig-controls").is_visible()
            assert host.locator("svg.rope-fig-svg").is_visible()
            page.emulate_media(media="screen")
            page.evaluate("() => window.dispatchEvent(new Event('afterprint'))")
            assert json.loads(host.get_attribute("data-state")) == moved, nb.stem
    finally:
        context.close()


def test_pages_have_a_local_favicon(built_book):
    """Browsers ask for /favicon.ico unless the page names an icon; ours is served by the site."""
    for page in _pages(built_book):
        html = (built_book / page).read_text(encoding="utf-8")
        match = re.search(r'<link rel="icon" href="([^"]+)"', html)
        assert match, page
        assert (built_book / page).parent.joinpath(match.group(1)).resolve().exists(), (page, match.group(1))
