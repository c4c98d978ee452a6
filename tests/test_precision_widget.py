"""Chapter 8's precision figure: its state function, its data and readouts, and its JavaScript.

The figure redoes the rounding to float32 / bfloat16 / float16 in the browser; under Node.js
(``tests/node_figure.py``) its ``compute`` is compared with torch at thousands of positions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import rope_edu  # noqa: E402
from rope_edu import torch_rope  # noqa: E402
from rope_edu.widgets import precision  # noqa: E402
from node_figure import call_js  # noqa: E402


def test_bfloat16_collapses_257_to_256():
    s = precision.state(257, "bfloat16")
    assert s["stored_position"] == 256.0
    assert s["angle_error"][0] == pytest.approx(1.0)  # pair 0 turns at 1 rad/position: off by 1 rad
    assert s["drift"] > 0.1
    assert s["drift_f32"] < 1e-5 and s["cos_storage_error"] <= 2.0**-9  # float32 angles: fine


def test_float16_collapses_2049_and_overflows_from_65520():
    assert precision.state(2049, "float16")["stored_position"] == 2048.0
    assert precision.state(65_519, "float16")["stored_position"] == 65_504.0  # largest finite float16
    s = precision.state(65_520, "float16")
    assert s["stored_position"] == math.inf
    assert np.isnan(s["drift"]) and np.isnan(s["max_angle_error"]) and np.isnan(s["angle_error"]).all()
    assert np.isfinite(s["drift_f32"])


@pytest.mark.parametrize("dtype", list(precision.DTYPES))
def test_position_zero_is_exact(dtype):
    s = precision.state(0, dtype)
    assert s["max_angle_error"] == 0 and s["drift"] == 0 and s["cos_storage_error"] == 0


def test_float32_angles_at_100k_are_off_by_less_than_half_a_float32_spacing_plus_theta_rounding():
    spacing = float(np.spacing(np.float32(100_000)))
    assert spacing == 2.0**-7  # 0.0078125 rad between neighbouring float32 numbers near 1e5
    s = precision.state(100_000, "float32")
    assert 1e-3 < s["max_angle_error"] < spacing  # rounding of m*theta (<= spacing/2) + of theta
    assert s["drift"] == s["drift_f32"] < 1e-2
    np.testing.assert_array_equal(s["angle_error"], s["angle_error_f32"])


def test_bfloat16_angles_at_100k_are_meaningless_but_float32_ones_are_not():
    s = precision.state(100_000, "bfloat16")
    assert s["stored_position"] == 99_840.0
    assert s["max_angle_error"] > 3.0 and s["drift"] > 0.5
    assert s["drift_f32"] < 1e-2 and s["cos_storage_error"] < 1e-2


def test_drift_matches_the_torch_path():
    # drift_f32 is the change that float32 angles make to the rotated vector: the torch path with
    # angle_dtype=float32 on the float64 vector gives it too (up to float32 rounding of cos/sin).
    x = torch.from_numpy(precision.X)[None, :]
    for m in (1000, 50_000):
        torch_out = torch_rope.apply_rope(x, [m], angle_dtype=torch.float32).numpy()
        exact = rope_edu.apply_rope(precision.X[None, :], [m])
        assert np.linalg.norm(torch_out - exact) == pytest.approx(precision.state(m, "float32")["drift_f32"], abs=1e-6)


def test_angle_errors_vectorised_and_consistent_with_state():
    pos = np.array([10, 257, 5000])
    err = precision.angle_errors(pos, "bfloat16")
    assert err.shape == (3, precision.DIM // 2)
    assert np.all((err >= 0) & (err <= np.pi))
    for row, m in zip(err, pos):
        np.testing.assert_array_equal(row, precision.state(m, "bfloat16")["angle_error"])
    assert np.isnan(precision.angle_errors([1e5], "float16")).all()


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: precision.state(10, "int8"), ValueError, "dtype"),
        (lambda: precision.state(math.nan, "float32"), ValueError, "position"),
        (lambda: precision.state([1, 2], "float32"), ValueError, "position"),
        (lambda: precision.angle_errors([1, 2], "float64"), ValueError, "dtype"),
        (lambda: precision.angle_errors(["a"], "float32"), TypeError, "positions"),
    ],
)
def test_bad_inputs(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- the figure: controls, data, readouts --------------------------------------------------


def test_figure_controls_and_defaults():
    assert precision.DEMO.name == "precision"
    assert [c.name for c in precision.DEMO.controls] == ["position", "dtype"]
    assert precision.DEMO.defaults == {"position": 4096, "dtype": "bfloat16"}
    position, dtype = precision.DEMO.controls
    assert (position.min, position.max, position.step, position.integer) == (0, precision.MAX_POSITION, 1, True)
    assert list(dtype.options) == list(precision.DTYPES)
    with pytest.raises(ValueError, match="position"):
        precision.DEMO.state(position=precision.MAX_POSITION + 1)
    with pytest.raises(ValueError, match="dtype"):
        precision.DEMO.state(dtype="float64")


def test_data_is_torch_rounding():
    d = precision.data()
    theta = rope_edu.frequencies(precision.DIM, precision.BASE)
    np.testing.assert_array_equal(d["theta"], theta)
    for name, dt in precision.DTYPES.items():
        # the frequencies as torch stores them in each dtype (another path to the same rounding)
        np.testing.assert_array_equal(d["theta_in"][name], torch_rope.frequencies(precision.DIM, dtype=dt).double().numpy())
        fmt = d["formats"][name]
        one_ulp = torch.tensor([1 + 2.0 ** (1 - fmt["bits"]), 1 + 2.0 ** -fmt["bits"]], dtype=torch.float64).to(dt)
        assert one_ulp[0].item() > 1 and one_ulp[1].item() == 1  # bits significant bits, not one more
        assert torch.tensor(fmt["max"], dtype=dt).item() == fmt["max"]
        assert torch.isinf(torch.tensor(fmt["max"] * (1 + 2.0 ** -fmt["bits"]), dtype=torch.float64).to(dt))
    assert (d["theta_in"]["bfloat16"] != theta).sum() > 50  # bfloat16 rounds almost every frequency
    assert d["formats"]["float16"]["max"] == 65504.0


def test_data_pair_weights_give_the_drift_of_state():
    # drift = sqrt(sum_i 4 |x_i|^2 sin^2(delta_i / 2)) / |X|: the formula the browser uses, checked
    # against the drift that state() measures by rotating X both ways with rope_edu.apply_rope.
    d = precision.data()
    w = np.asarray(d["pair_weight"])
    assert w.sum() == pytest.approx(np.sum(precision.X**2))
    theta = rope_edu.frequencies(precision.DIM, precision.BASE)
    for m, dtype in ((257, "bfloat16"), (5000, "float16"), (99_999, "float32"), (100_000, "bfloat16")):
        low = torch_rope.rope_angles([float(m)], theta, dtype=precision.DTYPES[dtype])[0].double().numpy()
        delta = low - m * theta
        drift = np.sqrt(np.sum(4 * w * np.sin(delta / 2) ** 2) / w.sum())
        assert drift == pytest.approx(precision.state(m, dtype)["drift"], rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("position, dtype", [(0, "float16"), (257, "bfloat16"), (4096, "bfloat16"),
                                             (65_520, "float16"), (100_000, "float32")])
def test_readouts_are_the_state(position, dtype):
    r = precision.readouts(position, dtype)
    s = precision.state(position, dtype)
    assert set(r) == {"stored_position", "max_angle_error", "max_angle_error_f32", "drift", "drift_f32",
                      "cos_storage_error"}
    for key in ("stored_position", "max_angle_error", "drift", "drift_f32", "cos_storage_error"):
        np.testing.assert_array_equal(r[key], s[key])
    assert r["max_angle_error_f32"] == np.max(precision.angle_errors([position], "float32"))


def test_live_widget_has_one_trait_per_control():
    w = precision.DEMO.widget(position=257)
    assert (w.position, w.dtype) == (257, "bfloat16")
    assert w._name == "precision" and [c["name"] for c in w._controls] == ["position", "dtype"]
    np.testing.assert_array_equal(w._data["theta"], rope_edu.frequencies(precision.DIM, precision.BASE))


# --- the figure's JavaScript (Node.js) ---------------------------------------------------------


def _positions(dtype: str) -> np.ndarray:
    """Every position up to 4200, every integer within 3 of a power of two or of the float16
    overflow, and 2000 more drawn at random, up to MAX_POSITION."""
    rng = np.random.default_rng({"float32": 0, "bfloat16": 1, "float16": 2}[dtype])
    edges = [2**k + j for k in range(18) for j in range(-3, 4)] + [65_504 + j for j in range(-20, 40)]
    pos = np.concatenate([np.arange(4200), edges, rng.integers(0, precision.MAX_POSITION + 1, 2000),
                          [precision.MAX_POSITION]])
    return np.unique(pos[(pos >= 0) & (pos <= precision.MAX_POSITION)])


@pytest.mark.parametrize("dtype", list(precision.DTYPES))
def test_js_rounding_is_torchs_bit_for_bit(dtype):
    pos = _positions(dtype)
    got = call_js("precision", "compute", [[{"position": int(m), "dtype": dtype}] for m in pos],
                  [precision.data()], pick="readouts")
    stored = torch.from_numpy(pos.astype(np.float64)).to(precision.DTYPES[dtype]).double().numpy()
    np.testing.assert_array_equal([g["stored_position"] for g in got], stored)
    # largest angle error over the pairs: the same floating-point numbers, NaN where float16 overflows
    np.testing.assert_array_equal([g["max_angle_error"] for g in got], precision.angle_errors(pos, dtype).max(axis=1))
    np.testing.assert_array_equal([g["max_angle_error_f32"] for g in got],
                                  precision.angle_errors(pos, "float32").max(axis=1))
    if dtype == "float16":
        assert np.isnan([g["max_angle_error"] for g in got]).sum() == np.sum(pos >= 65_520) > 0


@pytest.mark.parametrize("dtype", list(precision.DTYPES))
def test_js_per_pair_errors_and_readouts_match_python(dtype):
    rng = np.random.default_rng(7)
    pos = np.unique(np.concatenate([[0, 1, 256, 257, 2048, 2049, 65_519, 65_520, 100_000],
                                    rng.integers(0, precision.MAX_POSITION + 1, 60)]))
    got = call_js("precision", "compute", [[{"position": int(m), "dtype": dtype}] for m in pos], [precision.data()])
    for m, g in zip(pos, got):
        np.testing.assert_array_equal(np.array(g["err"], dtype=float), precision.angle_errors([m], dtype)[0])
        np.testing.assert_array_equal(np.array(g["err32"], dtype=float), precision.angle_errors([m], "float32")[0])
        want = precision.readouts(int(m), dtype)
        for key, value in g["readouts"].items():
            np.testing.assert_allclose(value, want[key], rtol=1e-9, atol=1e-15, err_msg=f"{key} at {m} in {dtype}")


def test_errors_with_frequencies_rounded_to_bfloat16():
    # model.to(torch.bfloat16) rounds a rotary module's inv_freq buffer; a float32 product
    # cannot undo it: by position 4096 some pair is off by more than a radian.
    rounded = torch_rope.frequencies(precision.DIM, dtype=torch.bfloat16)
    err = precision.angle_errors([100, 4096], "float32", inv_freq=rounded)
    assert err[0].max() > 0.05 and err[1].max() > 1.0
    assert err[:, 0].max() == 0  # theta_0 = 1 is exact in bfloat16 and the product is exact
    exact_f32 = precision.angle_errors([4096], "float32")
    assert exact_f32.max() < 1e-3
    cos = precision.cos_errors([100, 4096], "float32", inv_freq=rounded)
    assert cos.shape == err.shape and np.all(cos <= err + 1e-12)  # cos has slope at most 1
    with pytest.raises(ValueError, match="inv_freq"):
        precision.angle_errors([1], "float32", inv_freq=torch.ones(3))


def test_cos_errors_are_nan_where_float16_overflows():
    cos = precision.cos_errors([65_519, 65_520], "float16")
    assert np.isfinite(cos[0]).all() and np.isnan(cos[1]).all()
    np.testing.assert_allclose(cos[0].max(), precision.state(65_519, "float16")["cos_error"])
