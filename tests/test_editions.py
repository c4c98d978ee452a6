"""The Chinese edition (scripts/i18n.py, _ext/editions.py): one source, two sites.

Checked on the built site: every English page has its Chinese page under zh/ (lang="zh-CN"),
each links to the other (a visible link and <link rel="alternate" hreflang>, in the static HTML),
the Chinese site shares the English site's static files instead of carrying a second copy, and a
Chinese chapter opens in Chromium with its figures and no failed request. The catalogs' gate:
a translation may not change its English message's maths, roles, code spans, links or numbers.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import i18n  # noqa: E402

SKIP = {"search.html", "genindex.html", "index.html", "prf-prf.html"}   # generated: no page body


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html")
                  if not p.relative_to(site).parts[0] in ("zh", "_static", "_sources", "_images")
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
    msgstr = "第 $i$ 对每个位置转过 $\\theta_i = b^{-2i/d}$（见 {prf:ref}`ch05-thm`、`frequencies`），默认底数为 10000。"
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
        en_soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        zh_soup = BeautifulSoup(twin.read_text(encoding="utf-8"), "html.parser")
        assert zh_soup.html.get("lang") == "zh-CN", rel
        for soup, here, other in ((en_soup, page, twin), (zh_soup, twin, page)):
            link = soup.select_one("a.rope-edition")
            assert link is not None, f"{here.relative_to(built_book)}: no link to the other edition"
            assert Path(os.path.normpath(here.parent / link["href"])) == other, (rel, link["href"])
            alternates = {l["hreflang"] for l in soup.select('link[rel="alternate"][hreflang]')}
            assert alternates == {"en", "zh-CN"}, (rel, alternates)


@pytest.mark.book
def test_the_chinese_site_shares_the_english_static_files(built_book):
    zh = built_book / "zh"
    assert not (zh / "_static" / "rope_figures" / "loader.js").exists()
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
