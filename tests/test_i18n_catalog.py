"""The Chinese edition's shared catalogs: the figures' and plots' messages (rope_edu.i18n, read by
Python and by core.js alike), the term table (locales/zh_CN/terms.csv) and the gate
(scripts/i18n.py check), the plots' Chinese font. Unit tests: no book build, no browser."""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from rope_edu import i18n, plots
from rope_edu.widgets._core import JS_DIR

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "_ext"))
sys.path.insert(0, str(Path(__file__).parent))
import i18n as tool  # noqa: E402  (scripts/i18n.py)
import i18n_strings  # noqa: E402  (scripts/i18n_strings.py)

CATALOG = json.loads((i18n.LOCALES / "zh_CN.json").read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def _english_after():
    yield
    i18n.set_language(None)


# --- rope_edu.i18n ---------------------------------------------------------------------------------

def test_translate_exact_pattern_nested_and_unmatched():
    assert i18n.translate("base b", "zh_CN") == "底数 b"
    assert i18n.translate("pair 3", "zh_CN") == "第 3 对"
    # a placeholder's value is itself translated; placeholders may change order
    assert i18n.translate("{0}: drawing, scrolls sideways".replace("{0}", "position m"), "zh_CN") == "位置 m：绘图区，可横向滚动"
    assert i18n.translate("{0}: {1} of {2} coordinates rotate, {3}".format("A", 8, 64, "x"), "zh_CN") == "A：64 个坐标中 8 个旋转，x"
    assert i18n.translate("−1.25", "zh_CN") == "−1.25"          # numbers and symbols pass through
    assert i18n.translate("pair 3", "en") == "pair 3"            # English: no catalog
    assert i18n.translate("pair 3", "zh-CN") == i18n.translate("pair 3", "zh")


def test_language_from_setting_then_environment(monkeypatch):
    monkeypatch.delenv(i18n.LANG_ENV, raising=False)
    assert i18n.language() == "en"
    monkeypatch.setenv(i18n.LANG_ENV, "zh-CN")
    assert i18n.language() == "zh_CN"
    i18n.set_language("en")
    assert i18n.language() == "en" and i18n.translate("base b") == "base b"
    with pytest.raises(ValueError, match="lang must be 'en' or one of"):
        i18n.set_language("fr")
    with pytest.raises(TypeError, match="lang must be a string"):
        i18n.translate("x", 3)


def test_message_templates():
    assert i18n.message("Panel {0} of {1}", 1, 2, lang="en") == "Panel 1 of 2"
    assert i18n.message("Panel {0} of {1}", 1, 2, lang="zh_CN") == "第 1 幅（共 2 幅）"
    assert i18n.message(" ", lang="zh_CN") == ""                 # Chinese sentences join without spaces


def _run_core(script: str) -> object:
    from node_figure import require_node

    node = require_node()
    core = (JS_DIR / "core.js").read_text(encoding="utf-8")
    source = "globalThis.window ??= { addEventListener() {} };\n" + core + "\n" + script
    # the program on stdin: the whole catalog in a command line passes the kernel's 128 KiB limit on one argument
    out = subprocess.run([node, "--input-type=module"], input=source, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_core_js_translates_as_python_does():
    """core.js's tr() and rope_edu.i18n.translate give the same text for every key of the catalog
    filled with sample values (and leave what no key matches alone)."""
    samples = []
    for key in CATALOG["messages"]:
        filled = re.sub(r"\{(\d+)\}", lambda m: ["3", "position m", "1.50", "base b"][int(m.group(1)) % 4], key)
        samples.append(filled)
    samples += ["0.25", "−∞", "n/a", "10⁴", "something no key matches"]
    got = _run_core(f"const M = compileMessages({json.dumps(CATALOG['messages'], ensure_ascii=False)});\n"
                    f"process.stdout.write(JSON.stringify({json.dumps(samples, ensure_ascii=False)}.map((s) => tr(s, M))));")
    assert got == [i18n.translate(s, "zh_CN") for s in samples]
    # no catalog (English): every string unchanged
    same = _run_core(f"process.stdout.write(JSON.stringify({json.dumps(samples, ensure_ascii=False)}.map((s) => tr(s, compileMessages({{}})))));")
    assert same == samples


def test_core_js_wraps_chinese_between_characters():
    lines = _run_core('process.stdout.write(JSON.stringify([wrapWords("不加位置时变化为 0（浮点舍入约 1e−16，显示为 0）：输出只是随词一起移动。", 20), '
                      'wrapWords("the outputs only move with their words", 12)]));')
    zh, en = lines
    assert "".join(zh).replace(" ", "") == "不加位置时变化为0（浮点舍入约1e−16，显示为0）：输出只是随词一起移动。"
    assert all(sum(2 if re.match(f"[{i18n.CJK_RANGE}]", c) else 1 for c in line) <= 21 for line in zh)
    assert en == ["the outputs", "only move", "with their", "words"]


def test_live_widget_carries_the_catalog_of_its_language():
    from rope_edu.widgets import clock

    assert clock.DEMO.widget()._messages == {}
    i18n.set_language("zh_CN")
    assert clock.DEMO.widget()._messages["base b"] == "底数 b"


# --- scripts/i18n.py check: the figure catalog ------------------------------------------------------

def test_catalog_covers_what_the_figures_show():
    """The only check of the real catalog against the figures' code (about 1 s: it imports every figure)."""
    problems = tool.figure_problems(CATALOG, i18n_strings.english_strings(), i18n_strings.template_keys(), tool.load_terms(ROOT))
    assert problems == []


def test_figure_problems_catch_missing_keys_placeholders_numbers_and_terms():
    data = {"messages": {"pair {0}": "第 {1} 对", "3 turns": "4 圈", "empty": "", "base b": "基数 b"},
            "not shown": ["xMidYMid meet"]}
    english = {"js/x.js": {"pair {0}", "new label", "xMidYMid meet"}}
    found = "\n".join(tool.figure_problems(data, english, {"plots.py": {"Plot"}}, tool.load_terms(ROOT)))
    assert "no translation of 'new label'" in found and "xMidYMid" not in found
    assert "no template 'Plot'" in found
    assert "placeholders ['0'] -> ['1']" in found
    assert "numbers ['3'] -> ['4']" in found
    assert "untranslated: 'empty'" in found
    assert "term 'base': the translation does not use '底数'" in found


def test_extraction_turns_template_literals_into_placeholders():
    found = i18n_strings.js_strings('text(g, 0, 0, `pair ${i}`, { class: "axis-label", "text-anchor": "middle" });\n'
                             'fig.readout("x", `turns${sub(i)}`, v, 2, `of ${n}`); // a comment, not a label\n'
                             'legend(svg, 1, 2, [["at least one full turn made (solid ring)", COLORS.q]]);')
    # a readout's label is drawn, its name is not
    assert found == {"pair {0}", "turns{0}", "of {0}", "at least one full turn made (solid ring)"}


def test_extraction_finds_drawn_one_word_and_semicolon_strings_and_nothing_of_the_code():
    """One word or a trailing ";" reads like code; where the figure draws it, it is shown: a
    text's string, a readout's label and unit, a plot's label, a legend item, a line of a text."""
    source = (
        'text(svg, 12, 58, "binary", { class: "axis-label", "text-anchor": "middle" });\n'
        'text(svg, 1, 2, "the whole colour pattern;", { class: "legend-label" });\n'
        'fig.readout("context", "Δrow", L, 0, "tokens");\n'
        'plot(svg, box, { x: [0, 1], y: [0, 1], ylabel: "score", xticks: [[0, "start"], [1, "end"]] });\n'
        'legend(svg, 1, 2, [["query", COLORS.q, true]]);\n'
        'legend(svg, 1, 2, [[m === "default" ? "plain RoPE" : "scaled", COLORS.k]]);\n'
        'const lines = k ? ["0 for every word:", "the outputs only", "words"] : ["none"];\n'
        'fig.note(`The marker is (L, b): green ` +\n  "where it holds; " + `${n} fail.`);\n'
        # code: tags, attributes, classes, names, keys compared, layouts, events, styles, regexps
        'el("circle", { cx: 1, fill: "white", class: "dial" }, svg);\n'
        'if (shape === "square" || L.bar.label === "above") node.setAttribute("role", "img");\n'
        'const SERIES = [["t (time)", 0, "triangle"]];\n'
        'window.addEventListener("keydown", f); const s = "font-weight: bold;";\n'
        'const x = name.replace(/ "[a-z]+"/, "");  // "a comment", not drawn\n'
        'const y = a / b; z(y / 2, "kept");\n'
    )
    found = i18n_strings.js_strings(source)
    assert found == {"binary", "the whole colour pattern;", "Δrow", "tokens", "score", "start", "end", "query", "plain RoPE", "scaled",
                     "0 for every word:", "the outputs only", "words", "t (time)",
                     "The marker is (L, b): green where it holds; {0} fail."}, found


# --- the term table -------------------------------------------------------------------------------

def test_term_table_is_well_formed_and_used_by_the_figures():
    terms = tool.load_terms(ROOT)
    assert {"rotary position embedding", "attention", "query", "key", "wavelength", "base", "context extension",
            "interpolation", "KV cache"} <= {en for en, _, _ in terms}
    assert dict((en, zh) for en, zh, _ in terms)["rotary position embedding"] == "旋转位置编码"


def test_term_problems():
    terms = tool.load_terms(ROOT)
    assert tool.term_problems("The base of the wavelengths", "底数与波长", terms) == []
    assert tool.term_problems("raise the base", "提高基数", terms) == ["term 'base': the translation does not use '底数'"]
    # the longer term first: "position interpolation" needs 位置插值, and then "interpolation" is satisfied
    assert tool.term_problems("Position Interpolation divides positions", "位置插值把位置除以", terms) == []
    assert tool.term_problems("Rotary Position Embedding", "旋转位置编码", terms) == []        # not 嵌入 for "embedding"
    # code, maths and role targets are not prose
    assert tool.term_problems("set `base` in {doc}`x <keys>` with $key$", "设置 `base`，见 {doc}`x <keys>`，$key$", terms) == []


def test_titled_roles_translate_their_title_not_their_target():
    en = "see {doc}`chapter 2 <../notebooks/02_absolute_encodings>`."
    assert tool.problems(en, "见{doc}`第 2 章 <../notebooks/02_absolute_encodings>`。") == []
    assert tool.problems(en, "见{doc}`第 2 章 <../notebooks/03_rope_2d>`。") != []
    assert tool.problems("see {ref}`ch10-base`.", "见{ref}`ch10-mla`。") != []


def test_fill_glossary_sets_terms_from_the_table(tmp_path):
    import polib

    (tmp_path / "locales" / "zh_CN" / "LC_MESSAGES" / "book").mkdir(parents=True)
    (tmp_path / tool.TERMS).write_text("english,chinese,note\nwavelength,波长,\nKV cache,KV 缓存,\n", encoding="utf-8")
    po = polib.POFile()
    for msgid in ("wavelength", "KV cache", "ALiBi", "The number of positions of one turn."):
        po.append(polib.POEntry(msgid=msgid, msgstr=""))
    path = tmp_path / "locales" / "zh_CN" / "LC_MESSAGES" / "book" / "glossary.po"
    po.save(str(path))
    assert tool.fill_glossary(tmp_path) == 2
    got = {e.msgid: e.msgstr for e in polib.pofile(str(path))}
    assert got["wavelength"] == "波长（wavelength）" and got["KV cache"] == "KV 缓存（KV cache）" and got["ALiBi"] == ""


def test_chinese_glossary_shows_the_term_table():
    import editions

    table = editions.terms_table(ROOT / tool.TERMS)
    with open(ROOT / tool.TERMS, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert table.count("<tr><td") == len(rows)
    assert "<td lang=\"zh-CN\">旋转位置编码</td><td lang=\"en\">rotary position embedding</td>" in table


# --- plots: the font, the alt text, the SVG ---------------------------------------------------------

def test_font_covers_every_chinese_character_of_the_catalog():
    from fontTools.ttLib import TTFont

    texts = [*CATALOG["messages"].values(), *CATALOG["templates"].values()]
    cmap = TTFont(str(i18n.FONT)).getBestCmap()
    missing = sorted(set(tool.cjk_characters(texts)) - {chr(c) for c in cmap})
    assert missing == [], f"run: python scripts/i18n.py font (missing {''.join(missing)})"
    assert i18n.FONT.stat().st_size < 200_000


def test_matplotlib_draws_chinese_with_the_package_font():
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")
    plots.use_cjk_font()
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.set_xlabel(i18n.translate("wavelength λᵢ (tokens, log)", "zh_CN"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # "Glyph ... missing from font(s)" is a warning
        fig.savefig(io.BytesIO(), format="png", dpi=50)
    plt.close(fig)


def test_alt_text_english_unchanged_and_chinese_from_templates():
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="q")
    ax.plot([0, 1], [1, 0], label="k")
    ax.legend()
    ax.set_xlabel("position m")
    ax.set_title("t")
    assert plots.alt_text(fig) == ("Plot (t): 2 lines, values against position m; "
                                   "x from -0.05 to 1.05, y from -0.05 to 1.05; legend: q, k.")
    i18n.set_language("zh_CN")
    assert plots.alt_text(fig) == ("图（t）：2 条曲线，纵轴为数值，横轴为位置 m；"
                                   "x 从 -0.05 到 1.05，y 从 -0.05 到 1.05；图例：q、k。")
    plt.close(fig)


SVG = ('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10pt" height="10pt">'
       '<text style="font-size: 10px; font-family: \'DejaVu Sans\', sans-serif; text-anchor: middle" x="1" y="2">wavelength (positions)</text>'
       '<text style="font-size: 10px; font-family: \'DejaVu Sans\', sans-serif" x="1" y="2">−0.5</text></svg>')


def test_translate_svg_translates_text_and_embeds_only_the_glyphs_it_uses():
    from fontTools.ttLib import TTFont

    assert tool.translate_svg(SVG, "en") == SVG
    assert tool.translate_svg(SVG.replace("wavelength (positions)", "no key"), "zh_CN") == SVG.replace(
        "wavelength (positions)", "no key")
    out = tool.translate_svg(SVG, "zh_CN")
    assert ">波长（位置数）</text>" in out and ">−0.5</text>" in out
    # the embedded face first (named after the Latin fonts, Chromium drew a plot's first label before it
    # had loaded, in boxes), and it holds every Chinese character of every label
    assert f"font-family: '{i18n.FONT_FAMILY}', 'DejaVu Sans', sans-serif; text-anchor: middle" in out
    assert tool.svg_font_problems(out) == []
    assert tool.svg_font_problems(out.replace(f"'{i18n.FONT_FAMILY}', 'DejaVu Sans'", f"'DejaVu Sans', '{i18n.FONT_FAMILY}'"))
    assert tool.svg_font_problems(out.replace("波长", "波长长度"))
    data = re.search(r"url\(data:font/woff;base64,([^)]+)\)", out).group(1)
    font = TTFont(io.BytesIO(base64.b64decode(data)))
    assert {chr(c) for c in font.getBestCmap()} == set("波长（位置数）")
    from xml.dom import minidom

    minidom.parseString(out.encode("utf-8"))     # still well-formed XML


def test_plot_labels_with_no_translation_kept_as_they_are_and_in_maths(tmp_path):
    images = tmp_path / "_images"
    images.mkdir()
    assert CATALOG["messages"]["RoPE"] == "RoPE" and "no such label here" not in CATALOG["messages"]
    maths = "".join(f'<tspan x="{i}" y="0">{c}</tspan>' for i, c in enumerate("pair index\xa0i"))
    (images / "a.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg">'
        '<text x="1" y="2">wavelength (positions)</text>'     # translated
        '<text x="1" y="2">RoPE</text>'                       # the catalog keeps it as it is
        '<text x="1" y="2">no such label here</text>'         # missing
        f'<text x="1" y="2">{maths}</text></svg>', encoding="utf-8")
    left, kept, in_maths = tool.plot_labels(tmp_path)
    assert left == ["no such label here"] and kept == ["RoPE"]
    assert in_maths == {"pair index i": "a.svg"}     # drawn glyph by glyph: the catalog cannot reach it


# --- on the built site (the book build every run makes; no browser) ----------------------------------

def test_built_sites_serve_the_catalog_and_the_chinese_font(built_book):
    figures = built_book / "_static" / "rope_figures"
    # the Chinese pages share the English loader.js, which reads the catalog beside itself
    assert json.loads((figures / "messages.zh_CN.json").read_text(encoding="utf-8")) == CATALOG
    zh_figures = built_book / "zh" / "_static" / "rope_figures"
    assert (zh_figures / "cjk.css").is_file() and (zh_figures / f"{i18n.FONT.stem}.woff").is_file()
    assert not (figures / "cjk.css").exists()
    chapter = "notebooks/05_frequencies.html"
    en, zh = (built_book / chapter).read_text(encoding="utf-8"), (built_book / "zh" / chapter).read_text(encoding="utf-8")
    assert "cjk.css" not in en and "rope_figures/cjk.css" in zh
    assert '<p class="rope-fig-noscript">交互式图：需要 JavaScript。</p>' in zh
    assert '<p class="rope-fig-noscript">Interactive figure: it needs JavaScript.</p>' in en


def test_built_chinese_glossary_has_the_term_table(built_book):
    page = (built_book / "zh" / "book" / "glossary.html").read_text(encoding="utf-8")
    assert 'id="terms-table"' in page and "<td lang=\"zh-CN\">旋转位置编码</td>" in page
    assert "波长（wavelength）" in page
    assert 'id="terms-table"' not in (built_book / "book" / "glossary.html").read_text(encoding="utf-8")


def test_built_chinese_plots_translate_what_the_catalog_holds(built_book):
    """A plot whose labels the catalog holds is translated and carries its font; any other plot of
    the Chinese site is the English one, shared (not copied)."""
    zh_images = built_book / "zh" / "_images"
    for english in sorted((built_book / "_images").glob("*.svg")):
        words = {html.unescape(w) for w in re.findall(r"<text\b[^>]*>([^<]+)</text>", english.read_text(encoding="utf-8"))}
        translated = {w for w in words if i18n.translate(w, "zh_CN") != w}
        twin = zh_images / english.name
        if not translated:
            assert not twin.exists(), f"{english.name}: nothing to translate, yet not shared"
            continue
        svg = twin.read_text(encoding="utf-8")
        assert "data:font/woff;base64," in svg or not tool.cjk_characters(i18n.translate(w, "zh_CN") for w in translated)
        for w in translated:
            assert f">{html.escape(i18n.translate(w, 'zh_CN'), quote=False)}</text>" in svg


# --- the code cells' outputs: plot captions and alt texts, table captions and headers ----------------

def _plot_html(caption: str, alt: str) -> str:
    """A plot as _ext/book_plots.py's PlotFigures puts it on a page."""
    return (f'<figure class="rope-plot align-default" id="id5">\n<img alt="{html.escape(alt)}" src="../_images/x.svg" '
            f'loading="lazy" />\n<figcaption>\n<p><span class="caption-number">Fig. 2.1 </span><span class="caption-text">'
            f'{html.escape(caption, quote=False)}</span><a class="headerlink" href="#id5">#</a></p>\n</figcaption>\n</figure>')


def test_output_messages_of_a_page():
    from rope_edu import table

    tab = table([[128, 0.5], ["not run (= plain RoPE)", "fails 16,384 & more"], ["n/a", "1.2e-16"]],
                ["head_\u200bdim", "base b"], caption="Men et al.'s <criterion>")._repr_html_()
    page = f"<p>prose</p>{_plot_html('Each row is one code: 1 < 2.', 'Heatmap & more')}<div>{tab}</div>"
    # a cell that holds words is a template (its numbers {0}, {1}, ...); a cell of numbers is none
    assert tool.output_messages(page) == [
        ("plot caption", "Each row is one code: 1 < 2."), ("plot alt text", "Heatmap & more"),
        ("table caption", "Men et al.'s <criterion>"), ("table header", "head_\u200bdim"), ("table header", "base b"),
        ("table cell", "not run (= plain RoPE)"), ("table cell", "fails {0} & more"), ("table cell", "n/a")]
    # a table without a caption; a figure that is not a plot is not an output
    assert tool.output_messages(table([[1]], ["x"])._repr_html_() + '<figure class="align-default"><img alt="a"/></figure>') == [
        ("table header", "x")]
    # a folded table: its line first, then its caption and headers
    assert tool.output_messages(table([[1]], ["x"], caption="C", fold="All & more")._repr_html_()) == [
        ("table fold", "All & more"), ("table caption", "C"), ("table header", "x")]


def test_outputs_catalog_is_merged_like_the_pages(tmp_path):
    """update_outputs: a message per text with its pages; a changed text comes back fuzzy (or
    untranslated), a gone one obsolete, a kept one keeps its translation."""
    import polib

    pages = tmp_path / "_build" / "html" / "notebooks"
    pages.mkdir(parents=True)
    (tmp_path / tool.LOCALES / tool.LANG / "LC_MESSAGES").mkdir(parents=True)
    one = _plot_html("The wavelength of each pair grows with its index.", "Three lines rising to the right.")
    (pages / "01_a.html").write_text(one, encoding="utf-8")
    (pages / "02_b.html").write_text(one + _plot_html("Perplexity against context.", "One line."), encoding="utf-8")
    assert tool.update_outputs(tmp_path) == 4
    path = tmp_path / tool.LOCALES / tool.LANG / "LC_MESSAGES" / "outputs.po"
    po = polib.pofile(str(path))
    entry = po.find("The wavelength of each pair grows with its index.")
    assert entry.occurrences == [("notebooks/01_a", ""), ("notebooks/02_b", "")] and entry.comment == "plot caption"
    for e in po:
        e.msgstr = "译文"
    po.save()
    (pages / "02_b.html").write_text(_plot_html("The wavelength of each pair grows with its index!", "One line."),
                                     encoding="utf-8")
    (pages / "01_a.html").unlink()
    assert tool.update_outputs(tmp_path) == 2
    po = polib.pofile(str(path))
    assert po.find("One line.").msgstr == "译文" and "fuzzy" not in po.find("One line.").flags
    changed = po.find("The wavelength of each pair grows with its index!")
    assert not changed.msgstr or "fuzzy" in changed.flags
    assert {e.msgid for e in po.obsolete_entries()} >= {"Perplexity against context.", "Three lines rising to the right."}
    assert tool.update_outputs(tmp_path / "no site") == -1


def test_translate_tables_translates_caption_headers_and_cells():
    import editions
    from rope_edu import table

    tab = table([["base", 0.5], ["fails 16,384 again", "4,096 tokens served"], ["no message", 2]],
                ["base", "head_\u200bdim"], caption="Men et al.'s criterion")._repr_html_()
    messages = {"base": "底数", "Men et al.'s criterion": "Men 等人的判据 <1>", "fails {0} again": "在 {0} 处再次失败",
                "{0} tokens served": "可支撑 {0} 个词元"}
    out = editions.translate_tables(f"<p>base</p>{tab}", messages)
    assert out.startswith("<p>base</p>")                       # only the table's words
    assert "<caption>Men 等人的判据 &lt;1&gt;</caption>" in out
    assert '<th scope="col">底数</th><th scope="col">head_\u200bdim</th>' in out
    # a cell through its template, with this build's numbers; a number, and a cell no message has, as they are
    assert "<td>底数</td><td>0.5</td>" in out
    assert "<td>在 16,384 处再次失败</td><td>可支撑 4,096 个词元</td>" in out
    assert "<td>no message</td><td>2</td>" in out
    # a folded table's line, as its caption
    folded = table([["base", 1]], ["base", "n"], fold="The full table")._repr_html_()
    assert ">全表</summary>" in editions.translate_tables(folded, {"The full table": "全表"})
    # the Chinese edition writes 16.7% where a cell of numbers prints 16.7 %
    tab = table([["16.7 %", "per channel"]], ["key error", "scale"])._repr_html_()
    assert "<td>16.7 %</td>" in editions.translate_tables(tab, messages)
    assert "<td>16.7%</td><td>per channel</td>" in editions.translate_tables(tab, messages, tight_percent=True)


def test_outputs_catalog_translated():
    """Every text of the chapters' outputs has its Chinese (scripts/i18n.py check checks the rest)."""
    import polib

    po = polib.pofile(str(ROOT / tool.LOCALES / tool.LANG / "LC_MESSAGES" / f"{tool.OUTPUTS}.po"))
    left = [e.msgid for e in po if not e.obsolete and (not e.msgstr or "fuzzy" in e.flags)]
    assert not left, f"{len(left)} texts to translate in outputs.po, e.g. {left[:3]}"


def test_catalogs_are_valid_gettext():
    """No catalog holds what ``msgfmt --check`` rejects: an obsolete entry with a live entry's msgid
    (a message that came back) or a ``python-format`` flag on prose with a "%". ``update`` tidies
    both (``tool.tidy``)."""
    import polib

    po = polib.POFile()
    po.append(polib.POEntry(msgid="back again", msgstr="又回来了"))
    po.append(polib.POEntry(msgid="back again", msgstr="旧的", obsolete=True))
    po.append(polib.POEntry(msgid="25% of pairs", msgstr="25% 的维度对", flags=["python-format"]))
    assert tool.tidy(po) == 2
    assert [(e.msgid, e.obsolete, e.flags) for e in po] == [("back again", False, []), ("25% of pairs", False, [])]
    bad = {}
    for path in sorted((ROOT / "locales").rglob("*.po")):
        catalog = polib.pofile(str(path))
        live = {e.msgid for e in catalog if not e.obsolete}
        problems = [e.msgid[:40] for e in catalog if (e.obsolete and e.msgid in live) or "python-format" in e.flags]
        if problems:
            bad[path.name] = problems
    assert not bad, f"run: python scripts/i18n.py update ({bad})"


#: Words allowed inside \text{}, \operatorname{} or \mathrm{} of the Chinese pages: names of functions and
#: operators (Re, softmax, diag), of the code's fields and factors (low/high, fast/slow, short/long, all),
#: shapes (seq, heads), models and methods (NTK, YaRN). Prose words are translated (issue 42).
TEX_NAMES = {"Re", "Im", "clip", "low", "high", "Attention", "Attn", "softmax", "softplus", "code", "bit", "head", "heads",
             "model", "atan2", "const", "diag", "half", "sgn", "tr", "Var", "round", "rot", "rotate\\_half", "int",
             "partner", "RMSNorm", "fl", "seq", "fast", "slow", "all", "PPL", "short", "long", "out", "elu", "NTK", "YaRN"}
_TEX_WORDS = re.compile(r"\\(?:text|textrm|mathrm|textbf|operatorname)\{([^{}]*)\}")


def test_no_english_words_inside_the_chinese_pages_maths():
    """The words in a formula's \\text{} are prose, translated like the rest ("for all", "so",
    "(radial equation)", "by default"); only names (TEX_NAMES) stay. The maths around them is the
    English message's (the gate: scripts/i18n.py problems)."""
    import polib

    found = {}
    for path in sorted((ROOT / tool.LOCALES / tool.LANG / "LC_MESSAGES").rglob("*.po")):
        for entry in polib.pofile(str(path)):
            if entry.obsolete:
                continue
            for words in _TEX_WORDS.findall(entry.msgstr):
                english = [w for w in re.findall(r"[A-Za-z\\_]{2,}[0-9]*", words) if w not in TEX_NAMES]
                if english:
                    found.setdefault(path.name, []).append(words)
    assert not found, found
    assert tool.problems("\n\\text{so}\\quad a = b\n", "\n\\text{所以}\\quad a = b\n") == []
    assert tool.problems("\n\\text{so}\\quad a = b\n", "\n\\text{所以}\\quad a = c\n") != []
    assert tool.problems("so $\\text{all} x$ here", "所以 $\\text{所有} x$ 在此") == []


def test_markup_problems_lists_escapes_bold_and_half_width_punctuation():
    # a heading translated "6. …" parses as a list item and Sphinx keeps the English heading
    assert tool.problems("6. Multimodal models", "6. 多模态模型")
    assert tool.problems("6. Multimodal models", "6\\. 多模态模型") == []
    assert tool.problems("1. RoPE", "1. RoPE") == []   # unchanged: Sphinx keeps the node
    # CommonMark does not close ** after 。 before a Han character
    assert tool.problems("**Move both.** This is RoPE.", "**移动两者。**这就是 RoPE。")
    assert tool.problems("**Move both.** This is RoPE.", "**移动两者**。这就是 RoPE。") == []
    assert tool.problems("**Move both.** This is RoPE.", "**移动两者。** 这就是 RoPE。") == []
    assert tool.problems("set **`base`** here", "在这里设置**`base`**的值")
    # half-width , : ; ( ) next to a Chinese character; maths, code and numbers keep theirs
    assert tool.problems("shift test, 500 samples: none 0", "平移测试,500 个样例:无 0")
    assert tool.problems("shift test, 500 samples: none 0", "平移测试，500 个样例：无 0") == []
    assert tool.problems("at $(0.5, 1)$ and `f(a,b)`", "在 $(0.5, 1)$ 处和`f(a,b)`中") == []
    assert tool.problems("merged 2026-08-30", "2026 年 8 月 30 日合并") == []   # a date's numbers, unpadded


def test_an_unchanged_catalog_is_not_written_again(tmp_path):
    """`scripts/i18n.py update` leaves a catalog whose text did not change as it is, mtime and all:
    the next build then compiles no .mo again and reads no Chinese page again."""
    import os

    import polib

    path = tmp_path / "page.po"
    po = polib.POFile(wrapwidth=0)
    po.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
    po.append(polib.POEntry(msgid="Rotation", msgstr="旋转"))
    assert tool.save_if_changed(po, path)
    os.utime(path, (1_000_000, 1_000_000))
    same = polib.pofile(str(path), wrapwidth=0)
    assert not tool.save_if_changed(same, path)
    assert path.stat().st_mtime == 1_000_000
    same[0].msgstr = "转动"
    assert tool.save_if_changed(same, path)
    assert path.stat().st_mtime != 1_000_000 and "转动" in path.read_text(encoding="utf-8")


def test_the_editions_key_ignores_the_compiled_catalogs(tmp_path):
    """The .mo files Sphinx compiles beside the .po catalogs while it builds the Chinese edition do
    not change the edition's key (scripts/i18n_site.py inputs_key): a fresh checkout's first build
    compiles them, and the next `make book`, nothing changed, must keep the edition as built. A
    catalog's own text does change it."""
    import i18n_site

    messages = tmp_path / "locales" / "zh_CN" / "LC_MESSAGES" / "notebooks"
    messages.mkdir(parents=True)
    (messages / "page.po").write_text('msgid "Rotation"\nmsgstr "旋转"\n', encoding="utf-8")
    before = i18n_site.inputs_key(tmp_path)
    (messages / "page.mo").write_bytes(b"\xde\x12\x04\x95compiled")
    assert i18n_site.inputs_key(tmp_path) == before
    (messages / "page.po").write_text('msgid "Rotation"\nmsgstr "转动"\n', encoding="utf-8")
    assert i18n_site.inputs_key(tmp_path) != before
