"""Page fixes: what the theme's pages need on phones, keyboards and screen readers, and less weight.

One place for every rewrite of the built pages that is not about formulas, icons' fonts, plots or
stylesheets (those are _ext/book_math.py, book_icons.py, book_plots.py and book_css.py); a new
fix of the theme's markup is one more ``(pattern, replacement)`` in :data:`_PAGE_FIXES`, with a
test in tests/test_book_fixes.py. This extension also serves ``_ext/book_static/`` as
``_static/rope_book/`` (``book.css``: display equations scroll inside their own box beside their
number, link colours with enough contrast inside theorem boxes, plots and tables on phones;
``book.js``: scrolling boxes take focus, the navigation drawers return focus to their buttons).

- **Duplicate inline scripts.** Sphinx 7.4 emits inline scripts that were registered with
  ``filename=None`` twice (once from the registry, once from the builder), so every page threw
  ``Identifier 'THEBE_JS_URL' has already been declared`` in the browser console. Normalising those
  entries to ``''`` lets Sphinx's own de-duplication see that they are the same script.
- **Lighter pages** (issue 21): scripts a page does not use are left out; highlighting spans
  drawn in the code block's own colour are unwrapped (:func:`_unwrap_plain_tokens`, a third of a
  chapter's HTML).
- **Accessibility** (axe-core, keyboard): buttons named by their visible text; bibliography
  entries are list items of their ``role="list"``; the navigation buttons on phones (issue 34).

The order of the build-finished work of the book's extensions (each ``priority=``; Sphinx runs
lower first; reader_notebooks.py follows at 900, reading_paths.py at 950):

====  =================  ============================================================
893   book_pages.py      copy ``_ext/book_static/`` to ``_static/rope_book/``
894   book_math.py       save the MathML made in this build
895   book_css.py        put back the theme's stylesheets as shipped (a build that did
                         not copy them again finds the ones cut last time)
896   book_pages.py      the page fixes
897   book_plots.py      lazy images with their size
898   book_icons.py      Font Awesome subsets (reads the fixed pages and uncut stylesheets;
                         drops the theme's rules for unused icons)
899   book_css.py        cut the stylesheets to the rules that can match (reads the fixed
                         pages and the scripts)
====  =================  ============================================================
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.builders.html._assets import _JavaScript
from rope_edu.i18n import is_chinese

FOLDER = "rope_book"
STATIC = Path(__file__).with_name("book_static")


def _dedupe_inline_scripts(app: Sphinx, env) -> None:
    builder = app.builder
    files = getattr(builder, "_js_files", None)
    if files is None:
        return
    seen: list[_JavaScript] = []
    for js in files:
        if js.filename is None:
            js = _JavaScript("", priority=js.priority, **js.attributes)
        if js not in seen:
            seen.append(js)
    files[:] = seen
    app.registry.js_files = [
        ("" if name is None else name, attrs) for name, attrs in app.registry.js_files
    ]


def _add_assets(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    app.add_css_file(f"{FOLDER}/book.css")
    app.add_js_file(f"{FOLDER}/book.js", loading_method="defer")


# --- code: highlighting spans that change nothing -------------------------------------------------
#
# Pygments wraps every token of a code cell in a <span class="...">, even names and punctuation,
# which the site's styles (light and dark) draw in the code block's own colour: a third of a
# chapter's bytes. Those spans are unwrapped; spans whose class is drawn differently stay.


def _plain_token_classes(pygments_css: Path) -> set[str]:
    """Token classes drawn exactly like the code block around them, in every theme."""
    text = pygments_css.read_text(encoding="utf-8")
    base = dict(re.findall(r'html\[data-theme="(\w+)"\] \.highlight \{[^}]*?color: (#[0-9A-Fa-f]+)', text))
    styles: dict[str, dict[str, str]] = {}
    for theme, cls, body in re.findall(r'html\[data-theme="(\w+)"\] \.highlight \.([A-Za-z0-9]+) \{([^}]*)\}', text):
        styles.setdefault(cls, {})[theme] = body.strip()
    return {cls for cls, by_theme in styles.items()
            if base and set(by_theme) == set(base) and all(body == f"color: {base[t]}" for t, body in by_theme.items())}



_CODE_BLOCK = re.compile(r'(<div class="highlight[^"]*"><pre>)(.*?)(</pre></div>)', re.S)


def _unwrap_plain_tokens(text: str, plain: set[str]) -> str:
    if not plain:
        return text
    span = re.compile(r'<span class="(?:%s)">([^<]*)</span>' % "|".join(sorted(map(re.escape, plain))))
    return _CODE_BLOCK.sub(lambda m: m.group(1) + span.sub(r"\1", m.group(2)) + m.group(3), text)


# --- pages ---------------------------------------------------------------------------------------

# Regular expressions over the page's text, not an lxml tree (lxml is not installed; BeautifulSoup
# re-serialises every page and changes bytes the fixes do not touch): each fix matches the theme's
# markup exactly as the pinned pydata-sphinx-theme writes it, and tests/test_book_fixes.py fails
# when an upgrade changes that markup.
_PAGE_FIXES = [
    # the 1.5 MB icon script: the stylesheet draws the same icons from the (subset) web fonts
    (re.compile(r'<script[^>]*scripts/fontawesome\.js[^>]*></script>\s*'), ""),
    # Sphinx's search index (115 KB) and tools, loaded on every page for the theme's search-as-you-
    # type, which is off: the search dialog submits to search.html, which loads them itself
    (re.compile(r'<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)[^"]*"></script>\s*'), ""),
    # one search box (issue 45): the page header is a row holding only a second copy of the
    # sidebar's search button (and a third for phones, whose article header has its own); it is
    # kept, empty and hidden, for the theme's scripts that look it up
    (re.compile(r'(<header id="pst-header" class="bd-header[^"]*")>.*?</header>', re.S), r"\1 hidden></header>"),
    # the search field's button shows "Search Ctrl+K" ("搜索 Ctrl+K"): let that visible text name
    # it (axe label-content-name-mismatch, in either language)
    (re.compile(r'(<button class="btn search-button-field[^>]*?) aria-label="[^"]*"'), r"\1"),
    # a hidden cell's toggle shows "Show code cell source": let that visible text name it
    (re.compile(r'<summary aria-label="Toggle hidden content">'), "<summary>"),
    # the sidebar's toggle of a chapter with several pages: name it by the chapter (axe summary-name)
    (re.compile(r'(<li class="toctree-l1 (?:current active )?has-children"><a class="(?:current )?reference internal" href="[^"]*">([^<]*)</a><details(?: open="open")?>)<summary>'),
     r'\1<summary aria-label="{pages_of}">'),
    # a role="list" may only hold list items
    (re.compile(r'(<div class="citation" id="[^"]*") role="doc-biblioentry"'), r'\1 role="listitem"'),
    # Navigation on phones (issue 34): pydata-sphinx-theme 0.17 puts its own ☰ and on-this-page
    # buttons in the page header, which sphinx-book-theme always hides (it shows its own in the
    # article header), and binds the drawers to the first `.primary-toggle` / `.secondary-toggle`
    # of the page: the hidden ones, so the visible buttons opened nothing
    # (https://github.com/pydata/pydata-sphinx-theme/issues/2451,
    # https://github.com/executablebooks/sphinx-book-theme/issues/988). Without the hidden
    # duplicates both themes' handlers find the visible buttons; book.js returns focus to them.
    (re.compile(r'<button class="pst-navbar-icon sidebar-toggle (?:primary|secondary)-toggle"[^>]*>\s*'
                r'<span class="fa-solid fa-[a-z-]+"></span>\s*</button>\s*'), ""),
    # the visible buttons are named by their tooltip alone ("Toggle primary sidebar"): name them as
    # the theme named the hidden ones
    (re.compile(r'(<button class="sidebar-toggle primary-toggle btn btn-sm")(?! aria-label)'), r'\1 aria-label="{site_navigation}"'),
    (re.compile(r'(<button class="sidebar-toggle secondary-toggle btn btn-sm pst-navbar-icon")(?! aria-label)'), r'\1 aria-label="{on_this_page}"'),
]

# The names the fixes above give, per edition ({label} in a replacement; \2 is the chapter's title).
_LABELS = {
    "en": {"pages_of": r"Pages of \2", "site_navigation": "Site navigation", "on_this_page": "On this page"},
    "zh": {"pages_of": r"\2 的各页", "site_navigation": "站点导航", "on_this_page": "本页内容"},
}


# The themes' own names and tooltips that their Chinese catalogs lack (sphinx-book-theme,
# pydata-sphinx-theme, Sphinx's headerlinks), in the Chinese edition.
_ZH_ATTRIBUTES = {
    "Link to this heading": "链接到此标题", "Link to this term": "链接到此术语",
    "Link to this image": "链接到此图片", "Link to this equation": "链接到此公式",
    "Toggle primary sidebar": "显示或隐藏主侧边栏", "Toggle secondary sidebar": "显示或隐藏本页目录",
    "System Settings": "跟随系统", "Color mode": "配色模式", "Light": "浅色", "Dark": "深色",
    "Search this book...": "搜索本书……", "Main": "主导航", "Page": "本页",
    "Launch interactive content": "启动交互式内容", "Launch on Colab": "在 Colab 中打开",
    "Launch on Binder": "在 Binder 中打开", "Colab logo": "Colab 标志", "Binder logo": "Binder 标志",
    "Download this page": "下载本页", "Download source file": "下载源文件", "Download notebook file": "下载笔记本文件",
    "Print to PDF": "打印为 PDF", "Fullscreen mode": "全屏模式", "Edit this page": "编辑本页",
    "列印成 PDF": "打印为 PDF",   # sphinx-book-theme's zh_CN catalog has the Taiwanese wording
}
#: The themes' visible Chinese text, as mainland typography writes it: the footer's date sentence ends
#: with "。", not ".".
_ZH_TEXTS = [(re.compile(r"(最后更新于 [^<]*?日)\."), r"\1。")]
_ZH_ATTRIBUTE = re.compile(r'\b(aria-label|title|placeholder|data-bs-title|alt)="(%s)"'
                           % "|".join(sorted(map(re.escape, _ZH_ATTRIBUTES), key=len, reverse=True)))


def _fixes(language: str | None) -> list[tuple[re.Pattern, str]]:
    """:data:`_PAGE_FIXES` with the names of the edition in ``language`` ("en", "zh_CN", ...)."""
    zh = is_chinese(language)
    labels = _LABELS["zh" if zh else "en"]
    fixes = [(pattern, replacement.format(**labels) if "{" in replacement else replacement)
             for pattern, replacement in _PAGE_FIXES]
    if zh:
        fixes.append((_ZH_ATTRIBUTE, lambda m: f'{m.group(1)}="{_ZH_ATTRIBUTES[m.group(2)]}"'))
        fixes += _ZH_TEXTS
    return fixes


def _fix_pages(outdir: Path, language: str | None = None) -> None:
    pygments_css = outdir / "_static" / "pygments.css"
    plain = _plain_token_classes(pygments_css) if pygments_css.exists() else set()
    for page in outdir.rglob("*.html"):
        if "_static" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        fixed = text
        for pattern, replacement in _fixes(language):
            if page.name == "search.html" and "searchindex" in pattern.pattern:
                continue  # the search page itself needs the index
            fixed = pattern.sub(replacement, fixed)
        fixed = _unwrap_plain_tokens(fixed, plain)
        # the launch menu's logos (Colab, Binder) show only when the menu opens
        fixed = re.sub(r'(<img [^>]*?src="[^"]*_static/images/logo_[a-z]+\.(?:png|svg)")(?![^>]*loading=)',
                       r'\1 loading="lazy"', fixed)
        if 'class="sd-tab-set' not in fixed:  # sphinx-design's tab script, on a page without tabs
            fixed = re.sub(r'<script[^>]*_static/design-tabs\.js[^>]*></script>\s*', "", fixed)
        if "thebe-launch-button" not in fixed:  # thebe is off (launch_buttons.thebe: false)
            fixed = re.sub(r'<script[^>]*_static/sphinx-thebe\.js[^>]*></script>\s*', "", fixed)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def _copy_static(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / "_static" / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    for path in STATIC.iterdir():
        shutil.copyfile(path, out / path.name)


def _finish(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        _fix_pages(Path(app.outdir), app.config.language)


def setup(app: Sphinx) -> dict:
    app.connect("env-updated", _dedupe_inline_scripts)
    app.connect("builder-inited", _add_assets, priority=901)  # after icons.css (book_icons.py, 900)
    # after pydata-sphinx-theme writes its light and dark pygments.css (build-finished, priority 500);
    # the order of all the build-finished work: this module's docstring
    app.connect("build-finished", _copy_static, priority=893)
    app.connect("build-finished", _finish, priority=896)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
