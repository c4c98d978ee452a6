// rope-edu: a box that scrolls sideways (a formula or a table wider than the column, on a phone)
// takes keyboard focus, so that arrow keys can scroll it. Served as _static/rope_book/book.js by
// _ext/book_fixes.py.
const SCROLLERS = "span.math, div.math > mjx-container, div.math > .rope-katex, .rope-table";

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

function whenTypeset(f) {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(f);
  else f();
}

window.addEventListener("load", () => {
  whenTypeset(markScrollers);
  let pending = null;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(markScrollers, 200);
  });
});
