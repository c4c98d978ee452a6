"""rope_edu.video: per-axis RoPE of diffusion transformers, checked against diffusers' own code.

diffusers (a test dependency, like transformers) builds FLUX's position embedding with
``FluxPosEmbed`` (cos/sin per axis in float64, cast to float32, interleaved pairs) and applies it
with ``apply_rotary_emb``; Cosmos scales its bases per axis with the NTK rule. Chapter 11 states
what these tests check; the book itself never imports diffusers.
"""

from __future__ import annotations

import numpy as np
import pytest
pytest.importorskip("torch")  # make check skips this file where torch is missing
pytest.importorskip("diffusers")  # make check skips this file where diffusers is missing
import torch
from diffusers.models.embeddings import apply_rotary_emb
from diffusers.models.transformers.transformer_cosmos import CosmosRotaryPosEmbed
from diffusers.models.transformers.transformer_flux import FluxPosEmbed
from hypothesis import given, settings
from hypothesis import strategies as st

import rope_edu
from rope_edu import apply_rope_nd, frequencies, mrope_axes, rope_nd_angles
from rope_edu import video as vd
from rope_edu.scaling import ntk_base

FLUX_AXES = [16, 56, 56]


def _flux_ids(frames, height, width, start=(0, 0, 0)):
    return vd.video_positions(frames, height, width, start=start)


# --- against diffusers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "grid, start",
    [((1, 4, 6), (0, 0, 0)), ((1, 64, 64), (0, 0, 0)), ((1, 5, 3), (1, 0, 0)), ((3, 4, 5), (0, 2, 7))],
)
def test_flux_cos_sin_match_diffusers(grid, start):
    ids = _flux_ids(*grid, start=start)
    cos, sin = FluxPosEmbed(theta=10000, axes_dim=FLUX_AXES)(torch.tensor(ids, dtype=torch.float32))
    angles = rope_nd_angles(ids, vd.axes_frequencies(FLUX_AXES, 10000.0))
    # diffusers repeats each pair's cos/sin twice: interleaved pairs (2i, 2i+1)
    np.testing.assert_allclose(cos.numpy(), np.repeat(np.cos(angles), 2, axis=-1), rtol=0, atol=1e-6)
    np.testing.assert_allclose(sin.numpy(), np.repeat(np.sin(angles), 2, axis=-1), rtol=0, atol=1e-6)


@pytest.mark.parametrize("grid", [(1, 4, 6), (2, 3, 4)])
def test_flux_rotated_queries_match_diffusers(grid):
    ids = _flux_ids(*grid)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, len(ids), sum(FLUX_AXES))).astype(np.float32)  # (batch, heads, seq, dim)
    cos_sin = FluxPosEmbed(theta=10000, axes_dim=FLUX_AXES)(torch.tensor(ids, dtype=torch.float32))
    theirs = apply_rotary_emb(torch.from_numpy(x), cos_sin, use_real=True, use_real_unbind_dim=-1).numpy()
    ours = apply_rope_nd(x.astype(np.float64), ids, vd.axes_frequencies(FLUX_AXES), layout="interleaved")
    np.testing.assert_allclose(theirs, ours, rtol=0, atol=2e-6)
    # the other layout does not match: the pair layout matters
    half = apply_rope_nd(x.astype(np.float64), ids, vd.axes_frequencies(FLUX_AXES), layout="half")
    assert np.abs(theirs - half).max() > 0.1


def test_flux_text_ids_are_zero_rotation():
    # FLUX gives text tokens the id (0, 0, 0): no rotation at all
    cos, sin = FluxPosEmbed(theta=10000, axes_dim=FLUX_AXES)(torch.zeros(5, 3))
    np.testing.assert_array_equal(cos.numpy(), 1.0)
    np.testing.assert_array_equal(sin.numpy(), 0.0)


@pytest.mark.parametrize("rope_scale", [(2.0, 1.0, 1.0), (1.0, 3.0, 1.5), (4.0, 2.0, 2.0)])
def test_cosmos_per_axis_ntk_matches_diffusers(rope_scale):
    hidden = 48  # Cosmos splits it (t, h, w) = (16, 16, 16)
    emb = CosmosRotaryPosEmbed(hidden_size=hidden, max_size=(8, 32, 32), patch_size=(1, 2, 2), rope_scale=rope_scale)
    cos, sin = emb(torch.zeros(1, 4, 3, 8, 10))  # 3 frames of 4 x 5 patches
    axes_dim = [16, 16, 16]
    bases = vd.ntk_axes_base(10000.0, rope_scale, axes_dim)
    angles = rope_nd_angles(vd.video_positions(3, 4, 5), vd.axes_frequencies(axes_dim, bases))
    # Cosmos concatenates [t, h, w] twice: half-split pairs (i, i + d/2); float32 throughout
    np.testing.assert_allclose(cos.numpy(), np.tile(np.cos(angles), 2), rtol=0, atol=2e-6)
    np.testing.assert_allclose(sin.numpy(), np.tile(np.sin(angles), 2), rtol=0, atol=2e-6)


# --- axes_frequencies, video_positions --------------------------------------------------------


def test_axes_frequencies_blocks():
    f = vd.axes_frequencies(FLUX_AXES, 10000.0)
    assert f.shape == (64, 3)
    assert ((f != 0).sum(axis=1) == 1).all()
    np.testing.assert_array_equal(np.argmax(f != 0, axis=1), np.repeat([0, 1, 2], [8, 28, 28]))
    np.testing.assert_allclose(f[:8, 0], frequencies(16, 10000.0), rtol=1e-15)
    np.testing.assert_allclose(f[8:36, 1], frequencies(56, 10000.0), rtol=1e-15)
    np.testing.assert_allclose(f[36:, 2], frequencies(56, 10000.0), rtol=1e-15)
    g = vd.axes_frequencies([4, 8], [100.0, 7.0])
    np.testing.assert_allclose(g[:2, 0], frequencies(4, 100.0))
    np.testing.assert_allclose(g[2:, 1], frequencies(8, 7.0))


def test_axes_frequencies_one_axis_is_1d_rope():
    x = np.random.default_rng(1).standard_normal((7, 12))
    pos = np.arange(7)
    np.testing.assert_allclose(
        apply_rope_nd(x, pos[:, None], vd.axes_frequencies([12], 500.0)),
        rope_edu.apply_rope(x, pos, base=500.0), atol=1e-12,
    )


@pytest.mark.parametrize(
    "args, kwargs, err, match",
    [
        (("16",), {}, TypeError, "axes_dim"),
        ((16,), {}, TypeError, "axes_dim"),
        (([],), {}, ValueError, "axes_dim"),
        (([16, 5],), {}, ValueError, r"axes_dim\[1\]"),
        (([16, 2.0],), {}, TypeError, r"axes_dim\[1\]"),
        (([16, 56],), {"base": [1e4]}, ValueError, "base"),
        (([16, 56],), {"base": [1e4, 1.0]}, ValueError, r"base\[1\]"),
        (([16, 56],), {"base": "1e4"}, TypeError, "base"),
        (([16, 56],), {"base": 0.5}, ValueError, "base"),
    ],
)
def test_axes_frequencies_rejects(args, kwargs, err, match):
    with pytest.raises(err, match=match):
        vd.axes_frequencies(*args, **kwargs)


def test_video_positions():
    p = vd.video_positions(2, 3, 4)
    assert p.shape == (24, 3) and p.dtype == np.int64
    np.testing.assert_array_equal(p[(1 * 3 + 2) * 4 + 3], [1, 2, 3])
    np.testing.assert_array_equal(vd.video_positions(1, 2, 2, start=(1, 0, 5))[-1], [1, 1, 6])
    np.testing.assert_array_equal(vd.video_positions(1, 3, 4)[:, 1:], rope_edu.grid_positions(3, 4))
    for bad, err in (((0, 1, 1), ValueError), ((1, 1.5, 1), TypeError)):
        with pytest.raises(err, match="frames|height"):
            vd.video_positions(*bad)
    with pytest.raises(ValueError, match="start"):
        vd.video_positions(1, 1, 1, start=(0, 0))


# --- per-axis NTK -------------------------------------------------------------------------------


def test_ntk_axes_base_slowest_pair_scaled_exactly():
    axes_dim, factors = [16, 56, 56], [1.0, 2.0, 3.0]
    bases = vd.ntk_axes_base(10000.0, factors, axes_dim)
    assert bases[0] == 10000.0
    assert bases[1] == pytest.approx(ntk_base(10000.0, 2.0, 56))
    old, new = vd.axes_frequencies(axes_dim), vd.axes_frequencies(axes_dim, bases)
    starts = np.cumsum([0] + [d // 2 for d in axes_dim])
    for a, s in enumerate(factors):
        block = slice(starts[a], starts[a + 1])
        assert new[block, a][0] == old[block, a][0] == 1.0
        assert old[block, a][-1] / new[block, a][-1] == pytest.approx(s, rel=1e-12)


@pytest.mark.parametrize(
    "args, err, match",
    [
        ((1e4, [2.0], [16, 56]), ValueError, "factors"),
        ((1e4, 2.0, [16, 56]), TypeError, "factors"),
        ((1e4, [2.0, 0.5], [16, 56]), ValueError, "factor"),
        ((1e4, [2.0, 2.0], [2, 56]), ValueError, "dim"),
        ((1.0, [2.0, 2.0], [16, 56]), ValueError, "base"),
    ],
)
def test_ntk_axes_base_rejects(args, err, match):
    with pytest.raises(err, match=match):
        vd.ntk_axes_base(*args)


# --- RIFLEx ---------------------------------------------------------------------------------------


def test_intrinsic_frequency_index_hunyuan_like():
    # temporal axis of HunyuanVideo in diffusers: 16 coordinates, base 256: periods 2*pi*2^j
    periods = 2 * np.pi * 2.0 ** np.arange(8)
    for length in (5, 20, 48, 66, 100, 1000):
        j = vd.intrinsic_frequency_index(16, 256.0, length)
        assert j == int(np.argmin(np.abs(periods - length)))
    assert vd.intrinsic_frequency_index(16, 256.0, 48) == 3  # period 50.3


@settings(max_examples=60, deadline=None)
@given(
    half=st.integers(2, 32),
    base=st.floats(2.0, 1e6),
    trained=st.integers(2, 200),
    factor=st.integers(2, 4),
)
def test_riflex_fix_no_repetition(half, base, trained, factor):
    dim = 2 * half
    j = vd.intrinsic_frequency_index(dim, base, trained)
    length = factor * trained
    theta = vd.riflex_frequencies(dim, base, j, length)
    angles = theta[j] * np.arange(length)
    # one period covers the new length: angles stay below 2*pi and are all distinct mod 2*pi
    assert angles[-1] < 2 * np.pi
    assert len(np.unique(np.round(np.mod(angles, 2 * np.pi), 9))) == length
    others = np.arange(half) != j
    np.testing.assert_allclose(theta[others], frequencies(dim, base)[others], rtol=1e-15)


def test_riflex_margin_and_rejects():
    theta = vd.riflex_frequencies(16, 256.0, 3, 66, margin=0.9)
    assert theta[3] == pytest.approx(0.9 * 2 * np.pi / 66)
    for kwargs, err, match in (
        (dict(index=8), ValueError, "index"),
        (dict(index=-1), ValueError, "index"),
        (dict(length=0), ValueError, "length"),
        (dict(margin=1.5), ValueError, "margin"),
        (dict(margin=0.0), ValueError, "margin"),
    ):
        args = dict(dim=16, base=256.0, index=3, length=66)
        args.update(kwargs)
        with pytest.raises(err, match=match):
            vd.riflex_frequencies(**args)
    with pytest.raises(ValueError, match="length"):
        vd.intrinsic_frequency_index(16, 256.0, -3)
    with pytest.raises(TypeError, match="dim"):
        vd.intrinsic_frequency_index(16.0, 256.0, 3)


# --- VideoRoPE ------------------------------------------------------------------------------------


def test_videorope_axes_time_gets_slowest():
    ax = vd.videorope_axes([16, 24, 24])
    assert ax.shape == (64,)
    np.testing.assert_array_equal(ax[48:], 0)
    np.testing.assert_array_equal(ax[:48], np.tile([1, 2], 24))
    np.testing.assert_array_equal(np.bincount(ax), [16, 24, 24])
    # M-RoPE's contiguous layout gives time the fastest 16 pairs instead
    np.testing.assert_array_equal(np.flatnonzero(mrope_axes([16, 24, 24]) == 0), np.arange(16))


def test_videorope_axes_rejects():
    with pytest.raises(ValueError, match="h == w"):
        vd.videorope_axes([16, 20, 24])
    with pytest.raises(ValueError, match="3 entries"):
        vd.videorope_axes([16, 24])
    with pytest.raises(TypeError, match="mrope_section"):
        vd.videorope_axes("16,24,24")
    with pytest.raises(ValueError, match="all zeros"):
        vd.videorope_axes([0, 0, 0])
