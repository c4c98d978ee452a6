"""Two editions, one source: every page links to the same page in the other language.

The English site is ``_build/html``; the Chinese one, built from the same sources through the
gettext catalogs in ``locales/zh_CN`` (``scripts/i18n.py``), is ``_build/html/zh``. Each page
gets, in its static HTML (no JavaScript needed), ``<link rel="alternate" hreflang>`` for both
editions and a visible link to the other one above its title.

Sphinx internals this module replaces (written against Sphinx 7.4.7, what jupyter-book 1's
``Sphinx ~= 7.0`` installs here; recheck each on an upgrade):

- ``sphinx.transforms.i18n._NodeUpdater.update_pending_xrefs`` -> :func:`_update_pending_xrefs`
  (a translated message's cross-references matched with their anchors); skipped where the
  method does not exist.
- ``sphinx.search.zh.SearchChinese.init`` and ``.split`` -> wrappers in
  :func:`_index_terms_inside_terms` (the term table's words indexed inside longer words), and
  ``SearchChinese.js_splitter_code`` / ``sphinx.search.en.SearchEnglish.js_splitter_code``
  (the query splitter of each site's ``language_data.js``: :func:`search_code`).

sphinx-exercise's internals it replaces (written against sphinx-exercise 1.2.1):

- ``sphinx_exercise.post_transforms.resolve_solution_title`` -> :func:`_chinese_solution_titles`'s
  wrapper (a Chinese solution's title reads 练习 3.1 的解答, not 解答 练习 3.1: sphinx-exercise
  writes its translated "Solution to" before the link to the exercise); skipped where the function
  does not exist.
"""

from __future__ import annotations

import re
from html import escape, unescape
from pathlib import Path

from docutils import nodes
from docutils.transforms import Transform
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from output_words import table_cell, translate_paragraph, translate_printed, translate_text
from rope_edu.i18n import is_chinese

#: (hreflang, name shown to readers, folder under the English site)
EDITIONS = (("en", "English", ""), ("zh-CN", "中文", "zh/"))


def _edition(app: Sphinx) -> str:
    return "zh-CN" if is_chinese(app.config.language) else "en"


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if app.builder.format != "html":
        return
    mine = _edition(app)
    root = context.get("content_root", "")
    folder = dict((lang, sub) for lang, _, sub in EDITIONS)[mine]
    up = "../" * folder.count("/")          # from this edition's root to the English root
    base = (app.config.html_baseurl or "").rstrip("/")
    if folder and base.endswith("/" + folder.rstrip("/")):
        base = base[: -len(folder.rstrip("/")) - 1]
    page = f"{pagename}.html"
    links, switch = [], []
    for lang, name, sub in EDITIONS:
        href = f"{base}/{sub}{page}" if base else f"{root}{up}{sub}{page}"
        links.append(f'<link rel="alternate" hreflang="{lang}" href="{escape(href)}">')
        if lang != mine:
            local = f"{root}{up}{sub}{page}"
            label = "Read this page in English" if lang == "en" else ZH_LINK
            switch.append(f'<a class="rope-edition" href="{escape(local)}" hreflang="{lang}" lang="{lang}">{label}</a>')
    context["metatags"] = context.get("metatags", "") + "\n" + "\n".join(links)
    line = f'<p class="rope-editions" style="text-align: right; margin: 0">{" ".join(switch)}</p>\n'
    if pagename in GENERATED:
        # the search and index pages have no page body: their switcher goes in after the build
        app.rope_generated_switchers = {**getattr(app, "rope_generated_switchers", {}), pagename: line}
        return
    body = context.get("body", "")
    if mine == "zh-CN" and pagename == GLOSSARY:
        body = _with_terms(body, Path(app.srcdir) / TERMS)
    context["body"] = line + body


#: The pages Sphinx writes from its own templates, and where their switcher goes (before the first match).
GENERATED = {"search": '<div class="bd-search-container">', "genindex": '<h1 id="index">'}


def add_switcher(html: str, pagename: str, line: str) -> str:
    """A generated page's HTML (``search``, ``genindex``) with the switcher ``line`` before its heading."""
    anchor = GENERATED[pagename]
    if 'class="rope-editions"' in html or anchor not in html:
        return html
    return html.replace(anchor, line + anchor, 1)


def _switch_generated_pages(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for pagename, line in getattr(app, "rope_generated_switchers", {}).items():
        path = Path(app.outdir) / f"{pagename}.html"
        if path.is_file():
            path.write_text(add_switcher(path.read_text(encoding="utf-8"), pagename, line), encoding="utf-8")


#: The English pages' link to the Chinese edition ("this page in Chinese"), drawn with the site's own
#: Chinese font cut to its characters (:func:`_write_link_font`): on a machine without a Chinese font
#: it showed empty boxes. Its characters must be in that font (rope_edu.i18n.FONT, cut to the
#: figure catalog's characters; tests/test_editions.py checks).
ZH_LINK = "本页中文版"
LINK_FONT = "rope_editions"


def _add_link_font(app: Sphinx) -> None:
    if app.builder.format == "html" and _edition(app) == "en":
        app.add_css_file(f"{LINK_FONT}/zh-link.css")


def _write_link_font(app: Sphinx, exception: Exception | None) -> None:
    """``_static/rope_editions/zh-link.woff`` (the package's Chinese font, rope_edu.i18n.FONT, cut
    to the characters of :data:`ZH_LINK`, about 2 KB) and ``zh-link.css``, which draws the link
    with it (unicode-range: only its characters; every other keeps the theme's font)."""
    if exception is not None or app.builder.format != "html" or _edition(app) != "en":
        return
    from fontTools import subset
    from fontTools.ttLib import TTFont

    from rope_edu.i18n import FONT

    out = Path(app.outdir) / "_static" / LINK_FONT
    out.mkdir(parents=True, exist_ok=True)
    font = TTFont(str(FONT), recalcTimestamp=False)
    options = subset.Options()
    options.flavor = "woff"
    options.layout_features = []
    options.name_IDs = []
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=ZH_LINK)
    subsetter.subset(font)
    font.flavor = "woff"
    font.save(str(out / "zh-link.woff"))
    ranges = ", ".join(f"U+{ord(c):04X}" for c in sorted(set(ZH_LINK)))
    (out / "zh-link.css").write_text(
        f'@font-face {{ font-family: "RoPE zh link"; src: url("zh-link.woff") format("woff"); font-display: swap;\n'
        f"  unicode-range: {ranges}; }}\n"
        # first: after a generic family (the theme's list ends in one) Chromium draws empty boxes
        # rather than look further; unicode-range keeps every other character in the theme's font
        f'a.rope-edition[lang="zh-CN"] {{ font-family: "RoPE zh link", var(--pst-font-family-base, system-ui), sans-serif; }}\n',
        encoding="utf-8")


#: The Chinese glossary also shows the term table every translation follows (scripts/i18n.py check).
GLOSSARY = "book/glossary"
TERMS = Path("locales") / "zh_CN" / "terms.csv"


def terms_table(path: Path) -> str:
    """The term table (``locales/zh_CN/terms.csv``) as an HTML section: Chinese, English, other names
    in use (which the Chinese search also takes for the book's term), usage."""
    import csv

    with open(path, encoding="utf-8", newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: r["english"].lower())
    cells = "\n".join(
        f'<tr><td lang="zh-CN">{escape(r["chinese"])}</td><td lang="en">{escape(r["english"])}</td>'
        f'<td lang="zh-CN">{escape("、".join(variants(r)))}</td>'
        f'<td lang="zh-CN">{escape(r.get("note") or "")}</td></tr>' for r in rows)
    return (
        '<section id="terms-table" lang="zh-CN">\n<h2>术语对照表<a class="headerlink" href="#terms-table" title="链接到此标题">#</a></h2>\n'
        "<p>全书译文统一使用下表中的中文术语（由 <code>scripts/i18n.py check</code> 检查）。"
        "苏剑林的科学空间（kexue.fm）与 d2l-zh 用法一致时从之；两者不同之处在“说明”一栏注明。"
        "“也作”一栏是其他资料的常见写法，在本站搜索它们，与搜索本书的术语相同。</p>\n"
        '<div class="pst-scrollable-table-container"><table class="table">\n<caption>术语对照表：中文、英文、其他写法与用法说明</caption>\n'
        '<thead><tr><th scope="col">中文</th><th scope="col">English</th><th scope="col">也作</th><th scope="col">说明</th></tr></thead>\n'
        f"<tbody>\n{cells}\n</tbody></table></div>\n</section>\n")


def variants(row: dict) -> list[str]:
    """A term table row's other names in use (its "variants" cell, separated by "；")."""
    return [v.strip() for v in re.split(r"[；;]", row.get("variants") or "") if v.strip()]


def search_synonyms(path: Path) -> dict[str, str]:
    """What the Chinese search takes for the book's terms, from the term table: each row's other
    names (基数 -> 底数, 长度外推 -> 外推) and its English term, lower-cased (base -> 底数, token -> 词元)
    where the Chinese term is a word the index can hold (two characters or more: not 键 for key)."""
    import csv

    out: dict[str, str] = {}
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            zh = row["chinese"].strip()
            for name in variants(row):
                out[name.lower()] = zh
            if len(re.findall(r"[\u4e00-\u9fff]", zh)) >= 2:
                out.setdefault(row["english"].strip().lower(), zh)
    return out


def search_code(synonyms: dict[str, str] | None) -> str:
    """The code a site's language_data.js gets: the snippets without the edition switcher and, on
    the Chinese site (``synonyms`` given), its query splitter with ``synonyms`` (_ext/search/)."""
    import json

    code = (SEARCH_JS / "snippet.js").read_text(encoding="utf-8")
    if synonyms is None:
        return code
    split = (SEARCH_JS / "split_zh.js").read_text(encoding="utf-8")
    return split.replace("/*SYNONYMS*/{}", json.dumps(synonyms, ensure_ascii=False, sort_keys=True)) + "\n" + code


SEARCH_JS = Path(__file__).parent / "search"


def _with_terms(body: str, path: Path) -> str:
    if not path.is_file():
        return body
    table = terms_table(path)
    # before the end of the page's main section (the glossary's own)
    end = body.rfind("</section>")
    return body[:end] + table + body[end:] if end >= 0 else body + table


def _translate_captions(app: Sphinx, doctree) -> None:
    """The table of contents' part captions ("Getting started", "Chapters", ...) in this
    edition's language. Jupyter Book (sphinx-external-toc) puts the toctrees, with the captions
    from ``_toc.yml``, into the page after Sphinx's i18n has translated it, so their captions are
    translated here, from the same catalog (the page's), as Sphinx's own i18n would."""
    if _edition(app) == "en":
        return
    from sphinx import addnodes
    from sphinx.locale import init as init_locale
    from sphinx.util.i18n import docname_to_domain

    toctrees = [t for t in doctree.findall(addnodes.toctree) if t.get("caption")]
    if not toctrees:
        return
    domain = docname_to_domain(app.env.docname, app.config.gettext_compact)
    folders = [str(Path(app.srcdir) / folder) for folder in app.config.locale_dirs]
    catalog, found = init_locale(folders, app.config.language, domain)
    if not found:
        return
    for toctree in toctrees:
        toctree["caption"] = catalog.gettext(toctree["caption"])


def _update_pending_xrefs(self) -> None:
    """Sphinx's ``_NodeUpdater.update_pending_xrefs``, with the target's anchor in the key.

    A translated message's cross-references get their attributes from the English message's,
    matched by (domain, type, target). MyST puts a link's anchor in ``reftargetid``, not in the
    target, so when one paragraph links twice into the same page (``ch9.ipynb#pi`` and
    ``ch9.ipynb#yarn``), every translated link took the last one's anchor (Sphinx 7.4). Matching
    on the anchor too keeps each link's own."""
    from sphinx import addnodes
    from sphinx.locale import __
    from sphinx.transforms.i18n import EXCLUDED_PENDING_XREF_ATTRIBUTES

    old_xrefs = [*self.node.findall(addnodes.pending_xref)]
    new_xrefs = [*self.patch.findall(addnodes.pending_xref)]
    self.compare_references(old_xrefs, new_xrefs,
                            __("inconsistent term references in translated message."
                               " original: {0}, translated: {1}"))

    def key(node):
        if (node["refdomain"], node["reftype"]) == ("std", "term"):
            return None
        return node["refdomain"], node["reftype"], node["reftarget"], node.get("reftargetid")

    attributes = {k: old.attributes for old in old_xrefs if (k := key(old))}
    for new in new_xrefs:
        for name, value in attributes.get(key(new), {}).items():
            if name not in EXCLUDED_PENDING_XREF_ATTRIBUTES:
                new[name] = value


#: Punctuation that must not start a line (closing marks), and that must not end one (opening
#: marks), by edition: kept on the line of the inline formula beside it.
_CLOSING = {"zh-CN": "，。、；：！？）」』】》", "en": ",.;:!?)"}
_OPENING = {"zh-CN": "（「『【《", "en": "("}


def _keep_punctuation_with_maths(app: Sphinx, doctree, docname: str) -> None:
    """An inline formula and the closing punctuation right after it (``$x$，``, ``$x$,``), and an
    opening bracket right before it (``($n \\le m$``), go into one ``<span class="rope-nobr">``
    (``white-space: nowrap``): a browser may break the line beside MathJax's inline-block, and the
    comma would start the next line or the bracket end one (on a phone they did, in both editions)."""
    closing, opening = _CLOSING[_edition(app)], _OPENING[_edition(app)]
    for math in list(doctree.findall(nodes.math)):
        parent = math.parent
        if parent is None:
            continue
        i = parent.index(math)
        after = parent[i + 1] if i + 1 < len(parent) else None
        before = parent[i - 1] if i > 0 else None
        text = after.astext() if isinstance(after, nodes.Text) else ""
        n = len(text) - len(text.lstrip(closing))
        lead = before.astext() if isinstance(before, nodes.Text) else ""
        m = len(lead) - len(lead.rstrip(opening))
        if not n and not m:
            continue
        box = nodes.inline(classes=["rope-nobr"])
        # by index: a Text node is a str, and docutils' replace() and remove() take the first child
        # *equal* to it, another "。" earlier in the paragraph (which then moved to its end)
        parent[i] = box
        if m:
            box += nodes.Text(lead[-m:])
        box += math
        if n:
            box += nodes.Text(text[:n])
            if text[n:]:
                parent[i + 1] = nodes.Text(text[n:])
            else:
                del parent[i + 1]
        if m:
            if lead[:-m]:
                parent[i - 1] = nodes.Text(lead[:-m])
            else:
                del parent[i - 1]


#: The code cells' outputs' words (plot captions and alt texts, table captions, headers and cells): one
#: catalog for all pages, ``locales/<lang>/LC_MESSAGES/outputs.po`` (``scripts/i18n.py update``).
OUTPUTS = "outputs"

_TABLE_HTML = re.compile(r'<div class="rope-table".*?</table>', re.S)
_TABLE_TEXT = re.compile(r"(<summary\b[^>]*>|<caption>|<th\b[^>]*>|<td>)(.*?)(</summary>|</caption>|</th>|</td>)", re.S)


#: A number and its per cent sign with a space between (16.7 %), in a cell of numbers.
_SPACED_PERCENT = re.compile(r"(\d) %")


def translate_tables(text: str, messages: dict[str, str], tight_percent: bool = False) -> str:
    """``text`` (an output's HTML) with the folded lines, captions, column headers and cells of its
    ``rope_edu.table`` tables through ``messages`` (English -> translation): a caption or header as
    it is, a cell that holds words through its template (``output_words.table_cell``: the numbers
    stay this build's); a cell of numbers, and what no message matches, stay as they are, but for
    ``tight_percent`` (the Chinese edition: 16.7%, where the English writes 16.7 %)."""
    def one(m: re.Match) -> str:
        words = unescape(m.group(2)).strip()
        if m.group(1) == "<td>":
            shape = table_cell(words)
            said = translate_text(" ".join(words.split()), messages) if shape else None
            if not shape and tight_percent and _SPACED_PERCENT.search(words):
                said = _SPACED_PERCENT.sub(r"\1%", words)
        else:
            said = messages.get(words)
        return m.group(1) + escape(said, quote=False) + m.group(3) if said else m.group(0)

    return _TABLE_HTML.sub(lambda t: _TABLE_TEXT.sub(one, t.group(0)), text)


def output_catalog(app: Sphinx) -> tuple[Path | None, dict[str, str]]:
    """(path, English -> translation) of this edition's outputs catalog; (None, {}) in English."""
    if _edition(app) == "en":
        return None, {}
    from reader_words import catalog_messages

    for folder in app.config.locale_dirs:
        path = Path(app.srcdir) / folder / app.config.language / "LC_MESSAGES" / f"{OUTPUTS}.po"
        if path.is_file():
            key = (str(path), path.stat().st_mtime_ns)
            if _OUTPUT_CACHE.get("key") != key:
                _OUTPUT_CACHE.update(key=key, messages=catalog_messages(path))
            return path, _OUTPUT_CACHE["messages"]
    return None, {}


_OUTPUT_CACHE: dict = {}


class _OutputTexts(SphinxTransform):
    """In another edition: the words of the code cells' outputs through its outputs catalog. The
    plots' numbered figures (``_ext/book_plots.py``'s PlotFigures, priority 800) get their caption
    and alt text translated, the ``rope_edu.table`` tables (raw HTML) their caption, headers and cells, the
    lines a cell prints and the paragraphs it computes their templates' translations
    (``_ext/output_words.py``: the numbers stay this build's)."""

    default_priority = 810

    def apply(self, **kwargs) -> None:
        path, messages = output_catalog(self.app)
        if path is None:
            return
        found = False
        for figure in self.document.findall(nodes.figure):
            if "rope-plot" not in figure["classes"]:
                continue
            found = True
            for image in figure.findall(nodes.image):
                image["alt"] = messages.get(image.get("alt", ""), image.get("alt", ""))
            for caption in figure.findall(nodes.caption):
                text = caption.astext()
                if text in messages:
                    caption[:] = [nodes.Text(messages[text])]
                    caption.rawsource = messages[text]
        for raw in list(self.document.findall(nodes.raw)):
            if "html" in raw.get("format", "").split() and 'class="rope-table"' in raw.astext():
                found = True
                text = translate_tables(raw.astext(), messages, tight_percent=_edition(self.app) == "zh-CN")
                raw[:] = [nodes.Text(text)]
                raw.rawsource = text
        # what cells print (their verdicts: _ext/check_folds.py, through the same catalog) and the
        # paragraphs they compute (display(Markdown(...))), through the templates of output_words
        for block in list(self.document.findall(nodes.literal_block)):
            if "stream" not in block["classes"]:
                continue
            found = True
            text = translate_printed(block.astext(), messages)
            if text != block.astext():
                block[:] = [nodes.Text(text)]
                block.rawsource = text
        for output in self.document.findall(nodes.container):
            if output.get("nb_element") != "cell_code_output":
                continue
            for para in output.findall(nodes.paragraph):
                if all(isinstance(c, nodes.Text) for c in para.children) and para.children:
                    found = True
                    text, left = translate_paragraph(para.astext(), messages)
                    if text != " ".join(para.astext().split()):
                        para[:] = [nodes.Text(text)]
        if found:   # the page is read again when the catalog changes
            self.env.note_dependency(str(path))


class _KeepHeadingSlugs(Transform):
    """Before Sphinx's ``Locale`` transform: remember the page's MyST heading slugs.

    MyST records a page's heading anchors (``#dog-bites-man``) in ``env.metadata[doc]["myst_slugs"]``
    when it parses the page, and again, *replacing* them, whenever it parses a piece of MyST that
    holds a heading. Sphinx's ``Locale`` parses each translated heading as a title with an rST
    underline, which MyST reads as a setext heading: the page's record ends up with one translated
    heading's slug, so every link to another heading of a translated page (``page.ipynb#anchor``)
    no longer resolves, though the sections keep their English ids. This pair puts the record back.
    """

    default_priority = 19  # Locale is 20

    def apply(self, **kwargs) -> None:
        env = self.document.settings.env
        slugs = env.metadata.get(env.docname, {}).get("myst_slugs")
        self.document["rope_myst_slugs"] = dict(slugs) if slugs else None


class _TranslateFormulas(SphinxTransform):
    """Before Sphinx's ``Locale`` transform: a display formula whose translation differs from the
    English (Chinese words in its ``\\text{}``) takes the translation as it is.

    ``Locale`` prefixes a literal node's translation with rST's ``::`` and parses it; MyST, the
    parser here, reads ``::`` as a paragraph, so the formula became the two characters ``::`` (in 9
    formulas of 7 Chinese chapters). A formula is TeX, not markup: its text is replaced here and
    the node marked not translatable, so that ``Locale`` leaves it alone.
    """

    default_priority = 19  # Locale is 20

    def apply(self, **kwargs) -> None:
        from os import path

        from sphinx.locale import init as init_locale
        from sphinx.util.i18n import docname_to_domain

        if _edition(self.app) == "en":
            return
        domain = docname_to_domain(self.env.docname, self.config.gettext_compact)
        dirs = [path.join(self.env.srcdir, d) for d in self.config.locale_dirs]
        catalog, found = init_locale(dirs, self.config.language, domain)
        if not found:
            return
        for node in list(self.document.findall(nodes.math_block)):
            msg = node.rawsource or node.astext()
            translated = catalog.gettext(msg)
            if translated and translated != msg:
                node.children = [nodes.Text(translated)]
                node.rawsource = translated
            node["translatable"] = False


class _RestoreHeadingSlugs(Transform):
    """After Sphinx's ``Locale`` transform: the slugs :class:`_KeepHeadingSlugs` remembered."""

    default_priority = 21

    def apply(self, **kwargs) -> None:
        env = self.document.settings.env
        slugs = self.document.attributes.pop("rope_myst_slugs", None)
        if slugs:
            env.metadata[env.docname]["myst_slugs"] = slugs


#: A comment in a shell or Python code block: "#" after a space, not in the first column of a line
#: (a shell prompt's or a heading's).
_CODE_COMMENT = re.compile(r"\s#\s")


class _CodeComments(SphinxTransform):
    """A code block of a prose page (``book/*.md``, not a notebook) that holds a comment is a message
    of the page's catalog, so that its comment is translated ("make lab    # makes .venv/, ..." on the
    landing page). For the gettext builder (``scripts/i18n.py update``) it is marked ``translatable``
    (Sphinx extracts a literal block only then; ``gettext_additional_targets = ["literal-block"]``
    would make every code cell of every chapter a message). Sphinx's ``Locale`` would put the
    translation through the page's parser as ``::`` and an indented block, which MyST reads as a
    paragraph "::": in a translated edition the block's text is replaced here instead, from the same
    catalog, before ``Locale`` (priority 20)."""

    default_priority = 15

    def apply(self, **kwargs) -> None:
        if not str(self.env.doc2path(self.env.docname)).endswith(".md"):
            return
        blocks = [b for b in self.document.findall(nodes.literal_block) if _CODE_COMMENT.search(b.astext())]
        if not blocks:
            return
        if self.app.builder.name == "gettext":
            for block in blocks:
                block["translatable"] = True
            return
        if _edition(self.app) == "en":
            return
        from sphinx.locale import init as init_locale
        from sphinx.util.i18n import docname_to_domain

        domain = docname_to_domain(self.env.docname, self.config.gettext_compact)
        dirs = [str(Path(self.env.srcdir) / d) for d in self.config.locale_dirs]
        catalog, has_catalog = init_locale(dirs, self.config.language, domain)
        if not has_catalog:
            return
        for block in blocks:
            msg = block.rawsource or block.astext()
            said = catalog.gettext(msg)
            if said and said != msg:
                text = said.rstrip("\n")
                block[:] = [nodes.Text(text)]
                block.rawsource = text


class _LatinTerms(set):
    """The Latin words the Chinese indexer has seen: a set that Sphinx's ``split`` can ``extend``."""

    def extend(self, words) -> None:
        self.update(words)


def _index_terms_inside_terms() -> None:
    """Sphinx's Chinese search indexes the words jieba cuts the text into. With the term table as
    jieba's dictionary, 正弦位置编码 is one word, and ``cut_for_search`` adds only its two- and
    three-character parts (正弦, 位置, 编码): a search for 位置编码 missed a page that says only
    正弦位置编码. The page's words now also include each term of the dictionary found inside a
    longer word. The query side: each site's language_data.js gets :func:`search_code` (the Chinese
    one its query splitter, with the term table's synonyms from the ``terms`` search option)."""
    import os

    from sphinx.search import en, zh

    if getattr(zh.SearchChinese, "_rope_terms_inside", False):
        return
    init, split = zh.SearchChinese.init, zh.SearchChinese.split

    def init_with_terms(self, options: dict) -> None:
        init(self, options)
        # Sphinx 7.4 keeps the Latin words seen so far in a list shared by the class, and its stem()
        # asks whether each word is in it: a scan of every Latin word of the book per word, over a
        # quarter of the Chinese build. The same question, asked of a set of this indexer's own.
        self.latin_terms = _LatinTerms()
        path = options.get("dict")
        words = set()
        if path and os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                words = {line.split()[0] for line in f if line.strip()}
        self._rope_terms = sorted(words)
        # the query is cut as the index was (its words, the term table's synonyms): language_data.js
        terms = options.get("terms")
        self.js_splitter_code = search_code(search_synonyms(Path(terms)) if terms and os.path.isfile(terms) else {})

    def split_with_terms(self, text: str) -> list[str]:
        words = split(self, text)
        terms = getattr(self, "_rope_terms", ())
        return words + [t for w in words if len(w) > 3 for t in terms if t != w and t in w]

    zh.SearchChinese.init = init_with_terms
    en.SearchEnglish.js_splitter_code = search_code(None)
    zh.SearchChinese.split = split_with_terms
    zh.SearchChinese._rope_terms_inside = True


def _one_document(app: Sphinx, doctree) -> None:
    """Every node of a translated page belongs to the page's document. Sphinx parses each msgstr
    as a document of its own and moves its nodes into the page, where they keep pointing at that
    document, and through its settings at the whole build environment: each Chinese doctree
    pickled the environment (6 MB a page instead of 0.25 MB), and every build that numbers the
    figures unpickles every page's doctree."""
    for node in doctree.findall(include_self=False):
        if getattr(node, "_document", None) not in (None, doctree):
            node._document = doctree


def chinese_solution_title(title: nodes.title) -> str | None:
    """sphinx-exercise titles a solution with its word for "Solution to" (解答), then a link to the
    exercise (" 练习 3.1"): in Chinese that reads 解答 练习 3.1. Reorders ``title`` in place to the
    link first ("练习 3.1"), then " 的解答", and returns the new title text; None (``title`` left as
    it is) when it is not one word followed by one link (``solution_follow_exercise``'s plain 解答)."""
    if len(title.children) != 2 or not isinstance(title[0], nodes.Text) or not isinstance(title[1], nodes.reference):
        return None
    word, link = title[0].astext().strip(), title[1]
    first = link.children[0] if link.children else None
    if isinstance(first, nodes.Text):
        link.replace(first, nodes.Text(first.astext().lstrip()))
    title.remove(title[0])
    title += nodes.Text(f" 的{word}")
    return title.astext()


def _chinese_solution_titles(app: Sphinx) -> None:
    """On the Chinese edition, wrap sphinx-exercise's ``resolve_solution_title`` (called by its
    post-transforms ``ResolveTitlesInSolutions`` and ``ResolveLinkTextToSolutions``, which look it up
    in their module at each call) so that the title it builds goes through :func:`chinese_solution_title`."""
    try:
        from sphinx_exercise import post_transforms
    except ImportError:
        return
    resolve = getattr(post_transforms, "resolve_solution_title", None)
    if resolve is None or getattr(resolve, "_rope_chinese", False) or not is_chinese(app.config.language):
        return

    def resolve_in_chinese(app_, node, exercise_node):
        node = resolve(app_, node, exercise_node)
        title = node.children[0] if node.children else None
        if isinstance(title, nodes.title) and is_chinese(app_.config.language):
            text = chinese_solution_title(title)
            if text is not None:
                node["title"] = text
        return node

    resolve_in_chinese._rope_chinese = True  # type: ignore[attr-defined]
    post_transforms.resolve_solution_title = resolve_in_chinese


# A MyST footnote reference, ``[^label]`` (not its definition, ``[^label]: ...``).
FOOTNOTE_REF = re.compile(r"\[\^([^\]\s]+)\](?!:)")


def _with_footnote_definitions(publish):
    """Sphinx parses each translated message alone, without the page's footnote definitions, and
    MyST reads ``[^label]`` with no definition as text, so a translated paragraph would lose its
    footnote references (Sphinx warns: inconsistent footnote references). The message is parsed
    with a stand-in definition for each label it references: the paragraph then keeps real
    references, which Sphinx links to the page's translated footnotes (the definition itself is
    its own message)."""
    if getattr(publish, "_rope_footnotes", False):
        return publish

    def publish_msgstr(app, source, *args, **kwargs):
        labels = list(dict.fromkeys(FOOTNOTE_REF.findall(source)))
        if labels:
            source += "\n\n" + "\n".join(f"[^{label}]: -" for label in labels)
        return publish(app, source, *args, **kwargs)

    publish_msgstr._rope_footnotes = True  # type: ignore[attr-defined]
    return publish_msgstr


def setup(app: Sphinx) -> dict:
    from sphinx.transforms import i18n

    i18n.publish_msgstr = _with_footnote_definitions(i18n.publish_msgstr)
    if hasattr(i18n, "_NodeUpdater") and hasattr(i18n._NodeUpdater, "update_pending_xrefs"):
        i18n._NodeUpdater.update_pending_xrefs = _update_pending_xrefs
    _index_terms_inside_terms()
    app.add_transform(_KeepHeadingSlugs)
    app.add_transform(_TranslateFormulas)
    app.add_transform(_RestoreHeadingSlugs)
    app.add_transform(_OutputTexts)
    app.add_transform(_CodeComments)
    app.connect("html-page-context", _page_context)
    app.connect("builder-inited", _add_link_font)
    app.connect("builder-inited", _chinese_solution_titles)
    app.connect("build-finished", _write_link_font)
    app.connect("doctree-resolved", _keep_punctuation_with_maths)
    app.connect("build-finished", _switch_generated_pages)
    # before Sphinx's own doctree-read handlers (the toctree collector) read the toctrees
    app.connect("doctree-read", _translate_captions, priority=100)
    app.connect("doctree-read", _one_document, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
