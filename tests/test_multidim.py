"""rope_edu.multidim: axial/mixed 2-D RoPE and M-RoPE against transformers' own code.

References (tiny configs built here, nothing downloaded): the multimodal rotary embeddings and
``apply_rotary_pos_emb`` of qwen2_vl, qwen2_5_vl and qwen3_vl with 3-D positions; their
``get_rope_index`` on a text + image + video input; the 2-D rotary embeddings of the Qwen2-VL and
Pixtral vision encoders. Then the properties the book states, and every bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
pytest.importorskip("torch")  # make check skips this file where torch is missing
pytest.importorskip("transformers")  # make check skips this file where transformers is missing
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import Qwen2_5_VLConfig, Qwen2VLConfig, Qwen3VLConfig
from transformers.models.pixtral import modeling_pixtral as PX
from transformers.models.pixtral.configuration_pixtral import PixtralVisionConfig
from transformers.models.qwen2_5_vl import modeling_qwen2_5_vl as Q25
from transformers.models.qwen2_vl import modeling_qwen2_vl as Q2
from transformers.models.qwen3_vl import modeling_qwen3_vl as Q3
from transformers.vision_utils import get_vision_position_ids

import rope_edu
from rope_edu import apply_rope, frequencies
from rope_edu import multidim as md

FAST = settings(max_examples=25, deadline=None)
# transformers computes inv_freq and the angles in float32: at positions up to ~100 the angle is
# off by ~1e-5 relative, so rotated unit-scale vectors agree to a few 1e-6.
ATOL = 2e-5
IMAGE_TOKEN, VIDEO_TOKEN, START, END = 151655, 151656, 151652, 151653


# --- transformers references -----------------------------------------------------------------

TEXT = dict(hidden_size=64, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=1,
            intermediate_size=64, vocab_size=152000)
VISION = dict(depth=1, num_heads=2, spatial_merge_size=2, temporal_patch_size=2, patch_size=2, in_channels=3)

FAMILIES = {
    # family: (config class, modeling module, rotary class name, mrope_section, interleaved)
    "qwen2_vl": (Qwen2VLConfig, Q2, "Qwen2VLRotaryEmbedding", [4, 6, 6], False),
    "qwen2_5_vl": (Qwen2_5_VLConfig, Q25, "Qwen2_5_VLRotaryEmbedding", [4, 6, 6], False),
    "qwen3_vl": (Qwen3VLConfig, Q3, "Qwen3VLTextRotaryEmbedding", [6, 5, 5], True),
}


def hf_config(family: str, base: float = 10000.0, tokens_per_second: int = 2):
    cls, _, _, section, interleaved = FAMILIES[family]
    rope = {"rope_type": "default", "rope_theta": base, "mrope_section": section}
    if interleaved:
        rope["mrope_interleaved"] = True
    vision = dict(VISION)
    if family == "qwen2_vl":
        vision.update(embed_dim=32, hidden_size=64)
    elif family == "qwen2_5_vl":
        vision.update(hidden_size=32, intermediate_size=32, out_hidden_size=64, tokens_per_second=tokens_per_second)
    else:
        vision.update(hidden_size=32, intermediate_size=32, out_hidden_size=64, num_position_embeddings=16,
                      deepstack_visual_indexes=[])
    text = dict(TEXT, rope_parameters=rope)
    if family == "qwen3_vl":
        text["head_dim"] = 32
    return cls(text_config=text, vision_config=vision)


def hf_mrope(family: str, x: np.ndarray, position_ids: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """What the family's language model does to a query x (batch, heads, seq, head_dim)."""
    _, mod, rotary, _, _ = FAMILIES[family]
    emb = getattr(mod, rotary)(hf_config(family, base).text_config)
    xt = torch.tensor(x, dtype=torch.float32)
    cos, sin = emb(xt, torch.tensor(position_ids))
    out, _ = mod.apply_rotary_pos_emb(xt, xt, cos, sin)
    return out.numpy().astype(np.float64)


def ours(family: str, x: np.ndarray, positions: np.ndarray, base: float = 10000.0) -> np.ndarray:
    _, _, _, section, interleaved = FAMILIES[family]
    return md.apply_mrope(x, positions, mrope_section=section, base=base,
                          assignment="interleaved" if interleaved else "contiguous")


# --- M-RoPE application ---------------------------------------------------------------------


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("base", [10000.0, 1e6])
def test_apply_mrope_matches_transformers_3d_positions(family, base):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 11, 32))
    pos = rng.integers(0, 60, size=(3, 2, 11))  # (3, batch, seq): unrelated t, h, w ids
    np.testing.assert_allclose(ours(family, x, pos, base), hf_mrope(family, x, pos, base), atol=ATOL)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_apply_mrope_3_by_seq_positions(family):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 9, 32))
    pos = rng.integers(0, 40, size=(3, 9))
    np.testing.assert_allclose(ours(family, x, pos), hf_mrope(family, x, pos[:, None, :]), atol=ATOL)
    # (3, seq) with a 3-d x (heads, seq, dim) too
    np.testing.assert_allclose(ours(family, x[0], pos), hf_mrope(family, x, pos[:, None, :])[0], atol=ATOL)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_text_tokens_reduce_to_1d_rope(family):
    """Equal ids on the three axes: M-RoPE is 1-D RoPE (half layout), here and in transformers."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 2, 13, 32))
    text = np.stack([np.arange(13) + 3, np.arange(13) + 40])  # (batch, seq)
    pos3 = np.broadcast_to(text, (3, 2, 13))
    rope1d = apply_rope(x, text[:, None, :], layout="half")
    np.testing.assert_allclose(ours(family, x, pos3), rope1d, atol=1e-12)
    np.testing.assert_allclose(ours(family, x[0], text[0]), rope1d[0], atol=1e-12)  # (seq,) text ids
    np.testing.assert_allclose(hf_mrope(family, x, text), rope1d, atol=ATOL)  # HF's own 2-d text path


def test_mrope_with_different_ids_is_not_1d_rope():
    """The reduction needs equal ids: a visual token's (t, h, w) = (5, 6, 7) is not 1-D RoPE at any of them."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 32))
    out = md.apply_mrope(x, np.array([[5], [6], [7]]), mrope_section=[4, 6, 6])
    for p in (5, 6, 7):
        assert not np.allclose(out, apply_rope(x, [p], layout="half"))


def test_mrope_axes_published_sections():
    """Qwen2-VL 7B's [16, 24, 24] in blocks; Qwen3-VL's [24, 20, 20] interleaved THW..., tail to time."""
    axes = md.mrope_axes([16, 24, 24])
    assert axes.tolist() == [0] * 16 + [1] * 24 + [2] * 24
    inter = md.mrope_axes([24, 20, 20], assignment="interleaved")
    assert inter[:60].tolist() == [0, 1, 2] * 20 and inter[60:].tolist() == [0] * 4
    assert np.bincount(inter).tolist() == [24, 20, 20]


@given(st.integers(0, 8), st.integers(0, 8), st.integers(0, 8))
@FAST
def test_interleaved_counts_match_section(t, h, w):
    sec = [t, h, w]
    if sum(sec) == 0:
        return
    try:
        axes = md.mrope_axes(sec, assignment="interleaved")
    except ValueError as err:
        assert "cannot be interleaved" in str(err)
        return
    assert np.bincount(axes, minlength=3).tolist() == sec


def test_mrope_frequencies_put_theta_on_one_axis():
    f = md.mrope_frequencies(32, [4, 6, 6], base=500.0)
    np.testing.assert_allclose(f.sum(1), frequencies(32, 500.0), rtol=0, atol=0)
    assert ((f != 0).sum(1) == 1).all()


def test_mrope_relative_in_each_axis():
    """Shifting all three ids of both tokens by any (dt, dh, dw) leaves the score unchanged."""
    rng = np.random.default_rng(4)
    q, k = rng.standard_normal((2, 1, 32))
    pq, pk = np.array([[3], [5], [1]]), np.array([[9], [2], [7]])
    shift = np.array([[11], [-4], [30]])
    kw = dict(mrope_section=[4, 6, 6])
    s0 = (md.apply_mrope(q, pq, **kw) * md.apply_mrope(k, pk, **kw)).sum()
    s1 = (md.apply_mrope(q, pq + shift, **kw) * md.apply_mrope(k, pk + shift, **kw)).sum()
    np.testing.assert_allclose(s0, s1, rtol=1e-12)


# --- M-RoPE position ids against get_rope_index -------------------------------------------------


def hf_inputs(layout, merge=2, *, qwen3_frames=False):
    """input_ids, mm_token_type_ids, image_grid_thw, video_grid_thw for a layout, as a processor would."""
    ids, types, images, videos, seconds = [], [], [], [], []
    rng = np.random.default_rng(5)
    for seg in layout:
        kind = seg[0]
        if kind == "text":
            ids += rng.integers(10, 1000, seg[1]).tolist()
            types += [0] * seg[1]
            continue
        t, h, w = seg[1]
        n = t * (h // merge) * (w // merge)
        token = IMAGE_TOKEN if kind == "image" else VIDEO_TOKEN
        ids += [START] + [token] * n + [END]
        types += [0] + [1 if kind == "image" else 2] * n + [0]
        (images if kind == "image" else videos).append([t, h, w])
        if kind == "video":
            seconds.append(seg[2] if len(seg) == 3 else 1.0)
    t = lambda a: torch.tensor(a) if a else None  # noqa: E731
    return (torch.tensor([ids]), torch.tensor([types], dtype=torch.int32), t(images), t(videos),
            torch.tensor(seconds) if seconds else None)


def with_delimiters(layout):
    """Our layout of what hf_inputs builds: vision start/end tokens are text around each block."""
    out = []
    for seg in layout:
        if seg[0] == "text":
            out.append(seg)
        else:
            out += [("text", 1), seg, ("text", 1)]
    merged = []  # adjacent text runs are one run
    for seg in out:
        if merged and seg[0] == "text" and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + seg[1])
        else:
            merged.append(seg)
    return merged


def hf_rope_index(family, layout, tokens_per_second=2):
    cls, mod, *_ = FAMILIES[family]
    model_cls = {"qwen2_vl": Q2.Qwen2VLModel, "qwen2_5_vl": Q25.Qwen2_5_VLModel, "qwen3_vl": Q3.Qwen3VLModel}[family]
    torch.manual_seed(0)
    model = model_cls(hf_config(family, tokens_per_second=tokens_per_second))
    input_ids, types, images, videos, seconds = hf_inputs(layout)
    kw = dict(image_grid_thw=images, video_grid_thw=videos)
    if family == "qwen2_5_vl":
        kw["second_per_grid_ts"] = seconds
    pos, delta = model.get_rope_index(input_ids, mm_token_type_ids=types, **kw)
    return pos[:, 0].numpy(), int(delta[0, 0]), types[0].numpy()


LAYOUT = [("text", 4), ("image", (1, 4, 6)), ("text", 3), ("video", (2, 4, 4), 0.5), ("text", 2)]


@pytest.mark.parametrize("family", ["qwen2_vl", "qwen2_5_vl"])
def test_position_ids_match_get_rope_index(family):
    ours_ = md.mrope_position_ids(with_delimiters(LAYOUT), family=family, tokens_per_second=2, advance="spatial")
    pos, delta, types = hf_rope_index(family, LAYOUT, tokens_per_second=2)
    np.testing.assert_array_equal(ours_.position_ids, pos)
    np.testing.assert_array_equal(ours_.token_type, types)
    assert ours_.rope_delta == delta


@pytest.mark.parametrize("tokens_per_second, layout", [
    (2, [("text", 3), ("video", (4, 4, 4), 1.0), ("text", 2), ("video", (3, 4, 6), 0.75), ("text", 2)]),
    (3, [("text", 2), ("image", (1, 4, 4)), ("text", 1), ("video", (5, 4, 4), 2.0), ("text", 2)]),
    # a frame rate a hair above 1.5 fps, as a computed rate can be: transformers forms the product in
    # float32; truncating it in float64 instead gives time ids 7 and 15 where transformers has 8 and 16
    (2, [("text", 2), ("video", (8, 4, 4), 2 / 1.5000000000000002), ("text", 2)]),
])
def test_qwen2_5_time_intervals_match_get_rope_index(tokens_per_second, layout):
    """Time ids spaced by tokens_per_second * second_per_grid_t != 1 (0, 2, 4, ...; 0, 1, 3, 4; 0, 6, 12, ...),
    the part of Qwen2.5-VL's rule that LAYOUT (interval 1) does not exercise."""
    ours_ = md.mrope_position_ids(with_delimiters(layout), family="qwen2_5_vl", tokens_per_second=tokens_per_second,
                                  advance="spatial")
    pos, delta, _ = hf_rope_index("qwen2_5_vl", layout, tokens_per_second=tokens_per_second)
    np.testing.assert_array_equal(ours_.position_ids, pos)
    assert ours_.rope_delta == delta
    video_t = ours_.position_ids[0, ours_.token_type == 2]
    assert np.diff(np.unique(video_t)).max() > 1  # the ids really are spread out


def test_position_ids_match_get_rope_index_qwen3_frames():
    """Qwen3-VL: each frame is its own block, with timestamp text between frames."""
    hf_layout = [("text", 4), ("image", (1, 4, 6)), ("text", 3), ("video", (1, 4, 4)), ("text", 2),
                 ("video", (1, 4, 4)), ("text", 2)]
    ours_ = md.mrope_position_ids(with_delimiters(hf_layout), family="qwen3_vl", advance="spatial")
    model = Q3.Qwen3VLModel(hf_config("qwen3_vl"))
    input_ids, types, images, _, _ = hf_inputs(hf_layout)
    pos, delta = model.get_rope_index(input_ids, mm_token_type_ids=types, image_grid_thw=images,
                                      video_grid_thw=torch.tensor([[2, 4, 4]]))  # one video of 2 frames
    np.testing.assert_array_equal(ours_.position_ids, pos[:, 0].numpy())
    assert ours_.rope_delta == int(delta[0, 0])
    # The two frames have the same time id relative to their start: time lives in the timestamp text.
    cut = np.flatnonzero(np.diff(ours_.token_type)) + 1
    kinds = [t[0] for t in np.split(ours_.token_type, cut)]
    frames = [b for b, kind in zip(np.split(ours_.position_ids, cut, axis=1), kinds) if kind == 2]
    assert len(frames) == 2 and all((f[0] == f[0, 0]).all() for f in frames)


def test_advance_max_agrees_with_transformers_where_time_fits():
    """Images, and Qwen2-VL videos whose temporal patches do not outnumber the rows/columns."""
    layout = [("text", 2), ("image", (1, 6, 4)), ("text", 2), ("video", (2, 4, 4)), ("text", 3)]
    a = md.mrope_position_ids(with_delimiters(layout), advance="max")
    b = md.mrope_position_ids(with_delimiters(layout), advance="spatial")
    np.testing.assert_array_equal(a.position_ids, b.position_ids)
    np.testing.assert_array_equal(a.position_ids, hf_rope_index("qwen2_vl", layout)[0])


def test_advance_max_differs_for_long_videos():
    """transformers 5.x advances by max(h, w) only; the reference rule is one past the largest id."""
    layout = [("text", 2), ("video", (6, 4, 4)), ("text", 3)]
    a = md.mrope_position_ids(with_delimiters(layout), advance="max")
    b = md.mrope_position_ids(with_delimiters(layout), advance="spatial")
    video = a.token_type == 2
    after = np.flatnonzero(video)[-1] + 1  # the first text token after the video
    assert a.position_ids[0, after] == a.position_ids[:, video].max() + 1
    assert b.position_ids[0, after] < b.position_ids[0, video].max()  # text ids overlap the video's time ids
    np.testing.assert_array_equal(b.position_ids, hf_rope_index("qwen2_vl", layout)[0])


def test_qwen2_5_time_ids_follow_absolute_time():
    """Time id of temporal patch k = int(k * second_per_grid_t * tokens_per_second)."""
    for seconds, tps in ((0.5, 2), (1.0, 4), (2.0, 1.5)):
        p = md.mrope_position_ids([("video", (5, 2, 2), seconds)], family="qwen2_5_vl", tokens_per_second=tps)
        t = p.position_ids[0].reshape(5, -1)[:, 0]
        np.testing.assert_array_equal(t, np.trunc(np.arange(5) * seconds * tps).astype(int))
    # Same video, twice the frame spacing in seconds: ids twice as far apart (Qwen2-VL's would not move).
    a = md.mrope_position_ids([("video", (4, 2, 2), 1.0)], family="qwen2_5_vl", tokens_per_second=2)
    b = md.mrope_position_ids([("video", (4, 2, 2), 2.0)], family="qwen2_5_vl", tokens_per_second=2)
    np.testing.assert_array_equal(b.position_ids[0], 2 * a.position_ids[0])
    c = md.mrope_position_ids([("video", (4, 2, 2), 2.0)], family="qwen2_vl")
    np.testing.assert_array_equal(c.position_ids[0].reshape(4, -1)[:, 0], np.arange(4))


def test_text_only_ids_are_1d_positions():
    p = md.mrope_position_ids([("text", 7)])
    np.testing.assert_array_equal(p.position_ids, np.tile(np.arange(7), (3, 1)))
    assert p.rope_delta == 0


def test_block_structure_and_merge():
    p = md.mrope_position_ids([("text", 3), ("image", (1, 4, 6))], spatial_merge_size=2)
    img = p.position_ids[:, p.token_type == 1]
    assert img.shape == (3, 2 * 3)  # 4x6 patches -> 2x3 tokens
    np.testing.assert_array_equal(img[0], 3)  # time id = running offset
    np.testing.assert_array_equal(img[1], 3 + np.repeat(np.arange(2), 3))  # rows
    np.testing.assert_array_equal(img[2], 3 + np.tile(np.arange(3), 2))  # columns
    assert p.rope_delta == img.max() + 1 - p.n_tokens


# --- 2-D RoPE of vision encoders --------------------------------------------------------------


def test_axial_shared_matches_qwen2_vl_vision_rotary():
    cfg = Q2.Qwen2VLVisionConfig(embed_dim=64, num_heads=2, depth=1)  # head_dim 32
    emb = Q2.Qwen2VLVisionRotaryEmbedding(cfg)
    grid = torch.tensor([[1, 4, 6]])
    pos = get_vision_position_ids(grid, 2)  # (tokens, 2), block-major as the encoder orders them
    rng = np.random.default_rng(6)
    x = rng.standard_normal((pos.shape[0], 2, 32))  # (seq, heads, dim) as the encoder holds them
    cos, sin = emb(torch.tensor(x, dtype=torch.float32), pos)
    xt = torch.tensor(x, dtype=torch.float32)
    hf, _ = Q2.apply_rotary_pos_emb_vision(xt, xt, cos, sin)
    mine = md.axial_rope(np.swapaxes(x, 0, 1), pos.numpy(), base=cfg.rope_parameters["rope_theta"], layout="half")
    np.testing.assert_allclose(np.swapaxes(mine, 0, 1), hf.numpy(), atol=ATOL)


def test_axial_alternating_matches_pixtral_rotary():
    cfg = PixtralVisionConfig(hidden_size=64, num_attention_heads=2, head_dim=32, intermediate_size=64,
                              num_hidden_layers=1, image_size=32, patch_size=4)
    emb = PX.PixtralVisionRotaryEmbedding(cfg)
    rows, cols = np.meshgrid(np.arange(5), np.arange(7), indexing="ij")
    pos = np.stack([rows.ravel(), cols.ravel()], -1)
    np.testing.assert_array_equal(pos, md.grid_positions(5, 7))
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 35, 32))
    xt = torch.tensor(x, dtype=torch.float32)
    cos, sin = emb(xt, torch.tensor(pos))
    hf, _ = PX.apply_rotary_pos_emb(xt, xt, cos[None], sin[None])
    mine = md.axial_rope(x, pos, base=cfg.rope_parameters["rope_theta"], scheme="alternating", layout="half")
    np.testing.assert_allclose(mine, hf.numpy(), atol=ATOL)


def test_axial_schemes_differ_only_in_column_frequencies():
    a, b = md.axial_frequencies(16, scheme="shared"), md.axial_frequencies(16, scheme="alternating")
    np.testing.assert_array_equal(a[:, 0], b[:, 0])
    np.testing.assert_array_equal(b[4:, 1], frequencies(16)[1::2])
    np.testing.assert_array_equal(a[4:, 1], frequencies(16)[0::2])


# --- properties ----------------------------------------------------------------------------


def score(q, k, pq, pk, freqs):
    return float((md.apply_rope_nd(q[None], [pq], freqs) * md.apply_rope_nd(k[None], [pk], freqs)).sum())


@given(st.integers(-50, 50), st.integers(-50, 50), st.integers(-50, 50), st.integers(-50, 50),
       st.integers(-30, 30), st.integers(-30, 30), st.floats(0, 6.28), st.sampled_from(["shared", "alternating"]))
@FAST
def test_2d_score_depends_only_on_offset(r1, c1, r2, c2, dr, dc, phi, scheme):
    rng = np.random.default_rng(8)
    q, k = rng.standard_normal((2, 16))
    for freqs in (md.axial_frequencies(16, 100.0, scheme=scheme), md.mixed_frequencies(16, phi)):
        s0 = score(q, k, (r1, c1), (r2, c2), freqs)
        s1 = score(q, k, (r1 + dr, c1 + dc), (r2 + dr, c2 + dc), freqs)
        assert abs(s0 - s1) <= 1e-9 * (1 + abs(s0))


def _mixed_part(freqs, q, k, dx, dy):
    # S(dx, dy) - S(dx, 0) - S(0, dy) + S(0, 0): zero for every q, k iff the score is additively separable
    s = lambda a, b: score(q, k, (0, 0), (a, b), freqs)  # noqa: E731
    return s(dx, dy) - s(dx, 0) - s(0, dy) + s(0, 0)


def test_axial_score_is_separable_mixed_is_not():
    rng = np.random.default_rng(9)
    q, k = rng.standard_normal((2, 16))
    axial = md.axial_frequencies(16, 100.0)
    mixed = md.mixed_frequencies(16, np.pi / 4, base=100.0)
    for dx, dy in ((1, 1), (3, -2), (7, 5)):
        assert abs(_mixed_part(axial, q, k, dx, dy)) < 1e-12
    assert max(abs(_mixed_part(mixed, q, k, dx, dy)) for dx, dy in ((1, 1), (3, -2), (7, 5))) > 1e-2


def test_mixed_at_angle_zero_is_axial():
    np.testing.assert_allclose(md.mixed_frequencies(32, 0.0, base=100.0), md.axial_frequencies(32, 100.0), atol=1e-17)
    many = md.mixed_frequencies(32, [0.0, 1.0, 2.0])
    assert many.shape == (3, 16, 2)
    np.testing.assert_allclose(np.linalg.norm(many, axis=-1), np.linalg.norm(many[0], axis=-1)[None].repeat(3, 0))


def test_per_head_frequencies_broadcast():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 3, 5, 16))  # batch, heads, seq, dim
    f = md.mixed_frequencies(16, [0.1, 0.7, 2.0])
    pos = md.grid_positions(1, 5)
    out = md.apply_rope_nd(x, pos, f)
    for h in range(3):
        np.testing.assert_allclose(out[:, h], md.apply_rope_nd(x[:, h], pos, f[h]), atol=1e-14)


def test_apply_rope_nd_with_one_axis_is_apply_rope():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 7, 12))
    pos = rng.uniform(-20, 20, 7)
    for layout in ("interleaved", "half"):
        np.testing.assert_allclose(md.apply_rope_nd(x, pos[:, None], frequencies(12)[:, None], layout=layout),
                                   apply_rope(x, pos, layout=layout), atol=1e-13)


def test_rotation_preserves_norms_and_dtype():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((6, 16)).astype(np.float32)
    out = md.axial_rope(x, md.grid_positions(2, 3))
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-6)
    assert md.apply_rope_nd(np.zeros((0, 16)), np.zeros((0, 2)), md.axial_frequencies(16)).shape == (0, 16)


def test_exports():
    for name in ("axial_rope", "apply_mrope", "mrope_position_ids", "apply_rope_nd", "axial_frequencies",
                 "mixed_frequencies", "grid_positions", "mrope_frequencies", "mrope_axes"):
        assert getattr(rope_edu, name) is getattr(md, name)


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("call, exc, match", [
    (lambda: md.axial_frequencies(18), ValueError, "dim must be a multiple of 4"),
    (lambda: md.axial_frequencies(16, scheme="diagonal"), ValueError, "scheme"),
    (lambda: md.axial_frequencies(16, base=1.0), ValueError, "base"),
    (lambda: md.axial_frequencies(16.0), TypeError, "dim"),
    (lambda: md.axial_rope(np.zeros((4, 18)), np.zeros((4, 2))), ValueError, r"x.shape\[-1\]"),
    (lambda: md.axial_rope(np.zeros((4, 16)), np.zeros((4, 3))), ValueError, "positions must have shape"),
    (lambda: md.axial_rope(np.zeros((4, 16)), np.zeros((5, 2))), ValueError, "do not broadcast"),
    (lambda: md.axial_rope(np.zeros((4, 16)), np.full((4, 2), np.nan)), ValueError, "positions must be finite"),
    (lambda: md.axial_rope(np.zeros((4, 16), complex), np.zeros((4, 2))), TypeError, "x must be a real"),
    (lambda: md.axial_rope(np.zeros(16), np.zeros((1, 2))), ValueError, "x must have at least 2"),
    (lambda: md.axial_rope(np.zeros((4, 16)), np.zeros((4, 2), bool)), TypeError, "positions"),
    (lambda: md.apply_rope_nd(np.zeros((4, 16)), np.zeros((4, 2)), np.zeros((7, 2))), ValueError, "freqs must have"),
    (lambda: md.apply_rope_nd(np.zeros((4, 16)), np.zeros((4, 2)), np.zeros(8)), ValueError, "freqs must have shape"),
    (lambda: md.apply_rope_nd(np.zeros((4, 16)), np.zeros((4, 2)), np.full((8, 2), np.inf)), ValueError, "freqs must be finite"),
    (lambda: md.apply_rope_nd(np.zeros((4, 16)), np.zeros((4, 2)), np.zeros((8, 2)), layout="x"), ValueError, "layout"),
    (lambda: md.apply_rope_nd(np.zeros((4, 16)), np.zeros(2), np.zeros((8, 2))), ValueError, "positions must have shape"),
    (lambda: md.rope_nd_angles(np.zeros((4, 2)), np.zeros((8, 3))), ValueError, "positions must have shape"),
    (lambda: md.mixed_frequencies(16, np.zeros((2, 2))), ValueError, "angles"),
    (lambda: md.mixed_frequencies(16, np.nan), ValueError, "angles must be finite"),
    (lambda: md.mixed_frequencies(16, "a"), TypeError, "angles"),
    (lambda: md.grid_positions(0, 3), ValueError, "height"),
    (lambda: md.grid_positions(2, 1.5), TypeError, "width"),
    (lambda: md.mrope_axes([4, 6]), ValueError, "mrope_section must have 3"),
    (lambda: md.mrope_axes("466"), TypeError, "mrope_section"),
    (lambda: md.mrope_axes([4, -1, 6]), ValueError, r"mrope_section\[1\]"),
    (lambda: md.mrope_axes([0, 0, 0]), ValueError, "mrope_section"),
    (lambda: md.mrope_axes([1, 4, 4], assignment="interleaved"), ValueError, "cannot be interleaved"),
    (lambda: md.mrope_axes([4, 6, 6], assignment="random"), ValueError, "assignment"),
    (lambda: md.mrope_frequencies(32, [4, 6, 5]), ValueError, "add up to dim // 2"),
    (lambda: md.mrope_frequencies(32, [4, 6, 6], inv_freq=np.ones(5)), ValueError, "inv_freq"),
    (lambda: md.apply_mrope(np.zeros((1, 2, 5, 32)), np.zeros((2, 5)), mrope_section=[4, 6, 6]), ValueError, r"\(3, seq\)"),
    (lambda: md.apply_mrope(np.zeros((1, 2, 5, 32)), np.zeros((3, 1, 4)), mrope_section=[4, 6, 6]), ValueError, "broadcast"),
    (lambda: md.apply_mrope(np.zeros((5, 32)), np.zeros((3, 1, 5)), mrope_section=[4, 6, 6]), ValueError, r"\(3, batch, seq\)"),
    (lambda: md.apply_mrope(np.zeros((5, 32)), np.zeros((3, 5), bool), mrope_section=[4, 6, 6]), TypeError, "positions"),
    (lambda: md.apply_mrope(np.zeros((5, 30)), np.zeros((3, 5)), mrope_section=[4, 6, 6]), ValueError, "add up"),
    (lambda: md.mrope_position_ids([]), ValueError, "layout"),
    (lambda: md.mrope_position_ids("text"), ValueError, "layout"),
    (lambda: md.mrope_position_ids([("audio", 3)]), ValueError, r"layout\[0\] kind"),
    (lambda: md.mrope_position_ids([("text", 0)]), ValueError, r"layout\[0\] length"),
    (lambda: md.mrope_position_ids([("text", 2), ("image", (1, 3, 4))]), ValueError, "multiples of spatial_merge_size"),
    (lambda: md.mrope_position_ids([("image", (1, 4))]), ValueError, r"layout\[0\] grid"),
    (lambda: md.mrope_position_ids([("image", (1, 4, 4), 2.0)]), ValueError, r"layout\[0\]"),
    (lambda: md.mrope_position_ids([("video", (2, 4, 4), -1.0)], family="qwen2_5_vl", tokens_per_second=2), ValueError, "second_per_grid_t"),
    (lambda: md.mrope_position_ids([("video", (2, 4, 4))], family="qwen2_5_vl"), ValueError, "tokens_per_second is required"),
    (lambda: md.mrope_position_ids([("video", (2, 4, 4))], family="qwen2_5_vl", tokens_per_second=0), ValueError, "tokens_per_second"),
    (lambda: md.mrope_position_ids([("text", 2)], family="llava"), ValueError, "family"),
    (lambda: md.mrope_position_ids([("text", 2)], advance="min"), ValueError, "advance"),
    (lambda: md.mrope_position_ids([("text", 2)], spatial_merge_size=0), ValueError, "spatial_merge_size"),
    (lambda: md.mrope_position_ids(["text"]), ValueError, r"layout\[0\]"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# --- through rope_edu.models.rope_spec ---------------------------------------------------------


@pytest.mark.parametrize("family", list(FAMILIES))
def test_rope_spec_applies_mrope_like_transformers(family):
    from rope_edu.models import rope_spec

    config = hf_config(family, base=1e6)
    rng = np.random.default_rng(13)
    x = rng.standard_normal((2, 2, 10, 32))
    pos = rng.integers(0, 80, size=(3, 2, 10))
    for cfg in (config, config.text_config, config.to_dict()):
        spec = rope_spec(cfg)
        assert spec.mrope_section == tuple(FAMILIES[family][3]) and "M-RoPE" in spec.describe()
        np.testing.assert_allclose(spec.apply(x, pos), hf_mrope(family, x, pos, base=1e6), atol=ATOL)
        np.testing.assert_allclose(spec.apply(x[:1], pos[:, 0]), hf_mrope(family, x[:1], pos[:, :1], base=1e6), atol=ATOL)
    text = np.arange(10) + 5
    np.testing.assert_allclose(rope_spec(config).apply(x, text), apply_rope(x, text, base=1e6, layout="half"), atol=1e-12)


def test_rope_spec_reads_flat_hub_configs_and_defaults():
    from rope_edu.models import rope_spec

    flat = {"model_type": "qwen2_vl", "hidden_size": 64, "num_attention_heads": 2, "rope_theta": 1e6,
            "rope_scaling": {"type": "mrope", "mrope_section": [4, 6, 6]}}
    spec = rope_spec(flat)
    assert (spec.family, spec.mrope_section, spec.mrope_assignment, spec.base) == ("qwen2_vl", (4, 6, 6), "contiguous", 1e6)
    no_section = {"model_type": "qwen3_vl_text", "hidden_size": 64, "num_attention_heads": 1, "head_dim": 128,
                  "rope_parameters": {"rope_type": "default", "rope_theta": 5e6}}
    spec3 = rope_spec(no_section)
    assert spec3.mrope_section == (24, 20, 20) and any("mrope_section" in d for d in spec3.defaults)
    with pytest.raises(ValueError, match="mrope_section"):
        rope_spec({**flat, "rope_scaling": {"type": "mrope", "mrope_section": [4, 6, 5]}})
    with pytest.raises(ValueError, match="positions"):
        spec.apply(np.zeros((1, 2, 5, 32)), np.zeros((2, 5)))
