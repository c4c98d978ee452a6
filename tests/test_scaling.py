"""rope_edu.scaling (context extension) and its widget rope_edu.widgets.context_extension.

Agreement with Hugging Face transformers (``transformers.modeling_rope_utils``, a test
dependency), the papers' properties, and every bad input.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("torch")  # make check skips this file where torch is missing
pytest.importorskip("transformers")
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

import rope_edu
from rope_edu import apply_rope, frequencies
from rope_edu import scaling as S
from rope_edu.widgets import context_extension as ce

FAST = settings(max_examples=30, deadline=None)
# Agreement to 1e-6, relative (an absolute 1e-6 would say nothing about the slow pairs, whose
# frequencies are ~1e-7). transformers computes in float32, so its own error is a few 1e-7: with a
# head dimension that is not a power of two the exponent 2i/d is rounded, which costs up to
# ln(base) * 6e-8 (8e-7 for base 1e6), so those cases use bases up to 5e5.
RTOL = 1e-6


# --- transformers as the reference -----------------------------------------------------------


def hf_config(head_dim: int, base: float, rope_type: str, *, max_position_embeddings: int = 4096,
              partial: float | None = None, **params) -> LlamaConfig:
    """A LlamaConfig with the given v5 ``rope_parameters`` (rope_type, rope_theta, ...)."""
    rope_parameters = {"rope_type": rope_type, "rope_theta": float(base), **params}
    if partial is not None:
        rope_parameters["partial_rotary_factor"] = partial
    return LlamaConfig(
        hidden_size=4 * head_dim,
        num_attention_heads=4,
        num_key_value_heads=4,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=rope_parameters,
    )


def hf_frequencies(config: LlamaConfig, seq_len: int | None = None) -> tuple[np.ndarray, float]:
    rope_type = config.rope_parameters["rope_type"]
    if rope_type == "default":
        inv_freq, factor = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        inv_freq, factor = ROPE_INIT_FUNCTIONS[rope_type](config, None, seq_len=seq_len)
    return inv_freq.double().numpy(), float(factor)


def assert_agrees(ours: tuple[np.ndarray, float], theirs: tuple[np.ndarray, float]) -> None:
    assert ours[0].shape == theirs[0].shape
    np.testing.assert_allclose(ours[0], theirs[0], rtol=RTOL, atol=0)
    assert ours[1] == pytest.approx(theirs[1], rel=1e-12)


@pytest.mark.parametrize("head_dim, base", [(64, 10000.0), (128, 1e6), (96, 500000.0), (2, 10000.0)])
def test_default_agrees_with_transformers(head_dim, base):
    assert_agrees(S.scaled_frequencies("default", head_dim, base), hf_frequencies(hf_config(head_dim, base, "default")))


@pytest.mark.parametrize(
    "head_dim, base, factor, partial",
    [(64, 10000.0, 2.0, None), (128, 1e6, 8.0, None), (96, 500000.0, 3.5, None), (128, 10000.0, 4.0, 0.5),
     (64, 10000.0, 1.0, None)],
)
def test_linear_agrees_with_transformers(head_dim, base, factor, partial):
    dim = int(head_dim * (partial or 1.0))
    config = hf_config(head_dim, base, "linear", partial=partial, factor=factor)
    assert_agrees(S.scaled_frequencies("linear", dim, base, factor=factor), hf_frequencies(config))


@pytest.mark.parametrize(
    "head_dim, base, factor, original, seq_len, partial",
    [
        (64, 10000.0, 2.0, 2048, 1000, None),      # shorter than the original: unchanged
        (64, 10000.0, 2.0, 2048, 2048, None),      # exactly the original
        (64, 10000.0, 2.0, 2048, 6000, None),      # longer: base grows
        (128, 500000.0, 8.0, 8192, 100_000, None),
        (96, 500000.0, 1.0, 4096, 16384, None),    # factor 1: scale seq_len / L
        (128, 10000.0, 4.0, 4096, 9000, 0.5),      # partial rotary: dim = 64
    ],
)
def test_dynamic_agrees_with_transformers(head_dim, base, factor, original, seq_len, partial):
    dim = int(head_dim * (partial or 1.0))
    config = hf_config(head_dim, base, "dynamic", max_position_embeddings=original, partial=partial, factor=factor)
    ours = S.scaled_frequencies(
        "dynamic", dim, base, factor=factor, original_max_position_embeddings=original, seq_len=seq_len
    )
    assert_agrees(ours, hf_frequencies(config, seq_len=seq_len))


@pytest.mark.parametrize("head_dim, base, s, original", [(64, 10000.0, 4.0, 2048), (128, 1e6, 8.0, 8192), (96, 500000.0, 2.5, 4096)])
def test_ntk_is_transformers_dynamic_with_factor_one_at_s_times_L(head_dim, base, s, original):
    # transformers has no static NTK type; its dynamic rule with factor 1 at length s*L is exactly
    # the NTK-aware base change by s.
    seq_len = int(s * original)
    assert seq_len == s * original
    config = hf_config(head_dim, base, "dynamic", max_position_embeddings=original, factor=1.0)
    assert_agrees(S.scaled_frequencies("ntk", head_dim, base, factor=s), hf_frequencies(config, seq_len=seq_len))


YARN_CASES = [
    dict(head_dim=64, base=10000.0, factor=4.0, original_max_position_embeddings=2048),
    dict(head_dim=128, base=10000.0, factor=16.0, original_max_position_embeddings=4096),
    dict(head_dim=128, base=1e6, factor=4.0, original_max_position_embeddings=32768),  # Qwen-style
    dict(head_dim=96, base=500000.0, factor=8.0, original_max_position_embeddings=8192, truncate=False),
    dict(head_dim=64, base=10000.0, factor=2.0, original_max_position_embeddings=64),  # ramp start clipped at 0
    dict(head_dim=64, base=10000.0, factor=4.0, original_max_position_embeddings=4096, beta_fast=16.0, beta_slow=2.0),
    dict(head_dim=64, base=10000.0, factor=4.0, original_max_position_embeddings=4096, attention_factor=1.5),
    dict(head_dim=128, base=10000.0, factor=40.0, original_max_position_embeddings=4096, mscale=1.0, mscale_all_dim=1.0,
         beta_fast=32.0, beta_slow=1.0),  # DeepSeek-style: attention factor 1
    dict(head_dim=64, base=10000.0, factor=40.0, original_max_position_embeddings=4096, mscale=0.707, mscale_all_dim=1.0),
    dict(head_dim=128, base=10000.0, factor=4.0, original_max_position_embeddings=4096, partial=0.5),
    dict(head_dim=64, base=10000.0, factor=1.0, original_max_position_embeddings=2048),
    dict(head_dim=64, base=100.0, factor=4.0, original_max_position_embeddings=1_000_000),  # ramp end clipped at dim - 1
]


@pytest.mark.parametrize("case", YARN_CASES)
def test_yarn_agrees_with_transformers(case):
    case = dict(case)
    head_dim, base, partial = case.pop("head_dim"), case.pop("base"), case.pop("partial", None)
    dim = int(head_dim * (partial or 1.0))
    mpe = int(case["factor"] * case["original_max_position_embeddings"])
    config = hf_config(head_dim, base, "yarn", max_position_embeddings=mpe, partial=partial, **case)
    assert_agrees(S.scaled_frequencies("yarn", dim, base, **case), hf_frequencies(config))


LLAMA3_CASES = [
    dict(head_dim=128, base=500000.0, **S.LLAMA_3_1),  # the published Llama 3.1 setting
    dict(head_dim=64, base=500000.0, factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
         original_max_position_embeddings=8192),  # Llama 3.2 1B/3B use factor 32
    dict(head_dim=128, base=10000.0, factor=4.0, low_freq_factor=2.0, high_freq_factor=8.0,
         original_max_position_embeddings=4096),
    dict(head_dim=96, base=10000.0, factor=8.0, low_freq_factor=0.5, high_freq_factor=1.5,
         original_max_position_embeddings=16384),
    dict(head_dim=128, base=500000.0, factor=1.0, low_freq_factor=1.0, high_freq_factor=4.0,
         original_max_position_embeddings=8192),
    dict(head_dim=128, base=500000.0, factor=16.0, low_freq_factor=1.0, high_freq_factor=1.0,
         original_max_position_embeddings=8192),  # Llama 4 Scout: equal factors, a step with no ramp
]


@pytest.mark.parametrize("case", LLAMA3_CASES)
def test_llama3_agrees_with_transformers(case):
    case = dict(case)
    head_dim, base = case.pop("head_dim"), case.pop("base")
    mpe = int(max(case["factor"], 2.0) * case["original_max_position_embeddings"])
    config = hf_config(head_dim, base, "llama3", max_position_embeddings=mpe, **case)
    assert_agrees(S.scaled_frequencies("llama3", head_dim, base, **case), hf_frequencies(config))


def test_llama3_with_equal_factors_is_a_step_at_wavelength_L():
    d, b, L = 128, 500000.0, 8192
    ratio = S.frequency_ratio("llama3", d, b, factor=16.0, low_freq_factor=1.0, high_freq_factor=1.0,
                              original_max_position_embeddings=L)
    wavelength = 2 * np.pi / frequencies(d, b)
    assert np.array_equal(ratio == 1.0, wavelength < L)
    np.testing.assert_allclose(ratio[wavelength > L], 1 / 16, rtol=1e-12)
    assert 0 < (wavelength < L).sum() < d // 2


def longrope_factors(n: int, seed: int) -> tuple[list[float], list[float]]:
    """Made-up short and long factors (Phi-3's are searched; any positive numbers exercise the code)."""
    rng = np.random.default_rng(seed)
    short = np.sort(rng.uniform(1.0, 2.0, n))
    long = np.sort(rng.uniform(1.0, 40.0, n))
    return short.tolist(), long.tolist()


LONGROPE_CASES = [
    # head_dim, base, original L, max_position_embeddings, seq_len, extra parameters
    (64, 10000.0, 4096, 131072, None, {}),               # Phi-3-mini-128k shape: factor = 131072 / 4096
    (64, 10000.0, 4096, 131072, 4096, {}),               # exactly L: still the short factors
    (64, 10000.0, 4096, 131072, 4097, {}),               # past L: the long factors
    (96, 10000.0, 4096, 131072, 9000, {}),
    (128, 10000.0, 4096, 131072, 9000, {"partial": 0.75}),  # Phi-4-mini: 96 of 128 dims rotate
    (64, 10000.0, 4096, 65536, 100, {"factor": 8.0}),    # an explicit factor wins over the ratio
    (64, 10000.0, 2048, 8192, 5000, {"attention_factor": 1.3}),
    (64, 10000.0, 4096, 4096, 5000, {"factor": 1.0}),    # factor 1: no attention scale
]


@pytest.mark.parametrize("head_dim, base, original, mpe, seq_len, extra", LONGROPE_CASES)
def test_longrope_agrees_with_transformers(head_dim, base, original, mpe, seq_len, extra):
    extra = dict(extra)
    partial = extra.pop("partial", None)
    dim = int(head_dim * (partial or 1.0))
    short, long = longrope_factors(dim // 2, seed=head_dim + (seq_len or 0))
    config = hf_config(head_dim, base, "longrope", max_position_embeddings=mpe, partial=partial,
                       short_factor=short, long_factor=long, original_max_position_embeddings=original, **extra)
    # transformers takes factor = max_position_embeddings / L when the config leaves it out
    factor = extra.pop("factor", mpe / original)
    ours = S.scaled_frequencies("longrope", dim, base, short_factor=short, long_factor=long, factor=factor,
                                original_max_position_embeddings=original, seq_len=seq_len, **extra)
    assert_agrees(ours, hf_frequencies(config, seq_len=seq_len))


def test_longrope_switches_from_short_to_long_factors_past_L():
    dim, base, L = 64, 10000.0, 4096
    short, long = longrope_factors(dim // 2, seed=1)
    params = dict(short_factor=short, long_factor=long, factor=32.0, original_max_position_embeddings=L)
    theta = frequencies(dim, base)
    for seq_len, factors in ((None, short), (1, short), (L, short), (L + 1, long), (10 * L, long)):
        inv_freq, a = S.scaled_frequencies("longrope", dim, base, seq_len=seq_len, **params)
        np.testing.assert_allclose(inv_freq, theta / np.asarray(factors), rtol=1e-14)
        # the attention factor does not switch: sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12)
        assert a == pytest.approx(math.sqrt(1 + 5 / 12), rel=1e-14)
        assert a == S.longrope_attention_factor(32.0, L)
    assert S.longrope_attention_factor(1.0, 4096) == 1.0


@pytest.mark.parametrize(
    "params, error, match",
    [
        (dict(short_factor=[1.0] * 31), ValueError, "short_factor must have one factor per rotated pair"),
        (dict(long_factor=[1.0] * 33), ValueError, "long_factor"),
        (dict(short_factor=[0.0] * 32), ValueError, "short_factor must contain finite positive"),
        (dict(long_factor=[float("nan")] * 32), ValueError, "long_factor"),
        (dict(short_factor="1,2"), TypeError, "short_factor"),
        (dict(short_factor=1.5), TypeError, "short_factor"),
        (dict(long_factor=[[1.0] * 32]), ValueError, "long_factor"),
        (dict(long_factor=[True] * 32), TypeError, "long_factor"),
        (dict(seq_len=0), ValueError, "seq_len"),
        (dict(seq_len=10.0), TypeError, "seq_len"),
        (dict(factor=0.5), ValueError, "factor"),
        (dict(attention_factor=-1.0), ValueError, "attention_factor"),
        (dict(original_max_position_embeddings=1), ValueError, "original_max_position_embeddings must be >= 2"),
        (dict(beta_fast=32.0), TypeError, "unknown parameter.*beta_fast"),
    ],
)
def test_longrope_bad_input(params, error, match):
    good = dict(short_factor=[1.0] * 32, long_factor=[2.0] * 32, factor=4.0, original_max_position_embeddings=4096)
    with pytest.raises(error, match=match):
        S.scaled_frequencies("longrope", 64, 10000.0, **{**good, **params})
    with pytest.raises(TypeError, match="requires parameter.*long_factor"):
        S.scaled_frequencies("longrope", 64, 10000.0, short_factor=[1.0] * 32, factor=4.0,
                             original_max_position_embeddings=4096)


@pytest.mark.parametrize(
    "method, head_dim, base, params, seq_len",
    [
        ("linear", 96, 1e6, dict(factor=3.0), None),
        ("dynamic", 96, 1e6, dict(factor=2.0), 10_000),
        ("yarn", 96, 1e6, dict(factor=8.0, original_max_position_embeddings=4096), None),
        ("llama3", 96, 1e6, dict(factor=8.0, low_freq_factor=0.5, high_freq_factor=1.5,
                                 original_max_position_embeddings=16384), None),
    ],
)
def test_remaining_differences_are_transformers_float32(monkeypatch, method, head_dim, base, params, seq_len):
    # Where float32 rounding alone exceeds 1e-6 (head_dim 96, base 1e6), run transformers' own
    # functions with `torch.float` pointing at float64: the numbers then agree to 1e-9 (YaRN's ramp
    # stays float32 inside transformers: 1e-6 there).
    mpe = 4096 if method == "dynamic" else int(params["factor"] * params.get("original_max_position_embeddings", 4096))
    config = hf_config(head_dim, base, method, max_position_embeddings=mpe, **params)
    ours_params = dict(params)
    if method == "dynamic":
        ours_params.update(original_max_position_embeddings=mpe, seq_len=seq_len)
    ours = S.scaled_frequencies(method, head_dim, base, **ours_params)
    float32 = hf_frequencies(config, seq_len=seq_len)
    np.testing.assert_allclose(ours[0], float32[0], rtol=3e-6)
    monkeypatch.setattr(torch, "float", torch.float64)
    float64 = hf_frequencies(config, seq_len=seq_len)
    np.testing.assert_allclose(ours[0], float64[0], rtol=1e-6 if method == "yarn" else 1e-9)
    assert ours[1] == pytest.approx(float64[1], rel=1e-12)


def test_attention_factor_multiplies_cos_and_sin_as_in_transformers():
    # End to end through transformers' rotary module and apply_rotary_pos_emb (half-split layout):
    # its q_embed is attention_factor * (our rotation). Its angles are float32: 2e-5 at these positions.
    head_dim, base = 64, 10000.0
    params = dict(factor=8.0, original_max_position_embeddings=512)
    config = hf_config(head_dim, base, "yarn", max_position_embeddings=4096, **params)
    rope = LlamaRotaryEmbedding(config)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 2, 40, head_dim))
    k = rng.standard_normal((1, 2, 40, head_dim))
    pos = np.arange(0, 80, 2)
    x = torch.zeros(1, 40, head_dim)
    cos, sin = rope(x, torch.tensor(pos)[None, :])
    q_hf, k_hf = apply_rotary_pos_emb(torch.tensor(q, dtype=torch.float32), torch.tensor(k, dtype=torch.float32), cos, sin)
    inv_freq, a = S.scaled_frequencies("yarn", head_dim, base, **params)
    assert a == pytest.approx(0.1 * math.log(8.0) + 1)
    np.testing.assert_allclose(q_hf.numpy(), a * apply_rope(q, pos, inv_freq=inv_freq, layout="half"), atol=2e-5)
    np.testing.assert_allclose(k_hf.numpy(), a * apply_rope(k, pos, inv_freq=inv_freq, layout="half"), atol=2e-5)
    # ... so the logits are multiplied by a**2
    ours = (a * apply_rope(q, pos, inv_freq=inv_freq)) @ np.swapaxes(a * apply_rope(k, pos, inv_freq=inv_freq), -1, -2)
    plain = apply_rope(q, pos, inv_freq=inv_freq) @ np.swapaxes(apply_rope(k, pos, inv_freq=inv_freq), -1, -2)
    np.testing.assert_allclose(ours, a**2 * plain, rtol=1e-12)


@pytest.mark.parametrize("factor, mscale, mscale_all_dim", [(40.0, 1.0, 1.0), (40.0, 0.707, 0.707), (4.0, 1.0, 0.5)])
def test_deepseek_yarn_temperature_moves_into_the_softmax_scale_as_in_transformers(factor, mscale, mscale_all_dim):
    # DeepSeek-V3 (factor 40, mscale = mscale_all_dim = 1): cos and sin unscaled, but the attention's
    # softmax scale 1/sqrt(d_qk) multiplied by (0.1 m_all ln s + 1)^2.
    from transformers import DeepseekV3Config
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention, DeepseekV3RotaryEmbedding

    rope = dict(rope_type="yarn", rope_theta=10000.0, factor=factor, original_max_position_embeddings=4096,
                beta_fast=32.0, beta_slow=1.0, mscale=mscale, mscale_all_dim=mscale_all_dim)
    config = DeepseekV3Config(hidden_size=64, num_attention_heads=2, num_key_value_heads=2, q_lora_rank=None,
                              kv_lora_rank=16, qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=16,
                              max_position_embeddings=int(factor * 4096), rope_parameters=rope,
                              n_routed_experts=4, num_experts_per_tok=2, n_group=1, topk_group=1)
    a = S.yarn_attention_factor(factor, mscale, mscale_all_dim)
    assert DeepseekV3RotaryEmbedding(config).attention_scaling == pytest.approx(a, rel=1e-12)
    softmax = DeepseekV3Attention(config, layer_idx=0).scaling
    assert softmax == pytest.approx(config.qk_head_dim ** -0.5 * S.yarn_softmax_scale(factor, mscale_all_dim), rel=1e-12)
    # the rotated part of a logit: a^2 * softmax factor = (0.1 m ln s + 1)^2
    assert a**2 * S.yarn_softmax_scale(factor, mscale_all_dim) == pytest.approx((0.1 * mscale * math.log(factor) + 1) ** 2)


def test_dynamic_follows_transformers_module_as_the_sequence_grows():
    # transformers' rotary module recomputes dynamic frequencies from max(position_ids) + 1.
    head_dim, base, original, factor = 64, 10000.0, 1024, 2.0
    config = hf_config(head_dim, base, "dynamic", max_position_embeddings=original, factor=factor)
    rope = LlamaRotaryEmbedding(config)
    x = torch.zeros(1, 1, head_dim)
    for seq_len in (1000, 3000, 5000):
        rope(x, torch.tensor([[seq_len - 1]]))
        ours, _ = S.scaled_frequencies(
            "dynamic", head_dim, base, factor=factor, original_max_position_embeddings=original, seq_len=seq_len
        )
        np.testing.assert_allclose(ours, rope.inv_freq.double().numpy(), rtol=RTOL)


# --- the papers' properties ------------------------------------------------------------------

dims = st.sampled_from([4, 8, 16, 64, 96, 128])
bases = st.sampled_from([100.0, 10000.0, 500000.0, 1e6])
factors = st.floats(1.0, 64.0, allow_nan=False)
lengths = st.sampled_from([64, 512, 2048, 4096, 8192, 32768])


@FAST
@given(dim=dims, base=bases, factor=factors, seed=st.integers(0, 2**32 - 1))
def test_linear_is_positions_divided_by_factor(dim, base, factor, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((7, dim))
    pos = rng.integers(0, 100_000, size=7)
    inv_freq, a = S.scaled_frequencies("linear", dim, base, factor=factor)
    assert a == 1.0
    np.testing.assert_allclose(apply_rope(x, pos, inv_freq=inv_freq), apply_rope(x, pos / factor, base=base), atol=1e-9)
    np.testing.assert_allclose(S.frequency_ratio("linear", dim, base, factor=factor), 1 / factor, rtol=1e-14)


@FAST
@given(dim=dims, base=bases, factor=factors)
def test_ntk_keeps_theta0_and_divides_slowest_by_factor(dim, base, factor):
    ratio = S.frequency_ratio("ntk", dim, base, factor=factor)
    assert ratio[0] == 1.0
    np.testing.assert_allclose(ratio[-1], 1 / factor, rtol=1e-12)
    i = np.arange(dim // 2)
    np.testing.assert_allclose(ratio, factor ** (-2 * i / (dim - 2)), rtol=1e-12)
    assert np.all(np.diff(ratio) <= 1e-15)
    assert S.ntk_base(base, factor, dim) == pytest.approx(base * factor ** (dim / (dim - 2)))


@FAST
@given(dim=dims, base=bases, factor=factors, original=lengths, frac=st.floats(0.01, 20.0))
def test_dynamic_is_default_up_to_L_then_ntk_with_the_current_scale(dim, base, factor, original, frac):
    seq_len = max(1, int(frac * original))
    inv_freq, a = S.scaled_frequencies(
        "dynamic", dim, base, factor=factor, original_max_position_embeddings=original, seq_len=seq_len
    )
    assert a == 1.0
    scale = S.dynamic_scale(factor, original, seq_len)
    if seq_len <= original:
        assert scale == 1.0
        np.testing.assert_allclose(inv_freq, frequencies(dim, base), rtol=1e-14)
    else:
        assert scale == pytest.approx(factor * seq_len / original - (factor - 1))
        assert scale > 1.0
    np.testing.assert_allclose(inv_freq, S.scaled_frequencies("ntk", dim, base, factor=scale)[0], rtol=1e-14)


def test_dynamic_scale_values():
    assert S.dynamic_scale(1.0, 4096, 8192) == 2.0          # factor 1: ell / L
    assert S.dynamic_scale(2.0, 4096, 8192) == 3.0          # 2 * 2 - 1
    assert S.dynamic_scale(4.0, 4096, 100) == 1.0
    scales = [S.dynamic_scale(2.0, 1000, n) for n in range(500, 5000, 250)]
    assert np.all(np.diff(scales) >= 0)


@FAST
@given(dim=dims, base=bases, factor=factors, original=lengths, truncate=st.booleans(),
       betas=st.sampled_from([(32.0, 1.0), (16.0, 2.0), (64.0, 0.5)]))
def test_yarn_keeps_fast_pairs_and_interpolates_slow_ones(dim, base, factor, original, truncate, betas):
    beta_fast, beta_slow = betas
    params = dict(factor=factor, original_max_position_embeddings=original, beta_fast=beta_fast,
                  beta_slow=beta_slow, truncate=truncate)
    ratio = S.frequency_ratio("yarn", dim, base, **params)
    r = S.rotations(dim, base, original)
    assert np.all(ratio[r > beta_fast] == 1.0)                                  # high frequencies untouched
    np.testing.assert_allclose(ratio[r < beta_slow], 1 / factor, rtol=1e-12)   # low ones: PI
    assert np.all(ratio >= 1 / factor * (1 - 1e-12)) and np.all(ratio <= 1.0 + 1e-12)
    assert np.all(np.diff(ratio) <= 1e-12)
    gamma = S.yarn_ramp(dim, base, original, beta_fast, beta_slow, truncate)
    np.testing.assert_allclose(ratio, (1 - gamma) / factor + gamma, rtol=1e-12)
    # the paper's ramp (linear in r) agrees outside the ramp
    paper = S.yarn_ramp_paper(dim, base, original, beta_fast, beta_slow)
    outside = (r > beta_fast) | (r < beta_slow)
    np.testing.assert_allclose(paper[outside], gamma[outside])


def test_yarn_ramp_is_linear_in_pair_index_and_paper_ramp_linear_in_rotations():
    d, b, L = 128, 10000.0, 4096
    gamma = S.yarn_ramp(d, b, L, truncate=False)
    r = S.rotations(d, b, L)
    inside = (gamma > 0) & (gamma < 1)
    assert inside.sum() >= 3
    np.testing.assert_allclose(np.diff(gamma[inside]), np.diff(gamma[inside])[0])  # constant step in i
    # boundaries: the real-valued pair index at which pair i turns exactly beta times over L
    start = d * math.log(L / (2 * math.pi * 32)) / (2 * math.log(b))
    end = d * math.log(L / (2 * math.pi * 1)) / (2 * math.log(b))
    i = np.arange(d // 2)
    np.testing.assert_allclose(gamma, np.clip((end - i) / (end - start), 0, 1))
    paper = S.yarn_ramp_paper(d, b, L)
    np.testing.assert_allclose(paper, np.clip((r - 1) / 31, 0, 1))
    assert not np.allclose(paper, gamma)  # they differ inside the ramp
    # truncate rounds the boundaries outwards to whole pairs
    gt = S.yarn_ramp(d, b, L, truncate=True)
    np.testing.assert_allclose(gt, np.clip((math.ceil(end) - i) / (math.ceil(end) - math.floor(start)), 0, 1))


def test_yarn_attention_factor_values():
    assert S.yarn_attention_factor(1.0) == 1.0
    assert S.yarn_attention_factor(16.0) == pytest.approx(0.1 * math.log(16) + 1)
    assert S.yarn_attention_factor(40.0, mscale=1.0, mscale_all_dim=1.0) == 1.0
    assert S.yarn_attention_factor(40.0, 0.707, 1.0) == pytest.approx(
        (0.0707 * math.log(40) + 1) / (0.1 * math.log(40) + 1)
    )
    _, a = S.scaled_frequencies("yarn", 64, factor=4.0, original_max_position_embeddings=1024, attention_factor=1.25,
                                mscale=1.0, mscale_all_dim=2.0)
    assert a == 1.25  # an explicit attention_factor wins


def test_yarn_softmax_scale_values():
    assert S.yarn_softmax_scale(40.0) == 1.0  # plain YaRN: the softmax scale is left alone
    assert S.yarn_softmax_scale(1.0, mscale_all_dim=1.0) == 1.0
    # DeepSeek-V3: the cos/sin factor is 1, the temperature sits in the softmax scale instead
    assert S.yarn_attention_factor(40.0, mscale=1.0, mscale_all_dim=1.0) == 1.0
    assert S.yarn_softmax_scale(40.0, mscale_all_dim=1.0) == pytest.approx(S.yarn_attention_factor(40.0) ** 2)
    assert S.yarn_softmax_scale(40.0, mscale_all_dim=1.0) == pytest.approx(1.8738542, rel=1e-7)
    assert S.yarn_softmax_scale(16.0, mscale_all_dim=0.5) == pytest.approx((0.05 * math.log(16) + 1) ** 2)


@FAST
@given(dim=dims, base=bases, factor=factors, original=lengths,
       lh=st.sampled_from([(1.0, 4.0), (2.0, 8.0), (0.5, 1.5)]))
def test_llama3_keeps_short_wavelengths_and_interpolates_long_ones(dim, base, factor, original, lh):
    low, high = lh
    params = dict(factor=factor, low_freq_factor=low, high_freq_factor=high, original_max_position_embeddings=original)
    inv_freq, a = S.scaled_frequencies("llama3", dim, base, **params)
    assert a == 1.0  # no attention temperature: Llama 3.1 is not YaRN
    theta = frequencies(dim, base)
    wavelength = 2 * np.pi / theta
    ratio = inv_freq / theta
    assert np.all(ratio[wavelength < original / high] == 1.0)
    np.testing.assert_allclose(ratio[wavelength > original / low], 1 / factor, rtol=1e-12)
    mid = (wavelength >= original / high) & (wavelength <= original / low)
    smooth = (original / wavelength[mid] - low) / (high - low)
    np.testing.assert_allclose(ratio[mid], (1 - smooth) / factor + smooth, rtol=1e-12)
    assert np.all(np.diff(ratio) <= 1e-12)


def test_llama31_setting_bands_and_differs_from_yarn():
    d, b = 128, 500000.0
    ratio = S.frequency_ratio("llama3", d, b, **S.LLAMA_3_1)
    wavelength = 2 * np.pi / frequencies(d, b)
    kept, divided = ratio == 1.0, np.isclose(ratio, 1 / 8, rtol=1e-12)
    assert np.array_equal(kept, wavelength < 8192 / 4)
    assert np.array_equal(divided, wavelength >= 8192)
    assert (kept.sum(), divided.sum(), (~kept & ~divided).sum()) == (29, 29, 6)
    yarn, a = S.scaled_frequencies("yarn", d, b, factor=8.0, original_max_position_embeddings=8192)
    assert a > 1.0 and not np.allclose(yarn / frequencies(d, b), ratio)


@pytest.mark.parametrize("method", ["linear", "ntk", "yarn", "llama3"])
def test_factor_one_is_plain_rope(method):
    params = {"factor": 1.0}
    if method in ("yarn", "llama3"):
        params["original_max_position_embeddings"] = 4096
    if method == "llama3":
        params.update(low_freq_factor=1.0, high_freq_factor=4.0)
    inv_freq, a = S.scaled_frequencies(method, 64, 10000.0, **params)
    np.testing.assert_allclose(inv_freq, frequencies(64, 10000.0), rtol=1e-14)
    assert a == 1.0


def test_rotations_and_beyond_trained_angles():
    d, b, L = 128, 10000.0, 4096
    r = S.rotations(d, b, L)
    np.testing.assert_allclose(r, L * frequencies(d, b) / (2 * np.pi))
    assert r[0] == pytest.approx(L / (2 * np.pi)) and np.all(np.diff(r) < 0)
    no_turn = r < 1
    assert no_turn.sum() == 18
    theta = frequencies(d, b)
    # plain RoPE read at the trained length: nothing new; at 2L: every pair without a full turn
    assert not S.beyond_trained_angles(theta, L, L, base=b).any()
    assert np.array_equal(S.beyond_trained_angles(theta, L, 2 * L, base=b), no_turn)
    # PI at s*L reaches exactly L*theta_i: inside; NTK-aware leaves intermediate slow pairs outside
    for s in (2.0, 4.0, 8.0):
        lin, _ = S.scaled_frequencies("linear", d, b, factor=s)
        assert not S.beyond_trained_angles(lin, L, int(s * L), base=b).any()
        ntk, _ = S.scaled_frequencies("ntk", d, b, factor=s)
        out = S.beyond_trained_angles(ntk, L, int(s * L), base=b)
        assert out.sum() == no_turn.sum() - 1 and not out[-1]


def test_registry_and_exports():
    assert set(S.METHODS) == {"default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope"}
    # the widget offers every method that takes one scale factor; LongRoPE takes a factor per pair
    assert set(ce.METHOD_PARAMS) == set(S.METHODS) - {"longrope"}
    for name, spec in S.METHODS.items():
        assert spec.name == name and spec.summary and spec.source
    assert rope_edu.scaling is S and "scaling" in rope_edu.__all__
    inv_freq, _ = S.scaled_frequencies("yarn", 128, factor=4, original_max_position_embeddings=4096)
    assert inv_freq.shape == (64,) and inv_freq.dtype == np.float64


# --- bad input --------------------------------------------------------------------------------

YARN = dict(factor=4.0, original_max_position_embeddings=4096)
LLAMA = dict(S.LLAMA_3_1)
DYN = dict(factor=2.0, original_max_position_embeddings=4096, seq_len=8192)


@pytest.mark.parametrize(
    "method, dim, base, params, error, match",
    [
        ("yarnn", 64, 10000.0, {}, ValueError, "method 'yarnn'; expected one of 'default', 'linear'"),
        (None, 64, 10000.0, {}, ValueError, "method"),
        ("linear", 63, 10000.0, {"factor": 2.0}, ValueError, "dim"),
        ("linear", 64.0, 10000.0, {"factor": 2.0}, TypeError, "dim"),
        ("linear", 64, 1.0, {"factor": 2.0}, ValueError, "base"),
        ("linear", 64, "1e4", {"factor": 2.0}, TypeError, "base"),
        ("linear", 64, 10000.0, {}, TypeError, "requires parameter.*factor"),
        ("linear", 64, 10000.0, {"factor": 0.5}, ValueError, "factor must be >= 1"),
        ("linear", 64, 10000.0, {"factor": float("nan")}, ValueError, "factor"),
        ("linear", 64, 10000.0, {"factor": float("inf")}, ValueError, "factor"),
        ("linear", 64, 10000.0, {"factor": "2"}, TypeError, "factor"),
        ("linear", 64, 10000.0, {"factor": True}, TypeError, "factor"),
        ("linear", 64, 10000.0, {"factor": 2.0, "scale": 2.0}, TypeError, "unknown parameter.*scale"),
        ("default", 64, 10000.0, {"factor": 2.0}, TypeError, "unknown parameter.*factor"),
        ("ntk", 2, 10000.0, {"factor": 2.0}, ValueError, "dim must be >= 4"),
        ("ntk", 64, 10000.0, {"factor": 0.9}, ValueError, "factor"),
        ("dynamic", 64, 10000.0, {"factor": 2.0, "seq_len": 10}, TypeError, "original_max_position_embeddings"),
        ("dynamic", 64, 10000.0, {**DYN, "seq_len": 0}, ValueError, "seq_len"),
        ("dynamic", 64, 10000.0, {**DYN, "seq_len": 10.5}, TypeError, "seq_len"),
        ("dynamic", 64, 10000.0, {**DYN, "original_max_position_embeddings": -1}, ValueError,
         "original_max_position_embeddings"),
        ("dynamic", 2, 10000.0, DYN, ValueError, "dim must be >= 4"),
        ("yarn", 64, 10000.0, {"factor": 4.0}, TypeError, "original_max_position_embeddings"),
        ("yarn", 64, 10000.0, {**YARN, "original_max_position_embeddings": 0}, ValueError,
         "original_max_position_embeddings"),
        ("yarn", 64, 10000.0, {**YARN, "original_max_position_embeddings": 4096.0}, TypeError,
         "original_max_position_embeddings"),
        ("yarn", 64, 10000.0, {**YARN, "beta_fast": 1.0, "beta_slow": 1.0}, ValueError, "beta_fast must be greater"),
        ("yarn", 64, 10000.0, {**YARN, "beta_fast": 1.0, "beta_slow": 32.0}, ValueError, "beta_fast"),
        ("yarn", 64, 10000.0, {**YARN, "beta_slow": 0.0}, ValueError, "beta_slow"),
        ("yarn", 64, 10000.0, {**YARN, "attention_factor": 0.0}, ValueError, "attention_factor"),
        ("yarn", 64, 10000.0, {**YARN, "attention_factor": "1"}, TypeError, "attention_factor"),
        ("yarn", 64, 10000.0, {**YARN, "mscale": 1.0}, ValueError, "mscale and mscale_all_dim"),
        ("yarn", 64, 10000.0, {**YARN, "mscale_all_dim": 1.0, "attention_factor": 1.2}, ValueError, "mscale"),
        ("yarn", 64, 10000.0, {**YARN, "mscale": -1.0, "mscale_all_dim": 1.0}, ValueError, "mscale"),
        ("yarn", 64, 10000.0, {**YARN, "truncate": 1}, TypeError, "truncate"),
        ("yarn", 64, 10000.0, {**YARN, "low_freq_factor": 1.0}, TypeError, "unknown parameter.*low_freq_factor"),
        ("llama3", 64, 10000.0, {k: v for k, v in LLAMA.items() if k != "high_freq_factor"}, TypeError,
         "high_freq_factor"),
        ("llama3", 64, 10000.0, {**LLAMA, "low_freq_factor": 4.5}, ValueError, "low_freq_factor must not exceed"),
        ("llama3", 64, 10000.0, {**LLAMA, "low_freq_factor": 5.0}, ValueError, "low_freq_factor"),
        ("llama3", 64, 10000.0, {**LLAMA, "low_freq_factor": 0.0}, ValueError, "low_freq_factor"),
        ("llama3", 64, 10000.0, {**LLAMA, "factor": 0.0}, ValueError, "factor"),
        ("llama3", 64, 10000.0, {**LLAMA, "beta_fast": 32.0}, TypeError, "beta_fast"),
    ],
)
def test_scaled_frequencies_bad_input(method, dim, base, params, error, match):
    with pytest.raises(error, match=match):
        S.scaled_frequencies(method, dim, base, **params)
    with pytest.raises(error, match=match):
        S.frequency_ratio(method, dim, base, **params)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: S.rotations(64, 10000.0, 0), ValueError, "original_max_position_embeddings"),
        (lambda: S.rotations(63, 10000.0, 4096), ValueError, "dim"),
        (lambda: S.ntk_base(10000.0, 0.5, 64), ValueError, "factor"),
        (lambda: S.ntk_base(1.0, 2.0, 64), ValueError, "base"),
        (lambda: S.ntk_base(10000.0, 2.0, 2), ValueError, "dim"),
        (lambda: S.dynamic_scale(2.0, 4096, 0), ValueError, "seq_len"),
        (lambda: S.dynamic_scale(2.0, "4096", 10), TypeError, "original_max_position_embeddings"),
        (lambda: S.dynamic_scale(0.5, 4096, 10), ValueError, "factor"),
        (lambda: S.yarn_ramp(64, 10000.0, 4096, beta_fast=1.0, beta_slow=2.0), ValueError, "beta_fast"),
        (lambda: S.yarn_ramp(64, 10000.0, 4096, truncate="yes"), TypeError, "truncate"),
        (lambda: S.yarn_ramp_paper(64, 10000.0, 4096, beta_fast=2.0, beta_slow=2.0), ValueError, "beta_fast"),
        (lambda: S.yarn_ramp_paper(64, 10000.0, 4096, beta_slow=-1.0), ValueError, "beta_slow"),
        (lambda: S.yarn_attention_factor(0.5), ValueError, "factor"),
        (lambda: S.yarn_attention_factor(2.0, mscale_all_dim=1.0), ValueError, "mscale"),
        (lambda: S.yarn_softmax_scale(0.5, mscale_all_dim=1.0), ValueError, "factor"),
        (lambda: S.yarn_softmax_scale(2.0, mscale_all_dim=0.0), ValueError, "mscale_all_dim"),
        (lambda: S.yarn_softmax_scale(2.0, mscale_all_dim="1"), TypeError, "mscale_all_dim"),
        (lambda: S.llama3_ramp(64, 500000.0, 8192, 4.0, 1.0), ValueError, "low_freq_factor"),
        (lambda: S.llama3_ramp(64, 500000.0, 8192, 1.0, float("nan")), ValueError, "high_freq_factor"),
        (lambda: S.beyond_trained_angles([1.0, 0.5], 4096, 0), ValueError, "seq_len"),
        (lambda: S.beyond_trained_angles([1.0, -0.5], 4096, 10), ValueError, "inv_freq"),
        (lambda: S.beyond_trained_angles([[1.0, 0.5]], 4096, 10), ValueError, "inv_freq"),
        (lambda: S.beyond_trained_angles(["a"], 4096, 10), TypeError, "inv_freq"),
        (lambda: S.beyond_trained_angles([1.0, np.nan], 4096, 10), ValueError, "inv_freq"),
        (lambda: S.beyond_trained_angles([1.0, 0.5], 4096, 10, base=0.5), ValueError, "base"),
    ],
)
def test_helpers_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- the widget ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", sorted(ce.METHOD_PARAMS))
def test_widget_state_matches_the_package(method):
    s = ce.state(method, 4.0, 2048)
    inv_freq, a = S.scaled_frequencies(method, ce.DIM, ce.BASE, **ce.method_params(method, 4.0, 2048))
    np.testing.assert_allclose(s["inv_freq"], inv_freq)
    np.testing.assert_allclose(s["ratio"], inv_freq / frequencies(ce.DIM, ce.BASE))
    np.testing.assert_allclose(s["wavelength"], 2 * np.pi / frequencies(ce.DIM, ce.BASE))
    assert s["logit_scale"] == pytest.approx(a**2) and s["new_context"] == 8192
    d = s["distances"]
    assert d[0] == 0 and d[-1] == 2 * 8192 and np.all(np.diff(d) > 0)
    q, k = ce.fixed_pair()
    np.testing.assert_allclose(s["logits_before"], np.mean(np.cos(np.outer(d, frequencies(ce.DIM, ce.BASE))), axis=1),
                               atol=1e-12)
    np.testing.assert_allclose(s["logits_after"], a**2 * np.mean(np.cos(np.outer(d, inv_freq)), axis=1), atol=1e-12)
    assert s["logits_before"][0] == pytest.approx(1.0)
    assert s["no_full_turn"] == int(np.sum(S.rotations(ce.DIM, ce.BASE, 2048) < 1))
    assert s["beyond"] == int(np.sum(S.beyond_trained_angles(inv_freq, 2048, 8192, base=ce.BASE)))


def test_widget_state_values():
    plain = ce.state("default", 4.0, 4096)
    assert plain["beyond"] == plain["no_full_turn"] == 18
    for method in ("linear", "yarn", "llama3", "dynamic"):
        assert ce.state(method, 4.0, 4096)["beyond"] == 0
    assert ce.state("ntk", 4.0, 4096)["beyond"] == 17
    # Position Interpolation: the scaled logit at distance s*D equals the plain one at D
    s = ce.state("linear", 4.0, 1024)
    d = s["distances"]
    idx = np.flatnonzero(d % 4 == 0)
    plain = ce.state("default", 1.0, 4096)  # distances up to 8192 >= max(d) / 4
    lookup = dict(zip(plain["distances"].tolist(), plain["logits_before"].tolist()))
    checked = [(s["logits_after"][i], lookup[d[i] // 4]) for i in idx if d[i] // 4 in lookup]
    assert len(checked) > 50
    np.testing.assert_allclose(*zip(*checked), atol=1e-9)
    yarn = ce.state("yarn", 16.0, 4096)
    assert yarn["logits_after"][0] == pytest.approx((0.1 * math.log(16) + 1) ** 2)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(method="rope"), ValueError, "method"),
        (dict(factor=0.5), ValueError, "factor"),
        (dict(factor="4"), TypeError, "factor"),
        (dict(original=0), ValueError, "original"),
        (dict(original=4096.0), TypeError, "original"),
        (dict(n_points=1), ValueError, "n_points"),
        (dict(n_points=10.0), TypeError, "n_points"),
        (dict(dim=7), ValueError, "dim"),
    ],
)
def test_widget_state_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        ce.state(**kwargs)


# The figure itself (controls, data, readouts, its JavaScript): tests/test_context_extension.py.
