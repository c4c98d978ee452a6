"""Chapter 8's precision widget: its pure state function, its figure and its animation."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import rope_edu  # noqa: E402
from rope_edu import torch_rope  # noqa: E402
from rope_edu.widgets import precision  # noqa: E402


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


def test_figure_and_frames():
    fig = precision.DEMO.figure(position=257, dtype="bfloat16")
    assert len(fig.axes) == 2
    assert fig.axes[0].get_xlabel() and fig.axes[0].get_ylabel() and fig.axes[1].get_xlabel()
    plt.close(fig)
    frames = precision.DEMO.frames()
    assert 12 <= len(frames) <= 30
    assert {f["dtype"] for f in frames} == set(precision.DTYPES)
    assert max(f["position"] for f in frames) == precision.MAX_POSITION
    controls = precision.controls()
    assert set(controls) == {"position", "dtype"} and controls["position"].max == precision.MAX_POSITION
    fig = precision.DEMO.figure(**frames[-1])
    plt.close(fig)


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
