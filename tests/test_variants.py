"""rope_edu.variants: NTK-alpha, ReRoPE / Leaky ReRoPE, FoPE, XD-RoPE, VO-RoPE and PoPE.

NTK-alpha and XD-RoPE are checked against transformers 5.24's Hunyuan code (a test dependency);
ReRoPE and FoPE against their defining properties; every bad input raises an error naming it.
"""

from __future__ import annotations

import numpy as np
import pytest
pytest.importorskip("torch")  # make check skips this file where torch is missing
import torch

from rope_edu import apply_rope, frequencies, rope_angles
from rope_edu import scaling as S
from rope_edu import variants as V


# --- NTK-alpha ----------------------------------------------------------------------------------


@pytest.mark.parametrize("head_dim, base, alpha", [(128, 10000.0, 1000.0), (64, 1e6, 4.0), (96, 5e5, 1.0)])
def test_ntk_alpha_agrees_with_transformers_hunyuan(head_dim, base, alpha):
    from transformers.models.hunyuan_v1_dense.configuration_hunyuan_v1_dense import HunYuanDenseV1Config
    from transformers.models.hunyuan_v1_dense.modeling_hunyuan_v1_dense import HunYuanDenseV1RotaryEmbedding

    cfg = HunYuanDenseV1Config(hidden_size=4 * head_dim, num_attention_heads=4, num_key_value_heads=4,
                               head_dim=head_dim, num_hidden_layers=1, intermediate_size=16, vocab_size=32,
                               rope_parameters={"rope_type": "dynamic", "rope_theta": base, "alpha": alpha,
                                                "factor": 1.0})
    emb = HunYuanDenseV1RotaryEmbedding(cfg)
    assert emb.rope_type == "ntk_alpha"
    ours = frequencies(head_dim, V.ntk_alpha_base(base, alpha, head_dim))
    np.testing.assert_allclose(ours, emb.inv_freq.double().numpy(), rtol=1e-6)


def test_ntk_alpha_gguf_key_is_gguf_pys():
    # Chapter 15: GGUF files carry alpha as {arch}.rope.scaling.alpha (gguf-py's Keys.Rope).
    from gguf.constants import Keys

    assert Keys.Rope.SCALING_ALPHA == "{arch}.rope.scaling.alpha"


def test_ntk_alpha_is_ntk_aware_base():
    assert V.ntk_alpha_base(1e4, 1000.0, 128) == pytest.approx(S.ntk_base(1e4, 1000.0, 128), rel=1e-15)
    assert V.ntk_alpha_base(1e4, 1.0, 128) == 1e4


@pytest.mark.parametrize("args, exc, match", [
    ((1.0, 2.0, 64), ValueError, "base"), ((1e4, 0.5, 64), ValueError, "alpha"),
    ((1e4, "2", 64), TypeError, "alpha"), ((1e4, 2.0, 2), ValueError, "dim"), ((1e4, 2.0, 63), ValueError, "dim"),
])
def test_ntk_alpha_bad_inputs(args, exc, match):
    with pytest.raises(exc, match=match):
        V.ntk_alpha_base(*args)


# --- ReRoPE and Leaky ReRoPE --------------------------------------------------------------------


def test_rerope_distances():
    p = np.arange(10)
    plain = p[:, None] - p[None, :]
    re_ = V.rerope_distances(p, p, window=3)
    leaky = V.rerope_distances(p, p, window=3, factor=4.0)
    causal = plain >= 0
    near = causal & (plain < 3)
    np.testing.assert_array_equal(re_[near], plain[near])
    np.testing.assert_array_equal(leaky[near], plain[near])
    assert (re_[causal & ~near] == 3).all()
    np.testing.assert_allclose(leaky[causal & ~near], 3 + (plain[causal & ~near] - 3) / 4)
    assert np.isnan(re_[~causal]).all() and np.isnan(leaky[~causal]).all()


def test_leaky_rerope_logits_are_rope_at_the_leaky_distance():
    rng = np.random.default_rng(0)
    T, d, w, k = 24, 16, 5, 8.0
    q, key = rng.standard_normal((2, T, d))
    pos = np.arange(T)
    got = V.leaky_rerope_logits(q, key, pos, w, k)
    dist = V.rerope_distances(pos, pos, w, k)
    theta = frequencies(d)
    for m in range(T):
        for n in range(m + 1):
            want = apply_rope(q[m:m + 1], [dist[m, n]], layout="half", inv_freq=theta) @ key[n]
            assert got[m, n] == pytest.approx(float(want[0]), abs=1e-10)
    assert np.isneginf(got[np.triu_indices(T, 1)]).all()


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(window=0), ValueError, "window"), (dict(window=2.5), TypeError, "window"),
    (dict(window=3, factor=1.0), ValueError, "factor"), (dict(window=3, factor="x"), TypeError, "factor"),
])
def test_rerope_bad_inputs(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        V.rerope_distances([1, 2], [0, 1], **kwargs)


def test_rerope_bad_arrays():
    with pytest.raises(ValueError, match="1-d"):
        V.rerope_distances([[1]], [0], 2)
    with pytest.raises(TypeError, match="query_positions"):
        V.rerope_distances(["a"], [0], 2)
    q = np.zeros((4, 8))
    with pytest.raises(ValueError, match="q and k"):
        V.leaky_rerope_logits(q, np.zeros((4, 6)), np.arange(4), 2, 2.0)
    with pytest.raises(ValueError, match="factor"):
        V.leaky_rerope_logits(q, q, np.arange(4), 2, None)
    with pytest.raises(ValueError, match="positions"):
        V.leaky_rerope_logits(q, q, np.arange(3), 2, 2.0)


# --- FoPE ---------------------------------------------------------------------------------------


def test_fope_keeps_frequencies_that_turn_within_the_training_length():
    inv, kept = V.fope_frequencies(64, 10000.0, 4096)
    theta = frequencies(64)
    assert kept == int((theta > 2 * np.pi / 4096).sum()) and 0 < kept < 32
    np.testing.assert_array_equal(inv, theta[:kept])
    assert inv.min() > 2 * np.pi / 4096 >= theta[kept]  # the first pair dropped is the first too slow


def test_fope_vllm_padding_doubles_the_unkept_pairs_and_keeps_no_position():
    # vLLM 0.33's FourierRotaryEmbedding pads cos and sin with 1 past the kept pairs: a fixed map
    # (x, y) -> (x - y, y + x), so those pairs add 2 (q . k) to a score at any positions.
    rng = np.random.default_rng(8)
    _, kept = V.fope_frequencies(32, 10000.0, 1024)
    cos, sin = V.fope_cos_sin(np.arange(5), 32, 10000.0, 1024, unkept="vllm")
    assert (cos[:, kept:] == 1).all() and (sin[:, kept:] == 1).all()
    x = np.zeros((2, 32))
    x[:, kept:16] = rng.standard_normal((2, 16 - kept))
    x[:, 16 + kept:] = rng.standard_normal((2, 16 - kept))
    for pm, pn in [(0, 0), (7, 900), (1000, 3)]:
        a = V.apply_fope(x[:1], [pm], base=10000.0, max_positions=1024, unkept="vllm")
        b = V.apply_fope(x[1:], [pn], base=10000.0, max_positions=1024, unkept="vllm")
        assert float(a[0] @ b[0]) == pytest.approx(2 * float(x[0] @ x[1]), rel=1e-12)
        same = V.apply_fope(x, [pm, pn], base=10000.0, max_positions=1024)
        assert float(same[0] @ same[1]) == pytest.approx(float(x[0] @ x[1]), rel=1e-12)


def test_fope_with_identity_coefficients_is_rope_on_the_kept_pairs():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((12, 64))
    pos = np.arange(100, 112)
    _, kept = V.fope_frequencies(64, 10000.0, 4096)
    theta = frequencies(64)
    theta[kept:] = 0.0
    np.testing.assert_allclose(V.apply_fope(x, pos, base=10000.0, max_positions=4096),
                               apply_rope(x, pos, layout="half", inv_freq=theta), atol=1e-12)


def test_fope_matches_vllm_style_tables():
    # C = cos(angles) @ A, S = sin(angles) @ B on the kept pairs; 1 and 0 on the others.
    rng = np.random.default_rng(2)
    _, kept = V.fope_frequencies(32, 10000.0, 1024)
    a, b = rng.standard_normal((2, kept, kept))
    pos = np.arange(7)
    cos, sin = V.fope_cos_sin(pos, 32, 10000.0, 1024, a, b)
    ang = rope_angles(pos, frequencies(32)[:kept])
    np.testing.assert_allclose(cos[:, :kept], np.cos(ang) @ a)
    np.testing.assert_allclose(sin[:, :kept], np.sin(ang) @ b)
    assert (cos[:, kept:] == 1).all() and (sin[:, kept:] == 0).all()


def test_fope_bad_inputs():
    _, kept = V.fope_frequencies(32, 10000.0, 1024)
    with pytest.raises(ValueError, match="cos_coef"):
        V.fope_cos_sin([0, 1], 32, 10000.0, 1024, np.eye(kept + 1))
    with pytest.raises(TypeError, match="sin_coef"):
        V.fope_cos_sin([0, 1], 32, 10000.0, 1024, None, np.full((kept, kept), "a"))
    with pytest.raises(ValueError, match="max_positions"):
        V.fope_frequencies(32, 10000.0, 0)
    with pytest.raises(ValueError, match="positions"):
        V.apply_fope(np.zeros((3, 8)), [0, 1], base=1e4, max_positions=64)
    with pytest.raises(ValueError, match="x"):
        V.apply_fope(np.zeros(8), [0], base=1e4, max_positions=64)
    with pytest.raises(ValueError, match="unkept"):
        V.fope_cos_sin([0, 1], 32, 10000.0, 1024, unkept="zero")


# --- XD-RoPE ------------------------------------------------------------------------------------


def _hunyuan_vl_tables(pos, section, head_dim=32, base=10000.0, alpha=1000.0):
    from transformers.models.hunyuan_vl.configuration_hunyuan_vl import HunYuanVLTextConfig
    from transformers.models.hunyuan_vl.modeling_hunyuan_vl import HunYuanVLRotaryEmbedding

    cfg = HunYuanVLTextConfig(hidden_size=4 * head_dim, num_attention_heads=4, num_key_value_heads=4,
                              head_dim=head_dim, num_hidden_layers=1, intermediate_size=16, vocab_size=32,
                              rope_parameters={"rope_type": "xdrope", "rope_theta": base, "alpha": alpha,
                                               "xdrope_section": list(section), "factor": 1.0})
    emb = HunYuanVLRotaryEmbedding(cfg)
    cos, sin = emb(torch.zeros(1, pos.shape[1], head_dim), torch.as_tensor(pos)[:, None, :])
    ours = V.xdrope_angles(pos, section, head_dim, V.ntk_alpha_base(base, alpha, head_dim))
    return cos[0].double().numpy(), sin[0].double().numpy(), ours


def test_xdrope_text_tokens_agree_with_transformers_hunyuan_vl():
    # Text tokens have one position on all four axes: NTK-alpha RoPE, in every implementation.
    pos = np.tile(np.arange(40, 49), (4, 1))
    cos, sin, ours = _hunyuan_vl_tables(pos, [4, 4, 4, 4])
    both = np.concatenate([ours, ours], axis=-1)
    np.testing.assert_allclose(cos, np.cos(both), atol=2e-6)
    np.testing.assert_allclose(sin, np.sin(both), atol=2e-6)


def test_xdrope_image_tokens_transformers_5_24_splits_the_doubled_table():
    # xdrope_angles gives pair block a the angle of axis a, for both coordinates of each pair, as
    # vLLM's XDRotaryEmbedding does (it splits the half-width table by the sections). transformers
    # 5.24's HunYuanVLRotaryEmbedding splits the doubled table [f, f] into chunks of 2 * section:
    # with distinct axes the two coordinates of a pair then read different axes. This test pins
    # that difference; if it fails, transformers changed its allocation: revisit the chapter's note.
    rng = np.random.default_rng(3)
    pos = rng.integers(0, 50, size=(4, 9))
    section = [4, 4, 4, 4]
    cos, _, ours = _hunyuan_vl_tables(pos, section)
    half = cos.shape[-1] // 2
    assert np.abs(cos[:, :half] - cos[:, half:]).max() > 0.1  # the two halves of a pair differ
    chunk_axis = np.repeat(np.arange(4), [2 * s for s in section])  # axis of each of the 32 columns
    theta = frequencies(32, V.ntk_alpha_base(10000.0, 1000.0, 32))
    want = np.cos(pos[chunk_axis].T * np.concatenate([theta, theta]))
    np.testing.assert_allclose(cos, want, atol=2e-6)
    np.testing.assert_allclose(np.cos(ours[:, :4]), cos[:, :4], atol=2e-6)  # pair block 0 reads axis 0 in both


def test_xdrope_text_tokens_are_plain_rope():
    pos = np.tile(np.arange(6), (4, 1))
    np.testing.assert_allclose(V.xdrope_angles(pos, [2, 2, 2, 2], 16), rope_angles(np.arange(6), frequencies(16)))


@pytest.mark.parametrize("pos, section, exc, match", [
    (np.zeros((3, 2)), [2, 2, 2], ValueError, "sum"), (np.zeros((3, 2)), [4, 4], ValueError, "axes"),
    (np.zeros(4), [8], ValueError, "positions"), (np.zeros((1, 2)), [8.0], TypeError, "section"),
])
def test_xdrope_bad_inputs(pos, section, exc, match):
    with pytest.raises(exc, match=match):
        V.xdrope_angles(pos, section, 16)


# --- VO-RoPE ------------------------------------------------------------------------------------


def test_vo_rope_output_is_relative():
    rng = np.random.default_rng(4)
    a = rng.random((6, 6))
    v = rng.standard_normal((6, 16))
    p = np.arange(6)
    out = V.vo_rope_output(a, v, p)
    np.testing.assert_allclose(V.vo_rope_output(a, v, p + 1000), out, atol=1e-10)
    want = np.stack([sum(a[m, n] * apply_rope(v[n:n + 1], [n - m], layout="half")[0] for n in range(6))
                     for m in range(6)])
    np.testing.assert_allclose(out, want, atol=1e-12)
    rect = V.vo_rope_output(a[:2], v, (np.array([10, 11]), p))
    assert rect.shape == (2, 16)


def test_vo_rope_bad_inputs():
    with pytest.raises(ValueError, match="weights"):
        V.vo_rope_output(np.ones((2, 3)), np.ones((4, 8)), np.arange(4))
    with pytest.raises(ValueError, match="query_positions, key_positions"):
        V.vo_rope_output(np.ones((2, 4)), np.ones((4, 8)), np.arange(4))
    with pytest.raises(ValueError, match="v.shape"):
        V.vo_rope_output(np.ones((4, 4)), np.ones((4, 7)), np.arange(4))
    with pytest.raises(TypeError, match="weights"):
        V.vo_rope_output(np.full((4, 4), "a"), np.ones((4, 8)), np.arange(4))


# --- PoPE ---------------------------------------------------------------------------------------


def test_pope_is_rope_on_softplus_magnitudes():
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal((2, 5, 6))
    pos = np.arange(5)
    got = V.pope_logits(q, k, pos, pos)
    lift = np.zeros((2, 5, 12))
    lift[..., 0::2] = np.logaddexp(0, np.stack([q, k]))
    want = apply_rope(lift[0], pos, layout="interleaved") @ apply_rope(lift[1], pos, layout="interleaved").T
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_pope_score_peaks_at_distance_zero_for_any_content():
    rng = np.random.default_rng(6)
    q, k = rng.standard_normal((2, 1, 8))
    scores = V.pope_logits(q, np.repeat(k, 64, axis=0), [63], np.arange(64))[0]
    assert int(np.argmax(scores)) == 63


def test_pope_phase_bias_moves_the_peak_by_content():
    # With the paper's optional offset delta_c the terms peak at other distances, and the content
    # (the magnitudes) decides which peak wins: the score is no longer largest at distance 0.
    rng = np.random.default_rng(7)
    delta = rng.uniform(-np.pi, np.pi, 8)
    q, k = rng.standard_normal((2, 60, 8))
    pos = np.arange(64)
    np.testing.assert_array_equal(V.pope_logits(q[:3], k[:5], [9, 8, 7], pos[:5], phase_bias=np.zeros(8)),
                                  V.pope_logits(q[:3], k[:5], [9, 8, 7], pos[:5]))
    best = {63 - int(np.argmax(V.pope_logits(q[i:i + 1], np.repeat(k[i:i + 1], 64, axis=0), [63], pos,
                                             phase_bias=delta)[0])) for i in range(60)}
    assert 0 not in best and len(best) > 1
    m, n = 5, 2
    one = V.pope_logits(q[:1], k[:1], [m], [n], phase_bias=delta)[0, 0]
    mq, mk = np.logaddexp(0, q[0]), np.logaddexp(0, k[0])
    assert one == pytest.approx(float(np.sum(mq * mk * np.cos((m - n) * frequencies(16) + delta))), rel=1e-12)


def test_pope_bad_inputs():
    with pytest.raises(ValueError, match="q and k"):
        V.pope_logits(np.ones((2, 4)), np.ones((2, 6)), [0, 1], [0, 1])
    with pytest.raises(ValueError, match="query_positions"):
        V.pope_logits(np.ones((2, 4)), np.ones((2, 4)), [0, 1, 2], [0, 1])
    with pytest.raises(ValueError, match="base"):
        V.pope_logits(np.ones((2, 4)), np.ones((2, 4)), [0, 1], [0, 1], base=1.0)
    with pytest.raises(ValueError, match="phase_bias"):
        V.pope_logits(np.ones((2, 4)), np.ones((2, 4)), [0, 1], [0, 1], phase_bias=np.zeros(3))
    with pytest.raises(TypeError, match="phase_bias"):
        V.pope_logits(np.ones((2, 4)), np.ones((2, 4)), [0, 1], [0, 1], phase_bias=["a"] * 4)


def test_exported():
    import rope_edu

    assert rope_edu.variants is V and "variants" in rope_edu.__all__
    for name in V.__all__:
        assert getattr(rope_edu, name) is getattr(V, name) and name in rope_edu.__all__


def test_chapter_15_display_formulas_fit_a_phone():
    # A display formula wider than a 390 px column scrolls sideways; one with words or a second
    # formula after a \qquad hid them off-screen on a phone. Chapter 15 keeps words in sentences
    # and sets two-part formulas on aligned lines.
    import json
    import re
    from pathlib import Path

    chapter = Path(__file__).resolve().parents[1] / "notebooks" / "15_rope_variants.ipynb"
    cells = json.loads(chapter.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    displays = re.findall(r"\$\$(.*?)\$\$", text, flags=re.S)
    assert len(displays) >= 6
    for tex in displays:
        assert "\\text" not in tex and "\\qquad" not in tex, tex


@pytest.mark.parametrize("family", ["dense", "vl"])
def test_ntk_alpha_base_stays_fixed_past_max_positions_in_transformers(family):
    # Chapter 15: transformers 5.24's Hunyuan rotary modules rename "dynamic" + alpha to "ntk_alpha", so the
    # dynamic update (huggingface/transformers#48960's report for HunYuanVL) leaves the NTK-alpha base alone.
    import torch

    if family == "dense":
        from transformers.models.hunyuan_v1_dense.configuration_hunyuan_v1_dense import HunYuanDenseV1Config as C
        from transformers.models.hunyuan_v1_dense.modeling_hunyuan_v1_dense import (
            HunYuanDenseV1RotaryEmbedding as R,
        )
        extra = {}
    else:
        from transformers.models.hunyuan_vl.configuration_hunyuan_vl import HunYuanVLTextConfig as C
        from transformers.models.hunyuan_vl.modeling_hunyuan_vl import HunYuanVLRotaryEmbedding as R
        extra = {"mrope_section": [8, 8, 8, 8]}
    cfg = C(hidden_size=256, num_attention_heads=4, num_key_value_heads=4, head_dim=64, num_hidden_layers=1,
            intermediate_size=16, vocab_size=32, max_position_embeddings=64,
            rope_parameters={"rope_type": "dynamic", "rope_theta": 1e4, "alpha": 1000.0, "factor": 1.0, **extra})
    emb = R(cfg)
    want = frequencies(64, V.ntk_alpha_base(1e4, 1000.0, 64))
    positions = torch.arange(300)[None]
    if family == "vl":
        positions = positions[None].expand(4, 1, -1)
    emb(torch.zeros(1, 300, 64), positions)  # past max_position_embeddings = 64
    assert emb.rope_type == "ntk_alpha"
    np.testing.assert_allclose(emb.inv_freq.double().numpy(), want, rtol=1e-6)


# --- PaTH -------------------------------------------------------------------------------------------


def test_path_logits_are_the_product_of_the_matrices_in_between():
    rng = np.random.default_rng(0)
    q, k, w = rng.standard_normal((3, 7, 5))
    beta = rng.uniform(0, 2, 7)
    got = V.path_logits(q, k, w, beta)
    unit = w / np.linalg.norm(w, axis=1, keepdims=True)
    H = [np.eye(5) - beta[t] * np.outer(unit[t], unit[t]) for t in range(7)]
    for m in range(7):
        for n in range(7):
            if n > m:
                assert got[m, n] == -np.inf
                continue
            prod = np.eye(5)
            for t in range(m, n, -1):  # H_m H_(m-1) ... H_(n+1)
                prod = prod @ H[t]
            np.testing.assert_allclose(got[m, n], q[m] @ prod @ k[n], rtol=1e-12, atol=1e-12)
    # hand-derived: one token after the key, a reflection in the first axis of 2-d vectors
    two = V.path_logits([[1.0, 0.0], [2.0, 1.0]], [[3.0, 4.0], [0.0, 1.0]], [[1.0, 1.0], [1.0, 0.0]], [0.0, 2.0])
    assert two[1, 0] == 2.0 * -3.0 + 1.0 * 4.0 and two[0, 0] == 3.0 and two[1, 1] == 1.0
    # no strength: plain dot products
    np.testing.assert_allclose(np.tril(V.path_logits(q, k, w, np.zeros(7))), np.tril(q @ k.T), atol=1e-12)


@pytest.mark.parametrize("call, error, match", [
    (lambda: V.path_logits(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 3)), np.ones(3)), ValueError, "same shape"),
    (lambda: V.path_logits(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), np.ones(2)), ValueError, "beta"),
    (lambda: V.path_logits(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), np.full(3, 2.5)), ValueError, "beta"),
    (lambda: V.path_logits(np.ones((3, 2)), np.ones((3, 2)), np.zeros((3, 2)), np.ones(3)), ValueError, "w"),
    (lambda: V.path_logits(np.ones(3), np.ones(3), np.ones(3), np.ones(3)), ValueError, "q"),
])
def test_path_logits_bad_inputs(call, error, match):
    with pytest.raises(error, match=match):
        call()
