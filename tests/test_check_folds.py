"""Checks out of the flow, still running (_ext/check_folds.py).

A copy of the repository whose table of contents holds one probe chapter is built with the real
`make book` script: the folded checks of each section end up in one "✓ N checks in this
section" fold, each verdict opening its code; what a check prints besides its verdict stays in
the flow; visible checks and checks inside exercise solutions stay where they are, a solution's
code folded under its own verdicts. Then one
check is made wrong on purpose and the build must fail, naming the claim.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from conftest import ROOT, probe_repository

if str(ROOT / "_ext") not in sys.path:   # the extension's own functions, imported by name
    sys.path.insert(0, str(ROOT / "_ext"))

pytestmark = [pytest.mark.book, pytest.mark.slow]

TOC = "format: jb-book\nroot: book/probe_intro\nchapters:\n  - file: notebooks/probe\n"
FOLDED = {"tags": ["hide-input"]}
RIGHT = "rope_edu.frequencies(4, base=100.0)[1]"   # 100 ** (-2/4) = 0.1


def _md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(text: str, meta: dict | None = None) -> dict:
    return {"cell_type": "code", "metadata": dict(meta or {}), "execution_count": None,
            "outputs": [], "source": text}


def _chapter(value: str) -> dict:
    cells = [
        _md("# Probe chapter\n\nOpening prose."),
        _code("import rope_edu\nfrom rope_edu import verify\nimport numpy as np"),
        _md("## First section\n\nA claim."),
        _code(f'with verify("pair 1 of d = 4, base 100 turns 0.1 rad per token") as v:\n'
              f'    v.close({value}, 0.1, rtol=1e-12)', FOLDED),
        _code('with verify("pair 0 turns 1 rad per token") as v:\n'
              '    v.close(rope_edu.frequencies(4, base=100.0)[0], 1.0, atol=0)\n'
              'print("a number the prose quotes: 42")', FOLDED),
        _code('with verify("the lesson: written out for the reader") as v:\n'
              '    v.true(bool(rope_edu.frequencies(8)[0] == 1.0), "pair 0 is 1")'),
        _md("### A subsection\n\nMore."),
        _code('print(rope_edu.table([[1, 2]], ["a", "b"], caption="A probe table"))', FOLDED),
        _md("## Exercises\n\n:::{exercise}\n:label: probe-ex\n\nDo it.\n:::\n\n"
            ":::{solution-start} probe-ex\n:class: dropdown\n:::\n\nSolved."),
        _code('with verify("inside a solution") as v:\n    v.true(True, "yes")', FOLDED),
        _code('answer = 6 * 7\nprint("the answer:", answer)'),
        _md(":::{solution-end}\n:::"),
    ]
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}


def _write(root: Path, value: str) -> None:
    nb = _chapter(value)
    for i, cell in enumerate(nb["cells"]):
        cell["id"] = f"c{i}"
    (root / "notebooks" / "probe.ipynb").write_text(json.dumps(nb, indent=1), encoding="utf-8")


def _build(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "build_book.py"), "--root", str(root)],
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = probe_repository(tmp_path_factory.mktemp("folds") / "repo", TOC, "One chapter.")
    _write(root, RIGHT)
    result = _build(root)
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    return root


@pytest.fixture(scope="module")
def page(project) -> BeautifulSoup:
    html = (project / "_build" / "html" / "notebooks" / "probe.html").read_text(encoding="utf-8")
    return BeautifulSoup(html, "html.parser").select_one("article.bd-article")


def _section(page: BeautifulSoup, heading: str):
    h = page.find(lambda t: t.name in ("h2", "h3") and heading in t.get_text())
    return h.find_parent("section")


def test_a_sections_folded_checks_are_one_line(page):
    first = _section(page, "First section")
    groups = first.find_all("details", class_="rope-checks", recursive=False)
    assert len(groups) == 1
    summary = groups[0].find("summary").get_text(" ", strip=True)
    assert summary == "✓ 2 checks in this section", summary
    verdicts = [v.get_text() for v in groups[0].select("details.rope-check > summary .rope-verdict")]
    assert verdicts[0].startswith("checked: pair 1 of d = 4, base 100 turns 0.1 rad per token; max")
    assert verdicts[1].startswith("checked: pair 0 turns 1 rad per token")
    # each verdict opens its own code
    codes = [d.select_one(".cell_input").get_text() for d in groups[0].select("details.rope-check")]
    assert "frequencies(4, base=100.0)[1]" in codes[0] and "print(" in codes[1]
    # the fold sits after the section's own text, before its subsection
    children = [c for c in first.children if getattr(c, "name", None)]
    assert children.index(groups[0]) < children.index(first.find("section"))


def test_what_a_check_prints_besides_its_verdict_stays_in_the_flow(page):
    first = _section(page, "First section")
    flow = [c for c in first.children if getattr(c, "name", None) and "rope-checks" not in (c.get("class") or [])]
    text = " ".join(c.get_text() for c in flow)
    assert "a number the prose quotes: 42" in text
    assert "pair 0 turns 1 rad" not in text          # its verdict went into the fold
    assert "Show code cell" not in text


def test_visible_checks_and_solutions_stay_where_they_are(page):
    first = _section(page, "First section")
    visible = [c for c in first.find_all("div", class_="cell", recursive=False) if c.select_one(".cell_input")]
    assert len(visible) == 1 and "the lesson" in visible[0].get_text()
    solution = page.select_one(".solution")
    assert solution is not None and "checked: inside a solution" in solution.get_text()
    assert not solution.select("details.rope-checks")


def test_a_solutions_code_folds_where_it_stands(page):
    """An opened solution shows its verdicts and what its cells print; each cell's code is one tap
    further (issue 45: solutions were mostly code on a phone). Its title is plain text: a link there
    jumped to the exercise instead of opening the solution."""
    solution = page.select_one(".solution")
    cells = solution.select("div.cell")
    assert len(cells) == 2
    folds = [c.find("details", class_="rope-check", recursive=False) for c in cells]
    assert all(folds), [str(c)[:200] for c in cells]
    assert [f.summary.get_text(" ", strip=True) for f in folds] == ["checked: inside a solution", "show the code"]
    assert all(f.select_one(".cell_input") for f in folds)
    assert not [i for i in solution.select(".cell_input") if not i.find_parent("details", class_="rope-check")]
    # what the second cell prints stays open, after its code
    output = cells[1].find("div", class_="cell_output", recursive=False)
    assert output is not None and "the answer: 42" in output.get_text()
    assert "checked:" not in cells[0].get_text().replace(folds[0].summary.get_text(), "")
    title = solution.select_one(".admonition-title")
    assert "Exercise" in title.get_text() and not title.find_all(True)   # text alone: a tap on it opens


def test_other_folded_code_joins_the_fold_of_its_section(page):
    sub = _section(page, "A subsection")
    group = sub.find("details", class_="rope-checks", recursive=False)
    assert group.find("summary").get_text(" ", strip=True) == "The code of 1 output in this section"
    assert "A probe table" in sub.get_text()        # the output itself stays in the flow
    assert "rope_edu.table" in group.select_one(".cell_input").get_text()


def test_a_wrong_check_fails_the_build(project):
    _write(project, RIGHT.replace("base=100.0", "base=10.0"))   # pair 1 now turns 0.316 rad
    try:
        result = _build(project)
        out = result.stdout + result.stderr
        assert result.returncode != 0, out[-3000:]
        assert re.search(r"check failed: pair 1 of d = 4, base 100 turns 0\.1 rad per token", out), out[-3000:]
    finally:
        _write(project, RIGHT)


def test_the_fold_line_speaks_the_editions_language():
    """The Chinese edition's fold line is Chinese (issue 33): counts and kinds as in English."""
    import check_folds

    assert check_folds.group_label(6, 0, 0) == "6 checks in this section"
    assert check_folds.group_label(1, 2, 2) == "1 check and the code of 2 figures in this section"
    assert check_folds.group_label(0, 1, 0) == "The code of 1 output in this section"
    assert check_folds.group_label(6, 0, 0, "zh_CN") == "本节：6 项检查"
    assert check_folds.group_label(3, 2, 1, "zh_CN") == "本节：3 项检查和 2 项输出的代码"
    assert check_folds.group_label(0, 2, 2, "zh_CN") == "本节：2 张图的代码"


def test_each_folded_cells_line_speaks_the_editions_language():
    """Inside the fold, each cell's line ("code of the table above") is Chinese in the Chinese
    edition; a figure's line quotes its caption (its first 9 words, or what fits 48 columns in Chinese)."""
    from docutils import nodes

    import check_folds

    def output(*children):
        return nodes.container("", *children)

    table = output(nodes.table())
    figure = output(nodes.figure("", nodes.image(uri="a.svg"),
                                 nodes.caption("", "一二三四五六七八九十一二三四五六七八九十一二三四五六")))
    assert check_folds._label(None) == ("code of the output above", False)
    assert check_folds._label(table) == ("code of the table above", False)
    assert check_folds._label(output(nodes.image(uri="a.svg")), "zh_CN") == ("上图的代码", True)
    assert check_folds._label(table, "zh_CN") == ("上表的代码", False)
    assert check_folds._label(None, "zh_CN") == ("上方输出的代码", False)
    assert check_folds._label(figure, "zh_CN") == ("图的代码：一二三四五六七八九十一二三四五六七八九十一二三…", True)


def test_each_verdict_speaks_the_editions_language():
    """A folded verdict in the Chinese edition: "已检查：", its claim through the outputs catalog (one
    it lacks stays English, marked lang="en"), and what verify measured in Chinese; English as printed."""
    import check_folds

    line = "checked: shift test; 500 cases; max error 8.9e-16 (allowed 1e-12), max relative error 4.6e-16 (allowed 1e-12)"
    assert check_folds.split_verdict(line) == (
        "shift test; 500 cases", "max error 8.9e-16 (allowed 1e-12), max relative error 4.6e-16 (allowed 1e-12)")
    assert check_folds.verdict_html(line, "zh_CN", {"shift test; 500 cases": "平移检验；500 个情形"}) == \
        "已检查：平移检验；500 个情形；最大误差 8.9e-16（允许 1e-12），最大相对误差 4.6e-16（允许 1e-12）"
    assert check_folds.verdict_html("checked: a < b; exact", "zh_CN", {}) == '已检查：<span lang="en">a &lt; b</span>；完全相等'
    assert check_folds.verdict_html("checked: a < b; exact", "en") == "checked: a &lt; b; exact"
    assert check_folds.split_verdict("not a verdict") == (None, "")


def test_chinese_caption_is_cut_between_words_never_inside_a_number():
    from check_folds import _width, clip_zh

    assert clip_zh("短标题") == "短标题"
    for text in ("128 维头上的 NTK-alpha（底数 10 000）与 YaRN 的频率比，按维度对排列，另有说明",
                 "SmolLM2-135M，4-bit（d = 64，b = 100,000），Hamlet 的 256 个词元：查询和键的权重"):
        cut = clip_zh(text)
        assert cut.endswith("…") and _width(cut) <= 48 and text.startswith(cut[:-1])
        assert not re.search(r"\d…|\d \d{0,2}…", cut), cut   # 10 000 and 100,000 whole
    assert _width("底数 10") == 7


def test_a_chinese_verdict_wraps_at_the_english_verdicts_width():
    """A translated verdict is one line; it is wrapped to rope_edu.verdicts.WIDTH columns (a Chinese
    character takes two), later lines indented as verify indents them, never inside a number or a
    Latin word (a printed line does not wrap in the page: a long one was cut at 1280 px)."""
    from check_folds import _width, wrap_zh

    from rope_edu.verdicts import WIDTH

    text = ("已检查：全部 64 个维度对都满足 θ_i = b^(−2i/d)（d = 128，b = 10,000）；θ_0 = 1 且 "
            "θ_63 = 1.15e-4，相邻两对之比都是 b^(−2/d) = 0.8660，最快一对每个位置转 57.3 度")
    lines = wrap_zh(text).split("\n")
    assert len(lines) > 1 and all(_width(line) <= WIDTH for line in lines)
    assert all(line.startswith("    ") and not line[4:].startswith(" ") for line in lines[1:])
    assert "".join(line.strip() for line in lines).replace(" ", "") == text.replace(" ", "")
    for number in ("10,000", "1.15e-4", "0.8660", "57.3"):
        assert any(number in line for line in lines), number
    assert wrap_zh("已检查：短") == "已检查：短"
    # no line starts with closing punctuation: the character before it goes down with it
    text = "已检查：" + "区" * 33 + "，少于 1 圈时为 0"   # the first line is full before the comma
    lines = wrap_zh(text).split("\n")
    assert all(_width(line) <= WIDTH for line in lines) and lines[1] == "    区，少于 1 圈时为 0"
    assert "".join(line.strip() for line in lines).replace(" ", "") == text.replace(" ", "")
    # two in a row (）；) go down together, with the number before them
    lines = wrap_zh("已检查：" + "区" * 29 + "（RoPE：1,707）；p = 0.5 从不失效").split("\n")
    assert lines[1] == "    1,707）；p = 0.5 从不失效" and all(_width(line) <= WIDTH for line in lines)
