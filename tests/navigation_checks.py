"""Moving around the book's pages: the phone drawers and the laptop sidebar (issue 34, item 1).

What a reader does with the ☰ (site navigation) and on-this-page buttons, and what went wrong, in
words. Run on every page by the page survey (``test_surfaces.survey``: the sidebar during its laptop
visit, the drawers during its phone visit) and on the pages it does not open by
``test_navigation.py``, which checks the results.

pydata-sphinx-theme 0.17.1 bound the drawers to hidden duplicates of these buttons, so they opened
nothing (https://github.com/pydata/pydata-sphinx-theme/issues/2451); the fix is in
_ext/book_pages.py (page fixes) and _ext/book_static/book.js.
"""

from __future__ import annotations

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
LAPTOP = {"viewport": {"width": 1280, "height": 800}}
DRAWERS = {"primary": "pst-primary-sidebar-modal", "secondary": "pst-secondary-sidebar-modal"}

# What a reader sees of one drawer and its button, in one round trip.
_DRAWER_JS = """([toggle, dialogId]) => {
  const button = document.querySelector(`.${toggle}-toggle`);
  const dialog = document.getElementById(dialogId);
  const a = document.activeElement;
  const r = dialog.getBoundingClientRect();
  const vw = document.documentElement.clientWidth, vh = window.innerHeight;
  const shown = dialog.open && getComputedStyle(dialog).visibility === 'visible'
    && r.width > 100 && r.height > 100 && r.left >= -0.5 && r.right <= vw + 0.5 && r.top < vh
    && dialog.querySelectorAll('a[href]').length > 0;
  return {open: dialog.open, shown, focusIn: dialog.contains(a) && a !== dialog,
          focusOnButton: a === button, expanded: button.getAttribute('aria-expanded'),
          left: r.left, right: r.right};
}"""

_SIDEBAR_JS = """() => {
  const button = document.querySelector('.primary-toggle');
  const s = document.getElementById('pst-primary-sidebar');
  const r = s.getBoundingClientRect();
  const shown = getComputedStyle(s).visibility === 'visible' && r.width > 100 && r.left >= -0.5;
  const toc = document.getElementById('pst-page-toc-nav');
  const tr = toc && toc.getBoundingClientRect();
  const b = button.getBoundingClientRect();
  return {shown, focusOnButton: document.activeElement === button,
          expanded: button.getAttribute('aria-expanded'), buttonShown: b.width > 0 && b.height > 0,
          secondaryButtonShown: !!document.querySelector('.secondary-toggle')?.getClientRects().length,
          tocShown: toc ? (tr.width > 0 && getComputedStyle(toc).visibility === 'visible') : null};
}"""


#: One page of each kind the theme lays out (landing page, chapter, chapter page, reference page
#: with a notebook behind it, bibliography, search, index, a Chinese page): on these every way in
#: and out of a drawer is tried (tap, click, Enter; a tap or click beside it, Escape). On every
#: other page a tap opens each drawer and a tap beside it closes it: the buttons and drawers are
#: the same template on every page, so what can differ from page to page is whether they are there
#: and work, which a tap shows (a third of the time of every way on every page).
EVERY_WAY = ("book/intro.html", "notebooks/05_frequencies.html", "notebooks/05_frequencies_2_decay.html",
             "book/bug_atlas.html", "book/bibliography.html", "search.html", "genindex.html",
             "zh/notebooks/03_rope_2d.html")


def phone_drawer(page, toggle: str, every_way: bool = True) -> list[str]:
    """Tap, click and keyboard on one drawer's button (only a tap unless ``every_way``); what went
    wrong, in words."""
    dialog_id = DRAWERS[toggle]
    button = page.locator(f".{toggle}-toggle")
    state = lambda: page.evaluate(_DRAWER_JS, [toggle, dialog_id])  # noqa: E731
    bad = []
    box = button.bounding_box()
    if box is None or box["height"] < 44 or box["width"] < 44:
        bad.append(f"{toggle} button is not a 44 px target: {box}")

    def settle(open_):  # the dialog's close event, and aria-expanded, come a task later
        want = "s.open && s.focusIn && s.expanded === 'true'" if open_ else "!s.open && s.focusOnButton && s.expanded === 'false'"
        try:
            page.wait_for_function(f"(a) => {{ const s = ({_DRAWER_JS})(a); return {want}; }}",
                                   arg=[toggle, dialog_id], timeout=2_000)
        except Exception:
            pass  # reported below, in words

    def opened(how):
        settle(True)
        s = state()
        if not (s["open"] and s["shown"]):
            bad.append(f"{toggle}: {how} did not show the drawer ({s})")
        elif not s["focusIn"]:
            bad.append(f"{toggle}: {how} opened the drawer but focus stayed outside it")
        elif s["expanded"] != "true":
            bad.append(f"{toggle}: aria-expanded is {s['expanded']} while open")
        return s

    def closed(how):
        settle(False)
        s = state()
        if s["open"]:
            bad.append(f"{toggle}: {how} did not close the drawer")
        elif not s["focusOnButton"]:
            bad.append(f"{toggle}: after {how} focus is not back on the button")
        elif s["expanded"] != "false":
            bad.append(f"{toggle}: aria-expanded is {s['expanded']} when closed")

    def beside(s):  # a point on the backdrop, beside the drawer
        return (s["right"] + 370) / 2 if s["right"] < 300 else s["left"] / 2, 420

    button.tap()
    s = opened("a tap")
    if s["open"]:
        x, y = beside(s)
        page.touchscreen.tap(x, y)
        closed("a tap beside the drawer")
    if not every_way:
        if state()["open"]:  # leave the page as found for the next drawer
            page.keyboard.press("Escape")
        return bad
    button.click()
    s = opened("a click")
    if s["open"]:
        x, y = beside(s)
        page.mouse.click(x, y)
        closed("a click beside the drawer")
    button.focus()
    page.keyboard.press("Enter")
    s = opened("Enter")
    if s["open"]:
        page.keyboard.press("Escape")
        closed("Escape")
    if state()["open"]:  # leave the page as found for the next drawer
        page.keyboard.press("Escape")
    return bad



def phone_drawers(page, every_way: bool) -> list[str]:
    """Both drawers of the page in ``page`` (a phone: 390 px, touch), opened and closed by a tap
    (and, with ``every_way``, by a click and the keyboard); what went wrong, in words."""
    bad = phone_drawer(page, "primary", every_way)
    if page.locator(".secondary-toggle").count():
        bad += phone_drawer(page, "secondary", every_way)
    elif page.locator("#pst-page-toc-nav").count():
        bad.append("the page has an on-this-page list but no button to open it")
    return bad


def laptop_sidebar(page) -> list[str]:
    """On a laptop (1280 px): the sidebar is shown beside the text and the on-this-page list too; a
    click on the ☰ collapses the sidebar and Enter expands it again, focus staying on the button.
    What went wrong, in words."""
    bad = []
    try:  # after a resize from a phone's width the sidebar slides back in
        page.wait_for_function(f"() => ({_SIDEBAR_JS})().shown", timeout=2_000)
    except Exception:
        pass  # reported below, in words
    s = page.evaluate(_SIDEBAR_JS)
    if not (s["buttonShown"] and s["shown"] and s["expanded"] == "true"):
        bad.append(f"at first: {s}")
    if s["tocShown"] is False or s["secondaryButtonShown"]:
        bad.append(f"the on-this-page list is not beside the text: {s}")
    button = page.locator(".primary-toggle")
    for how, want in (("click", False), ("Enter", True)):
        if how == "click":
            button.click()
        else:
            button.focus()
            page.keyboard.press("Enter")
        try:  # the sidebar slides out or in
            page.wait_for_function(f"(want) => ({_SIDEBAR_JS})().shown === want", arg=want, timeout=2_000)
        except Exception:
            pass  # reported below, in words
        s = page.evaluate(_SIDEBAR_JS)
        if s["shown"] != want or s["expanded"] != str(want).lower():
            bad.append(f"{how} should {'expand' if want else 'collapse'} the sidebar: {s}")
        if how == "Enter" and not s["focusOnButton"]:
            bad.append("Enter on the ☰ lost the keyboard focus")
    return bad
