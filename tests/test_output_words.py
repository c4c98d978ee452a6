"""What code cells print and compute, in the Chinese edition (_ext/output_words.py, _ext/check_folds.py).

Their messages are templates: the English text with its numbers as {0}, {1}, ...; the Chinese shows
the numbers this build computed, wherever its translation puts them. No book build needed.
"""

from __future__ import annotations

import sys

from conftest import ROOT

if str(ROOT / "_ext") not in sys.path:
    sys.path.insert(0, str(ROOT / "_ext"))

import check_folds
import output_words as words

sys.path.insert(0, str(ROOT / "scripts"))
import i18n


def test_a_template_holds_the_numbers_not_the_names():
    assert words.template("max error 3e-16 at position 12 of 16,384; SmolLM2-135M in fp16 (90%)") == (
        "max error {0} at position {1} of {2}; SmolLM2-135M in fp16 ({3}%)", ["3e-16", "12", "16,384", "90"])
    assert words.fill("{2} 中第 {1} 个位置的最大误差为 {0}", ["3e-16", "12", "16,384"]) == "16,384 中第 12 个位置的最大误差为 3e-16"


def test_a_printed_line_keeps_this_builds_numbers():
    messages = {"{0} of {1} hands have made a full turn": "{1} 根指针中有 {0} 根已转满一圈"}
    text = "3 of 8 hands have made a full turn\n[0.1 0.2]\nno template for me"
    assert words.translate_printed(text, messages) == "8 根指针中有 3 根已转满一圈\n[0.1 0.2]\nno template for me"
    assert words.printed_lines(text) == ["{0} of {1} hands have made a full turn", "no template for me"]


def test_data_and_code_are_not_prose():
    for line in ['"rope_theta": 1000000.0,', "[0 1 2 3]", "rot = freqs_cis(pos, dim, base=base)",
                 "return out.astype(x.dtype)", "# Hamlet  ## ACT I", "torch.float32"]:
        assert not words.is_prose(line), line
    assert words.is_prose("QK-norm: no normalisation of queries and keys")


def test_a_verdict_is_left_to_its_translator_and_never_taken_as_prose():
    text = "checked: a long claim about pairs and positions that verify wrapped\n    onto a second line; exact\nthe end of the story"
    assert words.printed_lines(text) == ["the end of the story"]
    assert words.translate_printed(text, {}) == text
    claims = {"a long claim about pairs and positions that verify wrapped onto a second line": "一条很长的断言"}
    assert words.translate_printed(text, {}, verdict=lambda v: check_folds.verdict_text(v, claims)) == \
        "已检查：一条很长的断言；完全相等\nthe end of the story"


def test_a_computed_paragraph_goes_sentence_by_sentence():
    messages = {"At {0} tokens, {1} of {2} keys were retrieved.": "在 {0} 个词元处，{2} 个键中取回了 {1} 个。",
                "Men et al. say so.": "Men 等人如是说。"}
    text, left = words.translate_paragraph("At 4,096 tokens, 6 of 6 keys were retrieved. Men et al. say so. "
                                           "Untranslated here.", messages)
    assert text == "在 4,096 个词元处，6 个键中取回了 6 个。Men 等人如是说。Untranslated here." and left == 1


def test_a_claim_goes_through_its_template_or_as_it_is():
    zh = {"shift test; {0} cases": "平移检验；{0} 个情形", "fixed claim": "固定的断言"}
    assert check_folds.verdict_html("checked: shift test; 500 cases; exact", "zh_CN", zh) == "已检查：平移检验；500 个情形；完全相等"
    assert check_folds.verdict_text("checked: fixed claim; max error 0 (allowed 1e-12)", zh) == "已检查：固定的断言；最大误差 0（允许 1e-12）"
    assert check_folds.verdict_text("checked: unknown; exact", zh) is None


def test_the_english_page_gives_its_outputs_as_templates():
    page = ('<div class="output stream highlight-myst-ansi notranslate"><div class="highlight"><pre><span></span>'
            "checked: 300 pairs agree; exact\n3 of 8 hands have made a full turn\n</pre></div></div>"
            '<div class="cell_output docutils container">\n<p>At 4,096 tokens, 6 of 6 keys were retrieved. So it goes.</p>\n</div>')
    assert i18n.check_claims(page) == ["{0} pairs agree"]
    assert i18n.printed_texts(page) == [("printed line", "{0} of {1} hands have made a full turn"),
                                        ("computed sentence", "At {0} tokens, {1} of {2} keys were retrieved."),
                                        ("computed sentence", "So it goes.")]


def test_the_gate_wants_one_digit_grouping():
    assert i18n.grouping_problems("a context of 32,768 tokens, base 10,000 and 4096") == []
    assert i18n.grouping_problems("a context of 32 768 tokens") and i18n.grouping_problems("16384 tokens")
    assert i18n.grouping_problems("$10\\,000$ and `131072` and #56446 and SmolLM2-135M") == []
    assert i18n.problems("over 16,384 tokens", "超过 16 384 个词元") != []


def test_the_chinese_fold_line_spaces_its_numbers():
    assert check_folds.group_label(6, 2, 2, "zh_CN") == "本节：6 项检查和 2 张图的代码"
    assert check_folds.group_label(3, 2, 1, "zh_CN") == "本节：3 项检查和 2 项输出的代码"


def test_a_table_cell_is_a_message_when_it_holds_words():
    assert words.table_cell("not run (= plain RoPE)") == "not run (= plain RoPE)"
    assert words.table_cell("2/2 · 0/1 · 1/2;  ppl 24") == "{0}/{1} · {2}/{3} · {4}/{5}; ppl {6}"
    assert words.table_cell("n/a") == "n/a" and words.table_cell("未运行") == "未运行"
    for numbers in ["0.25", "1.2e-16", "+0.031", "0.123 ± 0.004", "–", "12 / 40"]:
        assert words.table_cell(numbers) is None, numbers


def test_the_gate_wants_chinese_per_cent_without_a_space():
    assert i18n.markup_problems("41 % above", "高 41%") == []
    assert i18n.markup_problems("{0} % above", "高 {0} %") and i18n.markup_problems("41% above", "高 41 %")
    # English kept as it is, and maths, are not the Chinese edition's prose
    assert i18n.markup_problems("41 % above", "41 % above") == []
    assert i18n.markup_problems("$50 \\%$ of it", "其中 $50 \\%$") == []


def test_each_computed_sentence_in_the_catalog_is_one_sentence():
    """A computed paragraph is split before a capital or a digit (``output_words.sentences``): a
    sentence that starts in lower case ("... Position Interpolation. plain RoPE at ...") stays glued to
    the one before, so the code that writes it starts each sentence with a capital."""
    import re

    import polib

    po = polib.pofile(str(ROOT / i18n.LOCALES / i18n.LANG / "LC_MESSAGES" / f"{i18n.OUTPUTS}.po"))
    glued = [e.msgid for e in po if not e.obsolete and "computed sentence" in e.comment
             and re.search(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bal)(?<!\bvs)[.!?] +[a-z]", e.msgid)]
    assert not glued, glued
    assert words.sentences("No key by Position Interpolation. Plain RoPE at 12,288 tokens misses.") == [
        "No key by Position Interpolation.", "Plain RoPE at 12,288 tokens misses."]
