"""Public functions refuse bad arguments naming them (review of issue 43, item 16): what used to
fail deep inside numpy (a broadcast error, an IndexError) or not at all."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rope_edu import i18n, plots, trained
from rope_edu.rope import frequencies, rope_angles


def test_rope_angles_checks_positions_and_frequencies():
    np.testing.assert_array_equal(rope_angles([0, 2], [1.0, 0.5]), [[0, 0], [2, 1]])
    with pytest.raises(ValueError, match=r"inv_freq must be a vector of shape \(dim // 2,\), got shape \(2, 2\)"):
        rope_angles([0, 1], np.ones((2, 2)))
    with pytest.raises(ValueError, match="positions must be finite"):
        rope_angles([0, math.inf], frequencies(4))
    with pytest.raises(ValueError, match="inv_freq must be finite"):
        rope_angles([0, 1], [1.0, math.nan])
    with pytest.raises(TypeError, match="positions must be"):
        rope_angles(["a"], frequencies(4))


def test_probes_check_their_arrays():
    with pytest.raises(ValueError, match="head_dim.*must be even.*got 5"):
        trained.pair_norms(np.ones((3, 5)))
    with pytest.raises(ValueError, match="attention must have at least 2 axis"):
        trained.attention_by_distance(np.ones(4))
    with pytest.raises(ValueError, match="attention must be square"):
        trained.attention_by_distance(np.ones((2, 3)))
    with pytest.raises(ValueError, match="attention must have at least 2 axis"):
        trained.head_positional_stats(np.ones(4))


@pytest.mark.parametrize("call, name", [
    (lambda: i18n.message(3), "key"),
    (lambda: i18n.placeholders(None), "message"),
    (lambda: i18n.html_strings(b"<p>x</p>"), "html"),
    (lambda: i18n.translate_html(3, "zh_CN"), "html"),
    (lambda: i18n.translate_html("<p>x</p>", 3), "lang"),
    (lambda: plots.alt_text(3), "fig"),
])
def test_strings_and_figures_are_checked(call, name):
    with pytest.raises(TypeError, match=f"^{name} must be"):
        call()


def test_yarn_correction_index_is_where_a_pair_makes_that_many_turns():
    """The public correction index (review of issue 43, item 3) that yarn_ramp and MiniMind's
    reader share: pair i makes `turns` turns over `length` tokens there."""
    from rope_edu.scaling import rotations, yarn_correction_index

    i = yarn_correction_index(32.0, 64, 10000.0, 4096)
    theta = 10000.0 ** (-2 * i / 64)
    assert math.isclose(4096 * theta / (2 * math.pi), 32.0, rel_tol=1e-12)
    r = rotations(64, 10000.0, 4096)
    assert r[int(math.floor(i))] >= 32.0 >= r[int(math.ceil(i))]
    with pytest.raises(ValueError, match="turns must be > 0"):
        yarn_correction_index(0.0, 64, 10000.0, 4096)
    with pytest.raises(ValueError, match="length"):
        yarn_correction_index(1.0, 64, 10000.0, 0)


def test_method_labels_are_written_once():
    """Method.label (review item 4): the figures' names and the cached runs' keys come from it."""
    from rope_edu.scaling import METHODS
    from rope_edu.widgets import context_extension, trained_context

    assert all(m.label for m in METHODS.values())
    assert context_extension.LABELS == {name: METHODS[name].label for name in context_extension.METHOD_PARAMS}
    assert [label for _, label in trained_context.METHODS] == [
        METHODS[n].label for n in ("default", "linear", "ntk", "dynamic", "yarn", "llama3")]
    assert trained_context.METHODS[1] == ("pi", "Position Interpolation")   # the cached JSON's keys


def test_one_test_of_the_chinese_edition():
    """i18n.is_chinese: the build steps' one test of the edition (review item 13)."""
    assert [i18n.is_chinese(x) for x in ("zh_CN", "zh-cn", "ZH", None, "", "en", "en_GB")] == [
        True, True, True, False, False, False, False]
    with pytest.raises(TypeError, match="lang must be"):
        i18n.is_chinese(3)
