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
