// rope-edu: a box that scrolls sideways (a formula or a table wider than the column, on a phone)
// takes keyboard focus, so that arrow keys can scroll it. Served as _static/rope_book/book.js by
// _ext/book_fixes.py.
const SCROLLERS = "span.math, div.math > mjx-container, div.math > .rope-katex, .rope-table, figure.rope-plot";

function markScrollers() {
  for (const box of document.querySelectorAll(SCROLLERS)) {
    const scrolls = box.scrollWidth > box.clientWidth + 1;
    if (scrolls && !box.hasAttribute("tabindex")) {
      box.tabIndex = 0;
      box.classList.add("rope-scrolls");
    } else if (!scrolls && box.classList.contains("rope-scrolls")) {
      box.removeAttribute("tabindex");
      box.classList.remove("rope-scrolls");
    }
  }
}

// A notebook plot (figure.rope-plot, see rope_edu.plots) is drawn with 10 pt text at its display
// size; shown narrower than 3/4 of that (a phone), its text would fall under 10 px. It keeps that
// width instead, and its figure scrolls sideways (focusable, like the boxes above).
const PLOT_MIN_SCALE = 0.75;

function keepPlotsReadable() {
  for (const img of document.querySelectorAll("figure.rope-plot img")) {
    const set = () => {
      // a 2x PNG carries its display width in its style; an SVG's natural width is its display width
      const width = parseFloat(img.style.width) || img.naturalWidth;
      if (width > 0) img.style.minWidth = `${Math.ceil(width * PLOT_MIN_SCALE)}px`;
      markScrollers();
    };
    if (img.complete) set();
    else img.addEventListener("load", set, { once: true });
  }
}

function whenTypeset(f) {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(f);
  else f();
}

window.addEventListener("load", () => {
  keepPlotsReadable();
  whenTypeset(markScrollers);
  let pending = null;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(markScrollers, 200);
  });
});
