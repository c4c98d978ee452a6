"""The book's own Sphinx extensions (_ext/book_math.py, book_css.py, book_icons.py, book_plots.py,
book_pages.py; issue 21 item 6, issue 35 item 2), on small inputs: stylesheet rules are cut only
where they cannot match, highlighting spans only where they change nothing, formulas become MathML
that MathJax's TeX input would have made, and the extensions' build-finished work runs in order."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
import book_css
import book_math
import book_pages
import book_plots

EXTENSIONS = ("book_math", "book_css", "book_icons", "book_plots", "book_pages")


def test_purge_keeps_what_can_match():
    css = (".a{x:1}.b{x:2}.a .b,.c{x:3}.d:not(.zz){x:4}:is(.zz,.a) p{x:5}"
           "@media (min-width:1px){.b{x:6}.a{x:7}}@font-face{font-family:f}@keyframes k{0%{x:0}}"
           ".e[data-x=\".zz\"]{x:8}.bs-tooltip-top{x:9}.sm\\:a{x:10}")
    out = book_css._purge_rules(css, {"a", "d", "e", "sm:a"}, ("bs-",))
    for kept in (".a{x:1}", ".d:not(.zz){x:4}", ":is(.zz,.a) p{x:5}", "@media (min-width:1px){.a{x:7}}",
                 "@font-face{font-family:f}", "@keyframes k{0%{x:0}}", '.e[data-x=".zz"]{x:8}',
                 ".bs-tooltip-top{x:9}", ".sm\\:a{x:10}"):
        assert kept in out, kept
    for cut in (".b{x:2}", ".a .b", ".b{x:6}"):
        assert cut not in out, cut
    assert ".c{x:3}" not in out and "{x:3}" not in out  # no selector of that rule can match


def test_purge_keeps_escaped_characters_readable():
    """tinycss2 reads ``"\\f02e"`` as the character itself: a stylesheet that says it is UTF-8 keeps
    it so (shorter), any other gets the escape back (it must read the same in any encoding)."""
    css = '.a:before{content:"\\f02e"}.b:before{content:"\\f02e a"}.c:before{content:"\\30 "}'
    assert book_css._purge_rules(css, {"a", "b", "c"}) == '.a:before{content:"\\f02e"}.b:before{content:"\\f02e a"}.c:before{content:"0"}'
    utf8 = '@charset "UTF-8";' + css
    assert book_css._purge_rules(utf8, {"a"}) == '@charset "UTF-8";.a:before{content:"\uf02e"}'
    with pytest.raises(ValueError, match="stylesheet not understood"):
        book_css._purge_rules(".a{x:1}.b", {"a", "b"})  # a selector with no block


def test_used_words_from_pages_and_script_strings(tmp_path):
    (tmp_path / "_static").mkdir()
    (tmp_path / "p.html").write_text('<div class="one two"></div><script>var k = "inline";</script>')
    (tmp_path / "_static" / "s.js").write_text('el.classList.add("shown"); x = `bs-${name}-auto`; ident_only;')
    used, prefixes = book_css._used_words(tmp_path)
    assert {"one", "two", "shown", "inline"} <= used and "ident_only" not in used
    assert "bs-" in prefixes


def test_plain_token_spans_are_unwrapped_losslessly(tmp_path):
    css = tmp_path / "pygments.css"
    css.write_text('html[data-theme="light"] .highlight { background: #fff; color: #080808 }\n'
                   'html[data-theme="light"] .highlight .n { color: #080808 } /* Name */\n'
                   'html[data-theme="light"] .highlight .o { color: #00622F } /* Operator */\n'
                   'html[data-theme="dark"] .highlight { background: #2b2b2b; color: #F8F8F2 }\n'
                   'html[data-theme="dark"] .highlight .n { color: #F8F8F2 } /* Name */\n'
                   'html[data-theme="dark"] .highlight .o { color: #ABE338 } /* Operator */\n')
    plain = book_pages._plain_token_classes(css)
    assert plain == {"n"}
    page = ('<p><span class="n">kept outside code</span></p><div class="highlight"><pre>'
            '<span class="n">x</span> <span class="o">=</span> <span class="n">y</span></pre></div>')
    out = book_pages._unwrap_plain_tokens(page, plain)
    assert out == ('<p><span class="n">kept outside code</span></p><div class="highlight"><pre>'
                   'x <span class="o">=</span> y</pre></div>')
    assert re.sub(r"<[^>]+>", "", out) == re.sub(r"<[^>]+>", "", page)


@pytest.mark.skipif(not book_math._MathML.available(), reason="quickjs (PyPI) or sphinx-mathjax-offline missing")
def test_tex_becomes_mathjax_mathml():
    inline = book_math._MathML.convert(r"\theta_i = b^{-2i/d}", False)
    assert inline.startswith("<math>") and "<msub><mi>&#x3B8;</mi><mi>i</mi></msub>" in inline
    block = book_math._MathML.convert(r"\left(\frac{a}{b}\right)\, \mathbb{R}^d", True)
    assert block.startswith('<math display="block">')
    assert 'data-mjx-texclass="INNER"' in block and 'mathvariant="double-struck"' in block
    with pytest.raises(ValueError, match="cannot typeset"):
        book_math._MathML.convert(r"\notamacro x", False)
    markup = ('<div class="math notranslate nohighlight" id="equation-e"><span class="eqno">(1.1)'
              '<a class="headerlink" href="#equation-e">#</a></span>\\[a &lt; b\\]</div>\n')
    out = book_math._with_mathml(markup, True, None)
    assert out.startswith('<div class="math rope-2way notranslate nohighlight" id="equation-e"><span class="eqno">(1.1)')
    assert '<math display="block"><mi>a</mi><mo>&lt;</mo><mi>b</mi></math><math display="block">' in out


def test_lazy_plots_state_their_size(tmp_path):
    images = tmp_path / "_images"
    images.mkdir()
    (images / "p.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="432pt" height="288pt"></svg>')
    page = tmp_path / "notebooks" / "c.html"
    page.parent.mkdir()
    html = ('<figure class="rope-plot align-default"><img alt="a plot" src="../_images/p.svg" />'
            '<figcaption>x</figcaption></figure><img alt="other" src="../_images/p.svg" />')
    out = book_plots._lazy_images(html, page)
    first, second = re.findall(r"<img [^>]*>", out)
    assert 'loading="lazy"' in first and 'width="576" height="384"' in first
    # the plot scales down to its column (book.css), with a link to the image at full size that
    # book.js shows once its text would be under 10 px (issue 45)
    assert 'style="width: 576px;"' in first and "min-width" not in out
    assert '<a class="rope-plot-enlarge" href="../_images/p.svg">Tap to enlarge</a>\n<figcaption>' in out
    assert out.count("rope-plot-enlarge") == 1 and 'loading="lazy"' in second
    assert book_plots._lazy_images(out, page) == out
    zh = book_plots._lazy_images('<html lang="zh-CN">' + html, page)
    assert ">点按放大</a>" in zh


@pytest.mark.parametrize("tex, lines", [
    (r"a + b = c \le d", ["a + b", r"\quad = c", r"\quad \le d"]),
    (r"\langle f(q, m), f(k, n)\rangle = g(m - n) \quad \text{for all } m, n",
     [r"\langle f(q, m), f(k, n)\rangle", r"\quad = g(m - n)", r"\quad \text{for all } m, n"]),
    (r"f\big(\{t : a \le t < b\}\big) = \left(x = 1\right)", [r"f\big(\{t : a \le t < b\}\big)", r"\quad = \left(x = 1\right)"]),
    (r"a \ge b \ge c", ["a", r"\quad \ge b", r"\quad \ge c"]),
])
def test_display_equations_break_at_their_top_level_relations(tex, lines):
    narrow = book_math.break_at_relations(tex)
    assert narrow == r"\begin{aligned}" + r"\\".join("&" + line for line in lines) + r"\end{aligned}"


def test_a_long_piece_breaks_again_before_its_top_level_signs():
    """Issue 45: a sum still wider than a phone's proof box after the break at its relation is cut
    again before a top-level + or − (never inside brackets, never a sign that starts a term)."""
    tex = (r"x\,e^{\mathrm{i}\alpha} = (x_0\cos\alpha - x_1\sin\alpha) + \mathrm{i}\,(x_0\sin\alpha + x_1\cos\alpha),")
    assert book_math.break_at_relations(tex) == (
        r"\begin{aligned}&x\,e^{\mathrm{i}\alpha}\\&\quad = (x_0\cos\alpha - x_1\sin\alpha)"
        r"\\&\qquad + \mathrm{i}\,(x_0\sin\alpha + x_1\cos\alpha),\end{aligned}")
    long_sum = " + ".join(f"a_{{{i}}} b_{{{i}}}" for i in range(12))
    parts = book_math._break_long(long_sum)
    assert len(parts) > 1 and " + ".join(p.lstrip("+ ") for p in parts) == long_sum
    assert all(book_math._weight(book_math._TOKEN.findall(p)) <= book_math._LONG_PIECE for p in parts)
    assert book_math._break_long(r"-a - (b + c)") == [r"-a - (b + c)"]   # short: left whole


def test_a_long_piece_with_no_top_level_sign_breaks_inside_its_brackets():
    r"""A piece whose + and − are all inside one pair of round brackets (a sum over pairs of a
    bracketed term, chapter 9's logit) is cut there, never inside \left( ... \right) or braces."""
    tex = r"\sum_{i=0}^{d/2-1} \big( u_i \cos \Delta\theta_i + v_i \sin \Delta\theta_i \big),"
    assert book_math._break_long(tex) == [r"\sum_{i=0}^{d/2-1} \big( u_i \cos \Delta\theta_i",
                                          r"+ v_i \sin \Delta\theta_i \big),"]
    long = " ".join(f"a_{i}" for i in range(14))
    for kept in (rf"\left({long} + b\right)", rf"{{{long} + b}}", rf"f\left[({long} + b)\right]"):
        assert book_math._break_long(kept) == [kept]


@pytest.mark.parametrize("tex, lines", [
    # a derivation: its left-hand side alone, each relation on a new indented line
    (r"\begin{aligned}f(x) &= a + b = c\\ &= d\end{aligned}.",
     ["f(x)", r"\quad = a + b", r"\quad = c", r"\quad = d."]),
    # Sphinx's wrapper round a formula with \\ is looked through; a row with its own left-hand side
    # starts a new statement; spacing before a row's relation goes
    ("\\begin{split}\\begin{aligned}\na &= b = c,\\\\\nx &\\le y\\\\\n&\\;= z\n\\end{aligned}\\end{split}",
     ["a", r"\quad = b", r"\quad = c,", "x", r"\quad \le y", r"\quad = z"]),
    # rows written with & and \\ at the top level, without aligned
    (r"a &= b = c\\ &= d", ["a", r"\quad = b", r"\quad = c", r"\quad = d"]),
    # a matrix's \\ made Sphinx wrap it: the relations outside the matrix break as usual
    (r"\begin{split}x = \begin{pmatrix} a \\ b \end{pmatrix} = y\end{split}",
     ["x", r"\quad = \begin{pmatrix} a \\ b \end{pmatrix}", r"\quad = y"]),
])
def test_a_derivation_in_rows_gets_a_narrow_rendering(tex, lines):
    """Issue 45: a derivation written on several lines (an aligned block) keeps its rows where they
    fit; for a narrow column each row is broken at its relations, as a one-line equation is."""
    assert book_math.narrow_rendering(tex) == r"\begin{aligned}" + r"\\".join("&" + line for line in lines) + r"\end{aligned}"


@pytest.mark.parametrize("tex", [r"\begin{aligned}a + b\\ &+ c\end{aligned}",  # no row breaks further
                                 r"\begin{align}\begin{aligned}a &= b\\ &= c\end{aligned}\end{align}", r"x + y"])
def test_rows_that_cannot_break_further_keep_one_rendering(tex):
    assert book_math.narrow_rendering(tex) is None


@pytest.mark.parametrize("tex", [r"x + y", r"\begin{aligned}a &= b\\ &= c\end{aligned}", r"a &= b", r"= b",
                                 r"\sum_{i=0}^{n} x_i"])
def test_equations_with_no_relation_or_broken_by_hand_have_one_rendering(tex):
    assert book_math.break_at_relations(tex) is None


def test_a_display_equation_with_relations_carries_both_renderings():
    if not book_math._MathML.available():
        pytest.skip("quickjs or MathJax's files are not installed")
    markup = ('<div class="math notranslate nohighlight" id="equation-e"><span class="eqno">(1.1)'
              '<a class="headerlink" href="#equation-e">#</a></span>\\[a = b + c\\]</div>\n')
    out = book_math._with_mathml(markup, True, None)
    assert out.startswith('<div class="math rope-2way notranslate nohighlight" id="equation-e">')
    one, broken = re.findall(r"<math display=\"block\">.*?</math>", out)
    assert "mtable" not in one and "mtable" in broken
    inline = book_math._with_mathml('<span class="math notranslate nohighlight">\\(a = b\\)</span>', False, None)
    assert inline.count("<math") == 1 and "rope-2way" not in inline


def test_navigation_fix_removes_only_the_hidden_duplicates(tmp_path):
    """The theme's header buttons (always hidden) go, the article's visible ones stay and are named;
    running the page fixes again changes nothing (tests/test_navigation.py checks the drawers)."""
    page = tmp_path / "p.html"
    page.write_text(
        '<div class="bd-header__inner">\n'
        '  <button class="pst-navbar-icon sidebar-toggle primary-toggle" aria-label="Site navigation">\n'
        '    <span class="fa-solid fa-bars"></span>\n  </button>\n'
        '    <button class="pst-navbar-icon sidebar-toggle secondary-toggle" aria-label="On this page">\n'
        '      <span class="fa-solid fa-outdent"></span>\n    </button>\n</div>\n'
        '<button class="sidebar-toggle primary-toggle btn btn-sm" title="Toggle primary sidebar">x</button>\n'
        '<button class="sidebar-toggle secondary-toggle btn btn-sm pst-navbar-icon" title="Toggle secondary sidebar">y</button>\n',
        encoding="utf-8",
    )
    book_pages._fix_pages(tmp_path)
    once = page.read_text(encoding="utf-8")
    assert "pst-navbar-icon sidebar-toggle" not in once
    assert once.count("primary-toggle") == 1 and once.count("secondary-toggle") == 1
    assert '<button class="sidebar-toggle primary-toggle btn btn-sm" aria-label="Site navigation"' in once
    assert '<button class="sidebar-toggle secondary-toggle btn btn-sm pst-navbar-icon" aria-label="On this page"' in once
    book_pages._fix_pages(tmp_path)
    assert page.read_text(encoding="utf-8") == once


def test_one_search_box_the_header_row_of_search_buttons_goes(tmp_path):
    """The page header holds only copies of the sidebar's search button: it is emptied and hidden
    (kept for the theme's scripts); the sidebar's button stays (issue 45)."""
    page = tmp_path / "p.html"
    page.write_text(
        '<header id="pst-header" class="bd-header navbar navbar-expand-lg bd-navbar d-print-none">\n'
        '<div class="navbar-persistent--container"><button class="btn search-button-field">S</button></div>\n'
        '<div class="navbar-persistent--mobile"><button class="btn search-button-field">S</button></div>\n'
        '</header>\n<div class="sidebar-primary-item"><button class="btn search-button-field">S</button></div>\n',
        encoding="utf-8")
    book_pages._fix_pages(tmp_path)
    once = page.read_text(encoding="utf-8")
    assert '<header id="pst-header" class="bd-header navbar navbar-expand-lg bd-navbar d-print-none" hidden></header>' in once
    assert once.count("search-button-field") == 1
    book_pages._fix_pages(tmp_path)
    assert page.read_text(encoding="utf-8") == once


def test_the_chinese_edition_names_its_buttons_in_chinese(tmp_path):
    """In the Chinese edition the names the fixes give are Chinese, and the search field's button
    is named by its visible text "搜索 Ctrl+K" (the theme's aria-label "搜索" left out part of it:
    axe label-content-name-mismatch)."""
    page = tmp_path / "p.html"
    page.write_text(
        '<button class="btn search-button-field search-button__button pst-js-only" title="搜索" aria-label="搜索">'
        '<span class="search-button__default-text">搜索</span><kbd>Ctrl</kbd>+<kbd>K</kbd></button>\n'
        '<li class="toctree-l1 has-children"><a class="reference internal" href="a.html">频率</a><details><summary>x</summary>\n'
        '<button class="sidebar-toggle primary-toggle btn btn-sm" title="t">x</button>\n'
        '<button class="sidebar-toggle secondary-toggle btn btn-sm pst-navbar-icon" title="t">y</button>\n'
        '<button onclick="window.print()" title="列印成 PDF">.pdf</button>\n'
        '<p class="last-updated">\n  最后更新于 2026 年 12 月 2 日.\n  <br/>\n</p>\n',
        encoding="utf-8",
    )
    book_pages._fix_pages(tmp_path, "zh_CN")
    out = page.read_text(encoding="utf-8")
    assert 'aria-label="搜索"' not in out and 'title="搜索"' in out
    assert '<summary aria-label="频率 的各页">' in out
    assert 'primary-toggle btn btn-sm" aria-label="站点导航"' in out
    assert 'pst-navbar-icon" aria-label="本页内容"' in out
    assert "Pages of" not in out and "Site navigation" not in out
    # mainland wording and punctuation over the theme's catalog (issue 42)
    assert 'title="打印为 PDF"' in out and "最后更新于 2026 年 12 月 2 日。" in out


def test_build_finished_work_runs_in_order(tmp_path):
    """The order of book_pages.py's docstring, in a real Sphinx application with the five extensions:
    static files, MathML cache, stylesheets put back, page fixes, lazy images, icon fonts (which read
    the fixed pages and the uncut stylesheets), stylesheets cut (which read the fixed pages)."""
    from sphinx.application import Sphinx

    (tmp_path / "conf.py").write_text(f"extensions = {list(EXTENSIONS)!r}\n", encoding="utf-8")
    (tmp_path / "index.rst").write_text("Title\n=====\n", encoding="utf-8")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
    app = Sphinx(str(tmp_path), str(tmp_path), str(tmp_path / "out"), str(tmp_path / "doctrees"), "html",
                 status=None, warning=None)
    listeners = sorted(app.events.listeners["build-finished"], key=lambda listener: listener.priority)
    ours = [f"{listener.handler.__module__}.{listener.handler.__name__}" for listener in listeners
            if listener.handler.__module__ in EXTENSIONS]
    assert ours == ["book_pages._copy_static", "book_math._save", "book_css._restore", "book_pages._finish",
                    "book_plots._finish", "book_icons._finish", "book_css._purge"]
    # all before reader_notebooks.py's (900), as when they were one handler at 900 registered before it
    assert max(listener.priority for listener in listeners if listener.handler.__module__ in EXTENSIONS) < 900


def test_a_long_inline_formula_breaks_at_its_relations():
    """MathJax never breaks a formula inside a line: a long inline one is written as one formula
    box per part, cut after its top-level relations (and a long part after its + and −, as TeX breaks), with
    spaces between where a phone's line may wrap; a short one stays one box."""
    assert book_math.inline_parts(r"\theta_i = b^{-2i/d}") == [r"\theta_i = b^{-2i/d}"]
    tex = r"\|R_m x\|^2 = (R_m x)^\top (R_m x) = x^\top x = \|x\|^2"
    assert book_math.inline_parts(tex) == [r"\|R_m x\|^2 =", r"(R_m x)^\top (R_m x) =", r"x^\top x =", r"\|x\|^2"]
    assert book_math.inline_parts(r"\langle a, b = c + d + e + f + g + h \rangle") == [
        r"\langle a, b = c + d + e + f + g + h \rangle"]  # its relation is inside brackets: no cut
    if book_math._MathML.available():
        markup = '<span class="math notranslate nohighlight">\\(' + tex.replace("&", "&amp;") + "\\)</span>"
        out = book_math._inline_with_mathml(markup, None)
        assert out.startswith('<span class="rope-math-run">') and out.count("<math") == 4, out
        assert "\\(" not in out and "</span> <span" in out


def test_a_formula_is_never_cut_inside_bars():
    """|h_{i+1} − h_i| is one unit, as a bracket is: the bar closes the bar that opened it (a
    phone showed "|h_{i+1} −" at a line's end and "h_i|" on the next, issue 45), and a bar after
    \\left or \\right belongs to that delimiter."""
    tex = r"\sum_i |h_{i+1} - h_i|\,|S_{i+1}| \le \max_i|h_{i+1} - h_i| \sum_j |S_j| + a + b + c + d + e + f"
    for parts in (book_math.inline_parts(tex), book_math._break_long(tex, 10)):
        assert len(parts) > 1, parts
        for part in parts:   # every part holds whole absolute values
            assert part.count("|") % 2 == 0, parts
    tex = r"\left|\sum_j S_j\right| \le \sum_i |h_{i+1} - h_i|\,|S_{i+1}| + |h_1 - h_0|\,|S_0| + x_1 + x_2"
    assert book_math.inline_parts(tex)[0] == r"\left|\sum_j S_j\right| \le"
    assert all(p.replace(r"\left|", "").replace(r"\right|", "").count("|") % 2 == 0
               for p in book_math._break_long(tex, 10))
