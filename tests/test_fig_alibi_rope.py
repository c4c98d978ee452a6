"""Chapter 13's ALiBi-vs-RoPE figure (rope_edu.widgets.alibi_rope): data and readouts against
rope_edu.alibi and rope_edu.decay, and its JavaScript ``compute`` under Node.js."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rope_edu import alibi_bias, alibi_slopes, frequencies
from rope_edu.decay import expected_score
from rope_edu.widgets import JS_DIR, Figure
from rope_edu.widgets import alibi_rope as fig
from node_figure import call_js


def test_data_is_the_package_slopes_and_frequencies():
    d = fig.data()
    for h in range(1, fig.MAX_HEADS + 1):
        np.testing.assert_array_equal(d["slopes"][str(h)], alibi_slopes(h))
    np.testing.assert_array_equal(d["theta"]["64|10000"], frequencies(64, 10000.0))


def test_alibi_change_is_the_bias_of_a_key_delta_back():
    for heads in (3, 8):
        dist = np.arange(0, 40)
        bias = alibi_bias(alibi_slopes(heads), [39.0], 39.0 - dist)[:, 0, :]  # query at 39, keys δ back
        np.testing.assert_allclose(fig.alibi_change(heads, dist), bias, atol=1e-12)


def test_rope_change_is_zero_at_zero_bounded_below_and_scales_with_rho():
    d = np.arange(0, 2000)
    for dim in (16, 64, 128):
        c = fig.rope_change(d, dim, 1e4, 1.0)
        assert c[0] == 0.0 and c.max() <= 1e-12 and c.min() >= -2 * np.sqrt(dim)
        np.testing.assert_allclose(fig.rope_change(d, dim, 1e4, 0.5), 0.5 * c, atol=1e-12)
        np.testing.assert_allclose(c * np.sqrt(dim), expected_score(d, dim, 1e4) - dim, atol=1e-9)
    # unlike ALiBi's, RoPE's mean change is not monotone: it comes back up somewhere
    c = fig.rope_change(d, 16, 1e4, 1.0)
    assert np.any(np.diff(c) > 1e-3)


def test_readouts():
    r = fig.readouts(8, 100, 1.0, "64", "10000")
    m = alibi_slopes(8)
    assert (r["slope_first"], r["slope_last"]) == (m[0], m[-1])
    assert r["alibi_first"] == pytest.approx(-m[0] * 100) and r["alibi_last"] == pytest.approx(-m[-1] * 100)
    assert r["rope"] == pytest.approx(float(fig.rope_change(100, 64, 1e4, 1.0)))


def test_javascript_compute_agrees_with_readouts():
    states = [dict(heads=h, distance=dist, rho=rho, dim=d, base=b) for h, dist, rho, d, b in
              itertools.product((1, 5, 8, 16), (0, 8, 136, 512), (0.0, 0.35, 1.0), fig.DIMS, fig.BASES)]
    out = call_js("alibi_rope", "compute", [[s] for s in states], extra=[fig.data()])
    for s, got in zip(states, out):
        want = fig.readouts(**s)
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-9), (s, key)


@pytest.mark.parametrize("call, error, match", [
    (lambda: fig.readouts(0, 10, 1.0, "64", "10000"), ValueError, "heads"),
    (lambda: fig.readouts(2, 1.5, 1.0, "64", "10000"), TypeError, "distance"),
    (lambda: fig.readouts(2, 10, "a", "64", "10000"), TypeError, "rho"),
    (lambda: fig.readouts(2, 10, 1.0, "32", "10000"), ValueError, "dim"),
    (lambda: fig.readouts(2, 10, 1.0, "64", "1e6"), ValueError, "base"),
    (lambda: fig.DEMO.state(heads=17), ValueError, "heads"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_figure_wiring_and_live_widget():
    assert isinstance(fig.DEMO, Figure) and fig.DEMO.name == "alibi_rope"
    assert (JS_DIR / "alibi_rope.js").is_file()
    w = fig.DEMO.widget(heads=12)
    assert (w.heads, w.dim, w.base) == (12, "64", "10000")
