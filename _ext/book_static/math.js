// rope-edu: typeset the page's formulas with KaTeX (when the book is built with
// rope_math_renderer = "katex"; _ext/book_fixes.py serves this file and KaTeX from the site).
// Sphinx writes inline math as <span class="math">\(...\)</span> and display math as
// <div class="math">[<span class="eqno">...</span>]\[...\]</div>; the TeX is the element's text
// nodes. KaTeX writes each formula as HTML for the eye and MathML for screen readers.
function typesetMath() {
  for (const box of document.querySelectorAll("span.math, div.math")) {
    if (box.dataset.typeset) continue;
    const display = box.tagName === "DIV";
    const texts = [...box.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE);
    let tex = texts.map((n) => n.textContent).join("").trim();
    const [open, close] = display ? ["\\[", "\\]"] : ["\\(", "\\)"];
    if (tex.startsWith(open) && tex.endsWith(close)) tex = tex.slice(2, -2);
    const out = document.createElement(display ? "div" : "span");
    out.className = "rope-katex";
    katex.render(tex, out, { displayMode: display, throwOnError: false, strict: "ignore", output: "htmlAndMathml" });
    texts.forEach((n) => n.remove());
    box.appendChild(out);
    box.dataset.typeset = "1";
  }
}
typesetMath();
