"""The LLaMA-style attention layer (rope_edu.llama) and the chapter-7 widget.

Agreement with Hugging Face's LlamaAttention / LlamaDecoderLayer / DynamicCache (transformers is a
test dependency), incremental decoding, what the cache holds, why V is not rotated, shift
invariance, grouped-query heads, the stack of layers, and every bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
pytest.importorskip("torch")  # make check skips this file where torch is missing
pytest.importorskip("transformers")  # make check skips this file where transformers is missing
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import DynamicCache, LlamaConfig
from transformers.models.llama.modeling_llama import LlamaAttention, LlamaDecoderLayer, LlamaRotaryEmbedding

import rope_edu
from rope_edu import (
    AttentionWeights,
    KVCache,
    apply_rope,
    default_positions,
    init_attention_weights,
    init_stack_weights,
    layout_permutation,
    llama_attention,
    llama_attention_weights,
    llama_stack,
    merge_heads,
    positions_from_padding,
    project_qkv,
    repeat_kv,
    rms_norm,
    split_heads,
)
from rope_edu.layouts import half_to_interleaved
from rope_edu.llama import (
    DecoderLayerWeights,
    LlamaWeights,
    MLPWeights,
    decoder_layer,
    llama_forward,
    log_softmax,
    silu,
    swiglu_mlp,
    token_log_likelihoods,
)
from rope_edu.widgets import attention_shift

#: (n_heads, n_kv_heads, head_dim, hidden): GQA, multi-query, multi-head.
SHAPES = [(4, 2, 8, 32), (8, 1, 4, 16), (4, 4, 16, 24)]


def weights_for(shape, seed=0, **kwargs) -> AttentionWeights:
    h, g, d, hidden = shape
    return init_attention_weights(np.random.default_rng(seed), hidden, h, g, d, **kwargs)


def hidden_states(batch, seq, hidden, seed=1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((batch, seq, hidden))


# --- Hugging Face reference ------------------------------------------------------------------


def hf_config(w: AttentionWeights, n_layers: int = 1) -> LlamaConfig:
    cfg = LlamaConfig(
        hidden_size=w.hidden, num_attention_heads=w.n_heads, num_key_value_heads=w.n_kv_heads,
        head_dim=w.head_dim, intermediate_size=8, num_hidden_layers=n_layers, rms_norm_eps=1e-6,
        rope_parameters={"rope_type": "default", "rope_theta": w.base}, max_position_embeddings=4096,
    )
    cfg._attn_implementation = "eager"
    return cfg


def hf_attention(w: AttentionWeights, cfg: LlamaConfig | None = None) -> LlamaAttention:
    att = LlamaAttention(cfg or hf_config(w), w.layer_idx).double().eval()
    with torch.no_grad():
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            getattr(att, name).weight.copy_(torch.tensor(np.array(getattr(w, name))))
    return att


def additive_mask(allowed: np.ndarray) -> torch.Tensor:
    """Hugging Face's 4-D float mask: 0 where a query may attend, the most negative float elsewhere."""
    return torch.tensor(np.where(allowed, 0.0, torch.finfo(torch.float64).min))


def causal_allowed(batch, n_q, n_k) -> np.ndarray:
    return np.broadcast_to(rope_edu.causal_mask(n_q, n_k), (batch, 1, n_q, n_k))


def hf_rope(w: AttentionWeights, x: np.ndarray, positions: np.ndarray):
    """cos/sin from Hugging Face's own LlamaRotaryEmbedding (angles in float32)."""
    rot = LlamaRotaryEmbedding(hf_config(w))
    pos = torch.tensor(np.broadcast_to(positions, x.shape[:2]).astype(np.int64))
    return rot(torch.tensor(x), pos)


def float64_rope(w: AttentionWeights, x: np.ndarray, positions: np.ndarray):
    """cos/sin in Hugging Face's format (frequencies repeated for both halves), in float64."""
    ang = np.broadcast_to(positions, x.shape[:2])[..., None] * w.frequencies
    ang = np.concatenate([ang, ang], axis=-1)
    return torch.tensor(np.cos(ang)), torch.tensor(np.sin(ang))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"H{s[0]}-G{s[1]}-D{s[2]}")
@pytest.mark.parametrize("offset", [0, 17])
def test_matches_transformers_llama_attention(shape, offset):
    w = weights_for(shape)
    batch, seq = 2, 7
    x = hidden_states(batch, seq, w.hidden)
    positions = np.arange(seq) + offset + np.array([[0], [3]])  # each row its own positions
    allowed = causal_allowed(batch, seq, seq)
    with torch.no_grad():
        ref, ref_w = hf_attention(w)(torch.tensor(x), position_embeddings=hf_rope(w, x, positions),
                                     attention_mask=additive_mask(allowed))
    out, _ = llama_attention(x, w, positions)
    np.testing.assert_allclose(out, ref.numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(llama_attention_weights(x, w, positions), ref_w.numpy(), atol=1e-5, rtol=0)


def test_matches_transformers_with_float64_angles_at_large_positions():
    # Hugging Face computes the angles in float32, which drift at large positions (chapter 8);
    # given float64 cos/sin, the two agree to the rounding of its float32 softmax.
    w = weights_for(SHAPES[0])
    x = hidden_states(1, 6, w.hidden)
    positions = np.arange(6) + 100_000
    with torch.no_grad():
        ref, _ = hf_attention(w)(torch.tensor(x), position_embeddings=float64_rope(w, x, positions),
                                 attention_mask=additive_mask(causal_allowed(1, 6, 6)))
    np.testing.assert_allclose(llama_attention(x, w, positions)[0], ref.numpy(), atol=1e-6, rtol=0)


def test_matches_transformers_with_left_padding_mask():
    w = weights_for(SHAPES[0])
    padding = np.array([[True] * 6, [False] * 2 + [True] * 4])
    x = hidden_states(2, 6, w.hidden)
    positions = positions_from_padding(padding)
    allowed = causal_allowed(2, 6, 6) & padding[:, None, None, :]
    with torch.no_grad():
        ref, _ = hf_attention(w)(torch.tensor(x), position_embeddings=hf_rope(w, x, positions),
                                 attention_mask=additive_mask(allowed))
    out, _ = llama_attention(x, w, positions, mask=padding[:, None, None, :])
    real = padding  # padded query rows see no key: their output is meaningless in both
    np.testing.assert_allclose(out[real], ref.numpy()[real], atol=1e-5, rtol=0)


@pytest.mark.parametrize("shape", SHAPES[:2], ids=lambda s: f"H{s[0]}-G{s[1]}")
def test_cache_matches_transformers_dynamic_cache(shape):
    w = weights_for(shape)
    x = hidden_states(2, 8, w.hidden)
    att, hf_cache, cache = hf_attention(w), DynamicCache(), None
    for start, stop in [(0, 5), (5, 6), (6, 8)]:  # prefill 5, then 1, then a chunk of 2
        chunk, pos = x[:, start:stop], np.arange(start, stop)
        with torch.no_grad():
            ref, _ = att(torch.tensor(chunk), position_embeddings=hf_rope(w, chunk, pos),
                         attention_mask=additive_mask(causal_allowed(2, stop - start, stop)),
                         past_key_values=hf_cache)
        out, cache = llama_attention(chunk, w, cache=cache)  # positions default to cache.length + i
        np.testing.assert_allclose(out, ref.numpy(), atol=1e-5, rtol=0)
        np.testing.assert_allclose(cache.keys, hf_cache.layers[0].keys.numpy(), atol=1e-5, rtol=0)
        np.testing.assert_allclose(cache.values, hf_cache.layers[0].values.numpy(), atol=1e-12, rtol=0)
    assert cache.length == 8


def test_stack_matches_transformers_decoder_layers_without_mlp():
    layers = init_stack_weights(np.random.default_rng(3), 3, 32, 4, 2, 8)
    cfg = hf_config(layers[0], n_layers=3)
    x = hidden_states(2, 6, 32)
    positions = np.arange(6) + 4
    h = torch.tensor(x)
    with torch.no_grad():
        for layer in layers:
            block = LlamaDecoderLayer(cfg, layer.layer_idx).double().eval()
            block.self_attn = hf_attention(layer, cfg)
            block.mlp.down_proj.weight.zero_()  # attention-only block: the MLP adds nothing
            h = block(h, attention_mask=additive_mask(causal_allowed(2, 6, 6)),
                      position_embeddings=hf_rope(layers[0], x, positions))
    out, caches = llama_stack(x, layers, positions)
    np.testing.assert_allclose(out, h.numpy(), atol=1e-5, rtol=0)
    assert [c.layer_idx for c in caches] == [0, 1, 2]


# --- incremental decoding and the cache ------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(shape=st.sampled_from(SHAPES), cuts=st.lists(st.integers(1, 8), min_size=1, max_size=4, unique=True),
       offset=st.integers(0, 50))
def test_incremental_decoding_equals_full_pass(shape, cuts, offset):
    w = weights_for(shape)
    x = hidden_states(2, 9, w.hidden)
    full, full_cache = llama_attention(x, w, np.arange(9) + offset)
    bounds = [0, *sorted(cuts), 9]
    cache = KVCache.empty(w, batch=2)
    outs = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        out, cache = llama_attention(x[:, a:b], w, default_positions(b - a, cache) + offset, cache=cache)
        outs.append(out)
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full, atol=1e-12, rtol=0)
    np.testing.assert_allclose(cache.keys, full_cache.keys, atol=1e-12, rtol=0)


def test_token_by_token_with_default_positions():
    w = weights_for(SHAPES[1])
    x = hidden_states(1, 6, w.hidden)
    full, _ = llama_attention(x, w)
    cache = None
    for t in range(6):
        out, cache = llama_attention(x[:, t : t + 1], w, cache=cache)
        np.testing.assert_allclose(out[:, 0], full[:, t], atol=1e-12, rtol=0)
        assert cache.length == t + 1


def test_cache_stores_rotated_keys_and_plain_values():
    w = weights_for(SHAPES[0])
    x = hidden_states(2, 5, w.hidden)
    positions = np.array([3, 4, 5, 6, 7])
    _, cache = llama_attention(x, w, positions)
    raw_k = split_heads(x @ w.k_proj.T, w.n_kv_heads)
    raw_v = split_heads(x @ w.v_proj.T, w.n_kv_heads)
    np.testing.assert_allclose(cache.keys, apply_rope(raw_k, positions, layout="half"), atol=1e-14)
    np.testing.assert_array_equal(cache.values, raw_v)
    assert cache.keys.shape == (2, w.n_kv_heads, 5, w.head_dim)  # n_kv_heads, not n_heads
    assert not cache.keys.flags.writeable and not cache.values.flags.writeable


def test_a_step_returns_a_new_cache_and_leaves_the_old_one():
    w = weights_for(SHAPES[0])
    x = hidden_states(1, 4, w.hidden)
    _, c3 = llama_attention(x[:, :3], w)
    _, c4 = llama_attention(x[:, 3:], w, cache=c3)
    assert (c3.length, c4.length) == (3, 4)
    np.testing.assert_array_equal(c4.keys[:, :, :3], c3.keys)


def test_new_token_at_position_zero_is_wrong():
    w = weights_for(SHAPES[0])
    x = hidden_states(1, 6, w.hidden)
    full, _ = llama_attention(x, w)
    _, cache = llama_attention(x[:, :5], w)
    wrong, _ = llama_attention(x[:, 5:], w, [0], cache=cache)
    right, _ = llama_attention(x[:, 5:], w, cache=cache)
    np.testing.assert_allclose(right[:, 0], full[:, 5], atol=1e-12)
    assert np.max(np.abs(wrong[:, 0] - full[:, 5])) > 1e-2


def test_left_padding_reproduces_the_unpadded_sequence_and_decoding_needs_consistent_positions():
    w = weights_for(SHAPES[0])
    x_short = hidden_states(1, 4, w.hidden, seed=5)  # 3 prompt tokens, then 1 generated
    pad = hidden_states(1, 2, w.hidden, seed=6)
    x = np.concatenate([pad, x_short[:, :3]], axis=1)  # left-padded prompt, length 5
    padding = np.array([[False, False, True, True, True]])
    alone, _ = llama_attention(x_short, w)
    keys_ok = padding[:, None, None, :]
    right_pos = positions_from_padding(padding)
    assert right_pos.tolist() == [[0, 0, 0, 1, 2]]
    out, cache = llama_attention(x, w, right_pos, mask=keys_ok)
    np.testing.assert_allclose(out[:, 2:], alone[:, :3], atol=1e-12)
    # decoding the 4th token: right position = number of real tokens (3), not cache.length (5)
    step_mask = np.concatenate([keys_ok, [[[[True]]]]], axis=-1)
    right, _ = llama_attention(x_short[:, 3:], w, [3], cache=cache, mask=step_mask)
    wrong, _ = llama_attention(x_short[:, 3:], w, cache=cache, mask=step_mask)  # default: 5
    np.testing.assert_allclose(right[:, 0], alone[:, 3], atol=1e-12)
    assert np.max(np.abs(wrong[:, 0] - alone[:, 3])) > 1e-3
    # naive positions 0..4 shift the real tokens by 2: harmless in one pass (shift invariance),
    # and then the cache-length default (5) is the consistent next position
    out_naive, cache_naive = llama_attention(x, w, mask=keys_ok)
    np.testing.assert_allclose(out_naive[:, 2:], alone[:, :3], atol=1e-12)
    step, _ = llama_attention(x_short[:, 3:], w, cache=cache_naive, mask=step_mask)
    np.testing.assert_allclose(step[:, 0], alone[:, 3], atol=1e-12)
    # without the padding mask the real tokens attend to the padding: wrong whatever the positions
    unmasked, _ = llama_attention(x, w, right_pos)
    assert np.max(np.abs(unmasked[:, 2:] - alone[:, :3])) > 1e-2


def test_positions_from_padding():
    mask = np.array([[True, True, True], [False, True, True], [False, False, True]])
    np.testing.assert_array_equal(positions_from_padding(mask), [[0, 1, 2], [0, 0, 1], [0, 0, 0]])
    assert positions_from_padding(mask).dtype == np.int64


# --- RoPE on q and k only; shifts; moves ------------------------------------------------------


def test_values_are_not_rotated():
    w = weights_for(SHAPES[0])
    x = hidden_states(1, 4, w.hidden)
    _, k1, v1 = project_qkv(x, w, np.arange(4))
    _, k2, v2 = project_qkv(x, w, np.arange(4) + 9)
    np.testing.assert_array_equal(v1, v2)  # values ignore positions...
    assert np.max(np.abs(k1 - k2)) > 1e-2  # ...keys do not
    # A lone token attends only to itself (weight 1), so its output is o_proj(v) at any
    # position. Had V been rotated, it would turn with the position.
    lone = x[:, :1]
    expected = merge_heads(repeat_kv(split_heads(lone @ w.v_proj.T, w.n_kv_heads), w.n_rep)) @ w.o_proj.T
    for p in (0, 1, 7, 1000):
        np.testing.assert_allclose(llama_attention(lone, w, [p])[0], expected, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(shift=st.floats(-1000, 1000, allow_nan=False), shape=st.sampled_from(SHAPES))
def test_shift_of_every_position_changes_nothing(shift, shape):
    w = weights_for(shape)
    x = hidden_states(2, 6, w.hidden)
    pos = np.arange(6, dtype=float)
    np.testing.assert_allclose(llama_attention_weights(x, w, pos + shift), llama_attention_weights(x, w, pos),
                               atol=1e-9)
    np.testing.assert_allclose(llama_attention(x, w, pos + shift)[0], llama_attention(x, w, pos)[0], atol=1e-9)


def test_moving_one_token_changes_the_output():
    w = weights_for(SHAPES[0])
    x = hidden_states(1, 6, w.hidden)
    pos = np.arange(6)
    moved = pos.copy()
    moved[2] = 4
    assert np.max(np.abs(llama_attention(x, w, moved)[0] - llama_attention(x, w, pos)[0])) > 1e-2


def test_every_head_is_rotated_by_the_same_angles():
    w = weights_for(SHAPES[0])
    x = hidden_states(1, 5, w.hidden)
    pos = np.arange(5) + 2
    q, k, _ = project_qkv(x, w, pos)
    raw_q = split_heads(x @ w.q_proj.T, w.n_heads)
    for h in range(w.n_heads):
        np.testing.assert_allclose(q[:, h], apply_rope(raw_q[:, h], pos, layout="half"), atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), np.linalg.norm(raw_q, axis=-1), atol=1e-12)


# --- heads -----------------------------------------------------------------------------------


def test_repeat_kv_matches_torch_repeat_interleave_and_split_merge_are_inverse():
    kv = np.random.default_rng(0).standard_normal((2, 3, 5, 4))
    ref = torch.tensor(kv).repeat_interleave(4, dim=1).numpy()
    np.testing.assert_array_equal(repeat_kv(kv, 4), ref)
    assert repeat_kv(kv, 1) is kv
    x = np.random.default_rng(1).standard_normal((2, 5, 12))
    np.testing.assert_array_equal(merge_heads(split_heads(x, 3)), x)
    np.testing.assert_array_equal(split_heads(x, 3)[:, 1], x[:, :, 4:8])


def test_rope_commutes_with_repeat_kv():
    k = np.random.default_rng(2).standard_normal((1, 2, 6, 8))
    pos = np.arange(6) + 3
    np.testing.assert_allclose(apply_rope(repeat_kv(k, 3), pos, layout="half"),
                               repeat_kv(apply_rope(k, pos, layout="half"), 3), atol=1e-15)


def test_gqa_equals_mha_with_repeated_key_value_weights():
    w = weights_for((8, 2, 4, 16))
    d = w.head_dim

    def repeat_rows(m):  # (G*D, hidden) -> (H*D, hidden): head h gets kv head h // n_rep's rows
        return np.repeat(m.reshape(w.n_kv_heads, d, -1), w.n_rep, axis=0).reshape(w.n_heads * d, -1)

    mha = AttentionWeights(w.q_proj, repeat_rows(w.k_proj), repeat_rows(w.v_proj), w.o_proj,
                           n_heads=8, n_kv_heads=8, head_dim=d)
    x = hidden_states(2, 5, 16)
    np.testing.assert_allclose(llama_attention(x, w)[0], llama_attention(x, mha)[0], atol=1e-12)


def test_interleaved_layout_with_permuted_rows_equals_half_layout():
    w = weights_for(SHAPES[0])
    perm = layout_permutation(w.head_dim)

    def permute_heads(m, n):  # permute the rows of every head's block by P
        return m.reshape(n, w.head_dim, -1)[:, perm].reshape(n * w.head_dim, -1)

    inter = AttentionWeights(w.q_proj, w.k_proj, w.v_proj, w.o_proj, w.n_heads, w.n_kv_heads, w.head_dim,
                             layout="interleaved")
    half = AttentionWeights(permute_heads(w.q_proj, w.n_heads), permute_heads(w.k_proj, w.n_kv_heads),
                            w.v_proj, w.o_proj, w.n_heads, w.n_kv_heads, w.head_dim, layout="half")
    x = hidden_states(1, 6, w.hidden)
    np.testing.assert_allclose(llama_attention(x, inter)[0], llama_attention(x, half)[0], atol=1e-12)
    assert np.max(np.abs(llama_attention(x, inter)[0] - llama_attention(x, w)[0])) > 1e-3


def test_causal_future_tokens_do_not_change_past_outputs():
    w = weights_for(SHAPES[0])
    x = hidden_states(1, 6, w.hidden)
    y = x.copy()
    y[:, 4:] += 1.0
    np.testing.assert_array_equal(llama_attention(x, w)[0][:, :4], llama_attention(y, w)[0][:, :4])
    probs = llama_attention_weights(x, w)
    assert np.all(np.triu(probs[0, 0], k=1) == 0)
    np.testing.assert_allclose(probs.sum(-1), 1.0)
    # without the causal mask the past does see the future
    assert not np.allclose(llama_attention(x, w, causal=False)[0][:, :4], llama_attention(y, w, causal=False)[0][:, :4])


def test_weights_are_frozen_copies_and_frequencies_follow_base_or_inv_freq():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((8, 4))
    w = AttentionWeights(q, q, q, q.T, n_heads=2, n_kv_heads=2, head_dim=4, base=500.0)
    q[0, 0] = 99.0
    assert w.q_proj[0, 0] != 99.0 and not w.q_proj.flags.writeable
    np.testing.assert_allclose(w.frequencies, rope_edu.frequencies(4, 500.0))
    w2 = AttentionWeights(q, q, q, q.T, n_heads=2, n_kv_heads=2, head_dim=4, inv_freq=[0.5, 0.25])
    np.testing.assert_array_equal(w2.frequencies, [0.5, 0.25])
    assert (w.hidden, w.n_rep) == (4, 1)


# --- the stack -------------------------------------------------------------------------------


def test_rms_norm():
    x = np.random.default_rng(0).standard_normal((3, 8))
    out = rms_norm(x, eps=0.0)
    np.testing.assert_allclose(np.mean(out**2, axis=-1), 1.0)
    g = np.arange(8.0)
    np.testing.assert_allclose(rms_norm(x, g, eps=1e-6), x / np.sqrt(np.mean(x**2, -1, keepdims=True) + 1e-6) * g)


def test_stack_applies_rope_in_every_layer_and_decodes_incrementally():
    layers = init_stack_weights(np.random.default_rng(4), 3, 32, 4, 2, 8)
    x = hidden_states(1, 7, 32)
    pos = np.arange(7) + 5
    out, caches = llama_stack(x, layers, pos)
    # the same computation, layer by layer, checking what every layer cached
    h = x
    for layer, cache in zip(layers, caches):
        normed = rms_norm(h)
        raw_k = split_heads(normed @ layer.k_proj.T, layer.n_kv_heads)
        np.testing.assert_allclose(cache.keys, apply_rope(raw_k, pos, layout="half"), atol=1e-12)
        assert np.max(np.abs(cache.keys - raw_k)) > 1e-2  # rotated, in layer 0 and in every later one
        h = h + llama_attention(normed, layer, pos)[0]
    np.testing.assert_allclose(out, h, atol=1e-12)
    # prefill 4 tokens, then 3 steps of one token: same as the full pass
    first, caches = llama_stack(x[:, :4], layers, pos[:4])
    steps = [first]
    for t in range(4, 7):
        o, caches = llama_stack(x[:, t : t + 1], layers, pos[t : t + 1], caches=caches)
        steps.append(o)
    np.testing.assert_allclose(np.concatenate(steps, axis=1), out, atol=1e-12)
    # default positions follow the caches
    o_default, _ = llama_stack(x[:, 6:], layers, caches=[llama_stack(x[:, :6], layers)[1][i] for i in range(3)])
    np.testing.assert_allclose(o_default, llama_stack(x, layers)[0][:, 6:], atol=1e-12)
    # and the whole stack is unchanged by a shift of every position
    np.testing.assert_allclose(llama_stack(x, layers, pos + 123)[0], out, atol=1e-10)


# --- the whole decoder: MLP, decoder layers, embeddings, head -------------------------------


def random_llama(seed=0, *, vocab=50, hidden=32, inter=24, n_layers=2, heads=4, kv=2, head_dim=8, tied=True,
                 base=10000.0, eps=1e-5):
    rng = np.random.default_rng(seed)
    layers = []
    for i, att in enumerate(init_stack_weights(rng, n_layers, hidden, heads, kv, head_dim, base=base)):
        mlp = MLPWeights(rng.normal(0, hidden**-0.5, (inter, hidden)), rng.normal(0, hidden**-0.5, (inter, hidden)),
                         rng.normal(0, inter**-0.5, (hidden, inter)))
        layers.append(DecoderLayerWeights(att, mlp, 1 + 0.1 * rng.standard_normal(hidden),
                                          1 + 0.1 * rng.standard_normal(hidden)))
    return LlamaWeights(rng.standard_normal((vocab, hidden)), layers, 1 + 0.1 * rng.standard_normal(hidden),
                        None if tied else rng.standard_normal((vocab, hidden)), eps=eps)


def hf_causal_lm(m: LlamaWeights):
    """transformers' LlamaForCausalLM (float64, eager) holding the weights of ``m``."""
    from transformers import LlamaForCausalLM

    a = m.layers[0].attention
    cfg = LlamaConfig(
        vocab_size=m.vocab, hidden_size=m.hidden, intermediate_size=m.layers[0].mlp.intermediate,
        num_hidden_layers=len(m.layers), num_attention_heads=a.n_heads, num_key_value_heads=a.n_kv_heads,
        head_dim=a.head_dim, rms_norm_eps=m.eps, tie_word_embeddings=m.tied, max_position_embeddings=512,
        rope_parameters={"rope_type": "default", "rope_theta": a.base},
    )
    cfg._attn_implementation = "eager"
    hf = LlamaForCausalLM(cfg).double().eval()
    t = lambda a_: torch.tensor(np.array(a_))  # noqa: E731
    with torch.no_grad():
        hf.model.embed_tokens.weight.copy_(t(m.embed_tokens))
        hf.model.norm.weight.copy_(t(m.norm))
        if not m.tied:
            hf.lm_head.weight.copy_(t(m.lm_head))
        for layer, block in zip(m.layers, hf.model.layers):
            for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
                getattr(block.self_attn, name).weight.copy_(t(getattr(layer.attention, name)))
            for name in ("gate_proj", "up_proj", "down_proj"):
                getattr(block.mlp, name).weight.copy_(t(getattr(layer.mlp, name)))
            block.input_layernorm.weight.copy_(t(layer.input_norm))
            block.post_attention_layernorm.weight.copy_(t(layer.post_attention_norm))
    return hf


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
def test_llama_forward_matches_transformers_causal_lm(tied):
    m = random_llama(tied=tied)
    ids = np.random.default_rng(2).integers(0, m.vocab, (2, 9))
    with torch.no_grad():
        ref = hf_causal_lm(m)(torch.tensor(ids)).logits.numpy()
    logits, caches = llama_forward(ids, m)
    np.testing.assert_allclose(logits, ref, atol=1e-5, rtol=0)  # float32 angles in transformers
    assert len(caches) == 2 and caches[0].length == 9
    assert m.tied is tied and (m.lm_head is None) is tied


def test_llama_forward_decodes_incrementally_and_last_only():
    m = random_llama(1)
    ids = np.random.default_rng(3).integers(0, m.vocab, 10)
    full, _ = llama_forward(ids, m)
    first, caches = llama_forward(ids[:6], m)
    steps = [first]
    for t in range(6, 10):
        out, caches = llama_forward(ids[t : t + 1], m, caches=caches)
        steps.append(out)
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, atol=1e-12)
    np.testing.assert_allclose(llama_forward(ids, m, last_only=True)[0], full[:, -1:], atol=1e-12)


def test_decoder_layer_and_swiglu_are_the_formulas():
    m = random_llama(2)
    layer = m.layers[0]
    x = hidden_states(1, 5, m.hidden)
    pos = np.arange(5)
    h = x + llama_attention(rms_norm(x, layer.input_norm, 1e-5), layer.attention, pos)[0]
    n = rms_norm(h, layer.post_attention_norm, 1e-5)
    gate = n @ layer.mlp.gate_proj.T
    expected = h + (gate / (1 + np.exp(-gate)) * (n @ layer.mlp.up_proj.T)) @ layer.mlp.down_proj.T
    np.testing.assert_allclose(decoder_layer(x, layer, pos, eps=1e-5)[0], expected, atol=1e-12)
    np.testing.assert_allclose(silu(np.array([-1e6, 0.0, 1e6])), [0.0, 0.0, 1e6])


def test_attention_scaling_multiplies_rotated_queries_and_keys():
    from dataclasses import replace

    w = weights_for(SHAPES[0])
    x = hidden_states(1, 5, w.hidden)
    q, k, v = project_qkv(x, w, np.arange(5))
    q2, k2, v2 = project_qkv(x, replace(w, attention_scaling=1.5), np.arange(5))
    np.testing.assert_allclose(q2, 1.5 * q, atol=1e-12)
    np.testing.assert_allclose(k2, 1.5 * k, atol=1e-12)
    np.testing.assert_array_equal(v2, v)


def test_token_log_likelihoods_and_with_attention():
    logits = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [1 / 3, 1 / 3, 1 / 3]]))
    np.testing.assert_allclose(token_log_likelihoods(logits, np.array([0, 1, 2])), np.log([0.25, 0.1]))
    np.testing.assert_allclose(np.exp(log_softmax(logits)).sum(-1), 1.0)
    m = random_llama(3)
    swapped = m.with_attention(layout="interleaved", q_proj=lambda a: half_to_interleaved(a.q_proj, a.n_heads),
                               k_proj=lambda a: half_to_interleaved(a.k_proj, a.n_kv_heads))
    assert all(layer.attention.layout == "interleaved" for layer in swapped.layers)
    assert swapped.layers[1].mlp is m.layers[1].mlp  # the rest is shared, not copied
    ids = np.arange(12) % m.vocab
    np.testing.assert_allclose(llama_forward(ids, swapped)[0], llama_forward(ids, m)[0], atol=1e-10)


# --- bad input -------------------------------------------------------------------------------

W = weights_for(SHAPES[0])  # H=4, G=2, D=8, hidden=32
X = hidden_states(2, 3, 32)
_, CACHE = llama_attention(X, W)
M = np.zeros((32, 32))
LM = random_llama()  # vocab 50, hidden 32, 2 layers


def make(**changes):
    kw = dict(q_proj=np.zeros((32, 32)), k_proj=np.zeros((16, 32)), v_proj=np.zeros((16, 32)),
              o_proj=np.zeros((32, 32)), n_heads=4, n_kv_heads=2, head_dim=8)
    return AttentionWeights(**{**kw, **changes})


BAD = {
    "n_heads not a multiple of n_kv_heads": (lambda: make(n_heads=3, n_kv_heads=2, q_proj=np.zeros((24, 32)),
                                                         o_proj=np.zeros((32, 24))), ValueError, "n_heads"),
    "odd head_dim": (lambda: make(n_heads=1, n_kv_heads=1, head_dim=7, q_proj=np.zeros((7, 32)),
                                  k_proj=np.zeros((7, 32)), v_proj=np.zeros((7, 32)), o_proj=np.zeros((32, 7))),
                     ValueError, "head_dim"),
    "float head_dim": (lambda: make(head_dim=8.0), TypeError, "head_dim"),
    "zero n_kv_heads": (lambda: make(n_kv_heads=0), ValueError, "n_kv_heads"),
    "bool n_heads": (lambda: make(n_heads=True), TypeError, "n_heads"),
    "q_proj rows != n_heads*head_dim": (lambda: make(q_proj=np.zeros((24, 32))), ValueError, "q_proj"),
    "k_proj rows != n_kv_heads*head_dim": (lambda: make(k_proj=np.zeros((32, 32))), ValueError, "k_proj"),
    "v_proj other hidden": (lambda: make(v_proj=np.zeros((16, 30))), ValueError, "v_proj"),
    "o_proj transposed": (lambda: make(o_proj=np.zeros((16, 32))), ValueError, "o_proj"),
    "q_proj 1-d": (lambda: make(q_proj=np.zeros(32)), ValueError, "q_proj"),
    "q_proj 3-d": (lambda: make(q_proj=np.zeros((32, 32, 1))), ValueError, "q_proj"),
    "complex q_proj": (lambda: make(q_proj=np.zeros((32, 32), complex)), TypeError, "q_proj"),
    "base 1": (lambda: make(base=1.0), ValueError, "base"),
    "unknown layout": (lambda: make(layout="pairs"), ValueError, "layout"),
    "inv_freq wrong length": (lambda: make(inv_freq=[1.0, 0.5]), ValueError, "inv_freq"),
    "negative layer_idx": (lambda: make(layer_idx=-1), ValueError, "layer_idx"),
    "init: rng not a Generator": (lambda: init_attention_weights(0, 32, 4, 2, 8), TypeError, "rng"),
    "init: hidden 0": (lambda: init_attention_weights(np.random.default_rng(0), 0, 4, 2, 8), ValueError, "hidden"),
    "init: odd head_dim": (lambda: init_attention_weights(np.random.default_rng(0), 8, 4, 2, 5), ValueError, "head_dim"),
    "init: GQA mismatch": (lambda: init_attention_weights(np.random.default_rng(0), 8, 6, 4, 2), ValueError, "n_heads"),
    "init_stack: 0 layers": (lambda: init_stack_weights(np.random.default_rng(0), 0, 8, 2, 1, 4), ValueError, "n_layers"),
    "x of another hidden size": (lambda: llama_attention(np.zeros((2, 3, 30)), W), ValueError, "x"),
    "x without batch axis": (lambda: llama_attention(np.zeros((3, 32)), W), ValueError, "x"),
    "complex x": (lambda: llama_attention(np.zeros((2, 3, 32), complex), W), TypeError, "x"),
    "weights not AttentionWeights": (lambda: llama_attention(X, {"q_proj": M}), TypeError, "weights"),
    "positions too short": (lambda: llama_attention(X, W, [0, 1]), ValueError, "positions"),
    "positions too long": (lambda: llama_attention(X, W, np.arange(5)), ValueError, "positions"),
    "one position for three tokens": (lambda: llama_attention(X, W, [4]), ValueError, "positions"),
    "positions of another batch": (lambda: llama_attention(X, W, np.zeros((3, 3))), ValueError, "positions"),
    "positions 3-d": (lambda: llama_attention(X, W, np.zeros((1, 2, 3))), ValueError, "positions"),
    "NaN position": (lambda: llama_attention(X, W, [0, np.nan, 2]), ValueError, "positions"),
    "string positions": (lambda: llama_attention(X, W, ["a", "b", "c"]), TypeError, "positions"),
    "cache not a KVCache": (lambda: llama_attention(X, W, cache=(CACHE.keys, CACHE.values)), TypeError, "cache"),
    "cache of another layer": (lambda: llama_attention(X, W, cache=KVCache(CACHE.keys, CACHE.values, layer_idx=1)),
                               ValueError, "cache belongs to layer 1"),
    "cache with other n_kv_heads": (lambda: llama_attention(X, W, cache=KVCache(np.zeros((2, 4, 3, 8)), np.zeros((2, 4, 3, 8)))),
                                    ValueError, "cache"),
    "cache with other head_dim": (lambda: llama_attention(X, W, cache=KVCache(np.zeros((2, 2, 3, 4)), np.zeros((2, 2, 3, 4)))),
                                  ValueError, "cache"),
    "cache of another batch": (lambda: llama_attention(X[:1], W, cache=CACHE), ValueError, "cache"),
    "mask not boolean": (lambda: llama_attention(X, W, mask=np.ones((2, 1, 3, 3))), TypeError, "mask"),
    "mask of wrong shape": (lambda: llama_attention(X, W, mask=np.ones((2, 1, 3, 4), bool)), ValueError, "mask"),
    "causal not a bool": (lambda: llama_attention(X, W, causal="yes"), TypeError, "causal"),
    "weights(): positions too short": (lambda: llama_attention_weights(X, W, [0]), ValueError, "positions"),
    "project_qkv: positions too short": (lambda: project_qkv(X, W, [0, 1]), ValueError, "positions"),
    "KVCache keys 3-d": (lambda: KVCache(np.zeros((2, 3, 4)), np.zeros((2, 3, 4))), ValueError, "keys"),
    "KVCache values of another shape": (lambda: KVCache(np.zeros((1, 2, 3, 4)), np.zeros((1, 2, 2, 4))), ValueError, "values"),
    "KVCache negative layer_idx": (lambda: KVCache(np.zeros((1, 2, 3, 4)), np.zeros((1, 2, 3, 4)), -1), ValueError, "layer_idx"),
    "KVCache.append other heads": (lambda: CACHE.append(np.zeros((2, 4, 1, 8)), np.zeros((2, 4, 1, 8))), ValueError, "keys"),
    "KVCache.append values mismatch": (lambda: CACHE.append(np.zeros((2, 2, 1, 8)), np.zeros((2, 2, 2, 8))), ValueError, "values"),
    "KVCache.empty of a dict": (lambda: KVCache.empty({}), TypeError, "weights"),
    "KVCache.empty batch 0": (lambda: KVCache.empty(W, 0), ValueError, "batch"),
    "split_heads indivisible": (lambda: split_heads(np.zeros((1, 2, 10)), 3), ValueError, "x"),
    "merge_heads 3-d": (lambda: merge_heads(np.zeros((1, 2, 10))), ValueError, "x"),
    "repeat_kv n_rep 0": (lambda: repeat_kv(np.zeros((1, 2, 3, 4)), 0), ValueError, "n_rep"),
    "repeat_kv 3-d": (lambda: repeat_kv(np.zeros((2, 3, 4)), 2), ValueError, "x"),
    "default_positions negative": (lambda: default_positions(-1), ValueError, "n_new"),
    "padding mask of ints": (lambda: positions_from_padding(np.ones((1, 3), int)), TypeError, "padding_mask"),
    "padding mask 1-d": (lambda: positions_from_padding(np.ones(3, bool)), ValueError, "padding_mask"),
    "rms_norm negative eps": (lambda: rms_norm(X, eps=-1.0), ValueError, "eps"),
    "rms_norm string eps": (lambda: rms_norm(X, eps="small"), TypeError, "eps"),
    "rms_norm weight shape": (lambda: rms_norm(X, np.ones(3)), ValueError, "weight"),
    "stack: no layers": (lambda: llama_stack(X, []), TypeError, "layers"),
    "stack: a single layer, not a list": (lambda: llama_stack(X, W), TypeError, "layers"),
    "stack: layers out of order": (lambda: llama_stack(X, [W, W]), ValueError, "layers"),
    "stack: not weights": (lambda: llama_stack(X, [M]), TypeError, "layers"),
    "stack: caches of another count": (lambda: llama_stack(X, [W], caches=[CACHE, CACHE]), ValueError, "caches"),
    "stack: caches of different lengths": (
        lambda: llama_stack(X, init_stack_weights(np.random.default_rng(0), 2, 32, 4, 2, 8), caches=[CACHE, None]),
        ValueError, "caches"),
    "attention_scaling zero": (lambda: AttentionWeights(W.q_proj, W.k_proj, W.v_proj, W.o_proj, 4, 2, 8, attention_scaling=0.0),
                               ValueError, "attention_scaling"),
    "attention_scaling string": (lambda: AttentionWeights(W.q_proj, W.k_proj, W.v_proj, W.o_proj, 4, 2, 8,
                                                          attention_scaling="2"), TypeError, "attention_scaling"),
    "MLP: 1-d gate": (lambda: MLPWeights(np.zeros(3), np.zeros((3, 2)), np.zeros((2, 3))), ValueError, "gate_proj"),
    "MLP: down of wrong shape": (lambda: MLPWeights(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2))), ValueError, "down_proj"),
    "MLP: up of wrong shape": (lambda: MLPWeights(np.zeros((3, 2)), np.zeros((2, 2)), np.zeros((2, 3))), ValueError, "up_proj"),
    "swiglu: not weights": (lambda: swiglu_mlp(X, M), TypeError, "mlp"),
    "swiglu: x too wide": (lambda: swiglu_mlp(np.zeros((1, 33)), LM.layers[0].mlp), ValueError, "x"),
    "layer: attention not weights": (lambda: DecoderLayerWeights(M, LM.layers[0].mlp, np.ones(32), np.ones(32)), TypeError, "attention"),
    "layer: mlp of another width": (lambda: DecoderLayerWeights(W, MLPWeights(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((2, 3))),
                                                                np.ones(32), np.ones(32)), ValueError, "mlp"),
    "layer: norm of wrong size": (lambda: DecoderLayerWeights(W, LM.layers[0].mlp, np.ones(31), np.ones(32)), ValueError, "input_norm"),
    "decoder_layer: not a layer": (lambda: decoder_layer(X, W), TypeError, "layer"),
    "decoder_layer: negative eps": (lambda: decoder_layer(X, LM.layers[0], eps=-1.0), ValueError, "eps"),
    "model: no layers": (lambda: LlamaWeights(np.zeros((5, 32)), [], np.ones(32)), TypeError, "layers"),
    "model: layers out of order": (lambda: LlamaWeights(np.zeros((5, 32)), LM.layers[::-1], np.ones(32)), ValueError, "layers"),
    "model: embedding too narrow": (lambda: LlamaWeights(np.zeros((5, 31)), LM.layers, np.ones(32)), ValueError, "embed_tokens"),
    "model: lm_head of another vocab": (lambda: LlamaWeights(np.zeros((5, 32)), LM.layers, np.ones(32), np.zeros((4, 32))),
                                        ValueError, "lm_head"),
    "model: string eps": (lambda: LlamaWeights(np.zeros((5, 32)), LM.layers, np.ones(32), eps="1e-5"), TypeError, "eps"),
    "forward: float tokens": (lambda: llama_forward(np.zeros(3), LM), TypeError, "tokens"),
    "forward: token out of vocab": (lambda: llama_forward(np.array([0, 50]), LM), ValueError, "tokens"),
    "forward: no tokens": (lambda: llama_forward(np.zeros(0, int), LM), ValueError, "tokens"),
    "forward: not a model": (lambda: llama_forward(np.zeros(3, int), W), TypeError, "model"),
    "forward: caches of another count": (lambda: llama_forward(np.zeros(3, int), LM, caches=[None]), ValueError, "caches"),
    "log-likelihoods: float tokens": (lambda: token_log_likelihoods(np.zeros((3, 4)), np.zeros(3)), TypeError, "tokens"),
    "log-likelihoods: one token": (lambda: token_log_likelihoods(np.zeros((1, 4)), np.zeros(1, int)), ValueError, "tokens"),
    "log-likelihoods: shapes differ": (lambda: token_log_likelihoods(np.zeros((3, 4)), np.zeros(2, int)), ValueError, "tokens"),
    "widget: token out of range": (lambda: attention_shift.state(token=6), ValueError, "token"),
    "widget: NaN shift": (lambda: attention_shift.state(shift=float("nan")), ValueError, "shift"),
    "widget: string move": (lambda: attention_shift.state(move="1"), ValueError, "move"),
    "widget: multi-head weights": (lambda: attention_shift.logits(np.arange(3), X, W), ValueError, "weights"),
}


@pytest.mark.parametrize("call, error, match", BAD.values(), ids=BAD.keys())
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- the widget ------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(shift=st.floats(-500, 500, allow_nan=False))
def test_widget_shift_leaves_logits_unchanged(shift):
    s = attention_shift.state(shift=shift)
    assert s["max_change"] < 1e-9 and not s["changed"].any()
    np.testing.assert_allclose(s["positions"], np.arange(6) + shift)


@pytest.mark.parametrize("token", range(6))
def test_widget_moving_one_token_changes_exactly_its_row_and_column(token):
    s = attention_shift.state(shift=10, move=3, token=token)
    expected = np.zeros((6, 6), bool)
    expected[token, :] = expected[:, token] = True
    expected[token, token] = False  # its logit with itself stays at distance 0
    np.testing.assert_array_equal(s["changed"], expected)
    assert s["max_change"] > 1e-2


def test_widget_logits_are_the_layers_scaled_dot_products():
    pos = np.arange(6) + 2.0
    q, k, _ = project_qkv(attention_shift.EMBEDDINGS, attention_shift.WEIGHTS, pos)
    np.testing.assert_allclose(attention_shift.logits(pos), q[0, 0] @ k[0, 0].T / np.sqrt(8))
    probs = llama_attention_weights(attention_shift.EMBEDDINGS, attention_shift.WEIGHTS, pos, causal=False)
    np.testing.assert_allclose(probs[0, 0], rope_edu.softmax(attention_shift.logits(pos)), atol=1e-12)


def test_widget_figure_controls_and_defaults():
    assert attention_shift.DEMO.name == "attention_shift"
    assert [c.name for c in attention_shift.DEMO.controls] == ["shift", "move", "token"]
    assert attention_shift.DEMO.defaults == {"shift": 0, "move": 0, "token": 3}
    ranges = [(c.min, c.max, c.step, c.integer) for c in attention_shift.DEMO.controls]
    assert ranges == [(0, 100, 1, True), (-6, 12, 1, True), (0, 5, 1, True)]


def test_widget_data_rotated_in_python_gives_the_layers_logits():
    """data() holds q and k before RoPE; turning them by RoPE at any positions (what the browser
    does) gives the layer's logits, and the limits are those of the colour scales."""
    d = attention_shift.data()
    assert d["layout"] == attention_shift.WEIGHTS.layout == "half" and d["head_dim"] == 8
    np.testing.assert_array_equal(d["inv_freq"], rope_edu.frequencies(8, 10000.0))
    pos = np.array([7.0, 3.0, 100.0, 0.0, 55.0, 12.0])
    q = apply_rope(d["q"], pos, inv_freq=d["inv_freq"], layout=d["layout"])
    k = apply_rope(d["k"], pos, inv_freq=d["inv_freq"], layout=d["layout"])
    np.testing.assert_allclose(q @ k.T / np.sqrt(d["head_dim"]), attention_shift.logits(pos), atol=1e-12)
    assert d["lim"] > np.abs(attention_shift.logits(np.arange(6.0))).max()


@settings(max_examples=25, deadline=None)
@given(shift=st.integers(0, 100), move=st.integers(-6, 12), token=st.integers(0, 5))
def test_widget_readouts_against_the_layer(shift, move, token):
    r = attention_shift.readouts(shift=shift, move=move, token=token)
    pos = np.arange(6.0) + shift
    pos[token] += move
    np.testing.assert_array_equal([r[f"position_{i}"] for i in range(6)], pos)
    change = attention_shift.logits(pos) - attention_shift.logits(np.arange(6.0))
    if move == 0:  # a shift of every position: no logit changes
        assert r["max_change"] == 0.0 and r["n_changed"] == 0
    else:  # the moved token's row and column, except its logit with itself
        assert r["n_changed"] == 10
        assert r["max_change"] == pytest.approx(np.abs(change).max(), abs=1e-12) and r["max_change"] > 1e-3


def test_widget_live_and_static():
    w = attention_shift.DEMO.widget(shift=40)
    assert (w.shift, w.move, w.token) == (40, 0, 3)
    assert w._name == "attention_shift" and np.shape(w._data["q"]) == (6, 8)
    html = attention_shift.DEMO.html(move=2)
    assert 'data-figure="attention_shift"' in html and len(html) < 20_000
    with pytest.raises(ValueError, match="move"):
        attention_shift.DEMO.state(move=13)
