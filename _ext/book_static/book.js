// rope-edu: a box that scrolls sideways (a formula or a table wider than the column, on a phone)
// takes keyboard focus, so that arrow keys can scroll it. Served as _static/rope_book/book.js by
// _ext/book_pages.py.
const SCROLLERS = "span.math, div.math > mjx-container, .rope-table, figure.rope-plot";

// An inline formula's italic letters overhang its box by a pixel or two (book.css pads it); only a
// formula really wider than its room scrolls and becomes a tab stop (issue 45: 275 on chapter 3).
const INLINE_SLACK = 4;

function markScrollers() {
  for (const box of document.querySelectorAll(SCROLLERS)) {
    // an inline formula: its drawn formula against its box (its scrollWidth also counts the hidden
    // assistive MathML, a dozen pixels wider than what is drawn)
    const inner = box.matches("span.math") && box.querySelector("mjx-math");
    const scrolls = inner
      ? inner.getBoundingClientRect().width > box.getBoundingClientRect().width + INLINE_SLACK
      : box.scrollWidth > box.clientWidth + 1;
    if (scrolls && !box.hasAttribute("tabindex")) {
      box.tabIndex = 0;
      box.classList.add("rope-scrolls");
      if (box.matches(".rope-table")) {
        box.addEventListener("scroll", () => tableEnds(box), { passive: true });
        tableEnds(box);
      }
    } else if (!scrolls && box.classList.contains("rope-scrolls")) {
      box.removeAttribute("tabindex");
      box.classList.remove("rope-scrolls");
    }
  }
}

// A table wider than its box fades out at an edge where more of it lies (book.css): the fade goes
// once the reader has scrolled to that end.
function tableEnds(box) {
  box.classList.toggle("rope-more-left", box.scrollLeft > 1);
  box.classList.toggle("rope-more-right", box.scrollLeft + box.clientWidth < box.scrollWidth - 1);
}

// A notebook plot (figure.rope-plot, see rope_edu.plots) is drawn with 10 pt text at its display
// size and scales down to its column (book.css). Shown narrower than 3/4 of that size (a phone),
// its text is under 10 px: the figure then shows its link to the image at full size ("Tap to
// enlarge", written by _ext/book_plots.py: the image's own address, for a page without scripts),
// and a tap on the plot or the link shows it at full size over the page (openPlot).
const PLOT_MIN_SCALE = 0.75;

function fitPlots() {
  for (const figure of document.querySelectorAll("figure.rope-plot")) {
    const img = figure.querySelector("img"), link = figure.querySelector("a.rope-plot-enlarge");
    if (!img || !link) continue;
    // a 2x PNG and an SVG carry their display width in their style
    const width = parseFloat(img.style.width) || img.naturalWidth;
    const shown = img.getBoundingClientRect().width;
    figure.classList.toggle("rope-plot-scaled", width > 0 && shown > 0 && shown < PLOT_MIN_SCALE * width - 1);
    if (!img.ropeEnlarge) {
      img.ropeEnlarge = true;
      img.addEventListener("click", () => { if (figure.classList.contains("rope-plot-scaled")) openPlot(img, link, width); });
      link.addEventListener("click", (event) => { event.preventDefault(); openPlot(img, link, width); });
    }
  }
}

// The plot at its full size, over the page (the reader stays in the book): the picture pans inside
// the screen; Tab stays inside it; the close button or Escape closes it and gives the focus back to
// the plot's link.
function openPlot(img, link, width) {
  const zh = (document.documentElement.lang || "").toLowerCase().startsWith("zh");
  const viewer = document.createElement("div");
  viewer.className = "rope-plot-viewer";
  viewer.setAttribute("role", "dialog");
  viewer.setAttribute("aria-modal", "true");
  viewer.setAttribute("aria-label", img.alt || link.textContent);
  const close = document.createElement("button");
  close.type = "button";
  close.className = "rope-plot-close";
  close.textContent = zh ? "关闭" : "Close";
  const pane = document.createElement("div");
  pane.className = "rope-plot-pane";
  pane.tabIndex = 0;  // scrolled by the keyboard too
  const big = document.createElement("img");
  big.src = img.currentSrc || img.src;
  big.alt = img.alt;
  big.style.width = `${width}px`;
  pane.append(big);
  viewer.append(close, pane);
  document.body.append(viewer);
  document.documentElement.classList.add("rope-viewing");
  const shut = () => {
    viewer.remove();
    document.documentElement.classList.remove("rope-viewing");
    document.removeEventListener("keydown", onKey);
    link.focus();
  };
  // a modal dialog keeps the keyboard in it: Tab and Shift+Tab cycle between the close button and
  // the picture's pane
  const onKey = (event) => {
    if (event.key === "Escape") shut();
    else if (event.key === "Tab") {
      const stops = [close, pane], at = stops.indexOf(document.activeElement);
      event.preventDefault();
      stops[(at + (event.shiftKey ? stops.length - 1 : 1)) % stops.length].focus();
    }
  };
  close.addEventListener("click", shut);
  document.addEventListener("keydown", onKey);
  close.focus();
}

// A display equation with two renderings (div.math.rope-2way, _ext/book_math.py: the formula on
// one line, then broken at its relations) shows the one line where it fits beside its number, and
// the broken one only where it does not; again whenever the page is fitted again (below).
function chooseEquations() {
  for (const box of document.querySelectorAll("div.math.rope-2way")) {
    const [wide, narrow] = box.querySelectorAll(":scope > mjx-container");
    if (!wide || !narrow) continue;
    if (!box.classList.contains("rope-narrow")) {
      const math = wide.querySelector("mjx-math");
      if (math) box.dataset.wide = String(math.getBoundingClientRect().width);
    }
    const eqno = box.querySelector(":scope > .eqno");
    const room = box.clientWidth - (eqno ? eqno.getBoundingClientRect().width + 8 : 0);
    const need = Number(box.dataset.wide || 0);
    box.classList.toggle("rope-narrow", need > room + 1);
  }
}

function whenTypeset(f) {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(f);
  else f();
}

function fitPage() {
  chooseEquations();
  fitPlots();
  markScrollers();
}

window.addEventListener("load", () => {
  fitPlots();
  whenTypeset(fitPage);
  let pending = null;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(fitPage, 200);
  });
  // A fold opened or closed (a proof, a solution, a section's checks) lays out what it holds at
  // another width than before, with no resize of the window: an equation chosen, or an inline
  // formula judged, while its fold was closed was judged at the wrong width. The page is fitted
  // again whenever the article changes size, in the next frame (never inside the observer).
  const article = document.querySelector("article");
  if (article && typeof ResizeObserver !== "undefined") {
    let frame = 0;
    new ResizeObserver(() => {
      if (!frame) frame = requestAnimationFrame(() => { frame = 0; whenTypeset(fitPage); });
    }).observe(article);
  }
});

// Navigation drawers (issue 34). The page fixes of _ext/book_pages.py let the themes bind the ☰
// and on-this-page buttons (https://github.com/pydata/pydata-sphinx-theme/issues/2451); two
// things remain. sphinx-book-theme blurs the button on every click (to hide its tooltip), so the
// theme's drawer, which returns focus to what had it when it opened, returned it to nothing: here
// it goes back to the button that opened the drawer. On a wide screen the ☰ collapses the sidebar
// instead (no drawer): a keyboard reader keeps focus on it. aria-expanded says what is open.
const DRAWERS = [
  [".primary-toggle", "pst-primary-sidebar-modal", "pst-primary-sidebar"],
  [".secondary-toggle", "pst-secondary-sidebar-modal", "pst-secondary-sidebar"],
];
const WIDE = "(min-width: 992px)";   // sphinx-book-theme's collapsible-sidebar breakpoint

function syncExpanded() {
  for (const [selector, dialogId, sidebarId] of DRAWERS) {
    const button = document.querySelector(selector);
    const dialog = document.getElementById(dialogId);
    const sidebar = document.getElementById(sidebarId);
    if (!button || !dialog || !sidebar) continue;
    const wide = window.matchMedia(WIDE).matches && selector === ".primary-toggle";
    const open = dialog.open || (wide && !sidebar.classList.contains("pst-sidebar-hidden"));
    button.setAttribute("aria-expanded", String(open));
  }
}

function fixDrawers() {
  for (const [selector, dialogId] of DRAWERS) {
    const button = document.querySelector(selector);
    const dialog = document.getElementById(dialogId);
    if (!button || !dialog) continue;
    dialog.addEventListener("close", () => {
      button.focus();
      syncExpanded();
    });
  }
  // before the themes' own listeners on the button (capture, on the document)
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest(".primary-toggle, .secondary-toggle");
    if (!button) return;
    const byKeyboard = event.detail === 0;   // Enter or Space
    setTimeout(() => {
      const dialog = document.querySelector("dialog[open]");
      if (!dialog && byKeyboard) button.focus();
      syncExpanded();
    });
  }, true);
  syncExpanded();
}

// Verdict lines (rope_edu.verdicts: "checked: ...", wrapped at 74 characters, continued with four
// spaces) and other text outputs wrap at the column's width (book.css). Each verdict becomes one
// block that wraps where the column ends, with its continuation lines indented, instead of lines
// broken at 74 characters and again at a phone's width.
const VERDICT = "checked: ";

function reflowVerdicts() {
  for (const pre of document.querySelectorAll(".cell_output .output.stream pre")) {
    if (pre.querySelector("*:not(span:empty)") || !pre.textContent.includes(VERDICT)) continue;
    const blocks = [];
    for (const line of pre.textContent.replace(/\n$/, "").split("\n")) {
      const last = blocks[blocks.length - 1];
      if (last && last.verdict && line.startsWith("    ")) last.text += " " + line.trim();
      else blocks.push({ text: line, verdict: line.startsWith(VERDICT) });
    }
    pre.replaceChildren(...blocks.map(({ text, verdict }) => {
      const span = document.createElement("span");
      span.className = verdict ? "rope-verdict" : "rope-line";
      span.textContent = text;
      return span;
    }));
  }
}

// Code (issue 45): a code line wider than the column wraps there (book.css) instead of running off
// the screen. Each line becomes a box as wide as the column whose continuation is indented four
// columns past the line's own indentation, at most 12. The line breaks and leading spaces stay in
// the text, so the copy button copies the code unchanged. Pygments' spans are split where a token
// holds a line break.
function lineCode() {
  for (const pre of document.querySelectorAll(".bd-article div.highlight pre")) {
    if (pre.dataset.ropeLines || pre.closest(".cell_output")) continue;   // outputs: reflowVerdicts
    pre.dataset.ropeLines = "1";
    const lines = [[]];
    for (const node of Array.from(pre.childNodes)) {
      const text = node.textContent;
      if (!text.includes("\n")) { lines[lines.length - 1].push(node); continue; }
      text.split("\n").forEach((part, i) => {
        if (i > 0) lines.push([]);
        if (!part) return;
        const piece = node.nodeType === Node.TEXT_NODE ? document.createTextNode(part) : node.cloneNode(false);
        if (piece.nodeType !== Node.TEXT_NODE) piece.textContent = part;
        lines[lines.length - 1].push(piece);
      });
    }
    if (lines.length > 1 && !lines[lines.length - 1].length) lines.pop();   // the final line break
    pre.replaceChildren(...lines.flatMap((nodes, i) => {
      const span = document.createElement("span");
      span.className = "rope-code-line";
      // the leading spaces in a box of their own: on a phone it is at most 12 columns wide (a line
      // aligned under an open bracket 40 columns in would otherwise start past the column's end)
      let indent = "";
      while (nodes.length && /^ +/.test(nodes[0].textContent)) {
        const lead = /^ +/.exec(nodes[0].textContent)[0];
        indent += lead;
        if (lead.length === nodes[0].textContent.length) { nodes.shift(); continue; }
        const rest = nodes[0].nodeType === Node.TEXT_NODE ? document.createTextNode("") : nodes[0].cloneNode(false);
        rest.textContent = nodes[0].textContent.slice(lead.length);
        nodes[0] = rest;
        break;
      }
      if (indent) {
        const box = document.createElement("span");
        box.className = "rope-code-indent";
        box.textContent = indent;
        span.style.setProperty("--rope-indent", String(Math.min(indent.length, 12)));
        span.append(box);
      }
      span.append(...nodes);
      return i ? [document.createTextNode("\n"), span] : [span];
    }));
  }
}

document.addEventListener("DOMContentLoaded", () => {
  reflowVerdicts();
  lineCode();
  fixDrawers();
  window.addEventListener("resize", syncExpanded);
});
