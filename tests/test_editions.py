"""The Chinese edition (scripts/i18n.py, _ext/editions.py): one source, two sites.

Checked on the built site: every English page has its Chinese page under zh/ (lang="zh-CN"),
each links to the other (a visible link and <link rel="alternate" hreflang>, in the static HTML),
the Chinese site shares the English site's static files instead of carrying a second copy, and a
Chinese chapter opens in Chromium with its figures and no failed request. The catalogs' gate:
a translation may not change its English message's maths, roles, code spans, links or numbers.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from conftest import ROOT, page_soup
from rope_edu.i18n import HAN_RANGE

sys.path.insert(0, str(ROOT / "scripts"))
import i18n

SKIP = {"search.html", "genindex.html", "index.html", "prf-prf.html"}   # generated: no page body


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html")
                  if p.relative_to(site).parts[0] not in ("zh", "_static", "_sources", "_images")
                  and p.name not in SKIP)


@pytest.mark.parametrize("msgid, msgstr, kind", [
    ("the angle $m\\theta_i$ grows", "角度 $n\\theta_i$ 增大", "maths"),
    ("see {prf:ref}`ch04-thm` and `apply_rope`", "见 `apply_rope`", "roles"),
    ("call `apply_rope(x)` first", "先调用 `rotate(x)`", "code spans"),
    ("read [the docs](../book/notation.md)", "阅读[文档](../book/glossary.md)", "link targets"),
    ("a base of 10,000 and 64 pairs", "底数 10000，共 65 对", "numbers"),
])
def test_the_gate_catches_a_changed_message(msgid, msgstr, kind):
    found = i18n.problems(msgid, msgstr)
    assert any(p.startswith(kind) for p in found), found


def test_the_gate_passes_a_faithful_translation():
    msgid = "Pair $i$ turns by $\\theta_i = b^{-2i/d}$ (see {prf:ref}`ch05-thm`, `frequencies`); 10,000 by default."
    msgstr = "第 $i$ 对每个位置转过 $\\theta_i = b^{-2i/d}$（见 {prf:ref}`ch05-thm`、`frequencies`），默认底数为 10,000。"
    assert i18n.problems(msgid, msgstr) == []


def test_no_translation_changes_what_must_not_change():
    assert i18n.check(ROOT, strict=False) == 0


def test_display_maths_are_not_messages_to_translate():
    assert i18n._is_math("\n\\langle f_q(q, m), f_k(k, n)\\rangle = g(q, k, m - n)\n")
    assert not i18n._is_math("for some function $g$. We also ask that position $0$ leaves vectors alone")


@pytest.mark.book
def test_every_page_has_its_chinese_page_and_both_link_to_each_other(built_book):
    zh = built_book / "zh"
    pages = _pages(built_book)
    assert len(pages) >= 15
    for page in pages:
        rel = page.relative_to(built_book)
        twin = zh / rel
        assert twin.is_file(), f"no Chinese page for {rel}"
        en_soup = page_soup(page)
        zh_soup = page_soup(twin)
        assert zh_soup.html.get("lang") == "zh-CN", rel
        for soup, here, other in ((en_soup, page, twin), (zh_soup, twin, page)):
            link = soup.select_one("a.rope-edition")
            assert link is not None, f"{here.relative_to(built_book)}: no link to the other edition"
            assert Path(os.path.normpath(here.parent / link["href"])) == other, (rel, link["href"])
            alternates = {l["hreflang"] for l in soup.select('link[rel="alternate"][hreflang]')}
            assert alternates == {"en", "zh-CN"}, (rel, alternates)


@pytest.mark.book
def test_translated_display_formulas_show_their_translation(built_book):
    """A display formula whose catalog entry translates its words (``\\text{}``) shows on the
    Chinese page with those words, not as the ``::`` that Sphinx's translation of a literal node
    left under the MyST parser (_ext/editions.py ``_TranslateFormulas``); the others as in English."""
    import polib

    translated = 0
    for po in sorted((ROOT / "locales" / "zh_CN" / "LC_MESSAGES").rglob("*.po")):
        page = built_book / "zh" / po.relative_to(ROOT / "locales" / "zh_CN" / "LC_MESSAGES").with_suffix(".html")
        formulas = None
        for entry in polib.pofile(str(po)):
            if entry.obsolete or not (entry.msgstr and entry.msgstr != entry.msgid and i18n._is_math(entry.msgid)):
                continue
            if formulas is None:
                assert page.exists(), page
                formulas = [m.get_text() for m in page_soup(page).select("div.math math")]
                assert not [f for f in formulas if f.strip() == "::"], page.name
            words = re.findall(r"\\text\{([^}]*)\}", entry.msgstr)
            shown = [w.strip() for w in words if re.search(f"[{HAN_RANGE}]", w)]
            assert shown, entry.msgstr
            for w in shown:
                assert any(w in f for f in formulas), f"{page.name}: {w!r} of {entry.msgstr.strip()[:80]!r} not shown"
            translated += 1
    assert translated >= 8, translated   # 9 formulas on 7 pages when this was written


@pytest.mark.book
def test_translated_links_keep_their_own_targets(built_book):
    """Every page's links to the book's pages and sections go where its English page's go, one
    for one. (Sphinx matched a translated link to its English one by page only: when a paragraph
    linked twice into one page, every link of its translation took the last one's anchor.)"""
    def targets(page: Path) -> list[str]:
        soup = page_soup(page)
        article = soup.select_one("article") or soup
        return sorted(a["href"] for a in article.select("a.reference.internal[href]")
                      if "_images/" not in a["href"])  # pictures: the English site's, one folder up

    bad = {}
    for page in _pages(built_book):
        rel = page.relative_to(built_book)
        en, zh = Counter(targets(page)), Counter(targets(built_book / "zh" / rel))
        if en != zh:
            bad[rel.as_posix()] = {"only English": sorted((en - zh).elements())[:4],
                                   "only Chinese": sorted((zh - en).elements())[:4]}
    assert not bad, bad


@pytest.mark.book
def test_the_chinese_site_shares_the_english_static_files(built_book):
    zh = built_book / "zh"
    assert not (zh / "_static" / "rope_figures" / "loader.js").exists()
    # the Chinese notebooks install the English site's wheel; Binder reads the branch's root
    assert not (zh / "wheels").exists() and not (zh / "binder").exists()
    assert "zh" in (zh / "_static" / "documentation_options.js").read_text(encoding="utf-8")
    # every local reference of a Chinese page resolves to a file
    missing = set()
    for page in list(zh.rglob("*.html"))[:40]:
        for m in re.finditer(r'(?:href|src)="(?![a-z]+:)([^"#?]+)', page.read_text(encoding="utf-8")):
            target = Path(os.path.normpath(page.parent / m.group(1)))
            if not target.exists():
                missing.add(f"{page.relative_to(built_book)} -> {m.group(1)}")
    assert not missing, sorted(missing)[:10]


@pytest.mark.book
@pytest.mark.browser
def test_chinese_doctrees_hold_only_their_page(built_book):
    """A translated page's doctree is about the size of the English one (it once pickled the whole
    build environment through each translated message's own document: 25 times the size, and
    every build that numbers figures unpickles every page; _ext/editions.py ``_one_document``)."""
    english = ROOT / "_build" / ".doctrees" / "notebooks"
    chinese = ROOT / "_build" / "zh" / "_build" / ".doctrees" / "notebooks"
    sizes = {p.name: (p.stat().st_size, (chinese / p.name).stat().st_size) for p in english.glob("*.doctree")}
    assert sizes, english
    big = {name: s for name, s in sizes.items() if s[1] > 3 * s[0]}
    assert not big, big


def test_a_chinese_chapter_opens_with_its_figures(site_url, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    failed, errors = [], []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto(f"{site_url}/zh/notebooks/03_rope_2d.html", wait_until="load")
        page.wait_for_selector(".rope-fig[data-state] svg", timeout=20_000)
        assert page.locator("html").get_attribute("lang") == "zh-CN"
        assert not failed and not errors, (failed, errors)
        page.locator("a.rope-edition").click()
        page.wait_for_load_state("load")
        assert page.url.endswith("/notebooks/03_rope_2d.html") and "/zh/" not in page.url
    finally:
        context.close()


# --- the Chinese reader notebooks (_ext/reader_notebooks.py, in the Chinese build) -----------------

sys.path.insert(0, str(ROOT / "_ext"))
import reader_words  # noqa: E402  (_ext/reader_words.py: an edition's wording)


def test_markdown_translator_puts_each_message_in_its_place():
    """A message replaces its whole paragraph, list item, heading, table cell or theorem title,
    whatever the source's line breaks and indentation; text no message matches stays English."""
    translate = reader_words.markdown_translator({
        "RoPE in two dimensions": "二维的 RoPE",
        "A paragraph that spans two lines of the source.": "跨两行的段落。",
        "an item whose text goes on": "一项，\n接着写",
        "(Radial part)": "（径向部分）",
        "Proof. The first step.": "证明。第一步。",
        "cell": "单元格",
        "kept": "kept",
    })
    source = ("# RoPE in two dimensions\n\nA paragraph that spans\ntwo lines of the source.\n\n"
              "- an item whose\n  text goes on\n- an untranslated item\n\n"
              ":::{prf:theorem} Radial part\n:label: x\n:::\n\n:::{prf:proof}\nThe first step.\n:::\n\n"
              "| cell | other |\n\nA cell in a longer line stays.")
    assert translate(source) == (
        "# 二维的 RoPE\n\n跨两行的段落。\n\n"
        "- 一项，\n  接着写\n- an untranslated item\n\n"
        ":::{prf:theorem} 径向部分\n:label: x\n:::\n\n:::{prf:proof}\n第一步。\n:::\n\n"
        "| 单元格 | other |\n\nA cell in a longer line stays.")


def test_footnotes_keep_their_references_in_both_editions():
    """A footnote's definition is a message of its own, put in place after its ``[^label]: ``; a
    translated paragraph is parsed with a stand-in definition for each footnote it references, so
    that Sphinx keeps the references (alone, MyST reads ``[^label]`` as text)."""
    translate = reader_words.markdown_translator({
        "A claim.[^src] More.": "一个说法。[^src] 更多。",
        "The source, over two lines.": "来源，\n两行。",
    })
    assert translate("A claim.[^src]\nMore.\n\n[^src]: The source,\n    over two lines.") == (
        "一个说法。[^src] 更多。\n\n[^src]: 来源，\n        两行。")
    import editions
    seen = []
    publish = editions._with_footnote_definitions(lambda app, source, *rest: seen.append(source))
    publish(None, "一个说法。[^src] 又[^two]，再[^src]。", "page", 1)
    publish(None, "没有脚注。", "page", 2)
    assert seen == ["一个说法。[^src] 又[^two]，再[^src]。\n\n[^src]: -\n[^two]: -", "没有脚注。"]
    assert editions._with_footnote_definitions(publish) is publish   # patched once, whatever the builds


def test_chinese_labels_of_the_reader_notebooks():
    words = reader_words.Words("zh_CN", {"Theorem": "定理", "Exercise": "练习", "Solution to": "解答"})
    assert words.head("Theorem", "4.1", "平面旋转") == "**定理 4.1**（平面旋转）。"
    assert words.end("证明") == "证明。" and words.end("Proof") == "Proof."   # untranslated: English
    assert reader_words.Words("zh_CN", {"Note": "注意"}).admonition("note") == "注意"
    assert words.solution("1.2") == "练习 1.2 的解答"
    english = reader_words.ENGLISH
    assert english.head("Theorem", "4.1", "Plane rotations") == "**Theorem 4.1** (Plane rotations)."
    assert english.solution("1.2") == "Solution to Exercise 1.2"


def test_chinese_reader_pictures_have_chinese_labels():
    """The executed notebooks are the English run's: a Chinese notebook's picture text translates
    the figure's English label (as the Chinese page's placeholder does), not a copy of it."""
    from rope_edu.i18n import translate
    from rope_edu.widgets.clock import DEMO

    chinese = translate(DEMO.title, "zh_CN")
    assert chinese != DEMO.title
    words = reader_words.Words("zh_CN")
    assert words.picture(DEMO.title) == f"<交互式图的静态图片：{chinese}>"
    assert reader_words.ENGLISH.picture(DEMO.title) == f"<still picture of the figure: {DEMO.title}>"


_CJK_RUN = re.compile(f"[{HAN_RANGE}]{{2,}}")


def _markdown(nb: dict) -> str:
    return "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


@pytest.mark.book
def test_chinese_reader_notebooks(built_book):
    """Every chapter page has its Chinese reader notebook (what the Chinese page's download button
    serves): no MyST left, the (translated) title first, the translation of every translated message
    in place (each of its runs of Chinese characters), the English notebook's code cells and
    outputs (nothing executed again), and a set-up cell that sets the figures' language. About a
    second: it reads both editions' notebooks."""
    from conftest import notebook_paths
    from test_reader_notebooks import MYST

    for chapter in notebook_paths():
        name = f"notebooks/{chapter.stem}"
        zh_path = built_book / "zh" / "_sources" / f"{name}.ipynb"
        assert zh_path.is_file(), f"no Chinese reader notebook for {name}"
        zh = json.loads(zh_path.read_text(encoding="utf-8"))
        en = json.loads((built_book / "_sources" / f"{name}.ipynb").read_text(encoding="utf-8"))
        md = _markdown(zh)
        left = [m.group(0) for m in MYST.finditer(md)]
        assert not left, f"{name}: MyST left in the Chinese reader notebook: {left[:5]}"
        messages = reader_words.catalog_messages(ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / f"{name}.po")
        source = json.loads(chapter.read_text(encoding="utf-8"))
        title = next(c for c in source["cells"] if c["cell_type"] == "markdown")["source"]
        title = "".join(title).split("\n", 1)[0].removeprefix("# ").strip()
        first = "".join(zh["cells"][0]["source"]).split("\n", 1)[0]
        assert first == "# " + messages.get(title, title), (name, first)
        for msgid, msgstr in messages.items():
            for run in _CJK_RUN.findall(i18n._prose(msgstr)):
                assert run in md, f"{name}: the translation of {msgid[:60]!r} is not in its notebook ({run!r})"
        code = [c for c in zh["cells"] if c["cell_type"] == "code"]
        en_code = [c for c in en["cells"] if c["cell_type"] == "code"]
        assert [c["outputs"] for c in code[1:]] and len(code) == len(en_code)
        for a, b in zip(code[1:], en_code[1:]):
            assert a["outputs"] == b["outputs"] or reader_words.ZH_FIGURE_CAPTION in json.dumps(a["outputs"], ensure_ascii=False)
            assert "".join(a["source"]).split("\n", 1)[-1] == "".join(b["source"]).split("\n", 1)[-1]
        setup = "".join(code[0]["source"])
        assert setup.startswith(reader_words.ZH_SETUP_TITLE)
        assert setup.index('rope_edu.i18n.set_language("zh_CN")') < setup.index("rope_edu.plots.use_style()")


@pytest.mark.book
def test_chinese_pages_buttons_open_the_chinese_notebooks(built_book):
    """A Chinese page's download button serves the Chinese reader notebook; its Colab and Binder
    buttons open the published copy of it (zh/ of the branch the site is pushed to)."""
    from conftest import notebook_paths

    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    repository = re.search(r"^repository:\s*\n\s+url:\s*https://github\.com/(\S+)", config, re.M).group(1)
    branch = re.search(r"^\s+reader_notebooks_branch:\s*(\S+)", config, re.M).group(1)
    for chapter in notebook_paths():
        page = built_book / "zh" / "notebooks" / f"{chapter.stem}.html"
        html = page.read_text(encoding="utf-8")
        path = f"zh/_sources/notebooks/{chapter.name}"
        downloads = {m for m in re.findall(r'href="([^"]+\.ipynb)"', html) if not m.startswith("http")}
        assert downloads and {Path(os.path.normpath(page.parent / d)) for d in downloads} == {built_book / path}
        assert f"https://colab.research.google.com/github/{repository}/blob/{branch}/{path}" in html
        binder = re.findall(r'href="(https://mybinder\.org/[^"]+)"', html)
        assert binder == [f"https://mybinder.org/v2/gh/{repository}/{branch}?urlpath=lab/tree/{path}"], binder
        assert "/_sources/notebooks/" not in html.replace(path, "").replace("../_sources/notebooks/", ""), \
            f"{page.name}: a button opens the English notebook"


@pytest.mark.book
def test_chinese_sidebar_captions(built_book):
    """The table of contents' part captions (from _toc.yml) are translated on the Chinese site."""
    import polib

    po = polib.pofile(str(ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "book" / "intro.po"))
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    english = re.findall(r"^\s*-\s*caption:\s*(.+?)\s*$", toc, re.M)
    chinese = [next(e.msgstr for e in po if e.msgid == c) for c in english]
    assert len(english) >= 3 and all(chinese)
    for rel in ("book/intro.html", "notebooks/03_rope_2d.html"):
        for site, want in ((built_book, english), (built_book / "zh", chinese)):
            soup = page_soup(site / rel)
            got = [s.get_text(strip=True) for s in soup.select(".bd-sidebar-primary .caption-text")]
            assert got == want, (site, rel, got)


@pytest.mark.book
def test_chinese_search_finds_the_terms(built_book):
    """The Chinese site's search index (Sphinx's Chinese search: jieba, with the term table as its
    dictionary) holds 位置编码, 旋转 and 外推 as words (searchtools.js looks a query word up as it is
    typed), each for every Chinese page whose text uses it. Without the dictionary jieba cut 外推
    into 外 and 推, and 位置编码 into 位置 and 编码: a search for either found nothing."""
    text = (built_book / "zh" / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    docs = index["docnames"]
    bodies = {}
    for doc in docs:
        soup = page_soup(built_book / "zh" / f"{doc}.html")
        # the page's own text: not the previous/next links below it (another page's title)
        body = soup.select_one("article") or soup
        bodies[doc] = body.get_text(" ")
    for term in ("位置编码", "旋转", "外推"):
        found = set()
        for table in ("terms", "titleterms"):
            hits = index[table].get(term, [])
            found.update(docs[i] for i in ([hits] if isinstance(hits, int) else hits))
        using = {doc for doc, body in bodies.items() if term in body}
        assert found and using <= found, (term, sorted(using - found))


@pytest.mark.book
def test_the_chinese_pages_controls_are_chinese(built_book):
    """The words the build adds around the translated text are Chinese too: the dropdowns' hint
    (sphinx-togglebutton), each folded cell's line ("上表的代码"), each folded verdict ("已检查：..."), and inline maths keeps the
    full-width punctuation after it on its line (no "，" at the start of a line)."""
    english_lines = re.compile(r"code of the (?:figure|table|output)\b")
    bad = {}
    for page in sorted((built_book / "zh" / "notebooks").glob("*.html")):
        html = page.read_text(encoding="utf-8")
        problems = []
        if "toggleHintShow = '点击展开'" not in html:
            problems.append("toggle hint")
        if english_lines.search(html):
            problems.append("fold line in English")
        if '<span class="rope-verdict">checked:' in html:
            problems.append("a folded verdict in English")
        soup = BeautifulSoup(html, "html.parser")
        for math in soup.select("article span.math"):
            after = math.next_sibling
            if isinstance(after, str) and after[:1] in "，。、；：" and "rope-nobr" not in (math.parent.get("class") or []):
                problems.append(f"punctuation may start a line after {math.get_text()[:30]!r}")
                break
        if problems:
            bad[page.name] = problems
    assert not bad, bad


@pytest.mark.book
def test_every_chinese_chapter_page_is_at_least_95_percent_chinese(built_book):
    """Issue 33's measure: at least 95 % of each chapter page's paragraphs, list items, headings,
    captions and table headers are Chinese. Prose only: code, maths, citations, the code's outputs,
    the folded checks and the link to the English page are not counted, nor an element whose prose
    is a name or two ("vLLM", "bfloat16"). No h1-h3 heading is English (a translated "6. …" heading
    that MyST read as a list item was dropped by Sphinx: the gate's ``markup_problems``)."""
    cjk = re.compile(f"[{HAN_RANGE}]")
    english = re.compile(r"[A-Za-z]{2,}[\s,.;:'’-]+[A-Za-z]{2,}")
    low, english_headings = {}, []
    for page in sorted((built_book / "zh" / "notebooks").glob("*.html")):
        article = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").select_one("article")
        for skip in article.select(".cell_output, pre, .rope-checks, script, style, code, .math, math, "
                                   "a.reference.internal[href*='bibliography']"):
            skip.decompose()
        for switch in article.select("a[hreflang]"):
            switch.decompose()
        kinds = {"zh": 0, "en": []}
        for el in article.select("p, li, h1, h2, h3, h4, figcaption, caption, th"):
            if el.find(["p", "li"]):
                continue   # counted by its own paragraphs
            text = el.get_text(" ", strip=True)
            if cjk.search(text):
                kinds["zh"] += 1
            elif english.search(text):
                kinds["en"].append(text[:60])
                if el.name in ("h1", "h2", "h3"):   # a heading whose translation Sphinx dropped
                    english_headings.append(f"{page.name}: {text[:60]}")
        share = kinds["zh"] / max(1, kinds["zh"] + len(kinds["en"]))
        if share < 0.95:
            low[page.name] = (f"{share:.0%}", kinds["en"][:3])
    assert not low, low
    assert not english_headings, english_headings


_HAN = re.compile(f"[{HAN_RANGE}]")


def _numbers_as_holes(text: str) -> str:
    """``text`` with each template hole ({0}) and each number as #: a cell's template on the page
    (holes in page order) against its translation (holes in the translation's order)."""
    if str(ROOT / "_ext") not in sys.path:
        sys.path.insert(0, str(ROOT / "_ext"))
    import output_words

    return output_words.NUMBER.sub("#", re.sub(r"\{\d+\}", "#", text))


@pytest.mark.book
def test_chinese_chapters_show_the_outputs_texts_in_chinese(built_book):
    """The plots' captions and alt texts and the tables' captions, headers and cells of the Chinese
    chapter pages come from locales/zh_CN/LC_MESSAGES/outputs.po: every plot caption and alt text
    holds Chinese, and no caption, header or cell is an English text that the catalog translates
    (a cell through its template, with this build's numbers); the English pages show their English
    texts."""
    import polib

    po = polib.pofile(str(ROOT / i18n.LOCALES / i18n.LANG / "LC_MESSAGES" / f"{i18n.OUTPUTS}.po"))
    translated = {e.msgid: e.msgstr for e in po if not e.obsolete and e.msgstr and e.msgstr != e.msgid}
    plots = cells = 0
    for en in sorted((built_book / "notebooks").glob("*.html")):
        english = i18n.output_messages(en.read_text(encoding="utf-8"))
        chinese = i18n.output_messages((built_book / "zh" / "notebooks" / en.name).read_text(encoding="utf-8"))
        assert [k for k, _ in chinese] == [k for k, _ in english], f"{en.name}: not the same plots and tables"
        assert all(e in translated or e == z for (_, e), (_, z) in zip(english, chinese)), en.name
        for (kind, e), (_, z) in zip(english, chinese):
            if kind.startswith("plot"):
                plots += 1
                assert _HAN.search(z) and not _HAN.search(e), f"{en.name}: {kind} {z!r}"
            elif kind == "table cell":
                cells += 1
                if e in translated:   # a template: its numbers, in the translation's order, this build's
                    assert _numbers_as_holes(z) == _numbers_as_holes(translated[e]), \
                        f"{en.name}: {kind} {z!r}, not {translated[e]!r}"
            elif e in translated:
                assert z == translated[e], f"{en.name}: {kind} {z!r}, not {translated[e]!r}"
    assert plots > 50 and cells > 200


def test_the_link_to_the_chinese_edition_is_drawn_with_the_sites_chinese_font(tmp_path):
    """The English pages' link to the Chinese edition uses only characters of the package's Chinese
    font, and the build serves that font cut to them with a rule that falls back on it for those
    characters only (issue 45: without a Chinese font the link showed empty boxes)."""
    from types import SimpleNamespace

    from fontTools.ttLib import TTFont

    sys.path.insert(0, str(ROOT / "_ext"))
    import editions

    from rope_edu.i18n import FONT

    cmap = TTFont(str(FONT)).getBestCmap()
    assert all(ord(c) in cmap for c in editions.ZH_LINK), [c for c in editions.ZH_LINK if ord(c) not in cmap]
    app = SimpleNamespace(outdir=str(tmp_path), builder=SimpleNamespace(format="html"), config=SimpleNamespace(language="en"))
    editions._write_link_font(app, None)
    cut = TTFont(str(tmp_path / "_static" / editions.LINK_FONT / "zh-link.woff")).getBestCmap()
    assert {chr(c) for c in cut} == set(editions.ZH_LINK)
    css = (tmp_path / "_static" / editions.LINK_FONT / "zh-link.css").read_text(encoding="utf-8")
    assert "unicode-range: U+4E2D" in css and 'a.rope-edition[lang="zh-CN"]' in css and '"RoPE zh link"' in css


# --- the Chinese search: queries cut as the index was, the community's names for the book's terms -------

import editions  # noqa: E402  (_ext, on the path through conftest)

#: What Chinese readers type, and a page each must find (issue 42)
SEARCHES = {
    "旋转位置编码": "book/intro", "外推": "notebooks/09_longer_contexts", "远程衰减": "notebooks/05_frequencies_2_decay",
    "基数": "notebooks/05_frequencies", "内插": "notebooks/09_longer_contexts", "长度外推": "notebooks/09_longer_contexts",
    "RoPE的外推": "notebooks/09_longer_contexts", "外推方法": "notebooks/09_longer_contexts",
    "底数选择": "notebooks/05_frequencies_3_base_bound", "旋转": "notebooks/03_rope_2d", "位置": "notebooks/01_why_positions",
    "token": "notebooks/01_why_positions", "base": "notebooks/05_frequencies", "位置插值": "notebooks/09_longer_contexts",
    "注意力下沉": "notebooks/10_models_3_attention",
}


def test_search_synonyms_come_from_the_term_table():
    synonyms = editions.search_synonyms(ROOT / i18n.TERMS)
    assert {k: synonyms[k] for k in ("基数", "内插", "长度外推", "token", "base")} == \
        {"基数": "底数", "内插": "插值", "长度外推": "外推", "token": "词元", "base": "底数"}
    assert "key" not in synonyms   # 键: one character, a word the index cannot hold
    code = editions.search_code(synonyms)
    assert '"长度外推": "外推"' in code and "splitQuery" in code and "rope-editions" in code
    assert "splitQuery" not in editions.search_code(None)


def test_generated_pages_get_the_switcher():
    line = '<p class="rope-editions"><a href="../search.html">Read this page in English</a></p>\n'
    html = '<main role="main"><div class="bd-search-container">\n<h1>搜索</h1>'
    assert editions.add_switcher(html, "search", line) == '<main role="main">' + line + html[len('<main role="main">'):]
    assert editions.add_switcher(editions.add_switcher(html, "search", line), "search", line).count("rope-editions") == 1


def _search(site: Path, zh: Path, queries, pages=()) -> dict:
    import subprocess

    from node_figure import require_node

    payload = {"scripts": [str(site / "_static" / "searchtools.js"), str(zh / "_static" / "language_data.js"),
                           str(zh / "searchindex.js")], "queries": list(queries), "pages": [str(p) for p in pages]}
    out = subprocess.run([require_node(), str(ROOT / "tests" / "search_node.mjs")], input=json.dumps(payload),
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


@pytest.mark.book
def test_chinese_search_finds_what_readers_type(built_book):
    """The built Chinese search, run in node (searchtools.js with the site's language_data.js and index):
    each query of SEARCHES finds its page; every term of the term table finds pages, and its other names
    and its English find every page the term finds (and English titles and names besides); a result's snippet does not open with the edition switcher; the search
    and index pages of both sites carry the switcher."""
    zh = built_book / "zh"
    synonyms = editions.search_synonyms(ROOT / i18n.TERMS)
    terms = sorted({t for t in synonyms.values() if len(t) > 1})
    got = _search(built_book, zh, [*SEARCHES, *terms, *synonyms], [zh / "notebooks" / "03_rope_2d.html"])
    found = {r["query"]: r for r in got["results"]}
    missed = {q: found[q]["words"] for q, page in SEARCHES.items() if page not in found[q]["pages"]}
    assert not missed, missed
    empty = [t for t in terms if not found[t]["pages"]]
    assert not empty, empty
    differ = {name: (term, found[name]["words"]) for name, term in synonyms.items()
              if not set(found[term]["pages"]) <= set(found[name]["pages"])}
    assert not differ, differ
    assert not got["texts"][0].startswith("Read this page") and "Read this page in English" not in got["texts"][0]
    for site, label in ((built_book, editions.ZH_LINK), (zh, "Read this page in English")):
        for page in ("search.html", "genindex.html"):
            assert label in (site / page).read_text(encoding="utf-8"), (site, page)


@pytest.mark.book
def test_chinese_plots_name_their_embedded_font_first(built_book):
    """Every plot of the Chinese site with Chinese labels (40 or so; file reads and fontTools, no
    browser): each label with Chinese characters names the SVG's embedded Noto Sans SC subset first in
    its font-family, and the subset holds every one of its characters. Named after the Latin fonts,
    Chromium without a Chinese system font drew a plot's first label in empty boxes (issue 42)."""
    plots = [p for p in sorted((built_book / "zh" / "_images").glob("*.svg")) if "@font-face" in p.read_text(encoding="utf-8")]
    assert len(plots) >= 30
    bad = {p.name: i18n.svg_font_problems(p.read_text(encoding="utf-8"))[:2] for p in plots}
    assert not {k: v for k, v in bad.items() if v}


def test_the_gate_reads_a_month_as_its_number():
    """March 2021 is 2021 年 3 月 in Chinese (not 三月): the gate counts the month as a number."""
    assert i18n.problems("in March 2021 and April 2021", "2021 年 3 月和 2021 年 4 月") == []
    assert i18n.problems("in March 2021", "2021 年三月") != []
    assert i18n.problems("you May 2 go", "你 2 可以走") == []


def test_chinese_solution_title_puts_the_exercise_first():
    from docutils import nodes

    title = nodes.title("", "", nodes.Text("解答"), nodes.reference("", "", nodes.Text(" 练习 3.1"), refuri="#ex"))
    assert editions.chinese_solution_title(title) == "练习 3.1 的解答"
    assert isinstance(title[0], nodes.reference) and title[0].astext() == "练习 3.1"
    plain = nodes.title("", "", nodes.Text("解答"))   # solution_follow_exercise: nothing to reorder
    assert editions.chinese_solution_title(plain) is None and plain.astext() == "解答"


def test_chinese_solutions_are_titled_exercise_first(built_book):
    """On the built Chinese pages every solution reads 练习 N.M 的解答, its link to the exercise first
    (sphinx-exercise's own order, 解答 练习 3.1, is wrong in Chinese)."""
    titles = []
    for page in sorted((built_book / "zh" / "notebooks").glob("*.html")):
        soup = page_soup(page)
        for div in soup.select("div.solution > p.admonition-title, div.solution .admonition-title"):
            titles.append((page.name, " ".join(div.get_text(" ").split())))
    assert titles, "no solution found on the Chinese chapter pages"
    bad = [t for t in titles if not re.fullmatch(r"练习 \d+(\.\d+)* 的解答( \(.*\))?|练习 \d+(\.\d+)*( （.*）)? 的解答", t[1])]
    assert not bad, bad[:5]


@pytest.mark.book
def test_what_the_chinese_pages_cells_print_and_compute_is_chinese(built_book):
    """Verdicts printed in the flow read 已检查：…, and the paragraphs cells compute
    (display(Markdown(...))) are Chinese, their numbers the English page's (_ext/output_words.py)."""
    bad = []
    for page in sorted([*(built_book / "zh" / "notebooks").glob("*.html"), *(built_book / "zh" / "book").glob("*.html")]):
        soup = page_soup(page)
        english = page_soup(built_book / page.relative_to(built_book / "zh"))
        for pre in soup.select("div.output.stream pre"):
            bad += [(page.name, line) for line in pre.get_text().splitlines() if line.startswith("checked: ")]
        ours = [p.get_text() for p in soup.select("div.cell_output > p")]
        theirs = [p.get_text() for p in english.select("div.cell_output > p")]
        assert len(ours) == len(theirs), page.name
        for zh, en in zip(ours, theirs):
            if not re.search(f"[{HAN_RANGE}]", zh):
                bad.append((page.name, zh[:60]))
            # a number between Chinese characters has no space around it: they are no word characters here
            numbers = lambda t: sorted(re.findall(rf"(?<![^\W{HAN_RANGE}]|\.)\d+(?:,\d{{3}})*(?:\.\d+)?", t))  # noqa: E731
            assert numbers(zh) == numbers(en), (page.name, zh[:60])
    assert not bad, bad[:10]


def test_punctuation_kept_with_maths_stays_where_it_was():
    """A formula and the 。 after it share a no-break box; another 。 earlier in the paragraph (after
    a code span, before a formula) stays put (docutils' remove() took the first equal Text node:
    the page read "…`y`$d = 4$ 时…。。")."""
    from docutils import nodes

    class Config:
        language = "zh_CN"

    class App:
        config = Config()

    para = nodes.paragraph("", "", nodes.literal("", "y"), nodes.Text("。"), nodes.math("", "d = 4"),
                           nodes.Text(" 时，"), nodes.math("", "P"), nodes.Text("。"))
    doc = nodes.document(None, None)
    doc += para
    editions._keep_punctuation_with_maths(App(), doc, "page")
    assert para.astext() == "y。d = 4 时，P。"
    assert isinstance(para[-1], nodes.inline) and para[-1].astext() == "P。"


def test_english_punctuation_stays_with_its_formula():
    """The English edition keeps ",", ".", ")" after an inline formula on its line too (a phone
    started lines with ", a counter-clockwise" after a formula, issue 45); words after it are free."""
    from docutils import nodes

    class Config:
        language = "en"

    class App:
        config = Config()

    para = nodes.paragraph("", "", nodes.Text("turn by "), nodes.math("", "m\\theta"), nodes.Text(", a counter-clockwise turn"),
                           nodes.Text(" and "), nodes.math("", "x"), nodes.Text(" too"))
    doc = nodes.document(None, None)
    doc += para
    editions._keep_punctuation_with_maths(App(), doc, "page")
    assert para.astext() == "turn by m\\theta, a counter-clockwise turn and x too"
    box = para[1]
    assert isinstance(box, nodes.inline) and "rope-nobr" in box["classes"] and box.astext() == "m\\theta,"
    assert not isinstance(para[-2], nodes.inline)   # "x" is followed by a word: no box
    para = nodes.paragraph("", "", nodes.Text("a causal model ("), nodes.math("", "n \\le m"), nodes.Text("), and"))
    doc += para
    editions._keep_punctuation_with_maths(App(), doc, "page")
    assert para.astext() == "a causal model (n \\le m), and"
    assert [type(c).__name__ for c in para.children] == ["Text", "inline", "Text"]
    assert para[1].astext() == "(n \\le m),"   # the bracket does not end a line either


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_publishing_the_chinese_site_again_does_only_what_changed(tmp_path):
    """i18n_site.publish after one page and one static file changed gives the site a publish from
    nothing gives, and copies only those (the pages again when what is shared changed)."""
    import time

    import i18n_site

    en, built = tmp_path / "en", tmp_path / "built"
    files = {"_static/book.css": "body{}", "_static/zh.js": "zh()", "_images/p.svg": "<svg/>",
             "a.html": '<link href="_static/book.css"><script src="_static/zh.js"></script>',
             "notebooks/b.html": '<img src="../_images/p.svg"><link href="../_static/book.css">'}
    for rel, text in files.items():
        for root in (en, built):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text("en()" if root == en and rel.endswith(".js") else text)

    def publish(site: str, every: bool):
        return i18n_site.publish(built, tmp_path / site, en, tmp_path / f"{site}.json", every_page=every)

    saved, plots, done = publish("zh", True)
    assert (saved, plots, done) == (len("body{}<svg/>"), 0, 5)
    assert _tree(tmp_path / "zh")["a.html"] == b'<link href="../_static/book.css"><script src="_static/zh.js"></script>'
    assert publish("zh", False)[2] == 0   # nothing changed: nothing done
    time.sleep(0.01)
    (built / "notebooks/b.html").write_text('<img src="../_images/p.svg"><p>new</p>')
    (built / "_static/zh.js").write_text("en()")   # now the English file: shared
    (built / "_static/new.css").write_text("p{}")
    saved, plots, done = publish("zh", False)
    assert done == 4, done   # b.html, zh.js and new.css, then a.html again: what is shared changed
    publish("fresh", True)
    assert _tree(tmp_path / "zh") == _tree(tmp_path / "fresh")
    assert "_static/zh.js" not in _tree(tmp_path / "zh")
    (built / "_static/new.css").unlink()
    publish("zh", False)
    publish("fresh", True)
    assert _tree(tmp_path / "zh") == _tree(tmp_path / "fresh")
    assert "_static/new.css" not in _tree(tmp_path / "zh")
