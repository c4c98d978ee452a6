"""Reading paths that guide (_ext/reading_paths.py): a page reached from a reading path shows
the path's name, the step ("step 2 of 6") and links to the previous and next steps."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "_ext"))
from reading_paths import read_paths

pytestmark = [pytest.mark.book]


@pytest.fixture(scope="module")
def paths(built_book) -> list[dict]:
    return read_paths((built_book / "book" / "intro.html").read_text(encoding="utf-8"), "book/intro.html")


def test_every_path_is_read_and_every_step_lands_on_a_section(built_book, paths):
    assert len(paths) >= 5 and all(len(p["steps"]) >= 4 for p in paths), [p["name"] for p in paths]
    script = (built_book / "_static" / "rope_paths" / "paths.js").read_text(encoding="utf-8")
    for path in paths:
        assert f'"slug": "{path["slug"]}"' in script
        for step in path["steps"]:
            page, anchor = step["url"].split("#")
            html = (built_book / page).read_text(encoding="utf-8")
            assert f'id="{anchor}"' in html, f"{path['name']}: {step['title']} -> {step['url']}"


def _open(browser, url: str, width: int):
    context = browser.new_context(viewport={"width": width, "height": 844 if width < 500 else 800},
                                  has_touch=width < 500, is_mobile=width < 500)
    page = context.new_page()
    page.goto(url, wait_until="load")
    return context, page


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_a_path_guides_from_the_landing_page_to_its_end(site_url, browser, paths, width):
    path = paths[0]
    n = len(path["steps"])
    context, page = _open(browser, f"{site_url}/book/intro.html", width)
    try:
        page.locator("#reading-paths ol").first.locator("li").nth(1).locator("a").first.click()
        page.wait_for_load_state("load")
        for step in range(2, n + 1):
            assert f"path={path['slug']}" in page.url and f"step={step}" in page.url, page.url
            bar = page.locator("nav.rope-path")
            assert bar.count() == 1
            text = bar.inner_text()
            assert path["name"] in text and f"step {step} of {n}" in text, text
            assert bar.locator("a[rel=prev]").count() == 1
            # the bar sits under the heading the reader landed on, on screen, inside the column
            anchor = path["steps"][step - 1]["url"].split("#")[1]
            placed = page.evaluate(
                """(id) => { const nav = document.querySelector('nav.rope-path');
                   const h = nav.previousElementSibling; const t = document.getElementById(id);
                   const r = nav.getBoundingClientRect();
                   const sec = t.matches('section') ? t : t.closest('section');
                   return {under: !!h && /^H[1-4]$/.test(h.tagName) && (t === h || t.contains(h) || (!!sec && sec.contains(h) && h.closest('section') === sec)),
                           fits: r.right <= document.documentElement.clientWidth + 1 && r.left >= 0}; }""",
                anchor)
            assert placed == {"under": True, "fits": True}, (step, placed)
            nxt = bar.locator("a[rel=next]")
            if step < n:
                assert path["steps"][step]["title"] in nxt.inner_text()
                nxt.click()
                page.wait_for_load_state("load")
            else:
                assert nxt.count() == 0 and "back to all paths" in text
        # and back: the previous link carries the path on
        page.locator("nav.rope-path a[rel=prev]").click()
        page.wait_for_load_state("load")
        assert f"step {n - 1} of {n}" in page.locator("nav.rope-path").inner_text()
    finally:
        context.close()


@pytest.mark.browser
def test_a_page_opened_without_a_path_shows_no_bar(site_url, browser, paths):
    context, page = _open(browser, f"{site_url}/{paths[0]['steps'][0]['url']}", 1280)
    try:
        assert page.locator("nav.rope-path").count() == 0
        page.goto(f"{site_url}/{paths[0]['steps'][0]['url'].split('#')[0]}?path=nope&step=1", wait_until="load")
        assert page.locator("nav.rope-path").count() == 0
    finally:
        context.close()
