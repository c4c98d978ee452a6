"""rope_edu.verify: the one-line verdicts the book's folded checks print."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import rope_edu
from rope_edu import verdicts, verify


def test_verdict_line_says_what_and_how_closely(capsys):
    x = np.linspace(0.0, 3.0, 50)
    with verify("cos² + sin² = 1 on 50 angles") as v:
        err = v.close(np.cos(x) ** 2 + np.sin(x) ** 2, 1.0, atol=1e-14)
    out = capsys.readouterr().out
    assert out.startswith("checked: cos² + sin² = 1 on 50 angles; max error ")
    assert out.rstrip().endswith("(allowed 1e-14)")
    assert err == np.abs(np.cos(x) ** 2 + np.sin(x) ** 2 - 1).max()
    assert f"{err:.2g}" in out


def test_relative_exact_and_boolean_checks(capsys):
    with verify("relative") as v:
        v.close([1.0 + 1e-9, 2.0], [1.0, 2.0], rtol=1e-8)
    with verify("exact") as v:
        v.equal(np.arange(4), np.arange(4))
    with verify("boolean") as v:
        v.true(np.array([True, True]))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("checked: relative; max relative error 1e-09 (allowed 1e-08)"), lines[0]
    assert lines[1] == "checked: exact; exact"
    assert lines[2] == "checked: boolean"


def test_complex_values_are_compared():
    with verify("complex") as v:
        assert v.close(np.exp(1j * np.pi), -1.0, atol=1e-15) < 1e-15
    with pytest.raises(AssertionError, match="complex off"):
        with verify("complex off") as v:
            v.close([1j], [1.0], atol=0.1)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda v: v.close([1.0, 2.0], [1.0, 2.5], atol=0.1), "1 of 2 values differ.*index \\(1,\\)"),
        (lambda v: v.close([1.0, 2.0], [1.0, 2.0, 3.0], atol=0.1), "shape"),
        (lambda v: v.close(1.0, [1.0, 1.0], atol=0.1), "shape"),  # actual must not broadcast
        (lambda v: v.close([np.nan], [np.nan], atol=0.1), "non-finite"),
        (lambda v: v.equal([1, 2], [1, 3]), "1 of 2 values differ"),
        (lambda v: v.equal([1, 2], [[1, 2]]), "shape"),
        (lambda v: v.true(False, "the sum is positive"), "the sum is positive"),
        (lambda v: v.true(np.array([True, False])), "1 of 2 false"),
    ],
)
def test_a_failed_comparison_names_the_claim_and_prints_nothing(call, message, capsys):
    with pytest.raises(AssertionError, match="check failed: my claim: .*" + message):
        with verify("my claim") as v:
            call(v)
    assert capsys.readouterr().out == ""


def test_a_check_that_compares_nothing_is_an_error():
    with pytest.raises(AssertionError, match="compared nothing"):
        with verify("empty"):
            pass


def test_bad_arguments():
    with pytest.raises(ValueError, match="claim"):
        verify("  ")
    with pytest.raises(ValueError, match="atol"):
        with verify("x") as v:
            v.close(1.0, 1.0, atol=-1)
    with pytest.raises(TypeError, match="condition"):
        with verify("x") as v:
            v.true(np.array([1, 2]))


def test_long_verdicts_wrap_to_the_column(capsys):
    with verify("a claim that goes on " * 8) as v:
        v.close(1.0, 1.0, atol=1e-12)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 1 and all(len(line) <= verdicts.WIDTH for line in lines)
    assert all(line.startswith("    ") for line in lines[1:])


def test_infinities_that_agree_are_equal():
    with verify("inf") as v:
        v.close([np.inf, 1.0], [np.inf, 1.0], atol=1e-12)


def test_docstring_examples():
    assert doctest.testmod(verdicts).failed == 0
    assert rope_edu.verify is verify


# --- rope_edu.table: results as real tables --------------------------------------------------


def test_table_renders_html_with_headers_caption_and_escaping():
    t = rope_edu.table([["a<b", 1.5, 128]], ["name", "x", "n"], caption="Caption & more")
    html = t._repr_html_()
    assert '<th scope="col">name</th>' in html and "<td>a&lt;b</td>" in html
    assert "<td>1.5</td>" in html and "<td>128</td>" in html
    assert "<caption>Caption &amp; more</caption>" in html
    assert "overflow-x:auto" in html  # scrolls in its own box on a narrow column
    assert t.text().splitlines()[1].split() == ["name", "x", "n"]


def test_a_folded_table_opens_from_its_caption():
    html = rope_edu.table([[1]], ["n"], caption="The numbers & more", folded=True)._repr_html_()
    assert html.startswith('<div class="rope-table"')   # what the outputs catalog and the editions read
    assert '<details class="rope-table-fold"><summary>The numbers &amp; more</summary><table' in html
    assert "<caption>" not in html and html.endswith("</table></details></div>")
    assert "<caption>" in rope_edu.table([[1]], ["n"], caption="c")._repr_html_()


def test_table_rejects_a_fold_without_a_caption_or_a_non_bool():
    with pytest.raises(ValueError, match="folded=True needs a caption"):
        rope_edu.table([[1]], ["n"], folded=True)
    with pytest.raises(TypeError, match="folded"):
        rope_edu.table([[1]], ["n"], caption="c", folded="yes")


@pytest.mark.parametrize(
    "rows, columns, error, match",
    [
        ([[1, 2]], ["a"], ValueError, r"rows\[0\] must have 1 values"),
        ("ab", ["a"], TypeError, "rows must be a sequence"),
        ([[1]], "a", TypeError, "columns"),
        ([[1]], [], TypeError, "columns"),
        ([[1]], [1], TypeError, "columns must all be strings"),
    ],
)
def test_table_rejects_bad_input(rows, columns, error, match):
    with pytest.raises(error, match=match):
        rope_edu.table(rows, columns)
