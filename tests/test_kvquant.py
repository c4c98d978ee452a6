"""rope_edu.kvquant: quantised key caches before and after RoPE."""

from __future__ import annotations

import numpy as np
import pytest

from rope_edu import apply_rope
from rope_edu.kvquant import QUANT_AXES, cached_keys, outlier_keys, quantize

rng = np.random.default_rng(0)


# --- quantize ---------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", list(QUANT_AXES))
@pytest.mark.parametrize("bits", [2, 3, 4, 8])
def test_quantize_error_at_most_half_a_step(axis, bits):
    x = rng.standard_normal((3, 40, 16)) * rng.uniform(0.1, 10, 16)
    xq = quantize(x, bits, axis)
    red = QUANT_AXES[axis]
    step = np.abs(x).max(axis=red, keepdims=True) / (2 ** (bits - 1) - 1)
    assert np.all(np.abs(xq - x) <= step / 2 + 1e-12)
    # values are integer multiples of the step, within the symmetric range
    levels = xq / step
    np.testing.assert_allclose(levels, np.rint(levels), atol=1e-9)
    assert np.abs(levels).max() <= 2 ** (bits - 1) - 1 + 1e-9


def test_quantize_groups_and_zeros():
    x = np.array([[1.0, 100.0], [-0.5, 50.0], [0.25, -25.0]])
    # per channel: column 0 keeps its own small scale
    np.testing.assert_allclose(quantize(x, 8, "channel")[:, 0], x[:, 0], atol=1 / 254)
    # per token: the 100 sets the step of row 0, so its 1.0 is lost at 3 bits
    assert quantize(x, 3, "token")[0, 0] == 0.0
    np.testing.assert_array_equal(quantize(np.zeros((4, 2)), 4, "token"), 0.0)
    assert quantize(x, 16, "channel").dtype == np.float64


def test_quantize_exact_on_grid():
    x = np.array([[-3.0, 1.0], [2.0, -1.0], [3.0, 0.0]])
    np.testing.assert_array_equal(quantize(x, 3, "channel"), x)


def test_quantize_bad_inputs():
    x = np.ones((4, 2))
    with pytest.raises(TypeError, match="bits"):
        quantize(x, 4.0, "channel")
    with pytest.raises(ValueError, match="bits"):
        quantize(x, 1, "channel")
    with pytest.raises(ValueError, match="bits"):
        quantize(x, 17, "channel")
    with pytest.raises(ValueError, match="axis"):
        quantize(x, 4, "head")
    with pytest.raises(ValueError, match="x"):
        quantize(np.ones(4), 4, "token")
    with pytest.raises(TypeError, match="x"):
        quantize(np.ones((2, 2), dtype=complex), 4, "token")
    with pytest.raises(ValueError, match="x"):
        quantize(np.array([[np.nan, 1.0]]), 4, "token")


# --- outlier keys and the two orders -----------------------------------------------------------


def test_outlier_keys_shape_and_channels():
    k = outlier_keys(500, 16, channels=[2, 9], magnitude=12.0, seed=3)
    assert k.shape == (500, 16)
    mean = k.mean(axis=0)
    assert mean[2] > 10 and mean[9] < -10
    assert np.all(np.abs(np.delete(mean, [2, 9])) < 0.3)
    np.testing.assert_array_equal(k, outlier_keys(500, 16, channels=[2, 9], seed=3))


def test_outlier_keys_bad_inputs():
    with pytest.raises(ValueError, match="channels"):
        outlier_keys(4, 8, channels=[8])
    with pytest.raises(ValueError, match="channels"):
        outlier_keys(4, 8, channels=[1, 1])
    with pytest.raises(TypeError, match="channels"):
        outlier_keys(4, 8, channels=[1.5])
    with pytest.raises(ValueError, match="magnitude"):
        outlier_keys(4, 8, channels=[1], magnitude=0.0)
    with pytest.raises(ValueError, match="n_tokens"):
        outlier_keys(0, 8, channels=[1])
    with pytest.raises(TypeError, match="dim"):
        outlier_keys(4, 8.0, channels=[1])


def test_pre_rope_error_is_the_unrotated_error():
    """RoPE is orthogonal per row: quantise-then-rotate keeps every row's error."""
    k = outlier_keys(64, 16, channels=[0, 5])
    pos = np.arange(64)
    for axis in QUANT_AXES:
        read = cached_keys(k, pos, bits=4, axis=axis, order="pre_rope")
        err = np.linalg.norm(read - apply_rope(k, pos), axis=-1)
        np.testing.assert_allclose(err, np.linalg.norm(quantize(k, 4, axis) - k, axis=-1), rtol=1e-10, atol=1e-12)


def test_post_rope_smears_an_outlier_into_its_partner():
    k = outlier_keys(256, 16, channels=[0], magnitude=12.0)
    pos = np.arange(256)
    rotated = apply_rope(k, pos)  # interleaved: channel 0 pairs with channel 1, theta_0 = 1
    rng_pre, rng_post = np.abs(k).max(axis=0), np.abs(rotated).max(axis=0)
    assert rng_pre[1] < 5 and rng_post[1] > 10  # the partner's range grows to the outlier's
    np.testing.assert_allclose(rng_post[2:], np.abs(apply_rope(k, pos)[:, 2:]).max(axis=0))
    exact = apply_rope(k, pos)
    err = {}
    for order in ("pre_rope", "post_rope"):
        read = cached_keys(k, pos, bits=4, axis="channel", order=order)
        back = apply_rope(read, -pos)  # the error seen in unrotated coordinates
        err[order] = np.sqrt(np.mean((back - k) ** 2, axis=0))
        np.testing.assert_allclose(np.linalg.norm(back - k), np.linalg.norm(read - exact), rtol=1e-10)
    assert err["post_rope"][1] > 3 * err["pre_rope"][1]  # the partner
    assert err["post_rope"][0] < 1.5 * err["pre_rope"][0]  # the outlier itself


def test_cached_keys_bad_inputs():
    k = np.ones((4, 8))
    with pytest.raises(ValueError, match="order"):
        cached_keys(k, np.arange(4), bits=4, axis="token", order="during")
    with pytest.raises(ValueError, match="keys"):
        cached_keys(np.ones(8), [0], bits=4, axis="token", order="pre_rope")
    with pytest.raises(ValueError, match="positions"):
        cached_keys(k, np.arange(5), bits=4, axis="token", order="post_rope")
    with pytest.raises(ValueError, match="axis"):
        cached_keys(k, np.arange(4), bits=4, axis="pair", order="post_rope")


# --- llama.cpp's grouping and its Hadamard rotation (chapter 14) ------------------------------------


def test_quantize_blocks_is_quantize_per_block():
    from rope_edu.kvquant import quantize_blocks

    x = np.random.default_rng(0).standard_normal((2, 5, 64))
    got = quantize_blocks(x, 4, 32)
    for half in (slice(0, 32), slice(32, 64)):
        np.testing.assert_array_equal(got[..., half], quantize(x[..., half], 4, "token"))


def test_block_size_is_ggmls():
    # llama.cpp's q8_0 and q4_0 cache types: blocks of 32 values (gguf-py's GGML_QUANT_SIZES)
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    assert GGML_QUANT_SIZES[GGMLQuantizationType.Q8_0][0] == GGML_QUANT_SIZES[GGMLQuantizationType.Q4_0][0] == 32


@pytest.mark.parametrize("dim", [1, 2, 64, 128])
def test_hadamard_is_orthonormal_and_flat(dim):
    from rope_edu.kvquant import hadamard

    h = hadamard(dim)
    np.testing.assert_allclose(h @ h, np.eye(dim), atol=1e-12)
    np.testing.assert_allclose(np.abs(h), 1 / np.sqrt(dim), rtol=1e-15)


@pytest.mark.parametrize("call, error, match", [
    (lambda m: m.hadamard(96), ValueError, "power of two"),
    (lambda m: m.hadamard(2.0), TypeError, "dim"),
    (lambda m: m.quantize_blocks(np.ones((2, 48)), 4, 32), ValueError, "multiple of block"),
    (lambda m: m.quantize_blocks(np.ones((2, 64)), 4, 0), ValueError, "block"),
    (lambda m: m.quantize_blocks(np.ones(64), 4), ValueError, "x"),
])
def test_block_tools_validate(call, error, match):
    from rope_edu import kvquant

    with pytest.raises(error, match=match):
        call(kvquant)


# --- ggml's q8_0 / q4_0 and fp8 e4m3 ---------------------------------------------------------------


def test_ggml_quantize_by_hand():
    from rope_edu.kvquant import ggml_quantize

    # q8_0: largest size 127, so d = 1 (exact in float16); levels round half away from zero
    x = np.zeros(32)
    x[:6] = [127.0, 63.4, -0.5, 0.5, 2.5, -2.5]
    np.testing.assert_array_equal(ggml_quantize(x, "q8_0")[:6], [127, 63, -1, 1, 3, -3])
    # q4_0: the largest value -16 sets d = -16 / -8 = 2; level trunc(x / 2 + 8.5) - 8, cut to -8..7
    y = np.zeros(32)
    y[:6] = [-16.0, 16.0, 3.0, -3.0, 1.0, 0.9]
    np.testing.assert_array_equal(ggml_quantize(y, "q4_0")[:6], [-16, 14, 4, -2, 2, 0])
    # a block of zeros stays zero; blocks are independent
    z = np.concatenate([np.zeros(32), y])
    np.testing.assert_array_equal(ggml_quantize(z, "q4_0"), np.concatenate([np.zeros(32), ggml_quantize(y, "q4_0")]))


@pytest.mark.parametrize("kind", ["q8_0", "q4_0"])
def test_ggml_quantize_is_ggufs_bit_for_bit(kind):
    quants = pytest.importorskip("gguf.quants")
    from rope_edu.kvquant import ggml_quantize

    x = (rng.standard_normal((5, 3, 64)) * np.exp(rng.uniform(-3, 3, (5, 3, 1)))).astype(np.float32)
    qtype = getattr(quants.GGMLQuantizationType, kind.upper())
    want = quants.dequantize(quants.quantize(x.reshape(-1, 64), qtype), qtype).reshape(x.shape)
    np.testing.assert_array_equal(ggml_quantize(x, kind), want)


def test_round_e4m3_by_hand_and_against_torch():
    from rope_edu.kvquant import E4M3_MAX, round_e4m3

    cases = {448.0: 448.0, 500.0: 448.0, -1e6: -448.0, 1.0625: 1.0, 1.1875: 1.25, 0.3: 0.3125,
             2.0 ** -9: 2.0 ** -9, 2.0 ** -10: 0.0, 3 * 2.0 ** -10: 2.0 ** -8, 0.0: 0.0}
    np.testing.assert_array_equal(round_e4m3(list(cases)), list(cases.values()))
    torch = pytest.importorskip("torch")
    y = rng.standard_normal(20000) * np.exp(rng.uniform(-12, 7, 20000))
    want = torch.tensor(np.clip(y, -E4M3_MAX, E4M3_MAX)).to(torch.float8_e4m3fn).double().numpy()
    np.testing.assert_array_equal(round_e4m3(y), want)


def test_quantize_fp8_scales():
    from rope_edu.kvquant import quantize_fp8, round_e4m3

    k = rng.standard_normal((1, 3, 40, 64)) * np.array([1.0, 1e2, 1e5])[None, :, None, None]
    per_tensor, per_head = quantize_fp8(k, "tensor"), quantize_fp8(k, "head")
    s = np.abs(k).max() / 448
    np.testing.assert_allclose(per_tensor, round_e4m3(k / s) * s, rtol=0, atol=0)
    for h in range(3):  # each head's largest value comes back exactly, under its own scale
        big = np.unravel_index(np.abs(k[0, h]).argmax(), k[0, h].shape)
        np.testing.assert_allclose(per_head[0, h][big], k[0, h][big], rtol=1e-12)
    # one scale for the layer: the small head's values fall in e4m3's coarse subnormal steps
    err = [np.linalg.norm(x[0, 0] - k[0, 0]) / np.linalg.norm(k[0, 0]) for x in (per_tensor, per_head)]
    assert err[0] > 2 * err[1]
    np.testing.assert_array_equal(quantize_fp8(np.zeros((1, 2, 3, 4)), "head"), 0.0)


@pytest.mark.parametrize("call, error, match", [
    (lambda m: m.ggml_quantize(np.ones((2, 48)), "q8_0"), ValueError, "multiple of 32"),
    (lambda m: m.ggml_quantize(np.ones((2, 64)), "q5_0"), ValueError, "kind"),
    (lambda m: m.ggml_quantize(np.array([np.nan] * 32), "q4_0"), ValueError, "x"),
    (lambda m: m.round_e4m3(np.array([np.inf])), ValueError, "x"),
    (lambda m: m.quantize_fp8(np.ones((2, 4)), "head"), ValueError, "x"),
    (lambda m: m.quantize_fp8(np.ones((2, 3, 4)), "channel"), ValueError, "scale"),
])
def test_fp8_and_ggml_validate(call, error, match):
    from rope_edu import kvquant

    with pytest.raises(error, match=match):
        call(kvquant)
