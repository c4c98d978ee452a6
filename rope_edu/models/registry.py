"""The family registry: every family rope_spec reads, one row of data each, and the tables beside it.

A new family is one row of :data:`FAMILIES` (see :class:`~rope_edu.models.family.Family` for the
fields; its layer rule is one tagged value of :data:`rope_edu.models.layers.LAYER_RULES`), with
``tests/test_model_sweep.py`` comparing it layer by layer with transformers. Nothing here computes:
the rows name the few functions of :mod:`.reader` a family's attention needs.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from .family import Family
from .reader import (beam_extra, llama4_extra, mla_query_scale_extra, mla_softmax_extra, query_scale_extra,
                     read_gptj, read_minimind)

_F = Family
# RoPE parameters config classes fill in when a config gives none (what a dict without them gets)
_APERTUS_LLAMA3 = MappingProxyType({"rope_type": "llama3", "rope_theta": 12_000_000.0, "factor": 8.0,
                                    "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
                                    "high_freq_factor": 4.0})
_CWM_LLAMA3 = MappingProxyType({"rope_type": "llama3", "rope_theta": 1_000_000.0, "factor": 16.0,
                                "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0})
_MINISTRAL3_YARN = MappingProxyType({"rope_type": "yarn", "rope_theta": 1_000_000.0, "factor": 16.0,
                                     "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0,
                                     "mscale_all_dim": 1.0, "mscale": 1.0, "llama_4_scaling_beta": 0.1})
_MISTRAL4_YARN = MappingProxyType({"rope_type": "yarn", "rope_theta": 10_000.0, "factor": 128.0,
                                   "original_max_position_embeddings": 8192, "beta_fast": 32.0, "beta_slow": 1.0,
                                   "mscale_all_dim": 1.0, "mscale": 1.0, "llama_4_scaling_beta": 0.1})
_MISTRAL_LARGE4_YARN = MappingProxyType({"rope_type": "yarn", "rope_theta": 10_000.0, "factor": 2048.0,
                                         "original_max_position_embeddings": 512, "beta_fast": 32.0,
                                         "beta_slow": 1.0, "attention_factor": 1.0})
_DSV4_NOTE = ("its compressor also appends compressed key entries, each rotated (with these settings) at the "
              "position of its window; the attention output is rotated back by -m theta (keys are values)")
_MROPE_ALIAS = MappingProxyType({"mrope": "default"})  # transformers reads rope_type "mrope" as plain RoPE
# MLA families whose attention always reads interleaved pairs and writes them back half-split
_MLA_INTERLEAVED: dict[str, Any] = dict(layout="interleaved", output_layout="half", extra=mla_softmax_extra)
# Gemma 4's config classes give full-attention layers head_dim = global_head_dim (default 512)
_GLOBAL_HEAD = MappingProxyType({"full_attention": ("global_head_dim", 512)})
# Qwen3-Next / Qwen3.5 without layer_types: every full_attention_interval-th layer attends, the others are linear
_QWEN_HYBRID = ("pattern", "full_attention_interval", 4, "linear_attention")
_GEMMA3_THETA = MappingProxyType({"sliding_attention": 10_000.0, "full_attention": 1_000_000.0, "*": 1_000_000.0})
# Hunyuan's rotary embedding reads a "dynamic" block with alpha as NTK-alpha (a fixed, stretched base)
_NTK_ALPHA = MappingProxyType({"dynamic": ("alpha", "ntk_alpha")})
# config class defaults of the fields Llama 4's attention and GPT-J's reader read (beyond the RoPE block)
_LLAMA4_DEFAULTS = MappingProxyType({"use_qk_norm": True, "attn_temperature_tuning": True, "floor_scale": 8192,
                                     "attn_scale": 0.1})
_GPTJ_DEFAULTS = MappingProxyType({"rotary_dim": 64, "n_positions": 2048})
# why rope_spec refuses Phi-3.5-MoE's scaled RoPE (its released LongRoPE included)
_PHIMOE_SCALING = ("Phi-3.5-MoE's rotary embedding, for every rope_type but 'default', multiplies cos and sin by "
                   "short_mscale or long_mscale, chosen by the length, instead of the type's attention factor, and "
                   "computes the frequencies without the length (LongRoPE's short factors at every length); "
                   "rope_spec does not model this")
# GLM-5-Next: Glm5NextTextConfig refuses qk_rope_head_dim > 0, and its text model passes no position embeddings
_GLM5_NEXT_NOPE = ("GLM-5-Next's text model applies no rotation: its DSA attention layers have qk_rope_head_dim 0 "
                   "(its config class refuses any other value) and its KDA layers are linear attention; only its "
                   "vision encoder rotates")
_GPT_OSS_YARN = MappingProxyType({"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                  "truncate": False, "original_max_position_embeddings": 4096})

#: Every family :func:`rope_spec` reads, by key: one row of data each (see :class:`Family`).
FAMILIES: dict[str, Family] = {f.key: f for f in [
    # plain Llama-style RoPE: the whole head, half-split pairs
    _F("llama", "Llama 2, Llama 3.x, Code Llama", ("llama",), "transformers.models.llama"),
    _F("mistral", "Mistral", ("mistral",), "transformers.models.mistral"),
    _F("qwen2", "Qwen2, Qwen2.5", ("qwen2",), "transformers.models.qwen2"),
    _F("qwen3", "Qwen3", ("qwen3",), "transformers.models.qwen3", qk_norm="before_rope", head_default=128),
    _F("olmo2", "OLMo 2", ("olmo2",), "transformers.models.olmo2", qk_norm="before_rope"),
    _F("gemma3", "Gemma 3 (text)", ("gemma3_text",), "transformers.models.gemma3", qk_norm="before_rope",
       default_theta=_GEMMA3_THETA, layers=("pattern", "sliding_window_pattern", 6),
       local_theta=("rope_local_base_freq", "sliding_attention"), head_default=256),
    _F("deepseek_v3", "DeepSeek-V3, Kimi K2 / K2.5 (MLA)", ("deepseek_v3", "kimi_k2"), "transformers.models.deepseek_v3",
       rotary="mla", interleave=("rope_interleave", True), extra=mla_softmax_extra),
    _F("phi3", "Phi-3, Phi-3.5, Phi-4-mini", ("phi3",), "transformers.models.phi3", rotary="fraction",
       allowed_rope_types=("default", "longrope"), rename=MappingProxyType({"su": "longrope", "yarn": "longrope"}),
       top_level_original=True),
    _F("phi", "Phi-1.5, Phi-2", ("phi",), "transformers.models.phi", rotary="fraction", default_fraction=0.5),
    _F("gpt_neox", "GPT-NeoX, Pythia", ("gpt_neox",), "transformers.models.gpt_neox", rotary="fraction",
       fraction_keys=("partial_rotary_factor", "rotary_pct"), default_fraction=0.25,
       theta_keys=("rotary_emb_base",), ignored_theta=("rope_theta",), head="split"),
    _F("gptj", "GPT-J", ("gptj",), "transformers.models.gptj", read=read_gptj,
       class_defaults=_GPTJ_DEFAULTS),
    _F("glm", "GLM-4 (glm, glm4)", ("glm", "glm4"), "transformers.models.glm, transformers.models.glm4",
       layout="interleaved", rotary="fraction", default_fraction=0.5, head_default=128),
    _F("smollm3", "SmolLM3", ("smollm3",), "transformers.models.smollm3", default_theta=2_000_000.0,
       layers=("nope_flags", 4, "full_attention", "full_attention")),
    _F("llama4", "Llama 4 (text)", ("llama4_text",), "transformers.models.llama4", layout="interleaved",
       default_theta=500_000.0, layers=("nope_flags", 4, "chunked_attention", "full_attention"), extra=llama4_extra,
       head_default=128, class_defaults=_LLAMA4_DEFAULTS),
    _F("gpt_oss", "GPT-OSS", ("gpt_oss",), "transformers.models.gpt_oss", default_theta=150_000.0,
       default_block=_GPT_OSS_YARN, head_default=64),
    _F("minimind", "MiniMind (a plain dict; model_minimind.py)", ("minimind",),
       "jingyaogong/minimind model/model_minimind.py", read=read_minimind),
    _F("qwen2_vl", "Qwen2-VL (language model, M-RoPE)", ("qwen2_vl_text",), "transformers.models.qwen2_vl",
       default_theta=1_000_000.0, mrope=("contiguous", (16, 24, 24)), rename=MappingProxyType({"mrope": "default"})),
    _F("qwen2_5_vl", "Qwen2.5-VL (language model, M-RoPE)", ("qwen2_5_vl_text",), "transformers.models.qwen2_5_vl",
       default_theta=1_000_000.0, mrope=("contiguous", (16, 24, 24)), rename=MappingProxyType({"mrope": "default"})),
    _F("qwen3_vl", "Qwen3-VL (language model, interleaved M-RoPE)", ("qwen3_vl_text",), "transformers.models.qwen3_vl",
       default_theta=500_000.0, qk_norm="before_rope", mrope=("interleaved", (24, 20, 20)),
       rename=MappingProxyType({"mrope": "default"}), head_default=128),
    # families added for transformers 5.24 (checked by tests/test_model_sweep.py)
    _F("afmoe", "AFMoE", ("afmoe",), "transformers.models.afmoe", rotating_layer_types=("sliding_attention",),
       qk_norm="before_rope", head_default=128),
    _F("apertus", "Apertus", ("apertus",), "transformers.models.apertus", default_theta=12000000.0,
       ignored_theta=("rope_theta",), qk_norm="before_rope", default_block=_APERTUS_LLAMA3),
    _F("apertus1p5", "Apertus 1.5 (text)", ("apertus1p5_text",), "transformers.models.apertus1p5",
       default_theta=12000000.0, ignored_theta=("rope_theta",), qk_norm="before_rope",
       default_block=_APERTUS_LLAMA3),
    _F("arcee", "Arcee (AFM)", ("arcee",), "transformers.models.arcee"),
    _F("aria", "Aria (text)", ("aria_text",), "transformers.models.aria"),
    _F("axk1", "AXK1 (MLA)", ("axk1",), "transformers.models.axk1", rotary="mla",
       interleave=("rope_interleave", True), extra=mla_softmax_extra),
    _F("axk2", "AXK2 (MLA)", ("axk2",), "transformers.models.axk2", rotary="mla", **_MLA_INTERLEAVED),
    _F("bamba", "Bamba (hybrid Mamba)", ("bamba",), "transformers.models.bamba", rotary="fraction",
       default_fraction=0.5, layers=("attention_indices", "attn_layer_indices")),
    _F("beam", "Beam (text)", ("beam",), "transformers.models.beam", rotating_layer_types=("sliding_attention",),
       qk_norm="before_rope", extra=beam_extra, head_default=128),
    _F("bitnet", "BitNet", ("bitnet",), "transformers.models.bitnet", default_theta=500000.0),
    _F("codegen", "CodeGen", ("codegen",), "transformers.models.codegen", read=read_gptj,
       class_defaults=_GPTJ_DEFAULTS),
    _F("cohere", "Cohere Command R", ("cohere",), "transformers.models.cohere", default_theta=500000.0,
       layout="interleaved"),
    _F("cohere2", "Cohere Command R7B / A (Cohere 2)", ("cohere2",), "transformers.models.cohere2",
       layout="interleaved", rotating_layer_types=("sliding_attention",),
       layers=("no_window", "none", ("pattern", "sliding_window_pattern", 4))),
    _F("cohere2_moe", "Cohere 2 MoE", ("cohere2_moe",), "transformers.models.cohere2_moe", layout="interleaved",
       rotating_layer_types=("sliding_attention",), head_default=128, ignored_scaling=("rope_scaling",),
       layers=("forced", "mlp_layer_types", "dense", "first_k_dense_replace", "prefix_dense_sliding_window_pattern", 1,
               ("no_window", "none", ("pattern", "sliding_window_pattern", 4)))),
    _F("cosmos3_edge", "Cosmos 3 Edge (text)", ("cosmos3_edge_text",), "transformers.models.cosmos3_edge",
       default_theta=100000000.0, ignored_theta=("rope_theta",), mrope=("interleaved", (24, 20, 20)),
       rename=_MROPE_ALIAS, head_default=128),
    _F("cwm", "CWM", ("cwm",), "transformers.models.cwm", default_theta=1000000.0, ignored_theta=("rope_theta",),
       default_block=_CWM_LLAMA3, head_default=128),
    _F("deepseek_v2", "DeepSeek-V2 (MLA)", ("deepseek_v2",), "transformers.models.deepseek_v2", rotary="mla",
       layout="interleaved", extra=mla_softmax_extra),
    _F("deepseek_v32", "DeepSeek-V3.2 (MLA)", ("deepseek_v32",), "transformers.models.deepseek_v32", rotary="mla",
       **_MLA_INTERLEAVED),
    _F("diffllama", "DiffLlama", ("diffllama",), "transformers.models.diffllama"),
    _F("doge", "Doge", ("doge",), "transformers.models.doge", qk_norm="before_rope"),
    _F("dots1", "dots.llm1", ("dots1",), "transformers.models.dots1", qk_norm="before_rope"),
    _F("embedding_gemma2", "EmbeddingGemma 2 (text)", ("embedding_gemma2_text",),
       "transformers.models.embedding_gemma2", ignored_theta=("rope_theta",), nested_only=True,
       qk_norm="before_rope", head_default=256, type_head=_GLOBAL_HEAD),
    _F("emu3", "Emu3 (text)", ("emu3_text_model",), "transformers.models.emu3", default_theta=1000000.0),
    _F("ernie4_5", "ERNIE 4.5", ("ernie4_5",), "transformers.models.ernie4_5", default_theta=500000.0,
       layout="interleaved", head_default=128),
    _F("ernie4_5_moe", "ERNIE 4.5 MoE", ("ernie4_5_moe",), "transformers.models.ernie4_5_moe",
       default_theta=500000.0, layout="interleaved"),
    _F("exaone4", "EXAONE 4.0", ("exaone4",), "transformers.models.exaone4", rotating_layer_types=("sliding_attention",),
       layers=("no_window", "all"), qk_norm="before_rope"),
    _F("exaone_moe", "EXAONE MoE", ("exaone_moe",), "transformers.models.exaone_moe",
       rotating_layer_types=("sliding_attention",), layers=("no_window", "all"), qk_norm="before_rope"),
    _F("flex_olmo", "FlexOlmo", ("flex_olmo",), "transformers.models.flex_olmo", default_theta=500000.0,
       qk_norm="before_rope"),
    _F("flint", "Flint", ("flint",), "transformers.models.flint", rotating_layer_types=("sliding_attention",),
       layers=("no_window", "none"), qk_norm="before_rope", head_default=128),
    _F("gemma", "Gemma", ("gemma",), "transformers.models.gemma", head_default=256),
    _F("gemma2", "Gemma 2", ("gemma2",), "transformers.models.gemma2", head_default=256),
    _F("gemma4", "Gemma 4 (text)", ("gemma4_text",), "transformers.models.gemma4", rotary="fraction",
       ignored_theta=("rope_theta",), nested_only=True, qk_norm="before_rope",
       head_default=256, type_head=_GLOBAL_HEAD),
    _F("gemma4_unified", "Gemma 4 unified (text)", ("gemma4_unified_text",), "transformers.models.gemma4_unified",
       rotary="fraction", ignored_theta=("rope_theta",), nested_only=True, qk_norm="before_rope",
       head_default=256, type_head=_GLOBAL_HEAD),
    _F("glm4_moe", "GLM-4.5 / 4.6 (MoE)", ("glm4_moe",), "transformers.models.glm4_moe", rotary="fraction",
       default_fraction=0.5),
    _F("glm4_moe_lite", "GLM-4.7-Flash (MLA)", ("glm4_moe_lite",), "transformers.models.glm4_moe_lite",
       rotary="mla", interleave=("rope_interleave", True), extra=mla_softmax_extra),
    _F("deepseek_v4", "DeepSeek-V4 (text)", ("deepseek_v4",), "transformers.models.deepseek_v4", layout="interleaved",
       rotary="fraction", rotary_at="end", default_fraction=0.125, nested_only=True, theta_keys=(),
       rope_keys=MappingProxyType({"sliding_attention": "main", "*": "compress"}),
       layer_notes=MappingProxyType({"compressed_sparse_attention": _DSV4_NOTE,
                                     "heavily_compressed_attention": _DSV4_NOTE}), head_default=512),
    _F("falcon", "Falcon", ("falcon",), "transformers.models.falcon", head="split", layers=("switch", "alibi", False, False)),
    _F("falcon_h1", "Falcon-H1 (hybrid Mamba)", ("falcon_h1",), "transformers.models.falcon_h1"),
    _F("gemma3n", "Gemma 3n (text)", ("gemma3n_text",), "transformers.models.gemma3n", qk_norm="before_rope",
       default_theta=_GEMMA3_THETA, local_theta=("rope_local_base_freq", "sliding_attention"), head_default=256),
    _F("lfm2_moe", "LFM2 MoE", ("lfm2_moe",), "transformers.models.lfm2_moe", default_theta=1_000_000.0,
       qk_norm="before_rope"),
    _F("glm4v_moe", "GLM-4.5V (text)", ("glm4v_moe_text",), "transformers.models.glm4v_moe", rotary="fraction",
       default_fraction=0.5, mrope=("contiguous", (8, 12, 12)), rename=_MROPE_ALIAS),
    _F("glm4v", "GLM-4.1V (text)", ("glm4v_text",), "transformers.models.glm4v", rotary="fraction",
       layout="interleaved", mrope=("contiguous", (8, 12, 12)), rename=_MROPE_ALIAS),
    _F("glm_image", "GLM-Image (text)", ("glm_image_text",), "transformers.models.glm_image", rotary="fraction",
       mrope=("contiguous", (8, 12, 12)), rename=_MROPE_ALIAS),
    _F("glm_moe_dsa", "GLM MoE DSA (MLA)", ("glm_moe_dsa",), "transformers.models.glm_moe_dsa", rotary="mla",
       **_MLA_INTERLEAVED),
    _F("glm_ocr", "GLM-OCR (text)", ("glm_ocr_text",), "transformers.models.glm_ocr", rotary="fraction",
       layout="interleaved", mrope=("contiguous", (8, 12, 12)), rename=_MROPE_ALIAS),
    _F("granite", "Granite 3", ("granite",), "transformers.models.granite"),
    _F("granite_docling", "Granite-Docling (text)", ("granite_docling_text",), "transformers.models.granite_docling"),
    _F("granite_swa", "Granite SWA", ("granite_swa",), "transformers.models.granite_swa"),
    _F("granitemoe", "Granite MoE", ("granitemoe",), "transformers.models.granitemoe"),
    _F("granitemoe_swa", "Granite MoE SWA", ("granitemoe_swa",), "transformers.models.granitemoe_swa"),
    _F("granitemoehybrid", "Granite 4 (hybrid MoE)", ("granitemoehybrid",), "transformers.models.granitemoehybrid",
       layers=("switch", "position_embedding_type", "rope", None)),
    _F("granitemoeshared", "Granite MoE shared", ("granitemoeshared",), "transformers.models.granitemoeshared"),
    _F("helium", "Helium", ("helium",), "transformers.models.helium", default_theta=100000.0, layout="interleaved",
       head_default=128),
    _F("hrm_text", "HRM-Text", ("hrm_text",), "transformers.models.hrm_text", head_default=128),
    _F("hunyuan_v1_dense", "Hunyuan dense", ("hunyuan_v1_dense",), "transformers.models.hunyuan_v1_dense", retype=_NTK_ALPHA),
    _F("hunyuan_v1_moe", "Hunyuan MoE", ("hunyuan_v1_moe",), "transformers.models.hunyuan_v1_moe", retype=_NTK_ALPHA),
    _F("hy_v3", "HY-V3", ("hy_v3",), "transformers.models.hy_v3", default_theta=11158840.0, qk_norm="before_rope",
       head_default=128),
    _F("hy_v4", "HY-V4 (MLA)", ("hy_v4",), "transformers.models.hy_v4", rotary="mla", extra=mla_softmax_extra),
    _F("hyperclovax", "HyperCLOVA X", ("hyperclovax",), "transformers.models.hyperclovax"),
    _F("jais2", "Jais 2", ("jais2",), "transformers.models.jais2"),
    _F("jetmoe", "JetMoE", ("jetmoe",), "transformers.models.jetmoe", head="kv_channels"),
    _F("kolibri1", "Kolibri 1", ("kolibri1",), "transformers.models.kolibri1", rotating_layer_types=("sliding_attention",),
       layers=("no_window", "all"), qk_norm="before_rope", head_default=128),
    _F("laguna", "Laguna", ("laguna",), "transformers.models.laguna", rotary="fraction",
       ignored_theta=("rope_theta",), nested_only=True, qk_norm="before_rope", head_default=128),
    _F("lara_mini", "Lara mini", ("lara_mini",), "transformers.models.lara_mini",
       rotating_layer_types=("sliding_attention",), qk_norm="before_rope", head_default=128),
    _F("lfm2", "LFM2", ("lfm2",), "transformers.models.lfm2", default_theta=1000000.0, qk_norm="before_rope"),
    _F("lfm3", "LFM3", ("lfm3",), "transformers.models.lfm3", default_theta=1000000.0, rotary="fraction",
       ignored_theta=("rope_theta",), nested_only=True, qk_norm="before_rope", head_default=128),
    _F("mellum", "Mellum", ("mellum",), "transformers.models.mellum", rotary="fraction",
       ignored_theta=("rope_theta",), nested_only=True, qk_norm="before_rope", head_default=128),
    _F("mimo_v2_flash", "MiMo-V2-Flash", ("mimo_v2_flash",), "transformers.models.mimo_v2_flash",
       rotary="fraction", ignored_theta=("rope_theta",), nested_only=True, head_default=192),
    _F("minicpm3", "MiniCPM3 (MLA)", ("minicpm3",), "transformers.models.minicpm3", rotary="mla",
       extra=mla_softmax_extra),
    _F("minimax", "MiniMax-Text-01", ("minimax",), "transformers.models.minimax", default_theta=1000000.0),
    _F("minimax_m2", "MiniMax-M2", ("minimax_m2",), "transformers.models.minimax_m2", rotary="fraction",
       default_theta=5000000.0, rotary_dim_key="rotary_dim", qk_norm="before_rope", head_default=128),
    _F("minimax_m3_vl", "MiniMax-M3-VL (text)", ("minimax_m3_vl_text",), "transformers.models.minimax_m3_vl",
       rotary="fraction", default_theta=5000000.0, qk_norm="before_rope", head_default=128),
    _F("ministral", "Ministral", ("ministral",), "transformers.models.ministral"),
    _F("ministral3", "Ministral 3", ("ministral3",), "transformers.models.ministral3", extra=query_scale_extra,
       ignored_theta=("rope_theta",), default_block=_MINISTRAL3_YARN, default_theta=1_000_000.0, head_default=128),
    _F("mistral4", "Mistral 4 (MLA)", ("mistral4",), "transformers.models.mistral4", rotary="mla",
       interleave=("rope_interleave", True), extra=mla_query_scale_extra, ignored_theta=("rope_theta",),
       default_block=_MISTRAL4_YARN),
    _F("mistral_large4", "Mistral Large 4 (MLA, text)", ("mistral_large4_text",),
       "transformers.models.mistral_large4", rotary="mla", **_MLA_INTERLEAVED,
       layers=("nope_flags", 4, "indexed_attention", "indexed_attention"), ignored_theta=("rope_theta",),
       default_block=_MISTRAL_LARGE4_YARN),
    _F("mixtral", "Mixtral", ("mixtral",), "transformers.models.mixtral", default_theta=1000000.0),
    _F("mllama", "Llama 3.2 Vision (text)", ("mllama_text_model",), "transformers.models.mllama",
       default_theta=500000.0, layers=("nope_indices", "cross_attention_layers")),
    _F("modernbert_decoder", "ModernBERT decoder", ("modernbert-decoder",),
       "transformers.models.modernbert_decoder",
       default_theta=MappingProxyType({"sliding_attention": 10000.0, "full_attention": 160000.0, "*": 160000.0}),
       ignored_theta=("rope_theta",), nested_only=True),
    _F("molmo2", "Molmo 2 (text)", ("molmo2_text",), "transformers.models.molmo2", qk_norm="before_rope",
       scaling_layers="rope_scaling_layers",
       head_default=128),
    _F("moshi", "Moshi", ("moshi",), "transformers.models.moshi"),
    _F("muse_glimmer", "Muse Glimmer (text)", ("muse_glimmer_text",), "transformers.models.muse_glimmer",
       layers=("nope_list", "layer_rope_theta"), qk_norm="before_rope", head_default=128),
    _F("muse_spark", "Muse Spark (text)", ("muse_spark_text",), "transformers.models.muse_spark",
       layers=("nope_list", "layer_rope_theta"), ignored_theta=("rope_theta",), default_theta=500_000.0, qk_norm="before_rope",
       head_default=64),
    _F("nanochat", "nanochat", ("nanochat",), "transformers.models.nanochat", clockwise=True),
    _F("nemotron", "Nemotron", ("nemotron",), "transformers.models.nemotron", rotary="fraction",
       default_fraction=0.5),
    _F("olmo", "OLMo", ("olmo",), "transformers.models.olmo"),
    _F("olmo3", "OLMo 3", ("olmo3",), "transformers.models.olmo3", default_theta=500000.0,
       flat_types=("full_attention",), qk_norm="before_rope"),
    _F("olmo_hybrid", "OLMo hybrid", ("olmo_hybrid",), "transformers.models.olmo_hybrid", qk_norm="before_rope"),
    _F("olmoe", "OLMoE", ("olmoe",), "transformers.models.olmoe", qk_norm="before_rope"),
    _F("paddleocr_vl", "PaddleOCR-VL (text)", ("paddleocr_vl_text",), "transformers.models.paddleocr_vl",
       default_theta=500000.0, mrope=("contiguous", (16, 24, 24)), rename=_MROPE_ALIAS, head_default=128),
    _F("persimmon", "Persimmon / Fuyu", ("persimmon",), "transformers.models.persimmon", rotary="fraction",
       default_fraction=0.5),
    _F("phimoe", "Phi-3.5-MoE", ("phimoe",), "transformers.models.phimoe", default_theta=1000000.0,
       allowed_rope_types=("default",), allowed_rope_types_note=_PHIMOE_SCALING),
    _F("qwen2_5_omni", "Qwen2.5-Omni (thinker text)", ("qwen2_5_omni_text",), "transformers.models.qwen2_5_omni",
       default_theta=1000000.0, mrope=("contiguous", (16, 24, 24)), rename=_MROPE_ALIAS),
    _F("qwen2_moe", "Qwen2 MoE", ("qwen2_moe",), "transformers.models.qwen2_moe"),
    _F("qwen3_5", "Qwen3.5 (text)", ("qwen3_5_text",), "transformers.models.qwen3_5", rotary="fraction",
       default_fraction=0.25, qk_norm="before_rope", mrope=("interleaved", (11, 11, 10)), rename=_MROPE_ALIAS,
       head_default=256,
       layers=_QWEN_HYBRID),
    _F("qwen3_5_moe", "Qwen3.5 MoE (text)", ("qwen3_5_moe_text",), "transformers.models.qwen3_5_moe",
       rotary="fraction", default_fraction=0.25, qk_norm="before_rope", mrope=("interleaved", (11, 11, 10)),
       rename=_MROPE_ALIAS, head_default=256,
       layers=_QWEN_HYBRID),
    _F("qwen3_moe", "Qwen3 MoE", ("qwen3_moe",), "transformers.models.qwen3_moe", qk_norm="before_rope"),
    _F("qwen3_next", "Qwen3-Next", ("qwen3_next",), "transformers.models.qwen3_next", rotary="fraction",
       default_fraction=0.25, qk_norm="before_rope", head_default=256,
       layers=_QWEN_HYBRID),
    _F("qwen3_omni_moe", "Qwen3-Omni (thinker text)", ("qwen3_omni_moe_text",),
       "transformers.models.qwen3_omni_moe", default_theta=1000000.0, mrope=("interleaved", (24, 20, 20)),
       rename=_MROPE_ALIAS),
    _F("qwen3_vl_moe", "Qwen3-VL MoE (text)", ("qwen3_vl_moe_text",), "transformers.models.qwen3_vl_moe",
       default_theta=500000.0, qk_norm="before_rope", mrope=("interleaved", (24, 20, 20)), rename=_MROPE_ALIAS),
    _F("recurrent_gemma", "RecurrentGemma", ("recurrent_gemma",), "transformers.models.recurrent_gemma",
       rotary="fraction", default_fraction=0.5, layers=("cycle", "block_types")),
    _F("seed_oss", "Seed-OSS", ("seed_oss",), "transformers.models.seed_oss", head_default=128),
    _F("solar_open", "Solar Open", ("solar_open",), "transformers.models.solar_open", rotary="fraction",
       default_theta=1000000.0, head_default=128),
    _F("stablelm", "StableLM", ("stablelm",), "transformers.models.stablelm", rotary="fraction",
       default_fraction=0.25),
    _F("starcoder2", "StarCoder2", ("starcoder2",), "transformers.models.starcoder2"),
    _F("step3p7", "Step 3.5 (text)", ("step3p5",), "transformers.models.step3p7", rotary="fraction",
       nested_only=True, head_default=128),
    _F("unlimited_ocr", "Unlimited-OCR (text)", ("unlimited_ocr_text",), "transformers.models.unlimited_ocr"),
    _F("vaultgemma", "VaultGemma", ("vaultgemma",), "transformers.models.vaultgemma", head_default=256),
    _F("youtu", "Youtu-LLM (MLA)", ("youtu",), "transformers.models.youtu", rotary="mla",
       interleave=("rope_interleave", True), extra=mla_softmax_extra),
    # no rotation in the text model: every layer reads as NoPE, with the reason
    _F("glm5_next", "GLM-5-Next (text)", ("glm5_next_text",), "transformers.models.glm5_next",
       head="qk_nope_head_dim", layers=("nope", _GLM5_NEXT_NOPE, "qk_rope_head_dim")),
    _F("zaya", "ZAYA", ("zaya",), "transformers.models.zaya", rotary="fraction", ignored_theta=("rope_theta",),
       nested_only=True, qk_norm="before_rope", head_default=128),
]}

#: ``model_type`` -> key of :data:`FAMILIES`.
MODEL_TYPES: dict[str, str] = {mt: f.key for f in FAMILIES.values() for mt in f.model_types}

#: Multimodal wrappers whose language model sits in a sub-config: model_type -> (key, inner model_type).
WRAPPERS: dict[str, tuple[str, str]] = {
    "gemma3": ("text_config", "gemma3_text"),
    "llama4": ("text_config", "llama4_text"),
    "qwen2_vl": ("text_config", "qwen2_vl_text"),
    "qwen2_5_vl": ("text_config", "qwen2_5_vl_text"),
    "qwen3_vl": ("text_config", "qwen3_vl_text"),
}

# every registered "<parent>_text" model_type: its multimodal parent holds it in text_config
for _mt in list(MODEL_TYPES):
    if _mt.endswith("_text") and _mt != "hrm_text":  # HRM-Text is a text model of its own
        WRAPPERS.setdefault(_mt[: -len("_text")], ("text_config", _mt))
WRAPPERS["kimi_k25"] = ("text_config", "deepseek_v3")  # Kimi K2.5: its language model is DeepSeek-V3

#: Wrappers whose hub config.json may keep the language model's fields at the top level (no text_config).
FLAT_WRAPPERS = frozenset({"qwen2_vl", "qwen2_5_vl", "glm5_next"})


#: Families of the installed transformers that rope_spec refuses, and what it would need.
UNSUPPORTED: dict[str, str] = {
    "hy_v4_vl_text": "HY-V4-VL applies M-RoPE sections to the rotary part of multi-head latent attention; "
                     "rope_spec applies M-RoPE to whole heads only",
    "dory": "Dory loops over shared layers and gives its 'mlp' layer types attention with their own rotary "
            "settings; rope_spec has no rule for looped layers",
    # model types of transformers 5.24 with a rotary embedding in a generative model that rope_spec has no family
    # row for (tests/test_model_sweep.py lists any that is neither supported nor here)
    "bailing_hybrid": "its rotary module sizes the frequencies by head_dim (else hidden_size // num_attention_heads),"
                      " not by qk_rope_head_dim as the registry's multi-head latent attention rule does, and its "
                      "full-attention layers sit among linear-attention layers; a tiny model's forward fails where "
                      "the two sizes differ, so it is not compared with its code",
    "blt": "the Byte Latent Transformer has a local encoder, a global transformer and a local decoder with RoPE "
           "settings of their own; rope_spec reads one stack of decoder layers",
    "chameleon": "Chameleon has no causal-LM or text-model class (only ChameleonForConditionalGeneration with its "
                 "VQ-VAE image tokenizer), and a ChameleonModel does not build from its class defaults: its RoPE is "
                 "not compared with its code, so rope_spec refuses rather than guess",
    "cohere_compass_text": "its rope_parameters are nested by layer type with M-RoPE sections, and a tiny model built"
                           " from its config class's defaults fails (KeyError 'full_attention'): not compared with "
                           "its code",
    "csm": "its depth decoder ignores the position_ids it is given and numbers the codebooks itself; rope_spec reads "
           "position ids",
    "dbrx": "transformers 5.24 keeps DBRX's base in two places: a config.json's attn_config.rope_theta (500000 in the"
            " released DBRX) reaches DbrxAttention.rope_theta, which nothing uses, while the rotary module reads the "
            "top-level rope_parameters (default 10000); rope_spec would have to report base 10000 for a model trained"
            " at 500000, and refuses instead",
    "deepseek_ocr2_text": "DeepSeek-OCR 2's text decoder does not build from its config class's defaults at a tiny "
                          "size (TypeError in its config), so its RoPE is not compared with its code",
    "dia": "an encoder-decoder text-to-speech model whose encoder attends both ways; rope_spec reads decoder-only "
           "language models",
    "diffusion_gemma_text": "a diffusion language model whose text model attends both ways; rope_spec reads causal "
                            "language models",
    "dots3_note_text": "its text model mixes multi-head latent attention (qk_rope_head_dim, interleaved pairs) with "
                       "partial_rotary_factor fields in per-layer-type rope_parameters; which of the two sizes the "
                       "rotated part is not settled by a comparison with its code",
    "ernie4_5_vl_moe_text": "ERNIE 4.5 VL's rotary embedding reorders the pairs' frequencies "
                            "(recomposition_frequencies): the height and width sections alternate pair by pair and "
                            "the time section follows, each repeated over interleaved pairs; neither of the "
                            "registry's M-RoPE assignments (contiguous, interleaved) says this",
    "gpt_neox_japanese": "its attention computes its scores itself (GPTNeoXJapaneseAttention._attn), not through "
                         "transformers' attention interface, so the sweep cannot see its rotated queries and keys: "
                         "its partial rotary (rotary_pct of the head) is not compared with its code",
    "gradium_phonon_tts": "a text-to-speech model over audio frames; its config class refuses a small backbone (the "
                          "flow head's condition_dim must equal hidden_size), so it is not compared with its code",
    "hunyuan_vl": "HunYuan-VL splits the pairs among as many position axes as its mrope_section lists (XD-RoPE) and "
                  "recomposes cos and sin per axis; rope_spec's M-RoPE has three axes",
    "hunyuan_vl_text": "HunYuan-VL splits the pairs among as many position axes as its mrope_section lists (XD-RoPE) "
                       "and recomposes cos and sin per axis; rope_spec's M-RoPE has three axes",
    "idefics": "IDEFICS's decoder interleaves gated cross-attention to image features with its self-attention layers,"
               " and a tiny model still has 330 million parameters (vision sizes the sweep does not set): not "
               "compared with its code",
    "kyutai_speech_to_text": "a speech-to-text model whose decoder reads audio codebook tokens; a tiny model does not"
                             " build from its config class (padding_idx outside the vocabulary), so it is not "
                             "compared",
    "longcat_flash": "each LongCat-Flash decoder layer runs two multi-head latent attention blocks (attention indices"
                     " 2i and 2i + 1), so rope_spec's one-attention-per-layer index does not name them; not compared "
                     "with its code",
    "moonshine": "an encoder-decoder speech model whose encoder attends both ways; rope_spec reads decoder-only "
                 "language models",
    "moonshine_streaming": "an encoder-decoder speech model whose encoder attends both ways; rope_spec reads "
                           "decoder-only language models",
    "musicflamingo": "rotates audio frames by their time (apply_rotary_time_emb), not tokens by their position",
    "nemo_speechlm": "a speech-recognition model whose audio encoder attends both ways; rope_spec reads decoder-only "
                     "language models",
    "phi4_multimodal": "a tiny Phi4MultimodalForCausalLM still has 870 million parameters (its vision and audio "
                       "encoders), so its language model's partial rotary and LongRoPE are not compared with its code",
    "pocket_tts": "a text-to-speech model over audio frames; its config class refuses a small backbone (the flow "
                  "head's condition_dim must equal hidden_size), so it is not compared with its code",
    "qwen4_exp_text": "an M-RoPE text model with a partial rotary fraction whose config class derives sizes a tiny "
                      "config leaves unset (TypeError when built): not compared with its code",
    "t5gemma": "an encoder-decoder model whose encoder attends both ways; rope_spec reads decoder-only language "
               "models",
    "t5gemma2": "an encoder-decoder model whose encoder attends both ways; rope_spec reads decoder-only language "
                "models",
    "voxtral_realtime_text": "Voxtral Realtime's text decoder needs audio embeddings in its forward (it fails on "
                             "token ids alone), so its RoPE is not compared with its code",
    "zamba2": "Zamba2 reuses shared attention blocks at several hybrid layers (layers_block_type); they rotate only "
              "with use_mem_rope, over heads of 2 * hidden_size / num_attention_heads (the hidden state concatenated "
              "with the original embeddings); the registry has no rule for one attention block shared by several "
              "layers",
}
