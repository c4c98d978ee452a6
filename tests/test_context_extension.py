"""Chapter 9's context-extension figure: its controls, data and readouts, and its JavaScript.

``context_extension.state`` and its bad inputs are tested in tests/test_scaling.py, next to
``rope_edu.scaling``. Here: the tables of ``data()`` reproduce ``scaled_frequencies`` at every
point of the sliders' grids, ``readouts()`` agree with the package, and the browser code
(``js/context_extension.js``, run under Node by ``tests/node_figure.py``) agrees with both.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rope_edu import frequencies
from rope_edu import scaling as S
from rope_edu.widgets import context_extension as ce
from node_figure import call_js

THETA = frequencies(ce.DIM, ce.BASE)


def ratio_from_data(d: dict, method: str, j: int, l: int) -> np.ndarray:
    """The ratio new/old frequency the browser builds from the tables (the same four rules)."""
    m = d["methods"][method]
    s = d["factors"][j]
    rule = m["rule"]
    if rule == "one":
        return np.ones_like(THETA)
    if rule == "inverse":
        return np.full_like(THETA, 1.0 / s)
    if rule == "power":
        return m["scale"][j] ** np.asarray(d["exponent"])
    if rule == "blend":
        g = np.asarray(m["ramp"][l])
        return (1 - g) / s + g
    raise AssertionError(f"unknown rule {rule!r}")


def test_figure_controls_and_defaults():
    assert ce.DEMO.name == "context_extension"
    assert [c.name for c in ce.DEMO.controls] == ["method", "factor", "original"]
    assert ce.DEMO.defaults == {"method": "yarn", "factor": 4.0, "original": 4096}
    method, factor, original = ce.DEMO.controls
    assert list(method.options) == list(ce.METHOD_PARAMS)
    assert set(ce.METHOD_PARAMS) == set(ce.LABELS) == set(ce.RULES)
    # the sliders' grids hold every value the old selection sliders offered, and nothing else
    slider = lambda c: c.min + c.step * np.arange(round((c.max - c.min) / c.step) + 1)  # noqa: E731
    np.testing.assert_array_equal(slider(factor), ce.FACTORS)
    np.testing.assert_array_equal(slider(original), ce.ORIGINALS)
    assert {1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0} <= set(ce.FACTORS)
    assert {2**k for k in range(9, 16)} <= set(ce.ORIGINALS)
    assert not factor.integer and original.integer
    with pytest.raises(ValueError, match="factor"):
        ce.DEMO.state(factor=0.5)


def test_data_rules_reproduce_scaled_frequencies_on_the_whole_grid():
    d = ce.data()
    np.testing.assert_array_equal(d["theta"], THETA)
    np.testing.assert_allclose(d["exponent"], -2 * np.arange(ce.DIM // 2) / (ce.DIM - 2), rtol=1e-12, atol=1e-15)
    grid = [(j, s, l, L) for j, s in enumerate(ce.FACTORS) for l, L in enumerate(ce.ORIGINALS)]
    for method in ce.METHOD_PARAMS:
        ours = np.array([ratio_from_data(d, method, j, l) for j, _, l, _ in grid])
        theirs = [S.scaled_frequencies(method, ce.DIM, ce.BASE, **ce.method_params(method, s, L)) for _, s, _, L in grid]
        np.testing.assert_allclose(ours, np.array([f for f, _ in theirs]) / THETA, rtol=1e-12, err_msg=method)
        attention = np.array(d["methods"][method]["attention"])[[j for j, _, _, _ in grid]]
        np.testing.assert_allclose(attention, [a for _, a in theirs], rtol=1e-15, err_msg=method)


def test_data_tables_are_the_packages_ramps_and_scales():
    d = ce.data()
    for l, L in enumerate(ce.ORIGINALS):
        np.testing.assert_array_equal(d["methods"]["yarn"]["ramp"][l], S.yarn_ramp(ce.DIM, ce.BASE, L))
        np.testing.assert_array_equal(d["methods"]["llama3"]["ramp"][l], S.llama3_ramp(ce.DIM, ce.BASE, L, 1.0, 4.0))
    # dynamic NTK read at sL: the scale f max(sL, L)/L - (f - 1) = s^2 - s + 1, whatever L
    np.testing.assert_allclose(d["methods"]["dynamic"]["scale"], [s * s - s + 1 for s in ce.FACTORS], rtol=1e-15)
    np.testing.assert_array_equal(d["methods"]["ntk"]["scale"], ce.FACTORS)
    np.testing.assert_allclose(d["methods"]["yarn"]["attention"], [S.yarn_attention_factor(s) for s in ce.FACTORS])
    assert all(d["methods"][m]["label"] == ce.LABELS[m] for m in ce.METHOD_PARAMS)


def test_payload_is_small():
    size = len(json.dumps(ce.DEMO._payload(), separators=(",", ":")))
    assert size < 100_000  # a chapter page's own bytes stay under 1 MB with all its figures


@pytest.mark.parametrize("method, factor, original", [
    ("yarn", 4.0, 4096), ("linear", 32.0, 32768), ("ntk", 1.5, 512), ("dynamic", 8.0, 4096),
    ("llama3", 2.5, 8192), ("default", 1.0, 2048), ("yarn", 1.0, 4096),
])
def test_readouts_agree_with_the_package(method, factor, original):
    r = ce.readouts(method, factor, original)
    inv_freq, a = S.scaled_frequencies(method, ce.DIM, ce.BASE, **ce.method_params(method, factor, original))
    ratio = inv_freq / THETA
    new = round(factor * original)
    assert r["new_context"] == new
    assert r["moved"] == np.sum(~np.isclose(ratio, 1.0, rtol=0, atol=1e-9))
    assert r["slowdown_first"] == pytest.approx(1 / ratio[0]) and r["slowdown_last"] == pytest.approx(1 / ratio[-1])
    assert r["logit_scale"] == pytest.approx(a**2)
    assert r["beyond"] == np.sum(S.beyond_trained_angles(inv_freq, original, new, base=ce.BASE))
    assert r["no_full_turn"] == np.sum(S.rotations(ce.DIM, ce.BASE, original) < 1)
    # the fixed q, k: every pair (sqrt(2/d), 0), so the logit is a^2 times the mean of cos(Δθ'_i)
    assert r["logit_plain_new"] == pytest.approx(np.mean(np.cos(new * THETA)), abs=1e-12)
    assert r["logit_new"] == pytest.approx(a**2 * np.mean(np.cos(new * inv_freq)), abs=1e-12)


def test_readouts_show_what_each_method_does():
    s, L = 8.0, 4096
    plain = ce.readouts("default", s, L)
    assert plain["moved"] == 0 and plain["logit_new"] == pytest.approx(plain["logit_plain_new"])
    assert plain["beyond"] == plain["no_full_turn"] > 0  # plain RoPE: the slow pairs leave their arc
    pi = ce.readouts("linear", s, L)
    assert pi["moved"] == ce.DIM // 2 and pi["slowdown_first"] == pytest.approx(s) == pi["slowdown_last"]
    # PI at distance sL sees the angles plain RoPE saw at L
    assert pi["logit_new"] == pytest.approx(float(np.mean(np.cos(L * THETA))), abs=1e-9)
    ntk = ce.readouts("ntk", s, L)
    assert ntk["slowdown_first"] == 1 and ntk["slowdown_last"] == pytest.approx(s) and ntk["beyond"] > 0
    dyn = ce.readouts("dynamic", s, L)
    assert dyn["slowdown_last"] == pytest.approx(S.dynamic_scale(s, L, int(s * L)))
    for method in ("yarn", "llama3"):
        r = ce.readouts(method, s, L)
        assert r["slowdown_first"] == 1 and r["slowdown_last"] == pytest.approx(s) and r["beyond"] == 0
        assert 0 < r["moved"] < ce.DIM // 2
    assert ce.readouts("yarn", s, L)["logit_scale"] == pytest.approx(S.yarn_attention_factor(s) ** 2)
    assert ce.readouts("llama3", s, L)["logit_scale"] == 1.0


def test_live_widget_has_one_trait_per_control():
    w = ce.DEMO.widget(method="llama3", factor=8.0)
    assert (w.method, w.factor, w.original) == ("llama3", 8.0, 4096)
    assert w._name == "context_extension" and [c["name"] for c in w._controls] == ["method", "factor", "original"]
    np.testing.assert_array_equal(w._data["theta"], THETA)


# --- the figure's JavaScript (Node.js) ---------------------------------------------------------


def _states(n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    corners = [dict(method=m, factor=s, original=L) for m in ce.METHOD_PARAMS
               for s in (ce.FACTORS[0], ce.FACTORS[-1]) for L in (ce.ORIGINALS[0], ce.ORIGINALS[-1])]
    random = [dict(method=str(rng.choice(list(ce.METHOD_PARAMS))), factor=float(rng.choice(ce.FACTORS)),
                   original=int(rng.choice(ce.ORIGINALS))) for _ in range(n)]
    return corners + random


def test_js_readouts_match_python():
    states = _states(250, seed=0)
    got = call_js("context_extension", "compute", [[st] for st in states], [ce.data()], pick="readouts")
    for st, g in zip(states, got):
        want = ce.readouts(**st)
        assert set(g) == set(want), st
        for key in ("new_context", "moved", "beyond", "no_full_turn"):
            assert g[key] == want[key], (st, key, g[key], want[key])
        for key in ("slowdown_first", "slowdown_last", "logit_scale", "logit_plain_new", "logit_new"):
            assert math.isclose(g[key], want[key], rel_tol=1e-9, abs_tol=1e-9), (st, key, g[key], want[key])


def test_js_ratios_match_scaled_frequencies():
    states = _states(60, seed=1)
    got = call_js("context_extension", "compute", [[st] for st in states], [ce.data()], pick="ratio")
    for st, ratio in zip(states, got):
        np.testing.assert_allclose(ratio, ce.state(**st, n_points=2)["ratio"], rtol=1e-12, err_msg=str(st))
