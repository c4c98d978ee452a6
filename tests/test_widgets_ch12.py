"""Figures of chapters 1 and 2: their pure state functions, data() and readouts(), without a browser."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rope_edu import binary_encoding, shift_matrix, sinusoidal_encoding
from rope_edu.widgets import odometer, sinusoid_shift, snap_zero, token_order


# --- token order (chapter 1) -----------------------------------------------------------------


def test_orders_are_permutations():
    n = len(token_order.SENTENCE)
    assert token_order.ORDERS[0] == tuple(range(n))
    for order in token_order.ORDERS:
        assert sorted(order) == list(range(n))
    assert len(set(token_order.ORDERS)) == len(token_order.ORDERS)


@pytest.mark.parametrize("order", range(len(token_order.ORDERS)))
def test_without_positions_outputs_follow_their_words(order):
    s = token_order.state(order, positions=False)
    assert s["words"] == [token_order.SENTENCE[i] for i in token_order.ORDERS[order]]
    np.testing.assert_allclose(s["change"], 0.0, atol=1e-12)
    assert s["the_gap"] < 1e-12, "the two copies of 'the' get the same output"
    ref = token_order.outputs(0)
    np.testing.assert_allclose(s["outputs"], ref[list(token_order.ORDERS[order])], atol=1e-12)


def test_with_positions_outputs_change():
    for order in range(1, len(token_order.ORDERS)):
        s = token_order.state(order, positions=True)
        assert s["max_change"] > 0.05
        assert s["the_gap"] > 0.05
    np.testing.assert_allclose(token_order.state(0, positions=True)["change"], 0.0, atol=1e-12)


def test_token_order_outputs_are_attention_of_embeddings():
    from rope_edu import attention

    w_q, w_k, w_v = token_order.weights()
    x = token_order.embed(token_order.SENTENCE) + sinusoidal_encoding(6, token_order.D_MODEL)
    np.testing.assert_allclose(token_order.outputs(0, True), attention(x @ w_q, x @ w_k, x @ w_v))
    np.testing.assert_array_equal(token_order.embed(["the"])[0], token_order.embed(["cat", "the"])[1])


def test_token_order_bad_input():
    with pytest.raises(ValueError, match="order"):
        token_order.state(len(token_order.ORDERS))
    with pytest.raises(TypeError, match="order"):
        token_order.outputs(1.0)
    with pytest.raises(ValueError, match="words"):
        token_order.embed(["dog"])
    with pytest.raises(TypeError, match="positions"):
        token_order.outputs(0, positions=1)
    with pytest.raises(TypeError, match="positions"):
        token_order.readouts(order=0, positions="yes")


def test_token_order_figure_controls():
    demo = token_order.DEMO
    assert demo.name == "token_order"
    assert [c.name for c in demo.controls] == ["order", "positions"]
    assert demo.defaults == {"order": 0, "positions": False}
    order = demo.controls[0]
    assert (order.min, order.max, order.step, order.integer) == (0, len(token_order.ORDERS) - 1, 1, True)
    assert demo.controls[1].kind == "checkbox"


@pytest.mark.parametrize("positions", [False, True])
@pytest.mark.parametrize("order", range(len(token_order.ORDERS)))
def test_token_order_readouts_from_attention(order, positions):
    # recompute both numbers from the package's attention, not from state()
    from rope_edu import attention

    w_q, w_k, w_v = token_order.weights()
    perm = list(token_order.ORDERS[order])
    x0 = token_order.embed(token_order.SENTENCE)
    x = x0[perm]
    if positions:
        x0 = x0 + sinusoidal_encoding(6, token_order.D_MODEL)
        x = x + sinusoidal_encoding(6, token_order.D_MODEL)
    out, ref = attention(x @ w_q, x @ w_k, x @ w_v), attention(x0 @ w_q, x0 @ w_k, x0 @ w_v)
    the = [p for p, i in enumerate(perm) if token_order.SENTENCE[i] == "the"]
    r = token_order.readouts(order=order, positions=positions)
    assert set(r) == {"max_change", "the_gap"}
    assert r["max_change"] == pytest.approx(np.linalg.norm(out - ref[perm], axis=1).max(), abs=1e-12)
    assert r["the_gap"] == pytest.approx(np.linalg.norm(out[the[0]] - out[the[1]]), abs=1e-12)
    if not positions:  # 0 in exact arithmetic: printed as 0, not as rounding noise
        assert r["max_change"] == 0.0 and r["the_gap"] == 0.0
    else:
        assert r["max_change"] >= token_order.ZERO or order == 0
        assert r["the_gap"] >= token_order.ZERO


def test_token_order_data_matches_outputs():
    d = token_order.data()
    assert d["sentence"] == list(token_order.SENTENCE)
    assert [tuple(o) for o in d["orders"]] == list(token_order.ORDERS)
    for pos in (0, 1):
        outs = np.stack([token_order.outputs(j, bool(pos)) for j in range(len(token_order.ORDERS))])
        np.testing.assert_allclose(d["outputs"][pos], outs, atol=5e-5)
        np.testing.assert_allclose(d["vrange"][pos], [outs.min(), outs.max()])
        for j in range(len(token_order.ORDERS)):
            r = token_order.readouts(order=j, positions=bool(pos))
            # the browser prints data()'s exact values through snapZero(value, d.zero)
            assert snap_zero(d["max_change"][pos][j], d["zero"]) == r["max_change"]
            assert snap_zero(d["the_gap"][pos][j], d["zero"]) == r["the_gap"]
            np.testing.assert_allclose(d["change"][pos][j], token_order.state(j, bool(pos))["change"], atol=5e-5)
    assert d["cmax"] == max(max(row) for row in d["max_change"])
    assert d["zero"] == token_order.ZERO
    payload = json.dumps(token_order.DEMO._payload(), separators=(",", ":"))
    assert len(payload) < 30_000, "keep the figure's JSON small"


def test_token_order_live_widget():
    w = token_order.DEMO.widget(order=2, positions=True)
    assert (w.order, w.positions) == (2, True)
    assert w._name == "token_order" and [c["name"] for c in w._controls] == ["order", "positions"]


# --- odometer (chapter 2) --------------------------------------------------------------------


def test_odometer_state_matches_the_encodings():
    for p in (0, 7, 31, 63):
        s = odometer.state(p)
        np.testing.assert_array_equal(s["bits"], binary_encoding(64, 6)[p])
        np.testing.assert_allclose(s["pe"], sinusoidal_encoding(64, 12, base=64.0)[p])
        np.testing.assert_allclose(s["angles"], p * 2.0 ** -np.arange(6))  # base 64, d = 12: θ_i = 2^-i


def test_odometer_steps():
    s = odometer.state(7)
    assert s["bit_step"] == pytest.approx(2.0)  # 0b000111 -> 0b001000 flips 4 bits: sqrt(4)
    assert odometer.state(0)["bit_step"] == pytest.approx(1.0)
    assert odometer.state(31)["bit_step"] == pytest.approx(np.sqrt(6))
    np.testing.assert_allclose(s["pe_steps"], s["pe_steps"][0], rtol=1e-10)  # the clocks' step never changes
    assert np.ptp(s["bit_steps"]) > 1.0
    assert np.isnan(odometer.state(63)["bit_step"]) and np.isnan(odometer.state(63)["pe_step"])


def test_odometer_bad_input():
    with pytest.raises(ValueError, match="p"):
        odometer.state(64)
    with pytest.raises(ValueError, match="p"):
        odometer.state(-1)
    with pytest.raises(TypeError, match="p"):
        odometer.state(1.5)
    with pytest.raises(ValueError, match="p"):
        odometer.readouts(64)


def test_odometer_figure_controls():
    assert odometer.DEMO.name == "odometer"
    (p,) = odometer.DEMO.controls
    assert (p.name, p.value, p.min, p.max, p.step, p.integer) == ("p", 0, 0, 63, 1, True)


@pytest.mark.parametrize("p", [0, 1, 7, 15, 31, 32, 47, 62])
def test_odometer_readouts_from_the_tables(p):
    table_b, table_s = binary_encoding(64, 6), sinusoidal_encoding(64, 12, base=64.0)
    r = odometer.readouts(p)
    assert set(r) == {"flips", "bit_step", "pe_step"}
    # flips: the trailing ones of p and the zero above them (p -> p + 1 carries through them)
    trailing_ones = len(format(p, "b")) - len(format(p, "b").rstrip("1"))
    assert r["flips"] == trailing_ones + 1 == np.sum(table_b[p] != table_b[p + 1])
    assert r["bit_step"] == pytest.approx(np.sqrt(r["flips"]), abs=1e-12)
    assert r["pe_step"] == pytest.approx(np.linalg.norm(table_s[p + 1] - table_s[p]), abs=1e-12)
    # each hand moves by a chord 2 sin(θ_i / 2), whatever p is
    assert r["pe_step"] == pytest.approx(np.sqrt(np.sum((2 * np.sin(2.0 ** -np.arange(6) / 2)) ** 2)), abs=1e-12)


def test_odometer_readouts_last_position_has_no_step():
    r = odometer.readouts(63)
    assert all(np.isnan(v) for v in r.values())


def test_odometer_data_is_the_tables():
    d = odometer.data()
    np.testing.assert_array_equal(d["bits"], binary_encoding(64, 6))
    np.testing.assert_allclose(d["pe"], sinusoidal_encoding(64, 12, base=64.0), atol=5e-6)
    np.testing.assert_allclose(d["theta"], 2.0 ** -np.arange(6))
    for p in range(63):
        r = odometer.readouts(p)
        assert d["bit_steps"][p] == r["bit_step"] and d["pe_steps"][p] == r["pe_step"]
    assert len(json.dumps(odometer.DEMO._payload(), separators=(",", ":"))) < 30_000


def test_odometer_live_widget():
    w = odometer.DEMO.widget(p=31)
    assert w.p == 31 and w._name == "odometer"
    np.testing.assert_array_equal(w._data["bits"], binary_encoding(64, 6))


# --- shift (chapter 2) -----------------------------------------------------------------------


@pytest.mark.parametrize("p,k", [(0, 0), (5, 3), (30, -8), (2, -5), (17, 8)])
def test_shift_state(p, k):
    s = sinusoid_shift.state(p, k)
    assert s["error"] < 1e-12
    np.testing.assert_allclose(s["shifted"], shift_matrix(k, 8, 100.0) @ s["pe_p"])
    # each pair moves clockwise by k θ_i: its polar angle decreases by k θ_i (mod 2π)
    diff = np.angle(np.exp(1j * (s["angle_p"] - s["angle_pk"] - s["turn"])))
    np.testing.assert_allclose(diff, 0.0, atol=1e-12)


def test_shift_turn_does_not_depend_on_p():
    turns = [sinusoid_shift.state(p, 4)["turn"] for p in range(10)]
    np.testing.assert_allclose(turns, [turns[0]] * 10)


def test_shift_bad_input():
    with pytest.raises(TypeError, match="p"):
        sinusoid_shift.state(1.5, 2)
    with pytest.raises(TypeError, match="k"):
        sinusoid_shift.state(1, "2")
    with pytest.raises(TypeError, match="k"):
        sinusoid_shift.readouts(1, 2.5)


def test_shift_figure_controls():
    demo = sinusoid_shift.DEMO
    assert demo.name == "sinusoid_shift"
    assert [(c.name, c.value, c.min, c.max, c.step) for c in demo.controls] == [("p", 5, 0, 30, 1), ("k", 3, -8, 8, 1)]
    assert (sinusoid_shift.P_RANGE, sinusoid_shift.K_RANGE) == ((0, 30), (-8, 8))


@pytest.mark.parametrize("p,k", [(5, 3), (0, 0), (30, -8), (0, -8), (30, 8), (11, -1)])
def test_shift_readouts(p, k):
    r = sinusoid_shift.readouts(p, k)
    assert set(r) == {"pk", "error", "turn_0", "turn_1", "turn_2", "turn_3"}
    assert r["pk"] == p + k
    theta = 100.0 ** (-np.arange(4) / 4)  # θ_i = b^(-2i/d), d = 8, b = 100
    np.testing.assert_allclose([r[f"turn_{i}"] for i in range(4)], k * theta, rtol=1e-12)
    table = sinusoidal_encoding(64, 8, base=100.0)  # rows 0..63 cover p and p + k >= 0
    if p + k >= 0:
        expected = np.abs(shift_matrix(k, 8, 100.0) @ table[p] - table[p + k]).max()
        assert r["error"] == pytest.approx(expected, abs=1e-15)
    assert r["error"] < 1e-12


def test_shift_data():
    d = sinusoid_shift.data()
    assert d["k_min"] == -8
    np.testing.assert_allclose(d["theta"], 100.0 ** (-np.arange(4) / 4), rtol=1e-12)
    pe = np.array(d["pe"])
    assert pe.shape == (30 + 8 + 8 + 1, 8)
    np.testing.assert_allclose(pe[8:], sinusoidal_encoding(39, 8, base=100.0), atol=1e-15)  # row q + 8 is PE(q)
    blocks = np.array(d["blocks"])
    for k in range(-8, 9):
        m = shift_matrix(k, 8, 100.0)
        for i in range(4):
            np.testing.assert_array_equal(blocks[k + 8, i], m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2])
        # the blocks applied to PE(p) as the figure does give PE(p + k)
        for p in (0, 13, 30):
            shifted = np.einsum("iab,ib->ia", blocks[k + 8], pe[p + 8].reshape(4, 2)).ravel()
            np.testing.assert_allclose(shifted, pe[p + k + 8], atol=1e-12)
            assert d["error"][p][k + 8] == sinusoid_shift.readouts(p, k)["error"]
    assert len(json.dumps(sinusoid_shift.DEMO._payload(), separators=(",", ":"))) < 40_000


def test_shift_live_widget():
    w = sinusoid_shift.DEMO.widget(k=-2)
    assert (w.p, w.k) == (5, -2) and w._name == "sinusoid_shift"
