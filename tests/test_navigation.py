"""Moving around the book on a phone and on a laptop (issue 34, item 1).

On every page of the built site, in headless Chromium:

* at 390x844 with touch (a phone), the ☰ (site navigation) and on-this-page buttons each open
  their drawer by a tap (on one page of each kind, EVERY_WAY, also by a click and the keyboard,
  Enter): the drawer shows on screen and focus moves into it; a tap beside it (and on those pages a
  click beside it and Escape) closes it, and focus returns to the button;
* at 1280x800 (a laptop), the ☰ collapses the sidebar beside the text by a click and expands it
  again by Enter, focus staying on the button; the on-this-page list is shown beside the text.

The page survey does this on the pages it opens (``test_surfaces.survey``, with
``navigation_checks``: the sidebar at the end of its laptop visit, the drawers in its phone visit,
so no page is opened again for it); this module opens the two pages the survey leaves out (search,
index) and checks what both found.
"""

from __future__ import annotations

import pytest

from navigation_checks import EVERY_WAY, LAPTOP, PHONE, laptop_sidebar, phone_drawers
from test_surfaces import browser_pages

pytestmark = [pytest.mark.book, pytest.mark.browser]

NOT_SURVEYED = ("search.html", "genindex.html")


def _every_page(built_book) -> list[str]:
    """Every English page and the Chinese ones of test_surfaces.ZH_SAMPLE."""
    return browser_pages(built_book) + list(NOT_SURVEYED)


def test_every_kind_of_page_is_tried_every_way(pages):
    assert set(EVERY_WAY) <= set(pages), set(EVERY_WAY) - set(pages)


@pytest.fixture(scope="module")
def pages(built_book):
    return _every_page(built_book)


@pytest.fixture(scope="module")
def not_surveyed(browser, site_url) -> dict:
    """The drawers and the sidebar on the pages the survey does not open (search, index)."""
    out = {}
    for view, options in (("phone", PHONE), ("laptop", LAPTOP)):
        context = browser.new_context(**options)
        page = context.new_page()
        try:
            for name in NOT_SURVEYED:
                # the themes' scripts and book.js are deferred: they have run when the document is parsed
                page.goto(f"{site_url}/{name}", wait_until="domcontentloaded", timeout=60_000)
                out[(view, name)] = phone_drawers(page, name in EVERY_WAY) if view == "phone" else laptop_sidebar(page)
        finally:
            context.close()
    return out


def _found(page_survey, not_surveyed, pages, view: str) -> dict:
    key = {"phone": "drawers", "laptop": "sidebar"}[view]
    found, missing = {}, []
    for name in pages:
        bad = not_surveyed.get((view, name)) if name in NOT_SURVEYED else page_survey["reports"].get(name, {}).get(key)
        if bad is None:
            missing.append(name)
        elif bad:
            found[name] = bad
    assert not missing, f"pages whose {key} were not tried: {missing}"
    return found


def test_drawers_open_and_close_on_a_phone(page_survey, not_surveyed, pages):
    failures = _found(page_survey, not_surveyed, pages, "phone")
    assert not failures, failures


def test_sidebar_collapses_and_expands_on_a_laptop(page_survey, not_surveyed, pages):
    failures = _found(page_survey, not_surveyed, pages, "laptop")
    assert not failures, failures
