"""The book on a phone, by keyboard, with a screen reader, and light to load (issue 21).

Every page of the built site is opened in headless Chromium at 390 px (a phone) and 1280 px (a
laptop) and checked for:

* figures: every control (and its label) inside the viewport, every SVG text at least 10 px; on a
  phone nothing sticks over a figure's drawing, and its controls and drawing (or, for a tall one,
  its readouts) are on one screen;
  notebook plots never wider than their box, and one shown under 3/4 of its size (its 10 pt text
  under 10 px) with a visible link to enlarge it;
* reading (issue 45): the landing page's figure on its first screen and its reading paths within
  two, at 1280x800 and 390x844; a chapter page on a phone at most 25 screens, its first picture
  on its first screen;
* math: a display equation wider than its column scrolls inside its own box (nothing clipped, the
  equation number does not cover it) with a shadow at its cut edge, and is shown broken at its
  relations only where its one line does not fit; inline math stays inside the text column;
* text: no page wider than the window, no verdict line or text output cut (issue 34);
* accessibility: no axe-core violation of impact serious or critical; a keyboard reader reaches
  the first figure in a handful of key presses; the figures' focus ring contrasts 3:1 with the page;
* weight: a first visit to a chapter page loads at most 1.5 MB, a second chapter page at most
  400 KB more (bytes as served, uncompressed).

axe-core comes from npm: `bash scripts/install_test_tools.sh` puts it in ~/.cache/rope-edu/node-tools
(or $ROPE_EDU_NODE_TOOLS). Without it the axe test skips locally and fails under CI.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

import figure_driver
import navigation_checks
from conftest import ROOT, notebook_paths

_spec = importlib.util.spec_from_file_location("page_metrics", ROOT / "scripts" / "page_metrics.py")
page_metrics = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(page_metrics)

# every page is opened once per run, by the shared survey (conftest.page_survey), whichever worker asks
pytestmark = [pytest.mark.book, pytest.mark.browser]

VIEWPORTS = {"phone": 390, "laptop": 1280}
MIN_FIGURE_TEXT_PX = 10.0
MAX_KEYS_TO_FIGURE = 8          # Tab / Enter presses from the top of a page into its first figure
MIN_FOCUS_CONTRAST = 3.0        # WCAG 2.2 focus appearance: the indicator against the page
# How an English chapter page reads at 1280x800 (issue 29), measured with the page's folds closed:
READING_SCREEN = 800            # px: one screen of a 1280x800 laptop
FIRST_FIGURE_BY = 1.5           # screens: where the page's first figure (or plot) starts at the latest
MAX_SCREENS = 20.0              # a page a reader finishes in a sitting
MAX_VERDICTS = 3                # verdict blocks shown in the flow (the others are one click away)
MAX_CODE_BARS = 5               # "show code" bars shown in the flow
# How it reads on a phone, 390x844 (issue 45):
PHONE_SCREEN = 844              # px: one screen of a 390x844 phone
MAX_PHONE_SCREENS = 25.0        # a chapter page on a phone, still one sitting
PHONE_PICTURE_BY = 1.0          # screens: a chapter page's first picture starts on a phone's first screen
LANDING_FIGURE_BY = 1.0         # screens: the landing page's figure starts on the first screen
LANDING_PATHS_BY = 2.0          # screens: its reading paths start within two
FIRST_VISIT_LIMIT = 1_500_000   # bytes loaded by a first visit to a chapter page
SECOND_VISIT_LIMIT = 400_000    # bytes a second chapter page adds to what the first one loaded
NODE_TOOLS = Path(os.environ.get("ROPE_EDU_NODE_TOOLS", Path.home() / ".cache/rope-edu/node-tools"))
AXE_JS = NODE_TOOLS / "node_modules/axe-core/axe.min.js"


def _pages(html_root: Path) -> list[str]:
    """Every real page (not the index.html stub that redirects to the intro, not search/genindex)."""
    pages = []
    for p in sorted(html_root.rglob("*.html")):
        rel = p.relative_to(html_root).as_posix()
        if "_static" in p.parts or "_sources" in p.parts or rel in ("search.html", "genindex.html"):
            continue
        if 'http-equiv="Refresh"' in p.read_text(encoding="utf-8"):
            continue
        pages.append(rel)
    return pages


#: The Chinese pages the browser surveys open (this one, test_book.py's page reports and
#: test_navigation.py): one of each kind (landing page, translated glossary, bibliography, a chapter
#: with figures, a chapter with pages, a chapter of tables, the trained-model chapter). The Chinese
#: site is the English site's pages with the text translated: the same templates, figures,
#: stylesheets and scripts, each checked on every English page; what only the Chinese pages can
#: get wrong (their names, fonts, translated labels, search) shows on any of them, as the search
#: button's name did on all of them. Every Chinese page is still checked without a browser
#: (tests/test_editions.py: its twin, its links, its local references). Opening all of them
#: doubled the surveys, the longest part of the suite.
ZH_SAMPLE = ("zh/book/intro.html", "zh/book/glossary.html", "zh/book/bibliography.html",
             "zh/notebooks/03_rope_2d.html", "zh/notebooks/05_frequencies.html",
             "zh/notebooks/10_models_2_families.html", "zh/notebooks/16_trained_model.html")


def browser_pages(html_root: Path) -> list[str]:
    """The pages the browser surveys open: every English page and the Chinese ones of ZH_SAMPLE."""
    pages = [p for p in _pages(html_root) if not p.startswith("zh/")]
    if (html_root / "zh").is_dir():
        missing = [p for p in ZH_SAMPLE if not (html_root / p).exists()]
        assert not missing, f"Chinese pages of the sample not built: {missing}"
        pages += list(ZH_SAMPLE)
    return pages


#: How far below the first screen Chrome starts loading a lazy image on a fast connection (1,250
#: CSS px on 4G, 2,500 on 3G or slower: web.dev, "Browser-level image lazy loading for the web").
#: A first visit's bytes count lazy images within it (the page weight budgets below).
LAZY_MARGIN = 1250

# The paths of the lazy images that start more than ``margin`` px below the first screen (the page
# at its top, as it opened).
_LAZY_BEYOND_JS = """(margin) => [...document.querySelectorAll('img[loading=lazy]')]
  .filter(i => i.getBoundingClientRect().top + scrollY > innerHeight + margin)
  .map(i => new URL(i.currentSrc || i.src, location.href).pathname)"""

# Measured in the page after math and figures are ready: one JSON object per page and viewport.
_MEASURE_JS = r"""(only) => {
  // only === 'math': the formulas alone (the second look at a page with its folds open)
  const all = only !== 'math';
  const vw = document.documentElement.clientWidth;
  const out = {controls: [], smallText: [], minText: null, display: [], inline: []};
  const where = (e) => (e.closest('[data-figure]') || {}).dataset?.figure || '';
  // figure controls and their labels: inside the viewport, not zero-sized
  for (const c of all ? document.querySelectorAll('.rope-fig [data-control]') : []) {
    for (const e of [c, ...c.labels]) {
      const r = e.getBoundingClientRect();
      if (r.width < 1 || r.height < 1 || r.left < -0.5 || r.right > vw + 0.5)
        out.controls.push(`${where(c)}: ${c.dataset.control} ${e.tagName.toLowerCase()} at ${Math.round(r.left)}..${Math.round(r.right)} of ${vw}`);
    }
  }
  // text drawn in a figure's SVG, in CSS pixels as shown (font size times the SVG's scale)
  for (const t of all ? document.querySelectorAll('.rope-fig svg text') : []) {
    if (!t.textContent.trim() || !t.getScreenCTM()) continue;
    const m = t.getScreenCTM();
    const px = parseFloat(getComputedStyle(t).fontSize) * Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
    out.minText = out.minText === null ? px : Math.min(out.minText, px);
    if (px < 10 - 1e-6 && out.smallText.length < 5) out.smallText.push(`${where(t)}: "${t.textContent.slice(0, 30)}" ${px.toFixed(1)} px`);
  }
  // display math: the formula is wholly visible or its box scrolls; the number does not cover it
  const scrolls = (e) => /(auto|scroll)/.test(getComputedStyle(e).overflowX);
  out.stacked = [];
  out.wideMath = [];   // display formulas wider than their box (they scroll in it, with a cue)
  out.wideInline = []; // inline formulas wider than their paragraph's column (they cannot fit)
  for (const box of document.querySelectorAll('article div.math')) {
    // a formula with two renderings (rope-2way) shows one of them: the one measured here
    const content = [...box.querySelectorAll(':scope > mjx-container')].find(e => e.getClientRects().length)
      || box.querySelector('mjx-container, .katex-display, .katex') || box;
    if (box.classList.contains('rope-narrow') && box.getClientRects().length) {
      // broken at its relations: only where the one line does not fit beside the number
      const eq = box.querySelector(':scope > .eqno');
      const room = box.clientWidth - (eq ? eq.getBoundingClientRect().width + 8 : 0);
      const need = Number(box.dataset.wide || 0);
      if (!(need > room + 1)) out.stacked.push(`${box.id || box.textContent.trim().slice(0, 40)}: broken, but its ${Math.round(need)} px line fits in ${Math.round(room)} px`);
    }
    const eqno = box.querySelector('.eqno');
    let scroller = null;
    for (let e = content; e && e !== box.parentElement; e = e.parentElement) if (scrolls(e)) { scroller = e; break; }
    const name = (box.id || box.textContent.trim().slice(0, 40));
    const inner = content.querySelector('mjx-math, .katex-html, .katex') || content;
    const wide = inner.getBoundingClientRect().width;
    const room = (scroller || box).getBoundingClientRect().width;
    if (!scroller && wide > room + 1) out.display.push(`${name}: formula ${Math.round(wide)} px in a ${Math.round(room)} px box that does not scroll`);
    if (wide > room + 1 && box.getClientRects().length) out.wideMath.push(`${name}: ${Math.round(wide)} px in ${Math.round(room)} px`);
    const br = box.getBoundingClientRect();
    if (br.right > vw + 0.5 || br.left < -0.5) out.display.push(`${name}: box ${Math.round(br.left)}..${Math.round(br.right)} outside the ${vw} px viewport`);
    if (eqno) {
      const n = eqno.getBoundingClientRect(), c = inner.getBoundingClientRect(), s = (scroller || box).getBoundingClientRect();
      const left = Math.max(c.left, s.left), right = Math.min(c.right, s.right);
      const overlapX = Math.min(n.right, right) - Math.max(n.left, left);
      const overlapY = Math.min(n.bottom, c.bottom) - Math.max(n.top, c.top);
      if (overlapX > 1 && overlapY > 1) out.display.push(`${name}: equation number covers the formula`);
    }
  }
  // inline math in the text: wholly visible, or its box scrolls (not clipped, not past the column)
  for (const m of document.querySelectorAll('article span.math')) {
    const inner = m.querySelector('mjx-math, .katex');
    if (!inner || !m.getClientRects().length) continue;
    const r = m.getBoundingClientRect(), c = inner.getBoundingClientRect();
    const block = m.parentElement.closest('p, li, dd, td, th, div, section');
    const b = block ? block.getBoundingClientRect() : {right: vw};
    let scroller = null;
    for (let e = m; e && e.tagName !== 'ARTICLE'; e = e.parentElement) if (scrolls(e)) { scroller = e; break; }
    const clipped = c.width > r.width + 1 && !scroller;
    if (!m.closest('td, th') && c.width > Math.min(b.right - b.left || vw, vw) + 1) out.wideInline.push(`${m.textContent.trim().slice(0, 40)}: ${Math.round(c.width)} px`);
    if (clipped || (!scroller && r.right > Math.min(b.right, vw) + 1))
      out.inline.push(`${m.textContent.trim().slice(0, 40)}: ${Math.round(c.width)} px formula in ${Math.round(r.left)}..${Math.round(r.right)}, column ends at ${Math.round(Math.min(b.right, vw))}${clipped ? ', clipped' : ''}`);
  }
  if (!all) return out;
  // notebook plots (10 pt text at their display size): never wider than their box; shown under
  // 3/4 of their size (text under 10 px) only with a visible link to the image at full size
  out.smallPlots = [];
  out.cutPlots = [];
  out.scaledPlots = 0;
  for (const img of document.querySelectorAll('figure.rope-plot img')) {
    const fig = img.closest('figure');
    const width = parseFloat(img.style.width) || img.naturalWidth;
    const shown = img.getBoundingClientRect().width;
    const name = img.getAttribute('src').split('/').pop().slice(0, 12);
    if (shown > fig.clientWidth + 1 || fig.scrollWidth > fig.clientWidth + 1)
      out.cutPlots.push(`${name}: ${Math.round(shown)} px in a ${fig.clientWidth} px box`);
    if (width > 0 && shown < 0.75 * width - 1) {
      out.scaledPlots += 1;
      const link = fig.querySelector('a.rope-plot-enlarge');
      const r = link && link.getBoundingClientRect();
      if (!link || !link.checkVisibility() || r.height < 24 || link.getAttribute('href') !== img.getAttribute('src'))
        out.smallPlots.push(`${name}: ${Math.round(shown)} of ${Math.round(width)} px, text ${(13.33 * shown / width).toFixed(1)} px, no visible link to enlarge it`);
    }
  }
  // a figure's controls and what they change on one screen together: [figure, px from the
  // controls' top to the drawing's bottom, the controls' height, whether anything of the figure
  // stays on screen over its drawing (sticky or fixed), px from the controls' top to the readouts'
  // bottom where the readouts sit above the drawing (readoutsAbove), else null, px from the
  // controls' top to the drawing's top]
  out.figureSpans = [...document.querySelectorAll('.rope-fig[data-state]')].map(f => {
    const c = f.querySelector('.rope-fig-controls'), d = f.querySelector('.rope-fig-canvas');
    if (!c || !d || !c.children.length) return null;
    const cr = c.getBoundingClientRect(), r = f.querySelector('.rope-fig-readouts');
    const floats = [...f.querySelectorAll('*')].some(e => ['sticky', 'fixed'].includes(getComputedStyle(e).position));
    const above = f.classList.contains('rope-fig-readouts-above') && r ? Math.round(r.getBoundingClientRect().bottom - cr.top) : null;
    return [f.dataset.figure, Math.round(d.getBoundingClientRect().bottom - cr.top), Math.round(cr.height), floats, above,
            Math.round(d.getBoundingClientRect().top - cr.top)];
  }).filter(Boolean);
  // the landing page: where its first figure and its reading paths start (px from the top)
  const paths = document.getElementById('reading-paths');
  if (paths) {
    const fig = document.querySelector('article .rope-fig');
    out.landing = {figure: fig ? Math.round(fig.getBoundingClientRect().top + window.scrollY) : null,
                   paths: Math.round(paths.getBoundingClientRect().top + window.scrollY)};
  }
  // inline formulas that are tab stops (book.js: only one really wider than its room scrolls)
  out.inlineTabStops = document.querySelectorAll('article span.math[tabindex]').length;
  out.mathErrors = [...document.querySelectorAll('mjx-merror, .katex-error')].map(e => e.textContent.slice(0, 60));
  // the page itself never scrolls sideways
  const docWidth = document.documentElement.scrollWidth;
  out.pageWide = docWidth > vw + 0.5 ? [`the page is ${docWidth} px wide in a ${vw} px window`] : [];
  // verdict lines and text outputs wrap at the column's width (or fit): none is cut
  out.cutOutputs = [];
  for (const pre of document.querySelectorAll('article .cell_output pre')) {
    if (pre.clientWidth > 0 && pre.scrollWidth > pre.clientWidth + 1) {
      const line = pre.innerText.split('\n').reduce((a, b) => (b.length > a.length ? b : a), '');
      out.cutOutputs.push(`${pre.scrollWidth - pre.clientWidth} px cut: ${line.slice(0, 70)}`);
    }
  }
  // a display formula cut at its box's edge scrolls there with a cue (book.css: edge shadows)
  out.noCue = [];
  out.cutFormulas = 0;
  for (const box of document.querySelectorAll('article div.math > mjx-container, article div.math > .rope-katex')) {
    if (box.scrollWidth <= box.clientWidth + 1) continue;
    out.cutFormulas += 1;
    const s = getComputedStyle(box);
    if (!box.classList.contains('rope-scrolls') || (s.backgroundImage.match(/gradient/g) || []).length < 4)
      out.noCue.push(`${box.parentElement.id || box.textContent.trim().slice(0, 40)}: ${box.scrollWidth} px in ${box.clientWidth} px, no cue at the edge`);
  }
  return out;
}"""

_AXE_JS = """async (only) => {
  const options = {resultTypes: ['violations']};
  if (only) options.runOnly = {type: 'rule', values: only};
  const r = await axe.run(document, options);
  return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => {
      const n = v.nodes[0], d = (n.any[0] || {}).data || {};
      const colours = d.fgColor ? ` (${d.fgColor} on ${d.bgColor}: ${d.contrastRatio}:1)` : '';
      return `${v.id} (${v.impact}): ${v.nodes.length} node(s), e.g. ${n.target.join(' ')}${colours}`;
    });
}"""

# Which element has focus: inside a figure, a same-page link whose target holds one, or other.
_FOCUS_JS = """() => {
  const a = document.activeElement;
  if (!a || a === document.body) return 'none';
  if (a.closest('.rope-fig')) return 'figure';
  if (a.tagName === 'A' && a.hash && a.pathname === location.pathname) {
    const t = document.getElementById(decodeURIComponent(a.hash.slice(1)));
    if (t && t.closest('.rope-fig')) return 'link';
  }
  return 'other';
}"""

_FOCUS_RING_JS = """() => {
  // the focused element (reached by keyboard, so :focus-visible applies)
  const c = document.activeElement;
  if (!c || !c.closest('.rope-fig')) return null;
  const s = getComputedStyle(c);
  let bg = 'rgba(0, 0, 0, 0)';
  for (let e = c.parentElement; e && /rgba\\(0, 0, 0, 0\\)|transparent/.test(bg); e = e.parentElement) bg = getComputedStyle(e).backgroundColor;
  if (/rgba\\(0, 0, 0, 0\\)|transparent/.test(bg)) bg = 'rgb(255, 255, 255)';
  return {style: s.outlineStyle, width: parseFloat(s.outlineWidth), color: s.outlineColor, background: bg};
}"""


def _rgb(css: str) -> tuple[float, float, float]:
    return tuple(float(v) for v in re.findall(r"[\d.]+", css)[:3])


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two CSS rgb() colours."""
    def lum(rgb):
        c = [v / 255 for v in rgb]
        c = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    la, lb = sorted((lum(_rgb(a)), lum(_rgb(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


class InFlight:
    """The requests of ``page`` that have started and not yet finished or failed."""

    def __init__(self, page) -> None:
        self.pending: set = set()
        page.on("request", lambda r: not r.url.startswith("data:") and self.pending.add(r))
        page.on("requestfinished", lambda r: self.pending.discard(r))
        page.on("requestfailed", lambda r: self.pending.discard(r))

    def wait_quiet(self, page, quiet_ms: int = 150, timeout_s: float = 30.0) -> None:
        """Wait until no request has been in flight for ``quiet_ms``. Playwright's "networkidle"
        waits 500 ms: a third of a second on every page the surveys open, with the browser idle
        (the sockets this server keeps open are not requests, so they do not hold this up)."""
        import time

        deadline = time.monotonic() + timeout_s
        since = None
        while time.monotonic() < deadline:
            page.wait_for_timeout(30)  # lets Playwright deliver the page's events
            if self.pending:
                since = None
            elif since is None:
                since = time.monotonic()
            elif time.monotonic() - since >= quiet_ms / 1000:
                return
        raise TimeoutError(f"requests still in flight after {timeout_s} s: {[r.url for r in self.pending][:5]}")


def _ready(page, network: InFlight) -> None:
    """Wait until math is typeset, every figure is mounted and nothing more is being loaded."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('.math')].every(e => e.querySelector('mjx-container, .katex'))"
        " && [...document.querySelectorAll('.rope-fig-static')].every(f => f.dataset.state || f.classList.contains('rope-fig-error'))",
        timeout=60_000,
    )
    network.wait_quiet(page)
    page.wait_for_timeout(200)


# book.js fits the page (fitPage: equations, plots, scrolling boxes) 200 ms after the window's last
# resize, and in the frame after the article changes size. The surveys count its runs to wait for
# it instead of a fixed 400 ms: fitPage is a global function, and both callers look it up by name.
_COUNT_FITS_JS = """() => {
  if (typeof window.fitPage !== 'function') return -1;
  if (!window.__ropeFitCount) {
    const fit = window.fitPage;
    window.__ropeFitCount = {n: 0};
    window.fitPage = function () { const out = fit.apply(this, arguments); window.__ropeFitCount.n++; return out; };
  }
  return window.__ropeFitCount.n;
}"""


# pydata-sphinx-theme makes a box that scrolls focusable (tabindex 0) 300 ms after the window's last
# resize (its addTabStopsToScrollableElements, debounced); the surveys wait until every box it looks
# at has the tab stop its overflow calls for.
_THEME_TAB_STOPS_JS = """() => [...document.querySelectorAll(
    'pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon, .pst-scrollable-table-container')]
  .every(e => e.tabIndex === (e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight ? 0 : -1))"""


def _refit(page, change) -> None:
    """Make ``change`` (a new viewport, folds opened) and wait until book.js has fitted the page
    again and two more frames have passed (a fit that changes the article's size is followed by
    another), until the theme's transitions have ended and its tab stops follow the new layout. A
    page without book.js, or a change that fits nothing, waits 400 ms, as before."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    before = page.evaluate(_COUNT_FITS_JS)
    change()
    fitted = False
    if before >= 0:
        try:
            page.wait_for_function("(n) => window.__ropeFitCount.n > n", arg=before, timeout=1_000)
            page.evaluate(figure_driver.TWO_FRAMES_JS)
            fitted = True
        except PlaywrightTimeout:
            pass
    if not fitted:
        page.wait_for_timeout(400)
    figure_driver.transitions_done(page)  # the sidebar slides in over 0.25 s on a laptop
    try:
        page.wait_for_function(_THEME_TAB_STOPS_JS, timeout=1_000)
    except PlaywrightTimeout:
        pass  # what is left is for axe to report


def _keys_to_first_figure(page) -> int | None:
    """Key presses (Tab, and Enter on a skip link to a figure) from the top of the page until focus
    is inside the first figure; None if not reached within 60 presses."""
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); }")
    presses = 0
    while presses < 60:
        page.keyboard.press("Tab")
        presses += 1
        where = page.evaluate(_FOCUS_JS)
        if where == "figure":
            return presses
        if where == "link":
            page.keyboard.press("Enter")
            presses += 1
            if page.evaluate(_FOCUS_JS) == "figure":
                return presses
    return None


# At 390 px the page lays itself out again: boxes that scroll sideways appear (formulas, tables,
# figures), and axe checks that each can be reached by keyboard (a fraction of its full run's time).
PHONE_AXE_RULES = ["scrollable-region-focusable"]


def _inspect_figures(page, report: dict, *, exercise: bool) -> None:
    """Record the page's maths and figures into ``report``; with ``exercise``, drive every figure
    as a reader would (the Chinese pages' figures are the same bundles as the English pages':
    there they must mount without error, which is checked, and are driven on the English page)."""
    report["math"] = page.locator(".math").count()
    if report["math"]:
        report["mjx"] = page.locator("mjx-container").count()
        report["raw_tex"] = page.evaluate(
            "() => [...document.querySelectorAll('.math')].filter(e => !e.querySelector('mjx-container')"
            " && e.tagName !== 'MJX-CONTAINER').length"
        )
    report["placeholders"] = page.locator(".rope-fig-static").count()
    if not report["placeholders"]:
        return
    if not exercise:
        broken = page.locator(".rope-fig-static.rope-fig-error").count()
        if broken:
            report["console"].append(f"{broken} figure(s) failed to mount")
        return
    hosts = page.locator(figure_driver.FIGURE_SELECTOR)
    report["figures"] = [figure_driver.exercise(page, hosts.nth(i), seed=i) for i in range(hosts.count())]
    report["duplicate_ids"] = page.evaluate(
        "() => { const ids = [...document.querySelectorAll('.rope-fig [id]')].map(e => e.id);"
        " return ids.filter((id, i) => ids.indexOf(id) !== i); }"
    )


#: The page whose first scaled plot the survey enlarges on a phone (:func:`_enlarge`).
ENLARGE_PAGE = "notebooks/04_relative_proof.html"


#: Opens every fold of a page (proofs, remarks, solutions, folded code and checks) as a reader's
#: click does, with no resize of the window: book.js must fit the page again by itself (a closed
#: fold lays its formulas out at another width).
# True once book.js has chosen each display equation's rendering for the width it has now (the
# one line where it fits, else the broken one): it does so a frame after a fold opens and 200 ms
# after a resize, later on a loaded machine, so the surveys wait for this rather than a fixed time.
_EQUATIONS_CHOSEN_JS = """() => [...document.querySelectorAll('div.math.rope-2way')].every(box => {
  const math = box.querySelector(':scope > mjx-container mjx-math');
  if (!math || !box.getClientRects().length || box.classList.contains('rope-narrow')) return true;
  const eqno = box.querySelector(':scope > .eqno');
  const room = box.clientWidth - (eqno ? eqno.getBoundingClientRect().width + 8 : 0);
  return math.getBoundingClientRect().width <= room + 1;
})"""


def _equations_chosen(page, timeout: int = 5_000) -> None:
    """Wait until book.js has fitted the display equations to the page as it is now; what still
    does not fit after ``timeout`` ms is left for the measures to report."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(_EQUATIONS_CHOSEN_JS, timeout=timeout)
    except PlaywrightTimeout:
        pass


_OPEN_FOLDS_JS = """() => {
  for (const e of document.querySelectorAll('.toggle-hidden')) e.classList.remove('toggle-hidden');
  for (const d of document.querySelectorAll('article details')) d.open = true;
}"""



#: What is wider than the column, with every fold open (test_reading.py): code lines wrap there
#: (book.js lineCode) and text outputs too, so a code or output box that still needs sideways
#: scrolling is cut. A table wider than its box scrolls in it and says so (book.js marks it
#: rope-scrolls, a tab stop, and fades its cut edge out: rope-more-right); one without is cut.
_COLUMN_JS = r"""() => {
  const cut = [], scrolling = [];
  for (const el of document.querySelectorAll(
      'article .cell_input pre, article .cell_output pre, article div.highlight pre, article .cell_output table')) {
    if (!el.getClientRects().length) continue;   // not shown (another edition's text, a closed tab)
    const box = el.tagName === 'TABLE' ? (el.closest('.rope-table') || el.closest('.cell_output')) : el;
    const over = Math.round(el.scrollWidth - box.clientWidth);
    if (over <= 1) continue;
    const line = el.innerText.split('\n').reduce((a, b) => (b.length > a.length ? b : a), '');
    const what = `${el.tagName === 'TABLE' ? 'table' : 'text'} ${over}px too wide: ${line.slice(0, 90)}`;
    const cued = box.classList.contains('rope-scrolls') && box.classList.contains('rope-more-right');
    (el.tagName === 'TABLE' && cued ? scrolling : cut).push(what);
  }
  return {cut, scrolling};
}"""

#: How many formulas a fold hides (a proof, a remark, a solution, folded code or checks).
_FOLDED_MATH_JS = """() => [...document.querySelectorAll('article .math')].filter(e => {
  if (e.closest('.toggle-hidden')) return true;
  for (let d = e.closest('details'); d; d = d.parentElement && d.parentElement.closest('details'))
    if (!d.open) return true;
  return false;
}).length"""


def _enlarge(page) -> dict | None:
    """Click the first scaled plot's cue to enlarge it; what opened, then Escape."""
    link = page.locator("figure.rope-plot.rope-plot-scaled a.rope-plot-enlarge").first
    if not link.count():
        return None
    url = page.url
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_timeout(300)
    out = page.evaluate("""() => {
      const v = document.querySelector('.rope-plot-viewer'), img = v && v.querySelector('img');
      return {dialog: !!v && v.getAttribute('role') === 'dialog', screen: innerWidth,
              shown: img ? img.getBoundingClientRect().width : 0, width: img ? parseFloat(img.style.width) : 0}; }""")
    out["same_page"] = page.url == url
    # a modal dialog: Tab and Shift+Tab never leave it
    inside = "() => !!document.activeElement && !!document.activeElement.closest('.rope-plot-viewer')"
    kept = []
    for key in ("Tab", "Tab", "Tab", "Shift+Tab", "Shift+Tab", "Shift+Tab"):
        page.keyboard.press(key)
        kept.append(page.evaluate(inside))
    out["focus_trapped"] = all(kept)
    page.keyboard.press("Escape")
    page.wait_for_timeout(100)
    out.update(page.evaluate("""() => ({closed: !document.querySelector('.rope-plot-viewer'),
      focus_back: !!document.activeElement && document.activeElement.matches('a.rope-plot-enlarge')})"""))
    return out


def survey(browser, site_url: str, pages: list[str], *, axe: bool = True) -> dict:
    """Open every page once and record what the tests here and test_book.py's page reports check.

    Each page opens at 1280 px in a fresh browser context (so the bytes it loads are a first
    visit's): its surfaces are measured, and on an English chapter page how it reads (first
    figure, length, verdicts, show-code bars: ``scripts/page_metrics.py``). On the same page at
    390 px the page lays itself out again (CSS media queries and the figures' resize observers)
    and is measured again. Back at 1280 px every figure is driven as a reader would
    (``figure_driver.exercise``), what is wider than the column measured with every fold open
    (there and on the phone), and the sidebar is collapsed and expanded
    (``navigation_checks.laptop_sidebar``). Then the page opens again on a phone with touch
    (:func:`_phone_visit`: its drawers, and its figures' fit as the page opens there). Console
    errors and failed requests are recorded throughout.

    Returns ``{"surfaces": {(view, page): measures}, "reports": {page: page report}}``.
    """
    host = urlparse(site_url).netloc
    surfaces: dict = {}
    reports: dict = {}
    for name in pages:
        context = browser.new_context(viewport={"width": VIEWPORTS["laptop"], "height": 900})
        page = context.new_page()
        loaded: dict[str, int] = {}
        foreign: list[str] = []
        report = {"console": [], "failed": [], "foreign": foreign, "math": 0, "mjx": 0, "figures": [],
                  "placeholders": 0}

        def route(r, request, foreign=foreign):
            if urlparse(request.url).netloc not in (host, ""):
                foreign.append(request.url)
                return r.abort()
            return r.continue_()

        def on_response(response, loaded=loaded, report=report):
            if response.status >= 400:
                report["failed"].append(f"{response.url} {response.status}")
            size = response.headers.get("content-length")
            if size is not None and not response.url.startswith("data:"):
                # by path: the survey's parts run on several workers, each with its own server
                loaded[urlparse(response.url).path] = int(size)

        requested: list[str] = []
        network = InFlight(page)
        page.route("**/*", route)
        page.on("response", on_response)
        page.on("request", lambda r, requested=requested: requested.append(r.url))
        page.on("console", lambda m, report=report: m.type == "error" and report["console"].append(m.text))
        page.on("pageerror", lambda e, report=report: report["console"].append(str(e)))
        page.on("requestfailed", lambda r, report=report: report["failed"].append(f"{r.url} {r.failure}"))
        reports[name] = report
        try:
            page.goto(f"{site_url}/{name}", wait_until="load", timeout=60_000)
            _ready(page, network)
        except Exception as exc:  # recorded, so that one page does not hide the others
            surfaces[("laptop", name)] = {"load_error": f"{type(exc).__name__}: {str(exc)[:300]}", "bytes": {}}
            report["console"].append(f"page could not be inspected: {exc}")
            context.close()
            continue
        laptop = page.evaluate(_MEASURE_JS)
        # a first visit's bytes as Chrome loads them on a fast connection: a lazy image more than
        # LAZY_MARGIN px below the first screen is not counted (chromium-headless-shell fetched
        # chapter 5's plot 1,782 px below it, which chromium left alone; with this rule both count
        # the same bytes on chapters 8-10, 2026-12)
        beyond = set(page.evaluate(_LAZY_BEYOND_JS, LAZY_MARGIN))
        laptop["bytes"] = {path: size for path, size in loaded.items() if path not in beyond}
        fit = {}
        if page.locator(".rope-fig-static").count():  # test_fig_fit.py: the figures as the page opens
            fit["laptop"] = figure_driver.measure_fit(page)
            fit["laptop requests"] = [u.split("?")[0] for u in requested if "/rope_figures/" in u]
        if re.fullmatch(r"notebooks/[^/]+\.html", name):  # how an English chapter page reads (issue 29)
            laptop["reading"] = page.evaluate(page_metrics.MEASURE_JS, READING_SCREEN)
        if axe:  # first, at the top of the page: later scrolling puts the sticky header over text
            page.add_script_tag(path=str(AXE_JS))
            laptop["axe"] = page.evaluate(_AXE_JS, None)
        if page.locator(figure_driver.FIGURE_SELECTOR).count():
            laptop["keys_to_figure"] = _keys_to_first_figure(page)
            laptop["focus_ring"] = page.evaluate(_FOCUS_RING_JS)
            page.evaluate("() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); }")
        _refit(page, lambda: page.set_viewport_size({"width": VIEWPORTS["phone"], "height": 800}))
        _equations_chosen(page)
        phone = page.evaluate(_MEASURE_JS)
        if fit:
            fit["laptop resized"] = figure_driver.measure_fit(page)
        if re.fullmatch(r"notebooks/[^/]+\.html", name):  # how it reads on a phone (issue 45)
            phone["reading"] = page.evaluate(page_metrics.MEASURE_JS, PHONE_SCREEN)
        if axe:
            phone["axe"] = page.evaluate(_AXE_JS, PHONE_AXE_RULES)
        if name == ENLARGE_PAGE:  # the cue to enlarge a plot opens it at full size over the page
            phone["enlarge"] = _enlarge(page)
        if re.fullmatch(r"notebooks/[^/]+\.html", name):  # the formulas and code in the folds too
            folded_math = page.evaluate(_FOLDED_MATH_JS)
            _refit(page, lambda: page.evaluate(_OPEN_FOLDS_JS))  # the article changes size
            _equations_chosen(page)
            # no formula in a fold: open, the page shows the formulas it shows now
            opened = page.evaluate(_MEASURE_JS, "math") if folded_math else phone
            phone["foldsOpen"] = {key: opened[key] for key in ("display", "inline", "wideMath", "wideInline")}
            report["columns"] = {"phone": page.evaluate(_COLUMN_JS)}
        laptop["foreign"] = list(foreign)
        report["fit"] = fit
        surfaces[("laptop", name)] = laptop
        surfaces[("phone", name)] = phone
        try:
            report_figures = page.locator(".rope-fig-static").count()
            if report_figures or "columns" in report:
                _refit(page, lambda: page.set_viewport_size({"width": VIEWPORTS["laptop"], "height": 900}))
            if report_figures:
                fit["laptop back"] = figure_driver.measure_fit(page)
            if "columns" in report:  # every fold still open
                report["columns"]["laptop"] = page.evaluate(_COLUMN_JS)
            _inspect_figures(page, report, exercise=not name.startswith("zh/"))
        except Exception as exc:
            report["console"].append(f"figures could not be driven ({report_figures}): {exc}")
        try:  # test_navigation.py: the sidebar beside the text (last: it collapses and expands it)
            page.set_viewport_size(navigation_checks.LAPTOP["viewport"])
            report["sidebar"] = navigation_checks.laptop_sidebar(page)
        except Exception as exc:
            report["console"].append(f"the sidebar could not be tried: {exc}")
        context.close()
        _phone_visit(browser, site_url, name, report)
    return {"surfaces": surfaces, "reports": reports}


#: What the second, touch visit of a page loads as an empty script: MathJax. Its formulas were
#: typeset and measured at both widths in the first visit; here they would only cost the time to
#: typeset them again (chapter 3: 7.3 CPU-s for the visit with them, 3.9 without, 2026-12), and
#: neither the drawers nor the figures' widths depend on them.
PHONE_VISIT_EMPTY = "**/_static/mathjax/**"


def _phone_visit(browser, site_url: str, name: str, report: dict) -> None:
    """The page opened on a phone (390 px, touch): its drawers tapped open and shut
    (test_navigation.py) and, on a page with figures, each figure's fit as the page opens there,
    after a resize to a laptop and back (test_fig_fit.py), formulas left untypeset
    (:data:`PHONE_VISIT_EMPTY`). Console errors go to ``report``."""
    context = browser.new_context(**navigation_checks.PHONE)
    context.route(PHONE_VISIT_EMPTY, lambda route: route.fulfill(
        status=200, content_type="text/javascript", body="/* not typeset in this visit */"))
    page = context.new_page()
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.on("console", lambda m: m.type == "error" and report["console"].append(f"on a phone: {m.text}"))
    page.on("pageerror", lambda e: report["console"].append(f"on a phone: {e}"))
    fit = report["fit"]
    try:
        page.goto(f"{site_url}/{name}", wait_until="load", timeout=60_000)
        report["drawers"] = navigation_checks.phone_drawers(page, name in navigation_checks.EVERY_WAY)
        if fit:
            page.wait_for_function(figure_driver.MOUNTED_JS, timeout=30_000)
            figure_driver.settle(page)
            fit["phone"] = figure_driver.measure_fit(page)
            fit["phone requests"] = [u.split("?")[0] for u in requested if "/rope_figures/" in u]
            for key, view in (("phone resized", navigation_checks.LAPTOP), ("phone back", navigation_checks.PHONE)):
                page.set_viewport_size(view["viewport"])
                figure_driver.settle(page)
                fit[key] = figure_driver.measure_fit(page)
    except Exception as exc:  # recorded: the tests that read the visit report what is missing
        report["console"].append(f"the page could not be tried on a phone: {type(exc).__name__}: {str(exc)[:300]}")
    finally:
        context.close()


@pytest.fixture(scope="session")
def surfaces(page_survey):
    """What every page measured at 1280 px and 390 px (conftest.page_survey: one visit per page)."""
    return page_survey["surfaces"]


def test_every_page_opens_with_math_and_figures_ready(surfaces):
    bad = _collect(surfaces, "load_error")
    assert not bad, bad


def test_chapter_pages_read_as_a_book(surfaces):
    """At 1280x800 every chapter page opens with its picture within 1.5 screens, is at most 20
    screens long, shows at most 3 verdict blocks and 5 show-code bars, and has no display
    equation, table or code block wider than its column (scripts/page_metrics.py prints these)."""
    reading = {name: r["reading"] for (view, name), r in surfaces.items() if view == "laptop" and "reading" in r}
    chapters = [f"notebooks/{nb.stem}.html" for nb in notebook_paths()]
    assert sorted(reading) == sorted(chapters), "not every chapter page was measured"
    bad = {}
    for name, m in reading.items():
        problems = []
        if m["first_figure"] is None or m["first_figure"] > FIRST_FIGURE_BY:
            problems.append(f"first figure at {m['first_figure']} screens (by {FIRST_FIGURE_BY})")
        if m["screens"] > MAX_SCREENS:
            problems.append(f"{m['screens']} screens long (at most {MAX_SCREENS})")
        if m["verdicts"] > MAX_VERDICTS:
            problems.append(f"{m['verdicts']} verdict blocks shown (at most {MAX_VERDICTS})")
        if m["show_code_bars"] > MAX_CODE_BARS:
            problems.append(f"{m['show_code_bars']} show-code bars (at most {MAX_CODE_BARS})")
        problems += [f"wider than its column: {w}" for w in m["wide"]]
        if problems:
            bad[name] = problems
    assert not bad, bad


def _collect(surfaces, key):
    return {f"{view} {name}": r[key] for (view, name), r in surfaces.items() if r.get(key)}


def test_figure_controls_on_screen(surfaces):
    """At 390 px and 1280 px every figure control and its label lie inside the viewport."""
    bad = _collect(surfaces, "controls")
    assert not bad, bad


def test_figure_text_readable(surfaces):
    """Text drawn in the figures is at least 10 px as shown, on a phone too."""
    bad = _collect(surfaces, "smallText")
    assert not bad, bad


def test_plots_fit_their_box_or_show_how_to_enlarge(surfaces):
    """No notebook plot is wider than its box (none is cut), on a phone too; one shown under 3/4
    of its size (its 10 pt text under 10 px) shows a link, 44 px to touch, to the image at full
    size (issue 45)."""
    bad = {**_collect(surfaces, "cutPlots"), **_collect(surfaces, "smallPlots")}
    assert not bad, bad
    assert sum(r.get("scaledPlots", 0) for (view, _), r in surfaces.items() if view == "phone"), \
        "no plot is scaled down on a phone: the cue to enlarge was not checked"


def test_a_plot_enlarges_over_the_page(surfaces):
    """On a phone the cue to enlarge a scaled plot shows it at its full size over the page (the
    reader stays on the page), panning inside the screen; Tab and Shift+Tab keep the focus in it
    (a modal dialog); Escape closes it and gives the focus back to the cue (book.js openPlot)."""
    got = surfaces[("phone", ENLARGE_PAGE)].get("enlarge")
    assert got and got["same_page"] and got["dialog"] and got["focus_trapped"], got
    assert got["shown"] >= 0.99 * got["width"] > got["screen"], got
    assert got["closed"] and got["focus_back"], got


def test_display_equations_on_one_line_where_they_fit(surfaces):
    """A display equation is broken at its relations only where its one line does not fit beside
    its number (book.js chooses between the two renderings, _ext/book_math.py)."""
    bad = _collect(surfaces, "stacked")
    assert not bad, bad


def test_landing_page_opens_with_its_figure_and_paths(surfaces):
    """The landing page shows its live figure on the first screen and its reading paths within
    two, at 1280x800 and at 390x844 (issue 45)."""
    screens = {"laptop": READING_SCREEN, "phone": PHONE_SCREEN}
    found = {view: r["landing"] for (view, name), r in surfaces.items() if name == "book/intro.html" and "landing" in r}
    assert sorted(found) == ["laptop", "phone"], found
    for view, at in found.items():
        assert at["figure"] is not None and at["figure"] < LANDING_FIGURE_BY * screens[view], (view, at)
        assert at["paths"] < LANDING_PATHS_BY * screens[view], (view, at)


#: Phone pages still longer than a sitting, and figures whose controls and drawing do not fit one
#: phone screen, on the pages of chapters other helpers are rewriting (issue 45, for the lead):
#: remove an entry when its page is fixed.
PHONE_LONG_KNOWN: dict[str, str] = {}
FIGURE_SPAN_KNOWN: dict[str, str] = {}


def test_phone_pages_within_a_sitting(surfaces):
    """At 390x844 a chapter page is at most 25 screens long (issue 45)."""
    reading = {name: r["reading"] for (view, name), r in surfaces.items() if view == "phone" and "reading" in r}
    assert reading, "no chapter page was measured on a phone"
    long = {name: m["screens"] for name, m in reading.items()
            if m["screens"] > MAX_PHONE_SCREENS and name not in PHONE_LONG_KNOWN}
    assert not long, f"phone pages over {MAX_PHONE_SCREENS} screens: {long}"


def test_phone_pages_open_with_their_picture(surfaces):
    """At 390x844 every chapter page's first figure or plot starts on its first screen (issue 45:
    five pages opened with a screen of text, chapter 9 page 2's picture 1.8 screens down)."""
    reading = {name: r["reading"] for (view, name), r in surfaces.items() if view == "phone" and "reading" in r}
    assert reading, "no chapter page was measured on a phone"
    late = {name: m["first_figure"] for name, m in reading.items()
            if m["first_figure"] is None or m["first_figure"] >= PHONE_PICTURE_BY}
    assert not late, f"phone pages whose first picture starts past {PHONE_SCREEN} px (in screens): {late}"


PHONE_HEADER = 56            # px: the article's sticky header on a phone


MIN_DRAWING_SHOWN = 2 / 3     # of a tall figure's drawing on screen with its controls at the top


def test_figure_controls_and_drawing_on_one_phone_screen(surfaces):
    """On a phone nothing of a figure stays on screen over its drawing (issue 45: sticky controls
    took 45 % of the screen and hid the tops of the plots), and a figure's controls and what they
    change are on screen together: the figure fits the screen under the page's header; or, a tall
    one, it shows its readouts between its controls and its drawing (readoutsAbove) within that
    screen, or shows at least two thirds of its drawing on the screen that starts at its controls."""
    spans = [(name, *span) for (view, name), r in surfaces.items() if view == "phone"
             for span in r.get("figureSpans", [])]
    assert spans, "no figure was measured on a phone"
    room = PHONE_SCREEN - PHONE_HEADER
    covering = [f"{name} {fig}: a part of the figure sticks over its drawing"
                for name, fig, *_, floats, _, _ in spans if floats]

    def together(px, above, top):
        return (px <= room or (above is not None and above <= room)
                or room - top >= MIN_DRAWING_SHOWN * (px - top))

    apart = [f"{name} {fig}: {px} px, controls {controls} px, drawing from {top} px, readouts above to {above} px; "
             f"room {room} px" for name, fig, px, controls, _, above, top in spans
             if not together(px, above, top) and fig not in FIGURE_SPAN_KNOWN]
    assert not covering + apart, covering + apart


def _in_folds(surfaces, key):
    return {f"{view} {name}, folds open": r["foldsOpen"][key] for (view, name), r in surfaces.items()
            if r.get("foldsOpen", {}).get(key)}


def test_display_math_never_clipped(surfaces):
    bad = _collect(surfaces, "display") | _in_folds(surfaces, "display")
    assert not bad, bad


def test_inline_math_inside_the_column(surfaces):
    bad = _collect(surfaces, "inline") | _in_folds(surfaces, "inline")
    assert not bad, bad


#: Display formulas still wider than a phone's column (they scroll in their box, with a cue), by
#: page: remove an entry when its formula is split (issue 45: the reader found them cut; the last
#: seventeen, derivations in rows and matrices in folds, fit since the narrow rendering breaks rows).
WIDE_MATH_KNOWN: dict[str, int] = {}


def test_formulas_fit_a_phone_column(surfaces):
    """At 390 px every display formula of a chapter page, in its folds too (proofs, remarks), fits
    its column once broken at its relations (book.js); none needs scrolling (issue 45: Lemma 3.2's
    aligned equations were cut with only a faint cue)."""
    measured = {name: r["foldsOpen"]["wideMath"] for (view, name), r in surfaces.items()
                if view == "phone" and "foldsOpen" in r}
    assert measured, "no chapter page was measured with its folds open"
    bad = {name: wide for name, wide in measured.items() if len(wide) > WIDE_MATH_KNOWN.get(name, 0)}
    assert not bad, bad


#: Inline formulas still wider than a phone's column with every fold open, by page: a part with
#: no relation or sign left to cut at (_ext/book_math.inline_parts).
WIDE_INLINE_KNOWN: dict[str, int] = {"notebooks/09_longer_contexts.html": 1}


def test_inline_formulas_fit_a_phone_column(surfaces):
    """At 390 px, with every fold open, an inline formula fits its paragraph's column: a long one
    wraps between its parts (issue 45: 64 formulas in proofs and solutions were cut, with no cue)."""
    measured = {name: r["foldsOpen"]["wideInline"] for (view, name), r in surfaces.items()
                if view == "phone" and "foldsOpen" in r}
    assert measured, "no chapter page was measured with its folds open"
    bad = {name: wide for name, wide in measured.items() if len(wide) > WIDE_INLINE_KNOWN.get(name, 0)}
    assert not bad, bad


MAX_INLINE_TAB_STOPS = 3   # inline formulas a keyboard stops at on a laptop page (issue 45: 275)


def test_inline_formulas_are_not_tab_stops(surfaces):
    """On a laptop an inline formula scrolls, and takes keyboard focus, only when it is really
    wider than its room, not for its italic letters' overhang."""
    bad = {name: r["inlineTabStops"] for (view, name), r in surfaces.items()
           if view == "laptop" and r.get("inlineTabStops", 0) > MAX_INLINE_TAB_STOPS}
    assert not bad, bad


def test_math_has_no_errors(surfaces):
    """Every formula is understood by the math renderer (no unknown command shown in red)."""
    bad = _collect(surfaces, "mathErrors")
    assert not bad, bad


def test_no_page_scrolls_sideways(surfaces):
    """At 390 px (and 1280 px) no page is wider than the window (issue 34)."""
    bad = _collect(surfaces, "pageWide")
    assert not bad, bad


def test_text_outputs_not_cut(surfaces):
    """Verdict lines and text outputs wrap at the column's width on a phone: none is cut."""
    bad = _collect(surfaces, "cutOutputs")
    assert not bad, bad


def test_cut_formulas_show_a_cue(surfaces):
    """A display formula wider than its box on a phone scrolls with a shadow at the cut edge."""
    if not sum(r.get("cutFormulas", 0) for (view, _), r in surfaces.items() if view == "phone"):
        pytest.skip("no formula is cut at 390 px: there is no cue to check")
    bad = _collect(surfaces, "noCue")
    assert not bad, bad


def test_no_serious_axe_violations(surfaces):
    if not AXE_JS.exists():
        message = f"axe-core is not installed in {NODE_TOOLS} (bash scripts/install_test_tools.sh)"
        if os.environ.get("CI"):
            pytest.fail(message + " and CI is set")
        pytest.skip(message)
    bad = _collect(surfaces, "axe")
    assert not bad, bad


def test_keyboard_reaches_each_chapter_figure_quickly(surfaces):
    counts = {name: r["keys_to_figure"] for (view, name), r in surfaces.items() if "keys_to_figure" in r}
    assert counts, "no page with a figure"
    bad = {k: v for k, v in counts.items() if v is None or v > MAX_KEYS_TO_FIGURE}
    assert not bad, f"key presses to the first figure (limit {MAX_KEYS_TO_FIGURE}): {bad}"


def test_focus_ring_contrast(surfaces):
    rings = {name: r["focus_ring"] for (view, name), r in surfaces.items() if r.get("focus_ring")}
    assert rings, "no page with a figure"
    for name, ring in rings.items():
        assert ring["style"] != "none" and ring["width"] >= 2, (name, ring)
        ratio = contrast(ring["color"], ring["background"])
        assert ratio >= MIN_FOCUS_CONTRAST, f"{name}: focus ring {ring['color']} on {ring['background']}: {ratio:.2f}:1"


def _visit_weights(surfaces) -> tuple[dict[str, int], dict[str, int]]:
    """Bytes of a first visit to each chapter page, and bytes each chapter page adds after the one
    before it (what the browser had not loaded yet: every URL counted once)."""
    chapters = [f"notebooks/{nb.stem}.html" for nb in notebook_paths()]
    loads = {c: surfaces[("laptop", c)]["bytes"] for c in chapters if ("laptop", c) in surfaces}
    chapters = [c for c in chapters if c in loads]
    first = {c: sum(b.values()) for c, b in loads.items()}
    second = {f"{a} -> {b}": sum(size for url, size in loads[b].items() if url not in loads[a])
              for a, b in zip(chapters, chapters[1:])}
    return first, second


# What the site loads today, as a guard against regressions (issue 21 started from 4.15 MB for a
# first visit): the theme's 1.5 MB icon script is gone, MathJax is cut to its components and reads
# MathML made at build time, the stylesheets keep only rules that can match, plots load lazily.
# First visits are 1.06-1.43 MB and second chapter pages add 0.11-0.43 MB (2026-11).
FIRST_VISIT_CEILING = 1_600_000
SECOND_VISIT_CEILING = 500_000


def test_page_weight_no_regression(surfaces):
    first, second = _visit_weights(surfaces)
    heavy = {k: v for k, v in first.items() if v > FIRST_VISIT_CEILING}
    assert not heavy, f"first visits over {FIRST_VISIT_CEILING} bytes: {heavy}"
    heavy = {k: v for k, v in second.items() if v > SECOND_VISIT_CEILING}
    assert not heavy, f"second visits adding over {SECOND_VISIT_CEILING} bytes: {heavy}"


def test_page_weight_budgets(surfaces):
    """First visit to a chapter page <= 1.5 MB; the next chapter after it adds <= 400 KB."""
    first, second = _visit_weights(surfaces)
    heavy = {k: v for k, v in first.items() if v > FIRST_VISIT_LIMIT}
    added = {k: v for k, v in second.items() if v > SECOND_VISIT_LIMIT}
    print(f"largest first visit {max(first.values())} bytes, largest second {max(second.values())} bytes")
    assert not heavy and not added, (
        f"first visits over {FIRST_VISIT_LIMIT} bytes: {heavy}; "
        f"second visits adding over {SECOND_VISIT_LIMIT} bytes: {added}"
    )


def test_no_request_to_another_host(surfaces):
    bad = _collect(surfaces, "foreign")
    assert not bad, bad
