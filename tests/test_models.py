"""rope_edu.models: every family against its own rotary embedding and apply function in transformers.

Each case builds a tiny configuration here (nothing is downloaded), runs the family's rotary-embedding
class and apply function from the pinned ``transformers`` (imported lazily, per family), and compares
cos/sin and the rotated query with :meth:`RopeSpec.cos_sin` and :meth:`RopeSpec.apply` at several
sequence lengths. transformers computes in float32, so angles agree to a few 1e-6 relative.
"""

from __future__ import annotations

import copy
import importlib
import math
import re
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import rope_edu  # noqa: E402
from rope_edu import models as M  # noqa: E402
from rope_edu import scaling as S  # noqa: E402
from rope_edu.models import RopeSpec, rope_spec  # noqa: E402

# Angle agreement: transformers' float32 inv_freq is off by up to ~1.5e-6 relative (the float32 pow),
# its product with the position by another 6e-8, so |angle error| <= 4e-6 |angle| + 2e-6.
ANGLE_RTOL, ANGLE_ATOL = 4e-6, 2e-6


def modeling(name: str):
    return importlib.import_module(f"transformers.models.{name}.modeling_{name}")


def tiny(cls_name: str, **kwargs):
    """A transformers config with a tiny vocabulary and one layer unless told otherwise."""
    kwargs.setdefault("vocab_size", 100)
    kwargs.setdefault("num_hidden_layers", 1)
    for token in ("bos_token_id", "eos_token_id", "pad_token_id"):
        kwargs.setdefault(token, None)
    return getattr(transformers, cls_name)(**kwargs)


# --- transformers as the reference: (cos per pair, sin per pair, rotated query) ------------------


def _cat_rotary(module: str, cls: str, config, position_ids, layer_type=None):
    mod = modeling(module)
    rope = getattr(mod, cls)(config)
    x = torch.zeros(1, dtype=torch.float32)
    args = (x, position_ids) if layer_type is None else (x, position_ids, layer_type)
    cos, sin = rope(*args)
    return mod, cos, sin


def hf_half(module: str, cls: str, split: bool = False):
    """Families whose apply_rotary_pos_emb takes cat(freqs, freqs) tables (rotate_half or its GLM twin).

    ``split``: the attention layer cuts the rotated part off first (GPT-NeoX, Phi), as its forward does."""
    def run(config, q, position_ids, layer_type=None):
        mod, cos, sin = _cat_rotary(module, cls, config, position_ids, layer_type)
        half = cos.shape[-1] // 2
        if split:
            r = cos.shape[-1]
            out, _ = mod.apply_rotary_pos_emb(q[..., :r], q[..., :r], cos, sin)
            out = torch.cat([out, q[..., r:]], dim=-1)
        else:
            out, _ = mod.apply_rotary_pos_emb(q, q, cos, sin)
        return cos[..., :half], sin[..., :half], out
    return run


def hf_gpt_oss(config, q, position_ids, layer_type=None):
    mod, cos, sin = _cat_rotary("gpt_oss", "GptOssRotaryEmbedding", config, position_ids)
    out, _ = mod.apply_rotary_pos_emb(q, q, cos, sin)  # its tables hold one value per pair
    return cos, sin, out


def hf_deepseek_v3(config, q, position_ids, layer_type=None):
    mod, cos, sin = _cat_rotary("deepseek_v3", "DeepseekV3RotaryEmbedding", config, position_ids)
    q_pass, q_rot = torch.split(q, [config.qk_nope_head_dim, config.qk_rope_head_dim], dim=-1)
    apply = mod.apply_rotary_pos_emb_interleave if config.rope_interleave else mod.apply_rotary_pos_emb
    q_rot, _ = apply(q_rot, q_rot, cos, sin)
    half = cos.shape[-1] // 2
    return cos[..., :half], sin[..., :half], torch.cat((q_pass, q_rot), dim=-1)


def hf_gptj(config, q, position_ids, layer_type=None):
    mod = modeling("gptj")
    table = mod.create_sinusoidal_positions(config.n_positions, config.rotary_dim)
    rows = table[position_ids]  # (batch, seq, rotary_dim): sin then cos, as GPTJAttention gathers them
    sin, cos = torch.split(rows, rows.shape[-1] // 2, dim=-1)
    qt = q.transpose(1, 2)  # GPT-J rotates (batch, seq, heads, head_dim)
    r = config.rotary_dim
    q_rot = mod.apply_rotary_pos_emb(qt[..., :r], sin, cos)
    out = torch.cat([q_rot, qt[..., r:]], dim=-1).transpose(1, 2)
    return cos, sin, out


def hf_llama4(config, q, position_ids, layer_type=None):
    mod = modeling("llama4")
    freqs_cis = mod.Llama4TextRotaryEmbedding(config)(torch.zeros(1), position_ids)
    out, _ = mod.apply_rotary_emb(q.transpose(1, 2), q.transpose(1, 2), freqs_cis)  # (batch, seq, heads, dim)
    return freqs_cis.real, freqs_cis.imag, out.transpose(1, 2)


HF = {
    "llama": hf_half("llama", "LlamaRotaryEmbedding"),
    "mistral": hf_half("mistral", "MistralRotaryEmbedding"),
    "qwen2": hf_half("qwen2", "Qwen2RotaryEmbedding"),
    "qwen3": hf_half("qwen3", "Qwen3RotaryEmbedding"),
    "olmo2": hf_half("olmo2", "Olmo2RotaryEmbedding"),
    "smollm3": hf_half("smollm3", "SmolLM3RotaryEmbedding"),
    "gemma3": hf_half("gemma3", "Gemma3RotaryEmbedding"),
    "phi3": hf_half("phi3", "Phi3RotaryEmbedding"),
    "phi": hf_half("phi", "PhiRotaryEmbedding", split=True),
    "gpt_neox": hf_half("gpt_neox", "GPTNeoXRotaryEmbedding", split=True),
    "glm": hf_half("glm", "GlmRotaryEmbedding"),
    "glm4": hf_half("glm4", "Glm4RotaryEmbedding"),
    "gpt_oss": hf_gpt_oss,
    "deepseek_v3": hf_deepseek_v3,
    "gptj": hf_gptj,
    "llama4": hf_llama4,
}


# --- the cases ---------------------------------------------------------------------------------

def longrope_factors(n: int, seed: int = 0) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    return np.sort(rng.uniform(1.0, 2.0, n)).tolist(), np.sort(rng.uniform(1.0, 30.0, n)).tolist()


def phi3_config(partial: float = 1.0, head_dim: int = 32):
    short, long = longrope_factors(int(head_dim * partial) // 2)
    return tiny("Phi3Config", hidden_size=2 * head_dim, num_attention_heads=2, num_key_value_heads=2,
                max_position_embeddings=128, original_max_position_embeddings=32, partial_rotary_factor=partial,
                rope_scaling={"type": "longrope", "short_factor": short, "long_factor": long})


def deepseek_config(interleave: bool = True, mscale: float = 1.0):
    return tiny("DeepseekV3Config", hidden_size=64, num_attention_heads=2, num_key_value_heads=2, q_lora_rank=None,
                kv_lora_rank=16, qk_rope_head_dim=16, qk_nope_head_dim=32, v_head_dim=16, rope_interleave=interleave,
                max_position_embeddings=2560, n_routed_experts=2, num_experts_per_tok=1, n_group=1, topk_group=1,
                rope_scaling={"type": "yarn", "factor": 40.0, "mscale": mscale, "mscale_all_dim": 1.0,
                              "original_max_position_embeddings": 64, "beta_fast": 32, "beta_slow": 1})


def llama4_config():
    return tiny("Llama4TextConfig", hidden_size=64, num_attention_heads=2, num_key_value_heads=2, head_dim=32,
                num_hidden_layers=4, intermediate_size=32, intermediate_size_mlp=32, num_local_experts=2,
                max_position_embeddings=1024, floor_scale=4,
                rope_scaling={"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
                              "original_max_position_embeddings": 64})


LLAMA3 = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
QWEN_YARN = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}

# id -> (HF adapter key, config factory, rope_spec keyword arguments, sequence lengths)
CASES = {
    "llama2": ("llama", lambda: tiny("LlamaConfig", hidden_size=64, num_attention_heads=4, rope_theta=10000.0), {},
               (1, 7, 40)),
    "code-llama": ("llama", lambda: tiny("LlamaConfig", hidden_size=64, num_attention_heads=2, rope_theta=1e6), {},
                   (5, 300)),
    "llama3.1": ("llama", lambda: tiny("LlamaConfig", hidden_size=128, num_attention_heads=4, head_dim=32,
                                       max_position_embeddings=512, rope_parameters=dict(LLAMA3)), {}, (3, 64, 200)),
    "llama-linear": ("llama", lambda: tiny("LlamaConfig", hidden_size=64, num_attention_heads=2,
                                           rope_scaling={"type": "linear", "factor": 4.0}), {}, (9, 120)),
    "mistral": ("mistral", lambda: tiny("MistralConfig", hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                                        head_dim=16, rope_theta=1e6), {}, (4, 50)),
    "qwen2": ("qwen2", lambda: tiny("Qwen2Config", hidden_size=64, num_attention_heads=2, num_key_value_heads=1,
                                    rope_theta=1e6), {}, (6, 70)),
    "qwen2.5-yarn": ("qwen2", lambda: tiny("Qwen2Config", hidden_size=64, num_attention_heads=2, num_key_value_heads=1,
                                           rope_theta=1e6, max_position_embeddings=256, rope_scaling=dict(QWEN_YARN)),
                     {}, (6, 70, 250)),
    "qwen3": ("qwen3", lambda: tiny("Qwen3Config", hidden_size=64, num_attention_heads=2, num_key_value_heads=1,
                                    head_dim=32, rope_theta=1e6), {}, (2, 90)),
    "qwen3-yarn": ("qwen3", lambda: tiny("Qwen3Config", hidden_size=64, num_attention_heads=2, num_key_value_heads=1,
                                         head_dim=48, rope_theta=1e6, max_position_embeddings=256,
                                         rope_scaling=dict(QWEN_YARN)), {}, (8, 256)),
    "olmo2": ("olmo2", lambda: tiny("Olmo2Config", hidden_size=64, num_attention_heads=4, rope_theta=500000.0), {},
              (5, 33)),
    "gemma3-local": ("gemma3", lambda: tiny("Gemma3TextConfig", hidden_size=64, num_attention_heads=2,
                                            num_key_value_heads=1, head_dim=32, num_hidden_layers=6, rope_theta=1e6,
                                            rope_local_base_freq=1e4, rope_scaling={"rope_type": "linear", "factor": 8.0}),
                     {"layer_type": "sliding_attention"}, (7, 100)),
    "gemma3-global": ("gemma3", lambda: tiny("Gemma3TextConfig", hidden_size=64, num_attention_heads=2,
                                             num_key_value_heads=1, head_dim=32, num_hidden_layers=6, rope_theta=1e6,
                                             rope_local_base_freq=1e4, rope_scaling={"rope_type": "linear", "factor": 8.0}),
                      {"layer_type": "full_attention"}, (7, 100)),
    "deepseek-v3": ("deepseek_v3", deepseek_config, {}, (5, 80, 300)),
    "deepseek-v3-no-interleave": ("deepseek_v3", lambda: deepseek_config(interleave=False, mscale=0.707), {}, (5, 300)),
    "phi3-mini-4k": ("phi3", lambda: tiny("Phi3Config", hidden_size=64, num_attention_heads=2, num_key_value_heads=2),
                     {}, (3, 60)),
    "phi3-longrope": ("phi3", phi3_config, {}, (16, 32, 33, 100)),
    "phi4-mini-partial-longrope": ("phi3", lambda: phi3_config(partial=0.75, head_dim=32), {}, (20, 90)),
    "phi2": ("phi", lambda: tiny("PhiConfig", hidden_size=160, num_attention_heads=2, partial_rotary_factor=0.4), {},
             (4, 64)),
    "pythia": ("gpt_neox", lambda: tiny("GPTNeoXConfig", hidden_size=128, num_attention_heads=2, rotary_pct=0.25,
                                        rotary_emb_base=10000), {}, (4, 64)),
    "gpt-j": ("gptj", lambda: tiny("GPTJConfig", n_embd=128, n_head=2, rotary_dim=16, n_positions=256, n_layer=1), {},
              (4, 64, 250)),
    "glm": ("glm", lambda: tiny("GlmConfig", hidden_size=64, num_attention_heads=2, num_key_value_heads=2, head_dim=32,
                                partial_rotary_factor=0.5), {}, (4, 50)),
    "glm4": ("glm4", lambda: tiny("Glm4Config", hidden_size=64, num_attention_heads=2, num_key_value_heads=2,
                                  head_dim=32, partial_rotary_factor=0.5, rope_theta=500000.0), {}, (4, 50)),
    "smollm3": ("smollm3", lambda: tiny("SmolLM3Config", hidden_size=64, num_attention_heads=2, num_key_value_heads=2,
                                        num_hidden_layers=4), {"layer": 0}, (6, 80)),
    "llama4": ("llama4", llama4_config, {"layer": 1}, (6, 80, 400)),
    "gpt-oss": ("gpt_oss", lambda: tiny("GptOssConfig", hidden_size=64, num_attention_heads=2, num_key_value_heads=2,
                                        head_dim=32, num_hidden_layers=2, num_local_experts=2, max_position_embeddings=2048,
                                        rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
                                                      "beta_slow": 1.0, "truncate": False,
                                                      "original_max_position_embeddings": 64}), {}, (6, 100, 600)),
}


def positions_for(seq_len: int) -> np.ndarray:
    """Two rows: 0..seq_len-1, and the same shifted by 3 (a cached prefix): batch 2."""
    base = np.arange(seq_len)
    return np.stack([base, base + 3])


def assert_same_rotation(spec: RopeSpec, hf, config, seq_len: int, layer_type=None, seed: int = 0) -> None:
    pos = positions_for(seq_len)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, seq_len, spec.head_dim)).astype(np.float32)
    cos_hf, sin_hf, q_hf = hf(config, torch.tensor(x), torch.tensor(pos), layer_type)
    cos_hf, sin_hf, q_hf = (t.double().numpy() for t in (cos_hf, sin_hf, q_hf))
    # cos and sin per pair: amplitude (the attention factor) and angle
    cos, sin = spec.cos_sin(pos)
    assert cos.shape == cos_hf.shape == (2, seq_len, spec.rotary_dim // 2)
    np.testing.assert_allclose(np.hypot(cos_hf, sin_hf), spec.attention_factor, rtol=2e-6)
    np.testing.assert_allclose(np.hypot(cos, sin), spec.attention_factor, rtol=1e-12)
    angles = pos[..., None] * spec.inv_freq(int(pos.max()) + 1)
    gap = np.angle(np.exp(1j * (np.arctan2(sin_hf, cos_hf) - np.arctan2(sin, cos))))
    assert np.all(np.abs(gap) <= ANGLE_RTOL * np.abs(angles) + ANGLE_ATOL), np.abs(gap).max()
    # the applied query: error <= |pair| * angle error * factor, plus float32 rounding
    ours = spec.apply(x, pos)
    assert ours.shape == x.shape and ours.dtype == np.float32
    row_angle = np.abs(angles).max(axis=-1)[:, None, :]  # (batch, 1, seq)
    bound = spec.attention_factor * np.linalg.norm(x, axis=-1) * (ANGLE_RTOL * row_angle + ANGLE_ATOL) + 3e-6 * (
        np.abs(x).max(axis=-1) * max(1.0, spec.attention_factor))
    err = np.abs(ours.astype(np.float64) - q_hf).max(axis=-1)
    assert np.all(err <= bound), (err / bound).max()
    # the coordinates that do not rotate pass through untouched, in both
    keep = np.ones(spec.head_dim, bool)
    keep[spec.rotary_offset:spec.rotary_offset + spec.rotary_dim] = False
    assert np.array_equal(ours[..., keep], x[..., keep]) and np.array_equal(q_hf[..., keep], x[..., keep])


@pytest.mark.parametrize("case", sorted(CASES))
def test_family_agrees_with_its_transformers_code(case):
    key, make, kwargs, lengths = CASES[case]
    config = make()
    spec = rope_spec(config, **kwargs)
    assert spec.uses_rope
    # the same spec from the config object and from its dict (config.json) form
    assert rope_spec(config.to_dict(), **kwargs) == spec
    for seq_len in lengths:
        assert_same_rotation(spec, HF[key], config, seq_len, kwargs.get("layer_type"))


def test_every_family_is_tested():
    tested = {rope_spec(make(), **kwargs).family for _, make, kwargs, _ in CASES.values()}
    # the M-RoPE families (qwen2_vl, qwen2_5_vl, qwen3_vl) are checked in tests/test_multidim.py; every
    # family is also run layer by layer by tests/test_model_sweep.py, which checks that none is left out
    assert tested | {"minimind", "qwen2_vl", "qwen2_5_vl", "qwen3_vl"} <= set(M.FAMILIES)
    assert len(tested) == 15


@pytest.mark.parametrize("partial", [0.25, 0.5, 1.0])
def test_gpt_neox_rotary_fraction(partial):
    config = tiny("GPTNeoXConfig", hidden_size=128, num_attention_heads=2, rotary_pct=partial)
    spec = rope_spec(config)
    attn = modeling("gpt_neox").GPTNeoXAttention(config, 0)
    assert spec.rotary_dim == attn.rotary_ndims == int(64 * partial) and spec.head_dim == attn.head_size
    assert_same_rotation(spec, HF["gpt_neox"], config, 20)


# --- settings that depend on the length ------------------------------------------------------


def test_dynamic_ntk_past_the_trained_length():
    config = tiny("LlamaConfig", hidden_size=64, num_attention_heads=2, max_position_embeddings=32,
                  rope_scaling={"rope_type": "dynamic", "factor": 2.0})
    spec = rope_spec(config)
    assert spec.rope_type == "dynamic" and spec.depends_on_length
    plain = S.scaled_frequencies("default", 32, 10000.0)[0]
    np.testing.assert_allclose(spec.inv_freq(), plain)  # what the model holds after loading
    for seq_len in (16, 32, 33, 100, 400):
        # a fresh module per length: transformers' module keeps the largest length it has seen
        assert_same_rotation(spec, HF["llama"], config, seq_len)
        slowest = spec.inv_freq(seq_len + 3)[-1]  # the batch's second row reaches seq_len + 2
        assert (slowest < plain[-1]) == (seq_len + 3 > 32)


def test_dynamic_ntk_module_memory_is_reproduced_with_seq_len():
    # transformers' dynamic module grows its frequencies and keeps them while seq_len > max_position_embeddings
    config = tiny("LlamaConfig", hidden_size=64, num_attention_heads=2, max_position_embeddings=32,
                  rope_scaling={"rope_type": "dynamic", "factor": 2.0})
    spec = rope_spec(config)
    rope = modeling("llama").LlamaRotaryEmbedding(config)
    rope(torch.zeros(1), torch.arange(200)[None])
    cos, sin = rope(torch.zeros(1), torch.arange(60)[None])  # 60 > 32: the 200-token frequencies stay
    ours_cos, _ = spec.cos_sin(np.arange(60), seq_len=200)
    np.testing.assert_allclose(cos[0, :, :16].double().numpy(), ours_cos, atol=1e-4)
    stateless, _ = spec.cos_sin(np.arange(60))
    assert np.abs(cos[0, :, :16].double().numpy() - stateless).max() > 1e-2


def test_longrope_switches_at_the_original_length():
    config = phi3_config()
    spec = rope_spec(config)
    short, long = (np.asarray(config.rope_parameters[k]) for k in ("short_factor", "long_factor"))
    theta = S.frequencies(32, 10000.0)
    for seq_len, factors in ((None, short), (32, short), (33, long), (100, long)):
        np.testing.assert_allclose(spec.inv_freq(seq_len), theta / factors, rtol=1e-12)
    # the attention factor: sqrt(1 + ln(128 / 32) / ln 32), on both sides of the switch
    assert spec.attention_factor == pytest.approx(math.sqrt(1 + math.log(4) / math.log(32)))
    rope = modeling("phi3").Phi3RotaryEmbedding(config)
    assert rope.attention_scaling == pytest.approx(spec.attention_factor, rel=1e-12)


# --- per-layer settings ------------------------------------------------------------------------


def test_gemma3_local_and_global_layers():
    config = CASES["gemma3-global"][1]()
    local, glob = rope_spec(config, "sliding_attention"), rope_spec(config, "full_attention")
    assert (local.base, local.rope_type) == (1e4, "default") and (glob.base, glob.rope_type) == (1e6, "linear")
    for i, layer_type in enumerate(config.layer_types):
        assert rope_spec(config, layer=i) == rope_spec(config, layer_type, layer=i)
        assert rope_spec(config, layer=i).base == (1e6 if layer_type == "full_attention" else 1e4)
    # a published multimodal config.json: the language model sits in text_config
    wrapped = {"model_type": "gemma3", "text_config": {k: v for k, v in config.to_dict().items() if k != "model_type"}}
    assert rope_spec(wrapped, "full_attention").base == 1e6
    assert glob.qk_norm == "before_rope"


def test_nope_layers_match_the_attention_modules():
    for key, config in (("smollm3", CASES["smollm3"][1]()), ("llama4", llama4_config())):
        mod = modeling(key)
        attention = mod.SmolLM3Attention if key == "smollm3" else mod.Llama4TextAttention
        uses = [rope_spec(config, layer=i).uses_rope for i in range(config.num_hidden_layers)]
        assert uses == [bool(attention(config, i).use_rope) for i in range(config.num_hidden_layers)]
        assert uses == [True, True, True, False]
        nope = rope_spec(config, layer=3)
        x = np.random.default_rng(0).standard_normal((1, 2, 5, nope.head_dim))
        np.testing.assert_array_equal(nope.apply(x, np.arange(5), role="key"), x)
        with pytest.raises(ValueError, match="uses no RoPE"):
            nope.inv_freq()
    spec = rope_spec(llama4_config(), layer=0)
    assert spec.qk_norm == "after_rope" and hasattr(modeling("llama4").Llama4TextAttention(llama4_config(), 0), "qk_norm")
    assert rope_spec(llama4_config(), "chunked_attention").uses_rope
    assert not rope_spec(llama4_config(), "full_attention").uses_rope


def test_a_family_without_rotation_in_its_text_model_reads_as_nope():
    """GLM-5-Next: its config class refuses qk_rope_head_dim > 0 and its text model passes no position
    embeddings (tests/test_model_sweep.py runs it layer by layer); rope_spec reads every layer, and the whole
    model, as NoPE with the reason, through its text config, the wrapper and a flat config alike."""
    from rope_edu.models.registry import _GLM5_NEXT_NOPE

    text = tiny("Glm5NextTextConfig", num_hidden_layers=4, index_kpool=4, index_topk=8)
    with pytest.raises(Exception, match="Expecting NoPE"):  # huggingface_hub's validation error wraps it
        tiny("Glm5NextTextConfig", qk_rope_head_dim=16, index_kpool=4, index_topk=8)
    assert text.layer_types == ["linear_attention"] * 3 + ["indexed_attention"]
    flat = {k: v for k, v in text.to_dict().items() if k != "model_type"}
    for config in (text, {"model_type": "glm5_next", "text_config": flat}, {"model_type": "glm5_next", **flat}):
        for spec in [rope_spec(config)] + [rope_spec(config, layer=i) for i in range(4)]:
            assert (spec.uses_rope, spec.no_rope_reason, spec.defaults) == (False, _GLM5_NEXT_NOPE, ())
            assert spec.head_dim == text.qk_nope_head_dim and spec.family == "glm5_next"
            x = np.random.default_rng(0).standard_normal((1, 2, 5, spec.head_dim))
            np.testing.assert_array_equal(spec.apply(x, np.arange(5) * 7), x)
        assert "NoPE" in spec.describe() and _GLM5_NEXT_NOPE in spec.describe()
    assert "glm5_next_text" not in M.UNSUPPORTED and "glm5_next" not in M.UNSUPPORTED


def test_a_glm5_next_config_with_a_rotated_part_is_refused_as_its_config_class_refuses_it():
    """Glm5NextTextConfig refuses qk_rope_head_dim > 0 ("Expecting NoPE"), and its text model has no rotation to
    read one with: rope_spec refuses such a config too, naming the field, through the text config, the wrapper
    and a flat config, for the whole model and each layer; qk_rope_head_dim 0, or left out, is NoPE."""
    with pytest.raises(Exception, match="Expecting NoPE"):
        tiny("Glm5NextTextConfig", qk_rope_head_dim=16, index_kpool=4, index_topk=8)
    text = tiny("Glm5NextTextConfig", num_hidden_layers=4, index_kpool=4, index_topk=8)
    flat = {k: v for k, v in text.to_dict().items() if k != "model_type"}
    for rot in (16, 1, -2, True, "64"):
        bad = {**flat, "qk_rope_head_dim": rot}
        for config in ({"model_type": "glm5_next_text", **bad}, {"model_type": "glm5_next", "text_config": bad},
                       {"model_type": "glm5_next", **bad}):
            for select in ({}, {"layer": 0}, {"layer": 3}):
                with pytest.raises(ValueError, match=rf"^qk_rope_head_dim must be 0 for GLM-5-Next \(text\), "
                                                     rf"got {re.escape(repr(rot))}: its config class refuses"):
                    rope_spec(config, **select)
    unstated = {k: v for k, v in flat.items() if k != "qk_rope_head_dim"}
    for config in ({"model_type": "glm5_next", **flat, "qk_rope_head_dim": 0}, {"model_type": "glm5_next", **unstated}):
        assert not rope_spec(config).uses_rope and not rope_spec(config, layer=3).uses_rope


def test_llama4_nope_temperature_matches_its_attention_forward(monkeypatch):
    # Run Llama4TextAttention with q_proj = identity and catch the query it hands to attention.
    mod = modeling("llama4")
    config = llama4_config()
    config._attn_implementation = "eager"
    attn = mod.Llama4TextAttention(config, 3)
    assert not attn.use_rope
    with torch.no_grad():
        attn.q_proj.weight.copy_(torch.eye(64))
    seen = {}
    original = mod.eager_attention_forward

    def catch(module, query, key, value, attention_mask, **kwargs):
        seen["query"] = query.clone()
        return original(module, query, key, value, attention_mask, **kwargs)

    monkeypatch.setattr(mod, "eager_attention_forward", catch)
    seq = 40
    hidden = torch.randn(1, seq, 64, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        attn(hidden, None, None)
    x = hidden.view(1, seq, 2, 32).transpose(1, 2).numpy()
    spec = rope_spec(config, layer=3)
    assert spec.temperature_tuning == (4.0, 0.1)
    np.testing.assert_allclose(spec.apply(x, np.arange(seq)), seen["query"].numpy(), rtol=2e-6, atol=1e-6)
    assert not np.allclose(spec.apply(x, np.arange(seq)), x)


def test_deepseek_softmax_scale_and_interleave():
    mod = modeling("deepseek_v3")
    for mscale in (1.0, 0.707):
        config = deepseek_config(mscale=mscale)
        spec = rope_spec(config)
        attn = mod.DeepseekV3Attention(config, 0)
        assert spec.softmax_scale_factor * spec.head_dim ** -0.5 == pytest.approx(attn.scaling, rel=1e-12)
        rope = mod.DeepseekV3RotaryEmbedding(config)
        assert spec.attention_factor == pytest.approx(rope.attention_scaling, rel=1e-12)
        assert (spec.attention_factor == 1.0) == (mscale == 1.0)
    spec = rope_spec(deepseek_config())
    assert (spec.layout, spec.output_layout, spec.rotary_offset, spec.rotary_dim) == ("interleaved", "half", 32, 16)
    # reading interleaved and writing half-split permutes q and k alike: every dot product is unchanged
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, 1, 1, 9, 48))
    flat = RopeSpec(**{**spec.__dict__, "output_layout": "interleaved"})
    pos = np.arange(9)
    s_hf = spec.apply(q, pos) @ np.swapaxes(spec.apply(k, pos, role="key"), -1, -2)
    s_flat = flat.apply(q, pos) @ np.swapaxes(flat.apply(k, pos, role="key"), -1, -2)
    np.testing.assert_allclose(s_hf, s_flat, rtol=1e-12, atol=1e-12)
    assert not np.allclose(spec.apply(q, pos), flat.apply(q, pos))


# --- plain dicts: config.json as published, MiniMind ------------------------------------------


def test_published_style_dicts():
    llama31 = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0,
               "max_position_embeddings": 131072,
               "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                "original_max_position_embeddings": 8192, "rope_type": "llama3"}}
    spec = rope_spec(llama31)
    np.testing.assert_allclose(spec.inv_freq(), S.scaled_frequencies("llama3", 128, 500000.0, **S.LLAMA_3_1)[0])
    assert spec.attention_factor == 1.0 and spec.defaults == ()
    pythia = {"model_type": "gpt_neox", "hidden_size": 768, "num_attention_heads": 12, "rotary_pct": 0.25,
              "rotary_emb_base": 10000}
    assert (rope_spec(pythia).rotary_dim, rope_spec(pythia).head_dim) == (16, 64)
    # a field left out gets transformers' documented default, and the spec says so
    bare = rope_spec({"model_type": "smollm3", "hidden_size": 2048, "num_attention_heads": 16, "num_hidden_layers": 36},
                     layer=0)
    assert bare.base == 2_000_000.0 and any("rope_theta" in d and "SmolLM3" in d for d in bare.defaults)
    assert "default used: rope_theta" in bare.describe()


def test_minimind_dict_is_llama_style_half_split():
    minimind = {"model_type": "minimind", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 1e6,
                "max_position_embeddings": 512}
    spec = rope_spec(minimind)
    assert (spec.head_dim, spec.rotary_dim, spec.layout, spec.qk_norm) == (16, 16, "half", "before_rope")
    # MiniMind's rotation is Llama's rotate_half with the same base: compare with LlamaRotaryEmbedding
    llama = tiny("LlamaConfig", hidden_size=64, num_attention_heads=4, rope_theta=1e6, max_position_embeddings=512)
    assert_same_rotation(spec, HF["llama"], llama, 50)
    # its YaRN option (inference_rope_scaling): every field stated, attention_factor 1.0
    yarn = dict(factor=16, original_max_position_embeddings=64, beta_fast=32, beta_slow=1, attention_factor=1.0)
    scaled = rope_spec({**minimind, "inference_rope_scaling": True, "rope_scaling": {**yarn, "type": "yarn"}})
    assert scaled.rope_type == "yarn" and scaled.attention_factor == 1.0
    llama_yarn = tiny("LlamaConfig", hidden_size=64, num_attention_heads=4, max_position_embeddings=512,
                      rope_parameters={"rope_type": "yarn", "rope_theta": 1e6, **yarn})
    assert_same_rotation(scaled, HF["llama"], llama_yarn, 300)
    # MiniMind applies it only when max_position_embeddings exceeds the original length
    short = rope_spec({**minimind, "max_position_embeddings": 64, "rope_scaling": {**yarn, "type": "yarn"}})
    assert short.rope_type == "default"


# --- the spec's own behaviour -------------------------------------------------------------------


def test_describe_mentions_what_matters():
    text = rope_spec(deepseek_config()).describe()
    for needle in ("DeepSeek-V3", "rotates 16 dims", "interleaved pairs", "'half' order", "32 coordinates pass",
                   "yarn", "softmax scale"):
        assert needle in text
    text = rope_spec(llama4_config(), layer=3).describe()
    assert "NoPE layer" in text and "queries scaled" in text
    assert "attention factor 1.18" in rope_spec(phi3_config()).describe()


def test_apply_properties():
    spec = rope_spec(CASES["qwen3"][1]())
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 1, 2, 10, 32))
    pos = np.arange(10)
    # relative: shifting every position leaves q.k unchanged
    s = spec.apply(q, pos) @ np.swapaxes(spec.apply(k, pos), -1, -2)
    s7 = spec.apply(q, pos + 7) @ np.swapaxes(spec.apply(k, pos + 7), -1, -2)
    np.testing.assert_allclose(s, s7, atol=1e-10)
    # (seq,) and (1, seq) positions agree; integer input becomes float64
    np.testing.assert_array_equal(spec.apply(q, pos), spec.apply(q, pos[None]))
    assert spec.apply(np.ones((1, 1, 2, 32), dtype=np.int64), [0, 1]).dtype == np.float64
    assert rope_edu.rope_spec is rope_spec and "rope_spec" in rope_edu.__all__ and "RopeSpec" in rope_edu.__all__


def test_import_does_not_import_transformers_or_torch():
    code = "import sys, rope_edu, rope_edu.models\nprint('torch' in sys.modules, 'transformers' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# --- bad input ------------------------------------------------------------------------------------

LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2, "rope_theta": 10000.0,
         "max_position_embeddings": 128}


@pytest.mark.parametrize(
    "config, kwargs, error, match",
    [
        ({**LLAMA, "model_type": "bert"}, {}, ValueError, "unknown model_type 'bert'"),
        ({k: v for k, v in LLAMA.items() if k != "model_type"}, {}, ValueError, "model_type"),
        ("llama", {}, TypeError, "config"),
        ({**LLAMA, "rope_scaling": {"rope_type": "ntk-by-parts", "factor": 2.0}}, {}, ValueError, "rope_type"),
        ({**LLAMA, "rope_scaling": {"rope_type": "yarn"}}, {}, ValueError, "factor"),
        ({**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 0.5}}, {}, ValueError, "factor"),
        ({**LLAMA, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0}}, {}, ValueError,
         "high_freq_factor"),
        ({**LLAMA, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}, "max_position_embeddings": None}, {},
         ValueError, "max_position_embeddings"),
        ({**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 2.0},
          "rope_parameters": {"rope_type": "linear", "factor": 4.0}}, {}, ValueError, "rope_scaling"),
        ({**LLAMA, "rope_scaling": [1, 2]}, {}, TypeError, "rope_scaling"),
        ({**LLAMA, "rope_theta": 1.0}, {}, ValueError, "rope_theta"),
        ({**LLAMA, "rope_theta": "1e4"}, {}, TypeError, "rope_theta"),
        ({**LLAMA, "rope_parameters": {"rope_theta": 5e5}}, {}, ValueError, "different bases"),
        ({**LLAMA, "hidden_size": None}, {}, ValueError, "hidden_size"),
        ({**LLAMA, "hidden_size": 65}, {}, ValueError, "hidden_size"),
        ({**LLAMA, "head_dim": 31}, {}, ValueError, "rotated dims"),
        ({**LLAMA, "num_attention_heads": 2.0}, {}, TypeError, "num_attention_heads"),
        ({**LLAMA, "partial_rotary_factor": 0.5}, {}, ValueError, "partial_rotary_factor"),
        ({**LLAMA, "model_type": "gpt_neox", "rotary_pct": 0.3}, {}, ValueError, "rotary_pct = 0.3 gives .* 9"),
        ({**LLAMA, "model_type": "gpt_neox", "rotary_pct": 0.01}, {}, ValueError, "rotary_pct"),
        ({**LLAMA, "model_type": "gpt_neox", "rotary_pct": 1.5}, {}, ValueError, "rotary_pct"),
        ({**LLAMA, "model_type": "phi", "partial_rotary_factor": "0.4"}, {}, TypeError, "partial_rotary_factor"),
        ({**LLAMA, "model_type": "phi3", "rope_scaling": {"type": "yarn", "short_factor": [1.0] * 16}}, {},
         ValueError, "long_factor"),
        ({**LLAMA, "model_type": "phi3", "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 15,
                                                          "long_factor": [1.0] * 16}}, {}, ValueError, "short_factor"),
        ({**LLAMA, "model_type": "phi3", "rope_scaling": {"type": "linear", "factor": 2.0}}, {}, ValueError,
         "rope_type"),
        ({**LLAMA, "model_type": "gemma3_text"}, {}, ValueError, "layer_type is required"),
        ({**LLAMA, "model_type": "gemma3_text"}, {"layer_type": "local"}, ValueError, "layer_type"),
        ({**LLAMA, "model_type": "gemma3_text"}, {"layer_type": 1}, TypeError, "layer_type"),
        ({**LLAMA, "model_type": "gemma3_text", "num_hidden_layers": 6}, {"layer": 6}, ValueError, "layer"),
        ({**LLAMA, "model_type": "gemma3_text", "num_hidden_layers": 6}, {"layer": 5, "layer_type": "sliding_attention"},
         ValueError, "layer_type"),
        ({"model_type": "gemma3"}, {}, ValueError, "text_config"),
        ({**LLAMA, "model_type": "smollm3", "num_hidden_layers": 8}, {}, ValueError, "pass layer=index"),
        ({**LLAMA, "model_type": "smollm3"}, {"layer": -1}, ValueError, "layer"),
        ({**LLAMA, "model_type": "smollm3", "num_hidden_layers": 4, "no_rope_layers": "1101"}, {"layer": 0}, TypeError,
         "no_rope_layers"),
        ({**LLAMA}, {"layer_type": "full_attention"}, ValueError, "layer_type"),
        ({**LLAMA, "model_type": "deepseek_v3"}, {}, ValueError, "qk_rope_head_dim"),
        ({**LLAMA, "model_type": "gptj", "rope_theta": 10000.0}, {}, ValueError, "rope_theta"),
        ({"model_type": "gptj", "n_embd": 128, "n_head": 2, "rotary_dim": None}, {}, ValueError, "rotary_dim"),
        ({"model_type": "gptj", "n_embd": 128, "n_head": 2, "rotary_dim": 15}, {}, ValueError, "rotary_dim"),
        ({"model_type": "minimind", "hidden_size": 64, "num_attention_heads": 4}, {}, ValueError, "rope_theta"),
        ({"model_type": "minimind", "dim": 512, "n_heads": 8}, {}, ValueError, "'dim'"),
        ({"model_type": "minimind", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 1e6,
          "max_position_embeddings": 512, "rope_scaling": {"type": "yarn", "factor": 4}}, {}, ValueError,
         "original_max_position_embeddings"),
        ({"model_type": "minimind", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 1e6,
          "inference_rope_scaling": True}, {}, ValueError, "rope_scaling"),
        # the rules of the transformers 5.24 families
        ({**LLAMA, "model_type": "olmo3", "layer_types": "sliding_attention"}, {}, TypeError, "layer_types"),
        ({**LLAMA, "model_type": "olmo3", "layer_types": ["sliding_attention", "full_attention"],
          "rope_parameters": {"sliding_attention": {"rope_theta": 1e4}}}, {"layer": 1}, ValueError,
         "no entry for 'full_attention'"),
        ({**LLAMA, "model_type": "olmo3", "layer_types": ["sliding_attention", "full_attention"],
          "rope_parameters": {"sliding_attention": [1e4], "full_attention": {"rope_theta": 1e4}}}, {"layer": 0},
         TypeError, r"rope_parameters\['sliding_attention'\]"),
        ({**LLAMA, "model_type": "olmo3"}, {}, ValueError, "layer_type is required for OLMo 3"),
        ({**LLAMA, "model_type": "muse_glimmer_text", "num_hidden_layers": 2, "layer_rope_theta": [1e4]},
         {"layer": 1}, ValueError, "layer_rope_theta"),
        ({**LLAMA, "model_type": "muse_glimmer_text", "num_hidden_layers": 2}, {"layer": 1}, ValueError,
         "no layer_rope_theta"),
        ({**LLAMA, "model_type": "mllama_text_model", "num_hidden_layers": 2}, {"layer": 1}, ValueError,
         "no cross_attention_layers"),
        ({**LLAMA, "model_type": "gemma4_text", "layer_types": ["full_attention"], "per_layer_config": [64],
          "rope_parameters": {"full_attention": {"rope_type": "proportional", "rope_theta": 1e6,
                                                 "partial_rotary_factor": 0.25}}}, {"layer": 0}, TypeError,
         "per_layer_config"),
        ({**LLAMA, "model_type": "gemma4_text", "head_dim": 32, "global_head_dim": 32, "layer_types": ["full_attention"],
          "rope_theta": None,
          "rope_parameters": {"full_attention": {"rope_type": "proportional", "rope_theta": 1e6,
                                                 "partial_rotary_factor": 0.01}}}, {"layer": 0}, ValueError,
         "no rotating pair"),
        ({**LLAMA, "model_type": "ministral3", "rope_parameters": {"rope_type": "yarn", "factor": 4.0,
                                                                    "rope_theta": 1e4}}, {}, ValueError,
         "llama_4_scaling_beta"),
        ({**LLAMA, "model_type": "minimax_m2", "rotary_dim": 0}, {}, ValueError, "rotary_dim"),
        ({**LLAMA, "model_type": "minimax_m2", "rotary_dim": 16.0}, {}, TypeError, "rotary_dim"),
        ({**LLAMA, "model_type": "exaone4", "layer_types": ["sliding_attention", 3]}, {}, TypeError, "layer_types"),
        ({**LLAMA, "model_type": "beam"}, {}, ValueError, "layer_type is required for Beam"),
        ({**LLAMA, "model_type": "deepseek_v4", "layer_types": ["sliding_attention"]}, {"layer": 0}, ValueError,
         "no rope_parameters nested by layer type"),
    ],
)
def test_rope_spec_bad_config(config, kwargs, error, match):
    with pytest.raises(error, match=match):
        rope_spec(config, **kwargs)


@pytest.mark.parametrize(
    "x_shape, positions, kwargs, error, match",
    [
        ((2, 2, 5, 32), np.arange(4), {}, ValueError, "positions"),
        ((2, 2, 5, 32), np.zeros((3, 5)), {}, ValueError, "positions"),
        ((2, 2, 5, 32), np.zeros((2, 5, 1)), {}, ValueError, "positions"),
        ((2, 2, 5, 32), np.array(["a"] * 5), {}, TypeError, "positions"),
        ((2, 2, 5, 32), np.array([0.0, 1, 2, np.nan, 4]), {}, ValueError, "positions"),
        ((2, 5, 32), np.arange(5), {}, ValueError, "x must have shape"),
        ((2, 2, 5, 30), np.arange(5), {}, ValueError, "head_dim"),
        ((2, 2, 5, 32), np.arange(5), {"role": "value"}, ValueError, "role"),
        ((2, 2, 5, 32), np.arange(5), {"seq_len": 0}, ValueError, "seq_len"),
    ],
)
def test_apply_bad_input(x_shape, positions, kwargs, error, match):
    spec = rope_spec({**LLAMA, "hidden_size": 64, "num_attention_heads": 2})
    with pytest.raises(error, match=match):
        spec.apply(np.zeros(x_shape), positions, **kwargs)


def test_apply_bad_x_and_table_limits():
    spec = rope_spec({**LLAMA})
    with pytest.raises(TypeError, match="x"):
        spec.apply(np.zeros((1, 1, 2, 32), dtype=complex), [0, 1])
    gptj = rope_spec({"model_type": "gptj", "n_embd": 128, "n_head": 2, "rotary_dim": 16, "n_positions": 8})
    with pytest.raises(ValueError, match="positions must lie in"):
        gptj.apply(np.zeros((1, 1, 2, 64)), [7, 8])
    with pytest.raises(TypeError, match="positions"):
        spec.cos_sin(["a"])
    with pytest.raises(TypeError, match="seq_len"):
        spec.inv_freq(seq_len=2.5)


# --- the released configurations (chapter 10) ------------------------------------------------------


def test_published_configs_parse_and_cite_the_bibliography():
    from pathlib import Path

    bib = (Path(__file__).resolve().parents[1] / "book" / "references.bib").read_text(encoding="utf-8")
    for name, pub in M.PUBLISHED.items():
        spec = pub.spec()
        assert pub.name == name and pub.sources and pub.checkpoint
        for key in pub.sources:
            assert f"{{{key}," in bib, f"{name}: {key} is not in book/references.bib"
        assert spec.uses_rope and spec.rotary_dim > 0
    P = M.PUBLISHED
    # what the published fields say, as rope_spec reads them
    assert P["GPT-NeoX-20B"].spec().rotary_fraction == P["GPT-NeoX-20B"].config["rotary_pct"]
    assert P["Phi-2"].spec().rotary_dim == int(80 * P["Phi-2"].config["partial_rotary_factor"])
    assert P["GPT-J 6B"].spec().rotary_dim == P["GPT-J 6B"].config["rotary_dim"]
    assert P["GLM-4 9B Chat"].spec().layout == "interleaved"
    ds = P["DeepSeek-V3"].spec()
    assert (ds.head_dim, ds.rotary_offset) == (192, 128)
    assert ds.softmax_scale_factor == pytest.approx(S.yarn_attention_factor(40.0) ** 2)
    local, glob = P["Gemma 3 4B, local layers"].spec(), P["Gemma 3 4B, global layers"].spec()
    assert (local.base, local.rope_type, glob.base, glob.rope_type) == (1e4, "default", 1e6, "linear")
    smol = rope_spec(dict(P["SmolLM3 3B"].config), layer=3)
    assert not smol.uses_rope


def test_published_2025_rows_read_layer_by_layer():
    """Chapter 10's second table: every row parses for every layer, its sources are in the bibliography,
    and a row that could not be checked against a released file says so."""
    from pathlib import Path

    bib = (Path(__file__).resolve().parents[1] / "book" / "references.bib").read_text(encoding="utf-8")
    for name, pub in M.PUBLISHED_2025.items():
        assert pub.name == name and pub.checkpoint and pub.note
        for key in pub.sources:
            assert f"{{{key}," in bib, f"{name}: {key} is not in book/references.bib"
        n = pub.config.get("num_hidden_layers") or 1
        specs = [rope_spec(dict(pub.config), layer=i if "num_hidden_layers" in pub.config else None)
                 for i in range(n)]
        assert any(s.uses_rope for s in specs), name
        for s in specs:
            assert s.layout in pub.checkpoint or not s.uses_rope, name
    unverified = {name for name, pub in M.PUBLISHED_2025.items() if not pub.verified}
    assert unverified == {"Qwen3-Next 80B-A3B", "DeepSeek-V3.1", "Command A (Cohere 2)", "OLMo 3 7B",
                          "Tiny Aya (Cohere 2)"}
    P = M.PUBLISHED_2025
    # the released Gemma 4 file states global_head_dim: 512-dim global heads, a quarter of the pairs turn
    glob = rope_spec(dict(P["Gemma 4 26B-A4B"].config), layer=5)
    assert (glob.head_dim, glob.rotating_pairs) == (512, 64)
    # DeepSeek-V3.2-Exp (and V3.1) read as DeepSeek-V3
    v3 = M.PUBLISHED["DeepSeek-V3"].spec()
    for name in ("DeepSeek-V3.2-Exp", "DeepSeek-V3.1"):
        s = P[name].spec()
        np.testing.assert_array_equal(s.inv_freq(), v3.inv_freq())
        assert s.softmax_scale_factor == v3.softmax_scale_factor and s.layout == v3.layout


# --- rules the transformers 5.24 families bring ---------------------------------------------------


def gemma4_config(**kwargs):
    kwargs = {"hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
              "global_head_dim": 64, "num_hidden_layers": 6, "intermediate_size": 32, **kwargs}
    return tiny("Gemma4TextConfig", **kwargs)


def test_gemma4_proportional_rope_on_global_layers():
    config = gemma4_config()
    rope = modeling("gemma4").Gemma4TextRotaryEmbedding(config)
    local, glob = rope_spec(config, layer=0), rope_spec(config, layer=5)
    # sliding layers: plain RoPE over the whole (local) head at base 10^4
    assert (local.head_dim, local.rotary_dim, local.base, local.rope_type) == (32, 32, 1e4, "default")
    np.testing.assert_allclose(local.inv_freq(), rope.sliding_attention_inv_freq.double().numpy(), rtol=2e-6)
    # global layers: the table covers the global head (per_layer_config's head_dim 64); the first
    # int(0.25 * 64 // 2) = 8 pairs turn at 10^6 ** (-2i / 64), the other 24 not at all
    assert (glob.head_dim, glob.rotary_dim, glob.rotating_pairs, glob.rope_type) == (64, 64, 8, "proportional")
    theta = glob.inv_freq()
    np.testing.assert_allclose(theta[:8], 1e6 ** (-2.0 * np.arange(8) / 64), rtol=1e-12)
    assert np.all(theta[8:] == 0) and np.isinf(glob.wavelengths()[8:]).all()
    np.testing.assert_allclose(theta, rope.full_attention_inv_freq.double().numpy(), rtol=2e-6)
    # applied with the family's own apply function: pairs (i, i + 32) for i < 8 turn, the rest pass
    pos = positions_for(40)
    x = np.random.default_rng(0).standard_normal((2, 2, 40, 64)).astype(np.float32)
    cos, sin = rope(torch.zeros(1), torch.tensor(pos), "full_attention")
    ref = modeling("gemma4").apply_rotary_pos_emb(torch.tensor(x), cos, sin)
    np.testing.assert_allclose(glob.apply(x, pos), ref.numpy(), rtol=1e-4, atol=1e-4)
    still = np.r_[8:32, 40:64]
    np.testing.assert_array_equal(glob.apply(x, pos)[..., still], x[..., still])
    assert "only pairs 0..7 turn" in glob.describe()
    # a scaling factor divides every frequency (transformers' proportional rule)
    scaled = gemma4_config(rope_parameters={
        "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.5, "rope_theta": 1e6, "factor": 4.0}})
    rope = modeling("gemma4").Gemma4TextRotaryEmbedding(scaled)
    np.testing.assert_allclose(rope_spec(scaled, "full_attention").inv_freq(),
                               rope.full_attention_inv_freq.double().numpy(), rtol=2e-6)
    assert rope_spec(scaled, "full_attention").rotating_pairs == 16


def test_gemma4_config_json_global_head_dim():
    """A released Gemma 4 config.json states global_head_dim and no per_layer_config: Gemma4TextConfig turns
    it into the full-attention layers' head_dim (512 when left out), and rope_spec reads the dict the same way."""
    raw = {"model_type": "gemma4_text", "hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 1,
           "head_dim": 32, "global_head_dim": 96, "num_hidden_layers": 6, "intermediate_size": 32,
           "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
           "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
                               "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                                  "rope_theta": 1e6}}}
    config = tiny("Gemma4TextConfig", **{k: v for k, v in raw.items() if k != "model_type"})
    assert config.per_layer_config[5].head_dim == 96
    for i in range(6):
        got, want = rope_spec(dict(raw), layer=i), rope_spec(config, layer=i)
        assert (got.head_dim, got.rotary_dim, got.rotating_pairs) == (want.head_dim, want.rotary_dim,
                                                                      want.rotating_pairs), i
    glob = rope_spec(dict(raw), layer=5)
    assert (glob.head_dim, glob.rotating_pairs) == (96, 12)
    rope = modeling("gemma4").Gemma4TextRotaryEmbedding(config)
    np.testing.assert_allclose(glob.inv_freq(), rope.full_attention_inv_freq.double().numpy(), rtol=2e-6)
    pos = positions_for(40)
    x = np.random.default_rng(1).standard_normal((2, 2, 40, 96)).astype(np.float32)
    cos, sin = rope(torch.zeros(1), torch.tensor(pos), "full_attention")
    ref = modeling("gemma4").apply_rotary_pos_emb(torch.tensor(x), cos, sin)
    np.testing.assert_allclose(glob.apply(x, pos), ref.numpy(), rtol=1e-4, atol=1e-4)
    # left out: the config class's default 512, which rope_spec uses and names
    bare = {k: v for k, v in raw.items() if k != "global_head_dim"}
    default = tiny("Gemma4TextConfig", **{k: v for k, v in bare.items() if k != "model_type"})
    spec = rope_spec(bare, layer=5)
    assert spec.head_dim == default.per_layer_config[5].head_dim == 512
    assert any(d.startswith("global_head_dim = 512") for d in spec.defaults)
    # the sliding layers keep head_dim; a config without it gets the class default 256, not 64 // 2
    assert rope_spec(dict(raw), layer=0).head_dim == 32
    no_head = rope_spec({k: v for k, v in raw.items() if k != "head_dim"}, layer=0)
    assert no_head.head_dim == tiny("Gemma4TextConfig", hidden_size=64, num_attention_heads=2,
                                   num_hidden_layers=6).per_layer_config[0].head_dim == 256


def test_gemma3_head_dim_left_out_is_the_class_default():
    """Gemma 3 4B (hidden 2560, 8 heads) without head_dim: Gemma3TextConfig's default 256, not 2560 / 8 = 320;
    Qwen3's class default is 128 (its hidden_size / heads would be 64 here), Llama has none (the split)."""
    gemma = {"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "num_hidden_layers": 6,
             "rope_theta": 1e6, "rope_local_base_freq": 1e4}
    spec = rope_spec(gemma, "full_attention")
    assert spec.head_dim == tiny("Gemma3TextConfig", hidden_size=2560, num_attention_heads=8).head_dim == 256
    assert any(d.startswith("head_dim = 256") for d in spec.defaults)
    qwen = {"model_type": "qwen3", "hidden_size": 128, "num_attention_heads": 2}
    assert rope_spec(qwen).head_dim == tiny("Qwen3Config", hidden_size=128, num_attention_heads=2).head_dim == 128
    assert rope_spec({**qwen, "head_dim": None}).head_dim == 64  # stated null: hidden_size // heads
    llama = {"model_type": "llama", "hidden_size": 128, "num_attention_heads": 2}
    assert rope_spec(llama).head_dim == 64 and not rope_spec(llama).defaults[1:]


@pytest.mark.parametrize("cls, model_type", [("Qwen3NextConfig", "qwen3_next"), ("Qwen3_5TextConfig", "qwen3_5_text"),
                                              ("Qwen3_5MoeTextConfig", "qwen3_5_moe_text")])
def test_qwen_hybrid_layers_from_full_attention_interval(cls, model_type):
    """Qwen3-Next's released config.json has full_attention_interval and no layer_types: the config class
    makes every interval-th layer full attention and the others linear attention (no RoPE)."""
    raw = {"model_type": model_type, "hidden_size": 512, "num_attention_heads": 2, "head_dim": 256,
           "num_hidden_layers": 6, "full_attention_interval": 3, "rope_theta": 1e7}
    config = getattr(transformers, cls).from_dict({k: v for k, v in raw.items() if k != "model_type"})
    assert config.layer_types == ["linear_attention", "linear_attention", "full_attention"] * 2
    for i, layer_type in enumerate(config.layer_types):
        got, want = rope_spec(dict(raw), layer=i), rope_spec(config, layer=i)
        assert got.uses_rope == want.uses_rope == (layer_type == "full_attention"), i
        if got.uses_rope:
            assert (got.rotary_dim, got.base) == (want.rotary_dim, want.base) == (64, 1e7)
    with pytest.raises(ValueError, match="pass layer=index"):
        rope_spec(dict(raw))
    assert rope_spec({k: v for k, v in raw.items() if k != "full_attention_interval"}, layer=3).uses_rope


def test_olmo3_yarn_on_full_attention_layers_only_and_what_transformers_drops():
    config = tiny("Olmo3Config", hidden_size=64, num_attention_heads=2, num_hidden_layers=4, max_position_embeddings=512,
                  rope_theta=1e6, rope_scaling={"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 64,
                                                "truncate": False})
    # what transformers does: the sliding layers get the class default base (rope_theta reaches the
    # full-attention layers only), and the full layers' YaRN keeps truncate=True (read from the top level)
    assert config.rope_parameters["sliding_attention"]["rope_theta"] == 500_000.0
    rope = modeling("olmo3").Olmo3RotaryEmbedding(config)
    sliding, full = rope_spec(config, "sliding_attention"), rope_spec(config, "full_attention")
    assert (sliding.base, sliding.rope_type, full.base, full.rope_type) == (5e5, "default", 1e6, "yarn")
    assert full.rope_params["truncate"] is True
    assert any("truncate = False is not read" in d for d in full.defaults)
    for spec, layer_type in ((sliding, "sliding_attention"), (full, "full_attention")):
        np.testing.assert_allclose(spec.inv_freq(), getattr(rope, f"{layer_type}_inv_freq").double().numpy(), rtol=2e-6)
        assert spec.attention_factor == pytest.approx(getattr(rope, f"{layer_type}_attention_scaling"), rel=1e-9)
    # the same config.json as transformers 4 wrote it (flat), and as transformers 5 writes it (nested)
    v4 = {"model_type": "olmo3", "hidden_size": 64, "num_attention_heads": 2, "num_hidden_layers": 4,
          "max_position_embeddings": 512, "layer_types": config.layer_types, "rope_theta": 1e6,
          "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 64, "truncate": False}}
    for layer_type in ("sliding_attention", "full_attention"):
        a, b = rope_spec(v4, layer_type), rope_spec(config.to_dict(), layer_type)
        assert same_rope(a, b)
    assert any("ignores rope_theta = 1000000.0" in d for d in rope_spec(v4, "sliding_attention").defaults)


def test_rope_on_sliding_layers_only():
    for cls, key, layout in (("Cohere2Config", "cohere2", "interleaved"), ("Exaone4Config", "exaone4", "half")):
        config = tiny(cls, hidden_size=64, num_attention_heads=2, num_hidden_layers=4, sliding_window=16)
        specs = [rope_spec(config, layer=i) for i in range(4)]
        assert [s.uses_rope for s in specs] == [t == "sliding_attention" for t in config.layer_types]
        assert not rope_spec(config, "full_attention").uses_rope
        assert "only in 'sliding_attention' layers" in rope_spec(config, "full_attention").no_rope_reason
        assert rope_spec(config, "sliding_attention").layout == layout
        with pytest.raises(ValueError, match="layers of this .* differ"):
            rope_spec(config)
    # without a sliding window, EXAONE 4 rotates every layer and Cohere 2 none (what their code tests)
    exaone = tiny("Exaone4Config", hidden_size=64, num_attention_heads=2, num_hidden_layers=4, sliding_window=None,
                  layer_types=["sliding_attention"] * 3 + ["full_attention"])
    cohere = tiny("Cohere2Config", hidden_size=64, num_attention_heads=2, num_hidden_layers=4, sliding_window=None)
    assert all(rope_spec(exaone, layer=i).uses_rope for i in range(4))
    assert not any(rope_spec(cohere, layer=i).uses_rope for i in range(4))
    # a config.json without layer_types: Cohere 2's class builds them from sliding_window_pattern (4);
    # for the others the layer type must be given rather than guessed
    command_r7b = {"model_type": "cohere2", "hidden_size": 64, "num_attention_heads": 2, "num_hidden_layers": 8,
                   "sliding_window": 16, "sliding_window_pattern": 4, "rope_theta": 5e4}
    assert [rope_spec(command_r7b, layer=i).uses_rope for i in range(8)] == [True, True, True, False] * 2
    exaone_dict = {"model_type": "exaone4", "hidden_size": 64, "num_attention_heads": 2, "num_hidden_layers": 4,
                   "sliding_window": 16}
    with pytest.raises(ValueError, match="layer_type is required for EXAONE 4.0"):
        rope_spec(exaone_dict, layer=3)
    assert not rope_spec(exaone_dict, "full_attention").uses_rope


def test_partial_rotary_families():
    # fraction of the head that rotates, the leading dims, half-split pairs
    for cls, fraction, key in (("Qwen3NextConfig", 0.25, "qwen3_next"), ("Glm4MoeConfig", 0.5, "glm4_moe")):
        config = tiny(cls, hidden_size=64, num_attention_heads=2, head_dim=64, num_hidden_layers=4)
        layer = next(i for i, t in enumerate(getattr(config, "layer_types", None) or ["full_attention"] * 4)
                     if t == "full_attention")
        spec = rope_spec(config, layer=layer)
        assert (spec.rotary_dim, spec.rotary_offset, spec.layout) == (int(64 * fraction), 0, "half")
    # Qwen3.5: a quarter of the head rotates, with interleaved M-RoPE sections (11, 11, 10) over those 32 pairs
    qwen35 = tiny("Qwen3_5TextConfig", hidden_size=64, num_attention_heads=2, head_dim=256, num_hidden_layers=4)
    spec = rope_spec(qwen35, "full_attention")
    assert (spec.rotary_dim, spec.mrope_section, spec.mrope_assignment) == (64, (11, 11, 10), "interleaved")
    # (11, 11, 10) over 8 pairs: as Qwen3.5's code does, height takes pairs 1, 4, 7, width 2, 5, time the rest
    # (the sweep's SCALING_VARIANTS compare such sections with the code, layer by layer)
    small = tiny("Qwen3_5TextConfig", hidden_size=64, num_attention_heads=2, head_dim=64, num_hidden_layers=4)
    spec = rope_spec(small, "full_attention")
    assert spec.mrope_section == (3, 3, 2)
    assert "does not add up to rotary_dim // 2 = 8" in " ".join(spec.defaults)
    # a contiguous family's code splits the pairs by the section: one that does not add up is refused
    with pytest.raises(ValueError, match=r"mrope_section \[16, 24, 24\] must add up to rotary_dim // 2 = 32"):
        rope_spec({"model_type": "qwen2_vl_text", "hidden_size": 128, "num_attention_heads": 2,
                   "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [16, 24, 24]}})
    assert not rope_spec(qwen35, "linear_attention").uses_rope
    assert "no attention" in rope_spec(qwen35, "linear_attention").no_rope_reason
    # a multimodal Qwen3.5 config.json holds the language model in text_config
    wrapped = {"model_type": "qwen3_5", "text_config": qwen35.to_dict()}
    assert rope_spec(wrapped, layer=3) == rope_spec(qwen35, layer=3)


def test_minimax_m2_rotary_dim():
    config = tiny("MiniMaxM2Config", hidden_size=128, num_attention_heads=2, head_dim=64, rotary_dim=32,
                  num_local_experts=2, intermediate_size=32)
    assert rope_spec(config).rotary_dim == 32 == int(64 * config.rope_parameters["partial_rotary_factor"])
    released = {"model_type": "minimax_m2", "hidden_size": 3072, "num_attention_heads": 48, "head_dim": 128,
                "rotary_dim": 64, "rope_theta": 5e6}
    spec = rope_spec(released)
    assert (spec.rotary_dim, spec.head_dim, spec.base) == (64, 128, 5e6)
    with pytest.raises(ValueError, match="rotary_dim = 64 and partial_rotary_factor = 0.25"):
        rope_spec({**released, "partial_rotary_factor": 0.25})


def test_ernie45_rotates_interleaved_pairs():
    config = tiny("Ernie4_5Config", hidden_size=64, num_attention_heads=2, head_dim=32)
    spec = rope_spec(config)
    assert (spec.layout, spec.rotary_dim, spec.base) == ("interleaved", 32, 500_000.0)
    mod = modeling("ernie4_5")
    pos = positions_for(30)
    x = np.random.default_rng(2).standard_normal((2, 2, 30, 32)).astype(np.float32)
    cos, sin = mod.Ernie4_5RotaryEmbedding(config)(torch.zeros(1), torch.tensor(pos))
    ref, _ = mod.apply_rotary_pos_emb(torch.tensor(x), torch.tensor(x), cos, sin)
    np.testing.assert_allclose(spec.apply(x, pos), ref.numpy(), rtol=1e-4, atol=1e-4)


KIMI_K2_YARN = {"type": "yarn", "factor": 32.0, "beta_fast": 1.0, "beta_slow": 1.0, "mscale": 1.0,
                "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096}


def test_kimi_k2_yarn_with_equal_betas():
    # Kimi K2's released config.json: YaRN with beta_fast == beta_slow (transformers widens the ramp by 0.001)
    config = tiny("DeepseekV3Config", hidden_size=64, num_attention_heads=2, q_lora_rank=None, kv_lora_rank=16,
                  qk_rope_head_dim=64, qk_nope_head_dim=32, v_head_dim=16, max_position_embeddings=131072,
                  n_routed_experts=2, num_experts_per_tok=1, n_group=1, topk_group=1, rope_theta=50000.0,
                  rope_scaling=dict(KIMI_K2_YARN))
    spec = rope_spec(config)
    rope = modeling("deepseek_v3").DeepseekV3RotaryEmbedding(config)
    np.testing.assert_allclose(spec.inv_freq(), rope.inv_freq.double().numpy(), rtol=2e-6)
    assert spec.attention_factor == pytest.approx(rope.attention_scaling, rel=1e-9)
    theta = S.frequencies(64, 50000.0)
    assert np.any(spec.inv_freq() == theta) and np.any(np.isclose(spec.inv_freq(), theta / 32))
    # the head_dim transformers writes for MLA is the rotary part only; rope_spec reads the real head
    assert config.to_dict()["head_dim"] == 64 and spec.head_dim == 96 and spec.rotary_offset == 32
    # Kimi K2.5: a multimodal config whose text_config is Kimi K2's (model_type kimi_k2 or deepseek_v3)
    text = {k: v for k, v in config.to_dict().items() if k != "model_type"}
    for inner in ("kimi_k2", "deepseek_v3"):
        k25 = rope_spec({"model_type": "kimi_k25", "text_config": {**text, "model_type": inner}})
        np.testing.assert_allclose(k25.inv_freq(), spec.inv_freq(), rtol=1e-12)


def test_recurrent_gemma_attention_layers():
    # the sweep cannot run it (its recurrent blocks reset where position_ids == 0): checked here directly
    config = tiny("RecurrentGemmaConfig", hidden_size=64, num_attention_heads=2, num_hidden_layers=3,
                  intermediate_size=32, lru_width=64, attention_window_size=16)
    assert [rope_spec(config, layer=i).uses_rope for i in range(3)] == [False, False, True]
    spec = rope_spec(config, layer=2)
    assert (spec.head_dim, spec.rotary_dim) == (32, 16)
    assert_same_rotation(spec, hf_half("recurrent_gemma", "RecurrentGemmaRotaryEmbedding"), config, 30)
    cycle = {"model_type": "recurrent_gemma", "hidden_size": 64, "num_attention_heads": 2, "num_hidden_layers": 6,
             "block_types": ["recurrent", "recurrent", "attention"], "partial_rotary_factor": 0.5}
    assert [rope_spec(cycle, layer=i).uses_rope for i in range(6)] == [False, False, True] * 2


def test_unsupported_families_say_why():
    with pytest.raises(ValueError, match="'hy_v4_vl_text' is not supported by rope_spec: .*M-RoPE"):
        rope_spec({"model_type": "hy_v4_vl_text", "hidden_size": 64})
    with pytest.raises(ValueError, match="unknown model_type 'bert': rope_spec has no data for this family"):
        rope_spec({"model_type": "bert"})


# --- both config schemas (transformers 4.x and 5.x) --------------------------------------------


def same_rope(a: RopeSpec, b: RopeSpec) -> bool:
    """Equal in everything but the notes on defaults (which name the fields they came from)."""
    return {**a.__dict__, "defaults": (), "default_records": ()} == {**b.__dict__, "defaults": (), "default_records": ()}


QWEN3_V4 = {"model_type": "qwen3", "hidden_size": 64, "num_attention_heads": 2, "head_dim": 32,
            "max_position_embeddings": 256, "rope_theta": 1e6,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}}
QWEN3_V5 = {"model_type": "qwen3", "hidden_size": 64, "num_attention_heads": 2, "head_dim": 32,
            "max_position_embeddings": 256,
            "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0, "original_max_position_embeddings": 64}}
GEMMA3_V4 = {"model_type": "gemma3_text", "hidden_size": 64, "num_attention_heads": 2, "head_dim": 32,
             "num_hidden_layers": 6, "sliding_window_pattern": 6, "rope_theta": 1e6, "rope_local_base_freq": 1e4,
             "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
GEMMA3_V5 = {"model_type": "gemma3_text", "hidden_size": 64, "num_attention_heads": 2, "head_dim": 32,
             "num_hidden_layers": 6, "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
             "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
                                 "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6}}}
NEOX_V4 = {"model_type": "gpt_neox", "hidden_size": 128, "num_attention_heads": 2, "rotary_pct": 0.25,
           "rotary_emb_base": 20000}
NEOX_V5 = {"model_type": "gpt_neox", "hidden_size": 128, "num_attention_heads": 2,
           "rope_parameters": {"rope_type": "default", "rope_theta": 20000, "partial_rotary_factor": 0.25}}
PHI_V4 = {"model_type": "phi", "hidden_size": 160, "num_attention_heads": 2, "partial_rotary_factor": 0.4,
          "rope_theta": 10000.0}
PHI_V5 = {"model_type": "phi", "hidden_size": 160, "num_attention_heads": 2,
          "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.4}}

LLAMA31_V4 = {"model_type": "llama", "hidden_size": 128, "num_attention_heads": 4, "max_position_embeddings": 512,
              "rope_theta": 5e5, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                  "high_freq_factor": 4.0, "original_max_position_embeddings": 64}}
LLAMA31_V5 = {"model_type": "llama", "hidden_size": 128, "num_attention_heads": 4, "max_position_embeddings": 512,
              "rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5, "factor": 8.0, "low_freq_factor": 1.0,
                                  "high_freq_factor": 4.0, "original_max_position_embeddings": 64}}
SHORT, LONG = longrope_factors(16)
PHI3_V4 = {"model_type": "phi3", "hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 128,
           "original_max_position_embeddings": 32, "rope_theta": 10000.0,
           "rope_scaling": {"type": "longrope", "short_factor": SHORT, "long_factor": LONG}}
PHI3_V5 = {"model_type": "phi3", "hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 128,
           "original_max_position_embeddings": 32,
           "rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": SHORT,
                               "long_factor": LONG, "original_max_position_embeddings": 32}}

SCHEMAS = {
    "llama3.1": (LLAMA31_V4, LLAMA31_V5, "LlamaConfig", [{}]),
    "phi3-longrope": (PHI3_V4, PHI3_V5, "Phi3Config", [{}]),
    "qwen3-yarn": (QWEN3_V4, QWEN3_V5, "Qwen3Config", [{}]),
    "gemma3": (GEMMA3_V4, GEMMA3_V5, "Gemma3TextConfig",
               [{"layer_type": "sliding_attention"}, {"layer_type": "full_attention"}, {"layer": 5}]),
    "gpt-neox": (NEOX_V4, NEOX_V5, "GPTNeoXConfig", [{}]),
    "phi": (PHI_V4, PHI_V5, "PhiConfig", [{}]),
}


@pytest.mark.parametrize("case", sorted(SCHEMAS))
def test_v4_and_v5_config_schemas_give_the_same_spec(case):
    v4, v5, cls, selections = SCHEMAS[case]
    # what transformers 5 makes of the v4 file (its config class converts it)
    # (a deep copy: transformers' config classes write into the dicts they are given)
    converted = tiny(cls, **copy.deepcopy({k: v for k, v in v4.items() if k != "model_type"})).to_dict()
    for kwargs in selections:
        spec = rope_spec(v4, **kwargs)
        assert same_rope(spec, rope_spec(v5, **kwargs)), kwargs
        assert same_rope(spec, rope_spec(converted, **kwargs)), kwargs


@pytest.mark.parametrize(
    "config, kwargs, match",
    [
        # a v5 config.json with a model card's v4 rope_scaling added: transformers 5 keeps rope_scaling
        # and silently loses rope_parameters' base
        ({**QWEN3_V5, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6},
          "rope_scaling": QWEN3_V4["rope_scaling"]}, {},
         r"rope_parameters.rope_type = 'default' but rope_scaling.rope_type = 'yarn'.*rope_theta"),
        ({**QWEN3_V5, "rope_theta": 5e5}, {}, r"rope_parameters.rope_theta = 1000000.0, rope_theta = 500000.0"),
        ({**NEOX_V5, "rotary_emb_base": 10000}, {}, r"rope_theta = 20000.*rotary_emb_base = 10000"),
        ({**NEOX_V5, "rotary_pct": 0.5}, {}, r"partial_rotary_factor = 0.25.*rotary_pct = 0.5"),
        ({**PHI_V5, "partial_rotary_factor": 0.5}, {}, r"partial_rotary_factor = 0.4.*partial_rotary_factor = 0.5"),
        ({**GEMMA3_V5, "rope_local_base_freq": 2e4}, {"layer_type": "sliding_attention"},
         r"rope_theta = 10000.0, rope_local_base_freq = 20000.0"),
        ({**GEMMA3_V5, "rope_theta": 5e5}, {"layer_type": "full_attention"}, r"rope_theta = 1000000.0, rope_theta = 500000.0"),
    ],
)
def test_both_schemas_with_different_values_is_an_error(config, kwargs, match):
    with pytest.raises(ValueError, match=match):
        rope_spec(config, **kwargs)


def test_what_transformers_does_with_both_schemas():
    # pinned so that a change in transformers is noticed: the base of rope_parameters is dropped
    both = {k: v for k, v in QWEN3_V5.items() if k != "model_type"}
    both["rope_parameters"] = {"rope_type": "default", "rope_theta": 1e6}
    scaling = dict(QWEN3_V4["rope_scaling"])
    config = tiny("Qwen3Config", **both, rope_scaling=scaling)
    assert config.rope_parameters["rope_theta"] == 10000.0 and config.rope_parameters["rope_type"] == "yarn"
    # ... and the config class writes the base it chose into the caller's dict
    assert scaling["rope_theta"] == 10000.0


def test_a_base_keyword_the_config_class_drops():
    # GPTNeoXConfig reads rotary_emb_base and silently drops a rope_theta keyword (so do Gemma4TextConfig,
    # Ministral3Config, ApertusConfig and others): rope_spec follows the code and says so
    config = tiny("GPTNeoXConfig", hidden_size=128, num_attention_heads=2, rope_theta=5e5)
    assert config.rope_parameters["rope_theta"] == 10000.0
    spec = rope_spec({**NEOX_V4, "rotary_emb_base": None, "rope_theta": 5e5})
    assert spec.base == 10000.0 and any("rope_theta = 500000.0 is ignored" in d for d in spec.defaults)
    assert "default used: rope_theta = 500000.0 is ignored" in spec.describe()
    with pytest.raises(ValueError, match=r"rope_parameters.rope_theta = 20000, rope_theta = 500000.0"):
        rope_spec({**NEOX_V5, "rope_theta": 5e5})
    # a family whose config class fills in per-layer-type defaults is not guessed from a flat dict
    with pytest.raises(ValueError, match="no rope_parameters nested by layer type"):
        rope_spec({"model_type": "gemma4_text", "hidden_size": 64, "num_attention_heads": 2, "rope_theta": 1e6,
                   "layer_types": ["sliding_attention", "full_attention"]}, layer=1)


def test_falcon_rotary_or_alibi():
    # Falcon's attention does not go through transformers' attention interface (the sweep cannot see it):
    # its rotary module and apply function directly, and no RoPE at all when it uses ALiBi
    config = tiny("FalconConfig", hidden_size=64, num_attention_heads=2, rope_theta=5e5)
    spec = rope_spec(config)
    assert (spec.head_dim, spec.rotary_dim, spec.base, spec.layout) == (32, 32, 5e5, "half")
    for seq_len in (5, 90):
        assert_same_rotation(spec, hf_half("falcon", "FalconRotaryEmbedding"), config, seq_len)
    alibi = rope_spec(tiny("FalconConfig", hidden_size=64, num_attention_heads=2, alibi=True))
    assert not alibi.uses_rope and "alibi = True" in alibi.no_rope_reason


def test_deepseek_v4_layer_kinds():
    # rope_parameters keyed "main" (sliding-window layers) and "compress" (compressed attention layers);
    # the trailing partial_rotary_factor of each head rotates, in interleaved pairs
    config = tiny("DeepseekV4Config", hidden_size=64, num_attention_heads=2, head_dim=64, num_hidden_layers=3,
                  q_lora_rank=32, o_lora_rank=32, o_groups=2, sliding_window=16, n_routed_experts=2,
                  num_experts_per_tok=1, moe_intermediate_size=32,
                  layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"])
    rope = modeling("deepseek_v4").DeepseekV4RotaryEmbedding(config)
    for i, key in enumerate(("main", "compress", "compress")):
        spec = rope_spec(config, layer=i)
        assert (spec.rotary_dim, spec.rotary_offset, spec.layout) == (8, 56, "interleaved")
        assert spec.base == config.rope_parameters[key]["rope_theta"]
        np.testing.assert_allclose(spec.inv_freq(), getattr(rope, f"{key}_inv_freq").double().numpy(), rtol=2e-6)
        assert ("compressed key entries" in spec.describe()) == (key == "compress")
    # its apply function rotates the trailing dims, as spec.apply does
    pos = positions_for(20)
    x = np.random.default_rng(3).standard_normal((2, 2, 20, 64)).astype(np.float32)
    cos, sin = rope(torch.zeros(1), torch.tensor(pos), layer_type="compress")
    ref = modeling("deepseek_v4").apply_rotary_pos_emb(torch.tensor(x), cos, sin)
    np.testing.assert_allclose(rope_spec(config, layer=1).apply(x, pos), ref.numpy(), rtol=1e-4, atol=1e-4)


def test_families_are_data():
    # one registry of data rows: only GPT-J/CodeGen (a fixed sin/cos table) and MiniMind (not in transformers)
    # have readers of their own; the shared extra rules are named functions
    assert {key for key, f in M.FAMILIES.items() if f.read is not None} == {"gptj", "codegen", "minimind"}
    extras = {f.extra.__name__ for f in M.FAMILIES.values() if f.extra is not None}
    assert extras == {"llama4_extra", "mla_softmax_extra", "query_scale_extra", "mla_query_scale_extra", "beam_extra"}
    assert len(M.MODEL_TYPES) >= len(M.FAMILIES) > 100
    for f in M.FAMILIES.values():
        assert f.layout in rope_edu.LAYOUTS and f.rotary in ("head", "fraction", "rotary_dim", "mla"), f.key
    assert not set(M.UNSUPPORTED) & set(M.MODEL_TYPES)


def test_layer_rules_are_one_tagged_value_per_family():
    """Which layers rotate: one ``layers`` value per family, a tag of LAYER_RULES and its arguments, refused
    when the tag is unknown (the reader names the tags it knows)."""
    from rope_edu.models.config import ConfigReader
    from rope_edu.models.layers import LAYER_RULES, _rule
    from rope_edu.models.reader import read_family

    used = {}
    for f in M.FAMILIES.values():
        if f.layers is not None:
            rule, args = _rule(f.layers)
            used.setdefault(f.layers[0], []).append(f.key)
            while args and isinstance(args[-1], tuple):  # a wrapping rule: its inner rule is a tagged value too
                used.setdefault(args[-1][0], []).append(f.key)
                rule, args = _rule(args[-1])
    assert set(used) == set(LAYER_RULES)  # every rule is used, none is dead
    assert used["no_window"] == ["cohere2", "cohere2_moe", "exaone4", "exaone_moe", "flint", "kolibri1"]
    assert used["forced"] == ["cohere2_moe"]
    bad = M.Family(**{**M.FAMILIES["llama"].__dict__, "layers": ("every_other", 2)})
    with pytest.raises(ValueError, match="unknown layer rule 'every_other'.*'pattern'"):
        read_family(bad, ConfigReader({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2}, "llama"),
                     None, None)


def test_published_tables_are_json_rows_with_named_fields(tmp_path, monkeypatch):
    """The released models live in rope_edu/data/*.json, one object with named fields per row; the Phi-3
    row's LongRoPE factors are the documented stand-ins; an unknown field is refused with its row's name."""
    import json
    from importlib import resources

    from rope_edu.models import published

    for name, table in (("published", M.PUBLISHED), ("published_2025", M.PUBLISHED_2025)):
        rows = json.loads(resources.files("rope_edu").joinpath("data", f"{name}.json").read_text(encoding="utf-8"))
        assert [r["name"] for r in rows["models"]] == list(table)
    scaling = M.PUBLISHED["Phi-3 mini 128K"].config["rope_scaling"]
    stand_in = published._stand_in_longrope(48)
    assert scaling["short_factor"] == stand_in["short_factor"] and scaling["long_factor"] == stand_in["long_factor"]
    with pytest.raises(TypeError):
        M.PUBLISHED["Llama 2 7B"].config["rope_theta"] = 1.0  # read-only rows
    fake = tmp_path / "rope_edu" / "data"
    fake.mkdir(parents=True)
    (fake / "bad.json").write_text(json.dumps({"models": [{"name": "X", "config": {}, "checkpoint": "half",
                                                           "trained": 1, "extended": None, "base": 1}]}))
    monkeypatch.setattr(published.resources, "files", lambda package: tmp_path / "rope_edu")
    with pytest.raises(ValueError, match=r"bad.json, row 'X': unknown fields \['base'\]"):
        published._load("bad")


@pytest.mark.parametrize("module, config_cls, rotary", [
    ("hunyuan_v1_dense", "HunYuanDenseV1Config", "HunYuanDenseV1RotaryEmbedding"),
    ("hunyuan_v1_moe", "HunYuanMoEV1Config", "HunYuanMoEV1RotaryEmbedding"),
])
def test_hunyuan_ntk_alpha(module, config_cls, rotary):
    """Hunyuan's rotary embedding reads rope_type "dynamic" with alpha as a fixed, stretched base
    rope_theta * alpha**(d / (d - 2)) (its released config.json is written this way); without alpha it is
    dynamic NTK. The v4 and v5 schemas read alike; without head_dim transformers fails, and rope_spec refuses."""
    hf = hf_half(module, rotary)
    for block in ({"type": "dynamic", "alpha": 1000.0, "factor": 1.0},
                  {"rope_type": "dynamic", "alpha": 50.0, "factor": 2.0, "rope_theta": 50_000.0}):
        key = "rope_scaling" if "type" in block else "rope_parameters"
        config = tiny(config_cls, hidden_size=128, num_attention_heads=2, head_dim=64, max_position_embeddings=32,
                      **{key: dict(block)})
        spec = rope_spec(config)
        assert (spec.rope_type, dict(spec.rope_params)) == ("ntk_alpha", {"alpha": block["alpha"]})
        assert not spec.depends_on_length and rope_spec(config.to_dict()) == spec
        base = block.get("rope_theta", 10_000.0) * block["alpha"] ** (64 / 62)
        np.testing.assert_allclose(spec.inv_freq(), S.scaled_frequencies("default", 64, base)[0], rtol=1e-12)
        for seq_len in (16, 100):  # past max_position_embeddings the base stays (no dynamic update)
            assert_same_rotation(spec, hf, config, seq_len)
    plain = tiny(config_cls, hidden_size=128, num_attention_heads=2, head_dim=64, max_position_embeddings=32,
                 rope_scaling={"type": "dynamic", "factor": 2.0})
    assert rope_spec(plain).rope_type == "dynamic"
    assert_same_rotation(rope_spec(plain), hf, plain, 100)
    no_head = {"model_type": module, "hidden_size": 128, "num_attention_heads": 2,
               "rope_scaling": {"type": "dynamic", "alpha": 1000.0, "factor": 1.0}}
    with pytest.raises(TypeError):
        getattr(modeling(module), rotary)(tiny(config_cls, **{k: v for k, v in no_head.items() if k != "model_type"}))
    with pytest.raises(ValueError, match="missing the field 'head_dim'.*NTK-alpha"):
        rope_spec(no_head)
    # a config that states the type itself is refused, as transformers' validation refuses it
    with pytest.raises(ValueError, match="unknown rope_scaling.rope_type 'ntk_alpha' for model_type 'llama'"):
        rope_spec({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2,
                   "rope_scaling": {"rope_type": "ntk_alpha", "alpha": 2.0}})


def test_cohere2_moe_dense_prefix_forces_rope():
    """Cohere 2 MoE rotates sliding-window layers only, except its dense prefix layers when
    prefix_dense_sliding_window_pattern is 1 (the attention's force_rope); the config class builds
    layer_types and mlp_layer_types from first_k_dense_replace, so a dict with that field alone is refused."""
    mod = modeling("cohere2_moe")
    for k, prefix in ((2, 1), (3, 2)):
        config = tiny("Cohere2MoeConfig", hidden_size=64, num_attention_heads=2, num_key_value_heads=2,
                      num_hidden_layers=8, first_k_dense_replace=k, prefix_dense_sliding_window_pattern=prefix)
        for i in range(8):
            attn = mod.Cohere2MoeAttention(config, i)
            code = attn.sliding_window is not None or attn.force_rope
            assert rope_spec(config, layer=i).uses_rope == rope_spec(config.to_dict(), layer=i).uses_rope == code, (k, i)
        assert rope_spec(config, layer=1).uses_rope == (prefix == 1)  # a full_attention prefix layer
    raw = {"model_type": "cohere2_moe", "hidden_size": 64, "num_attention_heads": 2, "num_hidden_layers": 8,
           "sliding_window": 4096, "first_k_dense_replace": 2}
    with pytest.raises(ValueError, match="states first_k_dense_replace but not mlp_layer_types"):
        rope_spec(raw, layer=0)


def test_mrope_text_positions_per_batch_row():
    """transformers reads a 2-D position_ids of an M-RoPE model as text ids per batch row, shape (batch, seq):
    rope_spec does the same (Qwen3.5 against its rotary embedding and apply function); (3, seq) with a batch of
    3 is ambiguous and refused."""
    config = tiny("Qwen3_5TextConfig", hidden_size=256, num_attention_heads=2, num_key_value_heads=2, head_dim=256,
                  num_hidden_layers=4)
    spec = rope_spec(config, layer=3)
    mod = modeling("qwen3_5")
    rope = mod.Qwen3_5TextRotaryEmbedding(config)
    rng = np.random.default_rng(0)
    for batch in (2, 4):
        pos = np.stack([np.arange(7) + 5 * b for b in range(batch)])
        x = rng.standard_normal((batch, 2, 7, 256)).astype(np.float32)
        cos, sin = rope(torch.zeros(1), torch.tensor(pos))
        ref, _ = mod.apply_rotary_pos_emb(torch.tensor(x), torch.tensor(x), cos, sin)
        np.testing.assert_allclose(spec.apply(x, pos), ref.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(spec.apply(x, pos), spec.apply(x, np.broadcast_to(pos, (3, batch, 7))))
    with pytest.raises(ValueError, match=r"shape \(3, 7\) with a batch of 3 is ambiguous"):
        spec.apply(np.zeros((3, 2, 7, 256)), np.zeros((3, 7)))


def test_defaults_are_records_shown_as_sentences():
    """ConfigReader records what it fills in as Default records (field, value, source); RopeSpec.defaults shows
    them as sentences; a field read again elsewhere is forgotten by name, and a derived config records
    into the same list."""
    from rope_edu.models.config import Default, ConfigReader

    cfg = ConfigReader({"model_type": "llama"}, "llama")
    assert cfg.default("rope_theta", 10000.0, "transformers' default_theta") == 10000.0
    cfg.record("rope_scaling.factor", 32.0, "transformers' LongRoPE rule",
               rule="max_position_embeddings / original_max_position_embeddings")
    cfg.record("rope_scaling.truncate", False, "is not read: it is read from the top level", kind="unread")
    assert cfg.records[0] == Default("rope_theta", 10000.0, "transformers' default_theta")
    assert cfg.defaults == (
        "rope_theta = 10000.0 (transformers' default_theta; the config does not state it)",
        "rope_scaling.factor = max_position_embeddings / original_max_position_embeddings = 32.0 "
        "(transformers' LongRoPE rule; the config does not state it)",
        "rope_scaling.truncate = False is not read: it is read from the top level",
    )
    other = cfg.derive({"model_type": "llama", "head_dim": 64})
    other.default("rope_interleave", True, "a config default")
    assert cfg.records[-1].field == "rope_interleave" and other.records is cfg.records
    cfg.forget("rope_scaling.factor")
    assert [r.field for r in cfg.records] == ["rope_theta", "rope_scaling.truncate", "rope_interleave"]
    spec = rope_spec({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2,
                      "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}})
    assert "rope_scaling.beta_fast = 32.0 (transformers' YaRN default; the config does not state it)" in spec.defaults


def test_rope_types_and_the_books_scaling_methods_relate_as_documented():
    """scaling.METHODS (what the book teaches) and models.ROPE_TYPES (what a config names): a method
    transformers implements is the rope_type of its name, with its summary and its frequencies;
    "ntk" is a method only, "proportional" and "ntk_alpha" are types only."""
    taught = {m.transformers: name for name, m in S.METHODS.items() if m.transformers}
    assert all(t == name for t, name in taught.items())
    assert set(S.METHODS) - set(taught) == {"ntk"}
    assert set(M.ROPE_TYPES) - set(taught) == {"proportional", "ntk_alpha"}
    params = {"default": {}, "linear": {"factor": 4.0}, "yarn": {"factor": 4.0, "original_max_position_embeddings": 4096},
              "dynamic": {"factor": 4.0, "original_max_position_embeddings": 4096, "seq_len": 16384},
              "llama3": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192},
              "longrope": {"factor": 4.0, "short_factor": (1.0,) * 32, "long_factor": (2.0,) * 32,
                           "original_max_position_embeddings": 4096, "seq_len": 16384}}
    assert set(params) == set(taught)
    for name in taught:
        assert M.ROPE_TYPES[name].summary == S.METHODS[name].summary
        got, factor = M.ROPE_TYPES[name].frequencies(64, 1e4, params[name])
        want, want_factor = S.scaled_frequencies(name, 64, 1e4, **params[name])
        np.testing.assert_array_equal(got, want)
        assert factor == want_factor, name


def test_rope_spec_scaling_is_the_deprecated_name_of_rope_type():
    spec = rope_spec({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 64,
                      "rope_scaling": {"rope_type": "linear", "factor": 2.0}})
    assert spec.rope_type == "linear"
    with pytest.warns(DeprecationWarning, match="rope_type"):
        assert spec.scaling == "linear"


def test_renamed_family_and_spec_fields_keep_their_old_names():
    """Family.rope_types held layer types and Family.scalings RoPE types: renamed (review of
    issue 43, item 1); the old names read the new fields, the Family ones with a warning."""
    row = M.FAMILIES["cohere2"]
    assert row.rotating_layer_types == ("sliding_attention",)
    with pytest.warns(DeprecationWarning, match="rotating_layer_types"):
        assert row.rope_types == row.rotating_layer_types
    phimoe = M.FAMILIES["phimoe"]
    with pytest.warns(DeprecationWarning, match="allowed_rope_types"):
        assert phimoe.scalings == phimoe.allowed_rope_types == ("default",)
    with pytest.warns(DeprecationWarning, match="allowed_rope_types_note"):
        assert phimoe.scalings_note == phimoe.allowed_rope_types_note != ""
    spec = M.rope_spec({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
                        "rope_scaling": {"rope_type": "linear", "factor": 2.0}})
    with pytest.warns(DeprecationWarning, match=r"RopeSpec\.scaling_params is deprecated: read RopeSpec\.rope_params"):
        assert spec.scaling_params is spec.rope_params
    assert dict(spec.rope_params) == {"factor": 2.0}
    with pytest.warns(DeprecationWarning, match=r"RopeSpec\.scaling is deprecated"):
        assert spec.scaling == spec.rope_type == "linear"
