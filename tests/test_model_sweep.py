"""Every decoder-only RoPE family of the installed transformers against rope_spec, layer by layer.

The sweep finds the families by reading the source of ``transformers/models/*/modeling_*.py``
(nothing is imported until a family is run): a module that defines a ``*RotaryEmbedding`` class, an
``apply_rotary*`` function and a causal language model (``*ForCausalLM``) or a language model of a
multimodal family (``*TextModel``). For each one it builds a tiny configuration from the family's own
config class (its defaults, with small sizes), runs the family's whole model forward on random token
ids, and records the query and key that every attention layer hands to its attention function
(through ``transformers.AttentionInterface``, the library's documented extension point: the
recorder returns zeros, so no layer's input depends on the positions). It runs twice: at the
positions under test and with every position 0, where RoPE is the identity times its attention
factor. That gives, per layer, the query before RoPE and after it, as the family's own code computes
them: whatever its rotary module, apply function and attention forward decide (which layers rotate,
which base a layer type uses, which dims rotate). Families whose code has M-RoPE run a third time with
(time, height, width) position ids. At position 0 the factor on cos and sin scales the query too, so it
is checked on its own against the rotary modules' ``attention_scaling``; for multi-head latent attention
the softmax scale the attention receives is checked too.

One thing this cannot see: a family that reads interleaved pairs and writes them back half-split
reorders the rotated block even at position 0, the same at every position. ``test_mla_pair_order``
checks that from the attention's source and the family's own apply function.

For each layer ``i`` it then asks ``rope_spec(config, layer=i)``:

* **agree**: rope_spec accepts the config and ``spec.apply`` reproduces every layer's query and key;
* **rejected**: rope_spec raises ``ValueError``/``TypeError`` naming the family (or its config);
* **wrong**: rope_spec accepts it and some layer differs. Never allowed.

Families the sweep cannot run (their tiny config or model does not build on CPU, their attention
does not go through the attention interface) are listed with the reason. The summary is printed at
the end of ``test_sweep`` (``pytest -s``, or ``-rA`` shows it in its report).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from rope_edu import models as M  # noqa: E402
from rope_edu.models import rope_spec  # noqa: E402
from rope_edu.models.registry import WRAPPERS  # noqa: E402
from rope_edu.models.spec import _REORDER  # noqa: E402


MODELS = Path(transformers.__file__).parent / "models"
SEQ = 6
# A tiny model whose config keeps a large size the sweep does not set is left out (CPU time).
MAX_PARAMETERS = 5_000_000
# Two rows: 0..SEQ-1, and far positions (low frequencies must be right too).
POSITIONS = np.stack([np.arange(SEQ), 7 + 61 * np.arange(SEQ)])
# (time, height, width) ids for the M-RoPE families: three different rows of positions
POSITIONS_3D = np.stack([POSITIONS, POSITIONS // 3 + 2, (POSITIONS * 5) % 17])
# transformers rotates in float32: |angle error| <= 4e-6 |angle| + 2e-6 (see tests/test_models.py)
ANGLE_RTOL, ANGLE_ATOL = 4e-6, 2e-6

# Sizes of a tiny model: applied to the fields a config class has (its defaults give the rest).
TINY = {
    "vocab_size": 128, "hidden_size": 128, "n_embd": 128, "d_model": 128, "num_attention_heads": 2, "n_head": 2,
    "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": 6, "n_layer": 6, "n_layers": 6,
    "intermediate_size": 64, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32,
    "intermediate_size_mlp": 64, "ffn_hidden_size": 64, "expert_ffn_hidden_size": 32,
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "moe_num_experts": 4, "num_experts_per_tok": 2,
    "moe_k": 2, "top_k": 2, "n_group": 1, "topk_group": 1, "n_shared_experts": 1, "num_shared_experts": 1,
    "kv_lora_rank": 16, "q_lora_rank": 32, "qk_rope_head_dim": 16, "qk_nope_head_dim": 32, "v_head_dim": 32,
    "linear_num_key_heads": 2, "linear_num_value_heads": 2, "linear_key_head_dim": 16, "linear_value_head_dim": 16,
    "mamba_n_heads": 8, "mamba_d_head": 32, "mamba_d_state": 8, "mamba_n_groups": 1, "mamba_chunk_size": 8,
    "ssm_state_size": 8, "state_size": 8, "n_groups": 1, "chunk_size": 8,
    "altup_num_inputs": 2, "laurel_rank": 8, "hidden_size_per_layer_input": 8, "vocab_size_per_layer_input": 128,
    "index_head_dim": 64, "index_n_heads": 2, "index_topk": 4,
}


# --- finding the families (by reading source, no import) ------------------------------------


@dataclass(frozen=True)
class Candidate:
    name: str       # the transformers.models sub-package
    model_cls: str  # the class the sweep runs


def candidates() -> list[Candidate]:
    found = []
    for path in sorted(MODELS.glob("*/modeling_*.py")):
        name = path.parent.name
        if path.name != f"modeling_{name}.py":
            continue
        text = path.read_text(encoding="utf-8")
        rotary = [c for c in re.findall(r"^class (\w+RotaryEmbedding)\(", text, re.M)
                  if not re.search(r"Vision|Audio|Encoder", c)]
        if not rotary or not re.search(r"^def apply_rotary\w*\(", text, re.M):
            continue
        causal = re.findall(r"^class (\w+ForCausalLM)\(", text, re.M)
        text_model = re.findall(r"^class (\w+TextModel)\(", text, re.M)
        text_model = [c for c in text_model if "Encoder" not in c]
        if causal or text_model:
            found.append(Candidate(name, causal[0] if causal else text_model[0]))
    # families whose text model applies no rotation at all (their only rotary class is a vision encoder's):
    # rope_spec reads them as NoPE (the "nope" layer rule), and the sweep checks that against their code
    for family in M.FAMILIES.values():
        if family.layers and family.layers[0] == "nope":
            name = family.code.rsplit(".", 1)[-1]
            text = (MODELS / name / f"modeling_{name}.py").read_text(encoding="utf-8")
            found.append(Candidate(name, re.findall(r"^class (\w+TextModel)\(", text, re.M)[0]))
    return found


# --- running one family ---------------------------------------------------------------------------


class CannotCompare(Exception):
    """The sweep could not run this family's code (the reason is the message)."""


_RECORD: list[tuple[Any, Any, Any]] = []


def _recorder(module, query, key, value, attention_mask, *args, **kwargs):
    _RECORD.append((getattr(module, "layer_idx", None), query.detach().clone(), key.detach().clone(),
                    kwargs.get("scaling")))
    batch, heads, seq = query.shape[0], query.shape[1], query.shape[2]
    return torch.zeros(batch, seq, heads, value.shape[-1], dtype=query.dtype), None


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register("rope_sweep", _recorder)
    AttentionMaskInterface.register("rope_sweep", sdpa_mask)


def tiny_config(config_cls, extra: dict[str, Any] | None = None):
    """The family's config class with its defaults, at the sizes of :data:`TINY` (where it has the field
    and its default is a number), and ``extra`` (from :data:`SWEEP_CONFIG`)."""
    try:
        default = config_cls().to_dict()
    except Exception as exc:  # the reason is reported
        raise CannotCompare(f"{config_cls.__name__}() does not build: {type(exc).__name__}: {exc}") from None
    kwargs = {k: v for k, v in TINY.items()
              if k in default and (default[k] is None or type(default[k]) is type(v))}
    if "qk_rope_head_dim" in default:
        kwargs.pop("head_dim", None)  # MLA: the config derives head_dim (for some, the rotary part only)
    rope = default.get("rope_parameters") or {}
    section = next((b.get("mrope_section") for b in [rope, *rope.values()] if isinstance(b, dict)
                    and b.get("mrope_section")), None)
    fraction = next((b.get("partial_rotary_factor") for b in [rope, *rope.values()] if isinstance(b, dict)
                     and b.get("partial_rotary_factor")), None) or default.get("partial_rotary_factor") or 1.0
    if section:  # M-RoPE: the sections must fill the rotary part
        key = "qk_rope_head_dim" if "qk_rope_head_dim" in default else "head_dim"
        kwargs[key] = round(2 * sum(section) / fraction)
        if key == "head_dim":
            kwargs["hidden_size"] = 2 * kwargs["head_dim"]
    for token in ("bos_token_id", "eos_token_id", "pad_token_id"):
        if isinstance(default.get(token), int) and default[token] >= TINY["vocab_size"]:
            kwargs[token] = 0
    kwargs.update(extra or {})
    try:
        config = config_cls(**kwargs)
    except Exception as exc:
        raise CannotCompare(f"tiny {config_cls.__name__} does not build: {type(exc).__name__}: {exc}") from None
    return config


def _forward(model, ids, positions) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    _RECORD.clear()
    pos = torch.tensor(positions)
    with torch.no_grad():
        model(input_ids=ids, position_ids=pos, use_cache=False)
    calls = list(_RECORD)
    if not calls:
        raise CannotCompare("no attention call reached transformers' attention interface")
    idx = [c[0] for c in calls]
    if any(i is None for i in idx) or len(set(idx)) != len(idx):
        idx = list(range(len(calls)))
    return {int(i): (q.double().numpy(), k.double().numpy(), scale) for i, (_, q, k, scale) in zip(idx, calls)}


def run_family(cand: Candidate, variant: dict[str, Any] | None = None):
    """(config, {layer: (q at POSITIONS, q at 0, k at POSITIONS, k at 0)}) from the family's own code;
    ``variant``: config fields over the tiny config's (:data:`SCALING_VARIANTS`)."""
    try:
        mod = importlib.import_module(f"transformers.models.{cand.name}.modeling_{cand.name}")
    except Exception as exc:
        raise CannotCompare(f"import failed: {type(exc).__name__}: {exc}") from None
    model_cls = getattr(mod, cand.model_cls)
    config = tiny_config(model_cls.config_class, {**SWEEP_CONFIG.get(cand.name, {}), **(variant or {})})
    try:
        with torch.device("meta"):
            size = sum(p.numel() for p in model_cls(config).parameters())
    except Exception as exc:
        raise CannotCompare(f"tiny {cand.model_cls} does not build: {type(exc).__name__}: {exc}") from None
    if size > MAX_PARAMETERS:
        raise CannotCompare(f"the tiny {cand.model_cls} still has {size:,} parameters (sizes the sweep does not set)")
    torch.manual_seed(0)
    try:
        model = model_cls(config).eval()
    except Exception as exc:
        raise CannotCompare(f"tiny {cand.model_cls} does not build: {type(exc).__name__}: {exc}") from None
    config._attn_implementation = "rope_sweep"
    for sub in model.modules():
        if hasattr(sub, "config") and getattr(sub.config, "_attn_implementation", None) not in (None, "rope_sweep"):
            sub.config._attn_implementation = "rope_sweep"
    vocab = getattr(config, "vocab_size", 128) or 128
    ids = torch.randint(0, min(vocab, 128), (POSITIONS.shape[0], SEQ), generator=torch.Generator().manual_seed(1))
    try:
        moved = _forward(model, ids, POSITIONS)
        still = _forward(model, ids, np.zeros_like(POSITIONS))
    except CannotCompare:
        raise
    except Exception as exc:
        raise CannotCompare(f"forward failed: {type(exc).__name__}: {str(exc)[:200]}") from None
    layers = {i: (moved[i][0], still[i][0], moved[i][1], still[i][1], moved[i][2]) for i in moved if i in still}
    # the factor each rotary module puts on cos and sin (per layer type where it keeps several): at
    # position 0 it multiplies the query too, so the comparison above cannot see it; checked on its own
    factors: dict[str, set[float]] = {}  # several modules may hold one name (Molmo 2: scaled and unscaled)
    for sub in model.modules():
        if type(sub).__name__.endswith("RotaryEmbedding"):
            for name, value in vars(sub).items():
                if name.endswith("attention_scaling") and isinstance(value, (int, float)):
                    factors.setdefault(name, set()).add(float(value))
    layers_3d = {}
    if "mrope_section" in inspect.getsource(mod):
        try:
            layers_3d = _forward(model, ids, POSITIONS_3D)
        except Exception as exc:
            raise CannotCompare(f"forward with (3, batch, seq) positions failed: {type(exc).__name__}: "
                                f"{str(exc)[:160]}") from None
    return config, layers, layers_3d, factors


# Per-family tiny-config fields the generic sizes cannot give (each one says why).
SWEEP_CONFIG: dict[str, dict[str, Any]] = {
    # int(64 * 0.334) is odd; the released head_dim 192 gives 64 rotated dims
    "mimo_v2_flash": {"head_dim": 192},
    # attention layers where the defaults have none, or sizes the generic ones do not fit
    "bamba": {"attn_layer_indices": [1, 4]},
    "zaya": {"num_experts_per_tok": 1},
    "step3p7": {"sliding_window": 16},
    "granitemoehybrid": {"layer_types": ["linear_attention", "full_attention"] * 3,
                         "position_embedding_type": "rope"},
    "zamba2": {"use_mem_rope": True},
    "csm": {"backbone_hidden_size": 128},
    "minimax_m3_vl": {"dense_intermediate_size": 64, "shared_intermediate_size": 32},
    "moshi": {"ffn_dim": 64},
    "muse_spark": {"moe_hidden_size": 32},
    "longcat_flash": {"zero_expert_num": 2},
    "dots3_note": {"head_dim": 64, "shared_experts_intermediate_size": 32, "num_key_value_heads": 2},
    # compress rates longer than the test sequence: no compressed key entry is emitted, so the keys the
    # attention sees are the sliding-window ones, which rope_spec describes
    "deepseek_v4": {"head_dim": 64, "o_lora_rank": 32, "q_lora_rank": 32, "o_groups": 2, "sliding_window": 16,
                    "compress_rates": {"compressed_sparse_attention": 8, "heavily_compressed_attention": 16},
                    "layer_types": ["sliding_attention", "compressed_sparse_attention",
                                    "heavily_compressed_attention"] * 2},
    "gemma3n": {"num_kv_shared_layers": 0, "intermediate_size": [64] * 6, "activation_sparsity_pattern": [0.0] * 6},
    "falcon_h1": {"mamba_d_ssm": 256, "mamba_n_heads": 8, "mamba_d_head": 32},
    "lfm2_moe": {"layer_types": ["conv", "full_attention"] * 3},
    "glm4v_moe": {"head_dim": 128, "hidden_size": 256},
    # no rotation in its text model: its config class refuses qk_rope_head_dim > 0
    "glm5_next": {"qk_rope_head_dim": 0, "linear_num_heads": 2, "linear_head_dim": 16, "hc_mult": 2,
                  "index_kpool": 2},
}
# M-RoPE families whose rotary code holds the default sections (16, 24, 24) or (24, 20, 20): 128 dims
for _name in ("qwen2_vl", "qwen2_5_vl", "qwen2_5_omni", "paddleocr_vl", "qwen3_vl", "qwen3_vl_moe", "qwen3_omni_moe"):
    SWEEP_CONFIG[_name] = {"head_dim": 128, "hidden_size": 256}
for _name in ("qwen3_5", "qwen3_5_moe"):  # (11, 11, 10) pairs are a quarter of a 256-dim head
    SWEEP_CONFIG[_name] = {"head_dim": 256}
SWEEP_CONFIG.update({
    # a short original length, so that the test positions reach the query scale (llama_4_scaling_beta)
    "ministral3": {"rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 16.0, "beta_fast": 32.0,
                                       "beta_slow": 1.0, "original_max_position_embeddings": 64,
                                       "llama_4_scaling_beta": 0.1, "mscale": 1.0, "mscale_all_dim": 1.0}},
    "mistral4": {"rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4, "factor": 16.0, "beta_fast": 32.0,
                                     "beta_slow": 1.0, "original_max_position_embeddings": 64,
                                     "llama_4_scaling_beta": 0.1, "mscale": 1.0, "mscale_all_dim": 1.0}},
})

#: Scaling fields a family's code reads that its tiny config (the class defaults) leaves out: each variant is
#: swept layer by layer too, and fed to the page's interpreter (tests/test_model_check.py).
SCALING_VARIANTS: dict[str, list[dict[str, Any]]] = {
    # Hunyuan: "dynamic" with alpha is NTK-alpha, a fixed base rope_theta * alpha**(d / (d - 2))
    "hunyuan_v1_dense": [{"rope_parameters": {"rope_type": "dynamic", "alpha": 1000.0, "factor": 1.0,
                                              "rope_theta": 10000.0}}],
    "hunyuan_v1_moe": [{"rope_parameters": {"rope_type": "dynamic", "alpha": 50.0, "factor": 2.0,
                                            "rope_theta": 50000.0}}],
    # Molmo 2: layers outside rope_scaling_layers keep the base without the scaling
    "molmo2": [{"rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                                    "original_max_position_embeddings": 32}, "rope_scaling_layers": [0, 2, 3]},
               {"rope_parameters": {"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0}}],
    # Qwen3.5: an mrope_section that does not add up to the rotated pairs; the code gives height and width
    # their interleaved pairs below 3 x their section (cut at the pairs there are) and time the rest
    **{name: [{"rope_parameters": {"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.5,
                                   "mrope_section": [11, 11, 10], "mrope_interleaved": True}},
              {"rope_parameters": {"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25,
                                   "mrope_section": [4, 14, 6], "mrope_interleaved": True}}]
       for name in ("qwen3_5", "qwen3_5_moe")},
    # Cohere 2 MoE: dense prefix layers rotate whatever their window (prefix_dense_sliding_window_pattern 1
    # makes them full_attention layers); with another prefix pattern they follow the window rule
    "cohere2_moe": [{"first_k_dense_replace": 2}, {"first_k_dense_replace": 3, "prefix_dense_sliding_window_pattern": 2},
                    # its config class declares rope_scaling as a field of its own and never reads it: plain RoPE
                    {"rope_scaling": {"type": "linear", "factor": 4.0}, "rope_theta": 50000.0}],
}

# Families the sweep's method cannot check, and why (tests/test_models.py checks them directly).
SWEEP_SKIP: dict[str, str] = {
    "csm": "its depth decoder ignores the position_ids it is given and numbers the codebooks itself",
    "recurrent_gemma": "its recurrent blocks reset their state where position_ids == 0, so the run at position 0 "
                       "(the sweep's reference for the query before RoPE) changes the attention layers' input",
}


# --- comparing ------------------------------------------------------------------------------------


def _predict(spec, before: np.ndarray, role: str, positions: np.ndarray) -> np.ndarray:
    if spec.mrope_section is not None and positions.ndim == 2:
        positions = np.broadcast_to(positions, (3, *positions.shape))
    return spec.apply(before, positions, role=role)


def compare_layer(spec, moved: np.ndarray, still: np.ndarray, role: str = "query",
                  positions: np.ndarray = POSITIONS) -> str | None:
    """None when ``spec`` reproduces the family's rotation of this layer, else what differs."""
    if moved.shape[-1] != spec.head_dim:
        return f"head_dim {moved.shape[-1]} in the code, {spec.head_dim} in the spec"
    if not spec.uses_rope:
        # a NoPE layer may still scale its queries by position (Llama 4, Beam): undo the factor at position 0
        at_zero = spec.apply(np.ones_like(still), np.zeros_like(positions), role=role)
        ours = spec.apply(still / at_zero, positions, role=role)
        gap = np.abs(moved - ours).max()
        return None if gap <= 1e-5 * max(1.0, np.abs(still).max()) else f"the code rotates (change {gap:.3g}), the spec says NoPE"
    before = still.copy()
    part = slice(spec.rotary_offset, spec.rotary_offset + spec.rotary_dim)
    before[..., part] /= spec.attention_factor
    if spec.output_layout != spec.layout:
        # at position 0 such a family still reorders the rotated block: undo that to get its input
        before[..., part] = _REORDER[(spec.output_layout, spec.layout)](before[..., part])
    ours = _predict(spec, before, role, positions)
    # per pair (in the order the code writes them): |error| <= |pair| * (rtol * |angle| + atol), so that the
    # slow pairs, whose angles are small at these positions, are held to their own small tolerance
    r, off = spec.rotary_dim, spec.rotary_offset
    first = off + (np.arange(r // 2) if spec.output_layout == "half" else 2 * np.arange(r // 2))
    second = first + (r // 2 if spec.output_layout == "half" else 1)
    angle = np.abs(positions).max() * spec.inv_freq(int(positions.max()) + 1)
    floor = 1e-5 * np.abs(still).max(axis=-1, keepdims=True)  # float32 rounding
    size = np.hypot(moved[..., first], moved[..., second])
    err = np.hypot(ours[..., first] - moved[..., first], ours[..., second] - moved[..., second])
    bound = size * (ANGLE_RTOL * angle + ANGLE_ATOL) + floor
    rest = np.ones(spec.head_dim, bool)
    rest[first], rest[second] = False, False
    passed = np.abs(ours[..., rest] - moved[..., rest]) <= floor
    if np.all(err <= bound) and np.all(passed):
        return None
    pairs = np.flatnonzero((err > bound).any(axis=tuple(range(err.ndim - 1))))
    dims = np.flatnonzero(rest)[~passed.all(axis=tuple(range(passed.ndim - 1)))] if not np.all(passed) else []
    return (f"max error {err.max():.3g} (bound there {bound.reshape(-1)[np.argmax(err - bound)]:.3g}) in pairs "
            f"{pairs.tolist()[:12]}" + (f"; pass-through dims {list(dims)[:8]} changed" if len(dims) else ""))


@dataclass
class Outcome:
    kind: str  # "agree", "rejected", "wrong", "cannot"
    detail: str = ""
    layers: int = 0
    seconds: float = 0.0


def sweep_one(cand: Candidate, variant: dict[str, Any] | None = None) -> Outcome:
    t0 = time.perf_counter()
    if cand.name in SWEEP_SKIP:
        return Outcome("cannot", SWEEP_SKIP[cand.name])
    try:
        config, layers, layers_3d, factors = run_family(cand, variant)
    except CannotCompare as exc:
        return Outcome("cannot", str(exc), seconds=time.perf_counter() - t0)
    n = getattr(config, "num_hidden_layers", None) or len(layers)
    problems: list[str] = []
    notes: set[str] = set()
    for i in range(n):
        try:
            spec = rope_spec(config, layer=i)
        except (ValueError, TypeError) as exc:
            return Outcome("rejected", f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - t0)
        assert spec.describe()
        if i not in layers:
            if spec.uses_rope:
                problems.append(f"layer {i}: no attention call in the code, the spec rotates")
            continue
        q1, q0, k1, k0, scaling = layers[i]
        if spec.uses_rope and factors:
            named = [v for k, vs in factors.items() if spec.layer_type and k.startswith(f"{spec.layer_type}_") for v in vs]
            options = named or [v for vs in factors.values() for v in vs]
            if not any(np.isclose(spec.attention_factor, v, rtol=1e-6) for v in options):
                problems.append(f"layer {i}: attention factor {spec.attention_factor:.6g}, the rotary module "
                                f"has {sorted(set(options))}")
        if spec.rotary_offset and spec.uses_rope and scaling is not None:
            # multi-head latent attention: the softmax scale is qk_head_dim**-0.5 times the spec's factor
            want = spec.softmax_scale_factor * spec.head_dim ** -0.5
            if not np.isclose(scaling, want, rtol=1e-6):
                problems.append(f"layer {i}: softmax scale {scaling:.6g} in the code, {want:.6g} from the spec")
        for what, moved, still in (("query", q1, q0), ("key", k1, k0)):
            try:
                diff = compare_layer(spec, moved, still, what)
            except (ValueError, TypeError) as exc:
                diff = f"spec.apply failed: {exc}"
            if diff:
                problems.append(f"layer {i} {what}: {diff}")
        if i in layers_3d and spec.uses_rope:
            # M-RoPE: (time, height, width) positions; a spec without M-RoPE data must refuse them
            for what, moved, still in (("query", layers_3d[i][0], q0), ("key", layers_3d[i][1], k0)):
                if spec.mrope_section is None:
                    try:
                        spec.apply(still, POSITIONS_3D)
                    except ValueError:
                        notes.add("M-RoPE in its code: rope_spec reads text positions only (3-D ids refused)")
                        continue
                    problems.append(f"layer {i} {what}: the spec takes 3-D positions without M-RoPE data")
                    continue
                try:
                    diff = compare_layer(spec, moved, still, what, POSITIONS_3D)
                except (ValueError, TypeError) as exc:
                    diff = f"spec.apply failed: {exc}"
                if diff:
                    problems.append(f"layer {i} {what} (3-D positions): {diff}")
    kind = "wrong" if problems else "agree"
    detail = "; ".join(problems[:3]) if problems else "; ".join(sorted(notes))
    return Outcome(kind, detail, layers=len(layers), seconds=time.perf_counter() - t0)


# --- the test -------------------------------------------------------------------------------------

RESULTS: dict[str, Outcome] = {}


@pytest.fixture(scope="module", autouse=True)
def _attention_recorder():
    _register()
    yield


CANDIDATES = candidates()


def summary() -> str:
    groups: dict[str, list[str]] = {}
    for name, out in sorted(RESULTS.items()):
        groups.setdefault(out.kind, []).append(f"  {name}: {out.detail}" if out.detail else f"  {name}")
    compared = sum(len(groups.get(k, [])) for k in ("agree", "rejected", "wrong"))
    lines = [f"rope_spec sweep over transformers {transformers.__version__}: {len(RESULTS)} families, "
             f"{compared} compared, {len(groups.get('agree', []))} agree, {len(groups.get('rejected', []))} rejected, "
             f"{len(groups.get('wrong', []))} wrong, {len(groups.get('cannot', []))} could not be compared"]
    notes = [f"  {name}: {out.detail}" for name, out in sorted(RESULTS.items()) if out.kind == "agree" and out.detail]
    if notes:
        lines.append("agree, with a limit:")
        lines.extend(notes)
    for kind, title in (("wrong", "WRONG"), ("rejected", "rejected by rope_spec"), ("cannot", "could not compare")):
        if groups.get(kind):
            lines.append(f"{title}:")
            lines.extend(groups[kind])
    return "\n".join(lines)


@pytest.mark.slow
def test_sweep():
    """Every family, one after the other in one test (so that pytest-xdist cannot split the sweep):
    the summary is printed (``-s``; ``-rA`` shows it too), and checked:

    * no family is wrong: rope_spec accepts it and some layer differs from its code;
    * a family rope_spec refuses gets an error that names it;
    * at least 90% of the families the sweep could compare agree;
    * every family rope_spec reads agreed here, or is compared with its code in tests/test_models.py.

    ``ROPE_SWEEP=llama,qwen3`` limits it to some families (the last two checks are then skipped)."""
    only = [name for name in os.environ.get("ROPE_SWEEP", "").split(",") if name]
    for cand in CANDIDATES:
        if not only or cand.name in only:
            RESULTS[cand.name] = sweep_one(cand)
    print("\n" + summary())
    wrong = {name: o.detail for name, o in RESULTS.items() if o.kind == "wrong"}
    assert not wrong, f"rope_spec accepts these families but differs from their code: {wrong}"
    for name, o in RESULTS.items():
        if o.kind == "rejected":
            assert name in o.detail or "model_type" in o.detail, o.detail
    if only:
        return
    compared = [o for o in RESULTS.values() if o.kind != "cannot"]
    agree = [o for o in compared if o.kind == "agree"]
    assert len(agree) >= 0.9 * len(compared), summary()
    swept = {M.MODEL_TYPES.get(_model_type(c)) for c in CANDIDATES if RESULTS[c.name].kind == "agree"}
    unchecked = set(M.FAMILIES) - swept - set(CHECKED_ELSEWHERE)
    assert not unchecked, f"families rope_spec reads that no test compares with their code: {sorted(unchecked)}"


#: The YaRN block every family is swept with a second time (a short original length, so that the test
#: positions reach the scaled pairs; the attention factor differs from 1).
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32, "beta_fast": 32.0, "beta_slow": 1.0}


def yarn_variant(cand: Candidate) -> dict[str, Any] | None:
    """The family's tiny config fields with YaRN in every RoPE block (flat, or each one of a per-layer-type
    nesting), or None where the tiny config has no rope_parameters (GPT-J, CodeGen) or does not build."""
    mod = importlib.import_module(f"transformers.models.{cand.name}.modeling_{cand.name}")
    try:
        rope = tiny_config(getattr(mod, cand.model_cls).config_class, SWEEP_CONFIG.get(cand.name)).to_dict().get(
            "rope_parameters")
    except CannotCompare:
        return None
    if not isinstance(rope, dict):
        return None
    if "rope_type" not in rope and rope and all(v is None or isinstance(v, dict) for v in rope.values()):
        rope = {k: (v if v is None else {**v, **YARN}) for k, v in rope.items()}
    else:
        rope = {**rope, **YARN}
    return {"rope_parameters": rope}


#: Families swept whole with YaRN whatever their rotary module shows (a canary of the plain reader; a
#: nested per-layer-type block; a partial rotation).
YARN_CANARIES = ("llama", "gemma3", "qwen3", "phi3", "gpt_neox")


def needs_yarn_forward(cand: Candidate) -> bool:
    """Whether the YaRN pass runs this family's whole model. Its rotary module is compared with rope_spec for
    every scaling type by test_every_scaling_type_against_the_rotary_module, and the plain sweep checks how its
    attention applies what that module returns; a whole model with YaRN adds something only where the
    attention itself uses the scaling (multi-head latent attention's softmax scale, Llama 4's temperature,
    a family's ``extra`` or own reader), or where the rotary module could not be compared with YaRN."""
    family = M.FAMILIES.get(M.MODEL_TYPES.get(_model_type(cand)))
    if cand.name in YARN_CANARIES or family is None:
        return True
    if family.read is not None or family.rotary == "mla" or family.extra is not None or family.class_defaults:
        return True
    key = next(k for k, f in M.FAMILIES.items() if f is family)
    return rotary_family(key, family, cand).get(("yarn", "v5"), ("cannot", ""))[0] != "agree"


@pytest.mark.slow
def test_sweep_with_a_yarn_block():
    """The families of :func:`needs_yarn_forward` again with a YaRN block: none is wrong (a family whose config
    class or code refuses YaRN cannot be compared; rope_spec may refuse with a message naming it).
    ``ROPE_SWEEP`` limits it too (and runs the named families whole)."""
    only = [name for name in os.environ.get("ROPE_SWEEP", "").split(",") if name]
    results = {}
    for cand in CANDIDATES:
        if (only and cand.name not in only) or cand.name in SWEEP_SKIP:
            continue
        if not only and not needs_yarn_forward(cand):
            continue
        variant = yarn_variant(cand)
        if variant is not None:
            results[cand.name] = sweep_one(cand, {**SWEEP_CONFIG.get(cand.name, {}), **variant})
    wrong = {name: o.detail for name, o in results.items() if o.kind == "wrong"}
    assert not wrong, f"with a YaRN block, rope_spec accepts these families but differs from their code: {wrong}"
    for name, o in results.items():
        if o.kind == "rejected":
            assert name in o.detail or "model_type" in o.detail or "rope_type" in o.detail, o.detail
    if not only:
        assert sum(o.kind == "agree" for o in results.values()) >= 15, results


@pytest.mark.parametrize("name, index", [(n, i) for n, vs in sorted(SCALING_VARIANTS.items()) for i in range(len(vs))])
def test_scaling_variants(name, index):
    """A family with a scaling field its tiny config does not set: rope_spec agrees with its code, layer by
    layer, with the field set."""
    cand = next(c for c in CANDIDATES if c.name == name)
    out = sweep_one(cand, SCALING_VARIANTS[name][index])
    assert out.kind == "agree" and out.layers, f"{name} with {SCALING_VARIANTS[name][index]}: {out.kind}: {out.detail}"


#: Families checked against their code in tests/test_models.py instead of here, and why.
CHECKED_ELSEWHERE = {
    "minimind": "not in transformers: checked against its rotation (Llama's) with a plain dict",
    "recurrent_gemma": "see SWEEP_SKIP",
    "falcon": "its attention calls torch's attention directly, not through transformers' attention interface",
}


def _model_type(cand: Candidate) -> str | None:
    mod = importlib.import_module(f"transformers.models.{cand.name}.modeling_{cand.name}")
    return getattr(getattr(mod, cand.model_cls).config_class, "model_type", None)


# --- what the sweep cannot see: the pair order of multi-head latent attention ------------------------
#
# At position 0 RoPE is the identity, except that an MLA family that reads interleaved pairs and writes
# them back half-split still reorders the rotated block. The sweep takes the query at position 0 as the
# query before RoPE, so such a reordering is invisible to it (the same one applies at every position).
# Here the attention's own source says which apply function it calls, and that function is compared
# with the spec on the rotary part.

MLA = sorted(key for key, f in M.FAMILIES.items() if f.rotary == "mla")


@pytest.mark.parametrize("key", MLA)
def test_mla_pair_order(key):
    family = M.FAMILIES[key]
    name = family.code.split(".")[-1]
    mod = importlib.import_module(f"transformers.models.{name}.modeling_{name}")
    attention = [c for n, c in vars(mod).items() if n.endswith("Attention") and inspect.isclass(c)
                 and re.search(r"q_rot|q_pe", inspect.getsource(c))]
    assert attention, f"{name}: no attention class with a rotary part"
    source = inspect.getsource(attention[-1].forward)
    complex_product = "apply_rotary_emb(" in source and "view_as_complex" in inspect.getsource(mod)
    flag = "rope_interleave" in source
    always = "apply_rotary_pos_emb_interleave(q_rot" in source and not flag
    cand = next(c for c in CANDIDATES if c.name == name)
    config = tiny_config(getattr(mod, cand.model_cls).config_class, SWEEP_CONFIG.get(name))
    for interleave in ((True, False) if flag else (None,)):
        if interleave is not None:
            config.rope_interleave = interleave
        uses = [i for i in range(config.num_hidden_layers) if rope_spec(config, layer=i).uses_rope]
        spec = rope_spec(config, layer=uses[0])
        expect = ("interleaved", "half") if (always or interleave) else (spec.layout, spec.layout)
        if complex_product:  # DeepSeek-V2: complex products on interleaved pairs, written back in place
            expect = ("interleaved", "interleaved")
        assert (spec.layout, spec.output_layout) == expect, interleave
        apply = mod.apply_rotary_pos_emb_interleave if expect == ("interleaved", "half") else None
        if apply is None:
            continue
        rope = next(c for n, c in vars(mod).items() if n.endswith("RotaryEmbedding") and "Vision" not in n)(config)
        with torch.no_grad():
            cos, sin = rope(torch.zeros(1), torch.tensor(POSITIONS))
        x = np.random.default_rng(0).standard_normal((2, 2, SEQ, spec.rotary_dim)).astype(np.float32)
        ref, _ = apply(torch.tensor(x), torch.tensor(x), cos, sin)
        full = np.concatenate([np.zeros((2, 2, SEQ, spec.rotary_offset), np.float32), x], axis=-1)
        ours = spec.apply(full, POSITIONS, role="key")[..., spec.rotary_offset:]
        np.testing.assert_allclose(ours, ref.numpy(), rtol=1e-3, atol=1e-3)


# --- a config.json that leaves RoPE fields out gets what the config class fills in ---------------------

ROPE_FIELDS = ("rope_parameters", "rope_scaling", "rope_theta", "partial_rotary_factor", "rotary_pct",
               "rotary_emb_base", "rope_local_base_freq", "rotary_dim")


@pytest.mark.parametrize("cand", CANDIDATES, ids=[c.name for c in CANDIDATES])
def test_left_out_rope_fields_get_the_config_class_defaults(cand):
    """rope_spec of a dict without RoPE fields equals rope_spec of the config class's own defaults, or
    rope_spec refuses it (never a third answer)."""
    mod = importlib.import_module(f"transformers.models.{cand.name}.modeling_{cand.name}")
    cls = getattr(mod, cand.model_cls).config_class
    if cls.model_type not in M.MODEL_TYPES:
        pytest.skip(f"rope_spec does not read {cls.model_type!r}")
    try:
        config = tiny_config(cls, {k: v for k, v in (SWEEP_CONFIG.get(cand.name) or {}).items()
                                   if k not in ROPE_FIELDS})
    except CannotCompare as exc:
        pytest.skip(str(exc))
    data = {k: v for k, v in config.to_dict().items() if k not in ROPE_FIELDS}
    types = getattr(config, "layer_types", None)
    if data.get("layer_types") is None and isinstance(types, list):
        data["layer_types"] = types
    for i in range(getattr(config, "num_hidden_layers", None) or 1):
        want = rope_spec(config, layer=i)
        try:
            got = rope_spec(data, layer=i)
        except ValueError:
            continue
        assert {**got.__dict__, "defaults": (), "default_records": ()} == {**want.__dict__, "defaults": (), "default_records": ()}, i


def test_the_comparison_sees_small_differences():
    """The sweep's check fails a spec that is slightly off: Llama 3 scaling left out (it only slows the
    slowest pairs, whose angles are tiny at the test positions), a base 1% off, the other pair layout."""
    _register()
    cand = next(c for c in CANDIDATES if c.name == "llama")
    SWEEP_CONFIG["llama"] = {"rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5, "factor": 8.0,
                                                 "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                 "original_max_position_embeddings": 64}}
    try:
        config, layers, _, _ = run_family(cand)
    finally:
        del SWEEP_CONFIG["llama"]
    moved, still = layers[0][0], layers[0][1]
    spec = rope_spec(config, layer=0)
    assert compare_layer(spec, moved, still) is None
    wrong = [
        M.RopeSpec(**{**spec.__dict__, "rope_type": "default", "rope_params": {}}),
        M.RopeSpec(**{**spec.__dict__, "base": spec.base * 1.01}),
        M.RopeSpec(**{**spec.__dict__, "layout": "interleaved", "output_layout": "interleaved"}),
    ]
    for other in wrong:
        assert compare_layer(other, moved, still), other


# --- a config.json that leaves head_dim out gets the config class's head_dim ----------------------------


@pytest.mark.parametrize("cand", CANDIDATES, ids=[c.name for c in CANDIDATES])
def test_left_out_head_dim_gets_the_config_class_default(cand):
    """A config.json without ``head_dim`` (and without ``per_layer_config``, as released configs are), loaded
    by the family's config class, has the head size rope_spec reads from the same dict: the class's own
    default where it has one (Gemma 3: 256), else ``hidden_size // num_attention_heads`` (64 here, so the two
    differ). Gemma 4's full-attention layers take ``global_head_dim``, stated or the class default."""
    mod = importlib.import_module(f"transformers.models.{cand.name}.modeling_{cand.name}")
    cls = getattr(mod, cand.model_cls).config_class
    family = M.FAMILIES.get(M.MODEL_TYPES.get(cls.model_type, ""))
    if family is None or family.rotary == "mla" or family.read is not None:
        pytest.skip(f"rope_spec does not read a head_dim for {cls.model_type!r}")
    try:
        config = tiny_config(cls, SWEEP_CONFIG.get(cand.name))
    except CannotCompare as exc:
        pytest.skip(str(exc))
    data = {k: v for k, v in config.to_dict().items() if k not in ("head_dim", "per_layer_config")
            and not isinstance(getattr(cls, k, None), property)}  # computed fields (Bamba's layers_block_type)
    types = getattr(config, "layer_types", None)
    if data.get("layer_types") is None and isinstance(types, list) and "layer_types" not in cls.attribute_map:
        data["layer_types"] = types
    variants = [data] + ([{**data, "global_head_dim": 96}] if family.type_head else [])
    for raw in variants:
        try:
            loaded = cls.from_dict(dict(raw))
        except Exception as exc:  # the reason is reported
            pytest.skip(f"{cls.__name__}.from_dict without head_dim fails: {type(exc).__name__}: {exc}")
        for i in range(getattr(config, "num_hidden_layers", None) or 1):
            want = rope_spec(loaded, layer=i)
            got = rope_spec(dict(raw), layer=i)
            assert (got.head_dim, got.rotary_dim, got.rotary_offset) == (want.head_dim, want.rotary_dim,
                                                                         want.rotary_offset), (i, raw is data)
            assert got.uses_rope == want.uses_rope, i
            if want.uses_rope:
                np.testing.assert_array_equal(got.inv_freq(), want.inv_freq())


# --- every rotary embedding of transformers: read, or refused with a reason ---------------------------


def _rotary_modules():
    """(package, its config classes' model_types, rotary classes outside vision/audio encoders, generative classes)
    for every transformers.models package whose modeling code defines a ``*RotaryEmbedding`` class."""
    for path in sorted(MODELS.glob("*/modeling_*.py")):
        name = path.parent.name
        if path.name != f"modeling_{name}.py":
            continue
        text = path.read_text(encoding="utf-8")
        rotary = re.findall(r"^class (\w+RotaryEmbedding)\(", text, re.M)
        if not rotary:
            continue
        types = set()
        for conf in path.parent.glob("configuration_*.py"):
            types |= set(re.findall(r'^\s+model_type\s*=\s*"([^"]+)"', conf.read_text(encoding="utf-8"), re.M))
        decoder = [c for c in rotary if not re.search(r"Vision|Audio|Encoder|ViT", c)]
        generative = re.findall(r"^class (\w+(?:ForCausalLM|ForConditionalGeneration|ForVisionText2Text|TextModel))\(",
                                text, re.M)
        yield name, types, decoder, generative


def test_every_rotary_model_type_is_read_or_refused_with_a_reason():
    """Every model_type of the installed transformers whose generative model has a rotary embedding (not only a
    vision or audio encoder's) is read by rope_spec or listed in UNSUPPORTED with its reason; this lists any that
    is neither. Packages whose rotary classes all belong to vision/audio encoders, or that define no causal-LM,
    generation or text-model class, are outside rope_spec (encoders, codecs, detectors)."""
    known = set(M.MODEL_TYPES) | set(WRAPPERS) | set(M.UNSUPPORTED)
    neither = {name: sorted(types) for name, types, decoder, generative in _rotary_modules()
               if decoder and generative and not types & known}
    assert not neither, f"model types with a rotary embedding that rope_spec neither reads nor refuses with a reason: {neither}"
    for model_type, reason in M.UNSUPPORTED.items():
        with pytest.raises(ValueError, match=re.escape(f"model_type {model_type!r} is not supported by rope_spec: {reason}")):
            rope_spec({"model_type": model_type})
    # the ones listed are of this transformers (a stale entry says so)
    every = set().union(*(types for _, types, _, _ in _rotary_modules()))
    assert set(M.UNSUPPORTED) <= every, sorted(set(M.UNSUPPORTED) - every)
    # each reason says what the code does or why it is not compared, not only that a row is missing
    assert not [k for k, reason in M.UNSUPPORTED.items() if "no family row" in reason]
    # the README's count is the list's
    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8").split())
    assert f"rotary embedding, {len(M.UNSUPPORTED)} of them" in readme


# --- every scaling type against the family's own rotary module (no model forward) -----------------------
#
# The sweep above runs whole models; doing that once per scaling type would cost minutes. Here each family's
# own ``*RotaryEmbedding`` module is built from its tiny config with each scaling type in turn, in both schemas
# (transformers 5's ``rope_parameters``, and a transformers 4 config.json's ``rope_scaling`` + ``rope_theta``,
# which the config class converts), and compared with rope_spec: the inverse frequencies the module holds after
# a call, its attention factor, and the cos and sin it returns, at short positions (inside the original length)
# and at long ones (past ``max_position_embeddings``, where dynamic NTK and LongRoPE change their frequencies),
# then short again (dynamic NTK and LongRoPE go back). A type the family's config class or rotary module refuses
# is recorded, not compared; rope_spec may refuse one with a message naming the field.

ROTARY_SHORT = np.stack([np.arange(SEQ) * 5, np.arange(SEQ) * 3 + 1])  # below ROTARY_ORIGINAL
ROTARY_LONG = np.stack([7 + 61 * np.arange(SEQ), np.arange(SEQ) * 11])  # past ROTARY_MAX_POSITIONS
ROTARY_MAX_POSITIONS, ROTARY_ORIGINAL = 64, 32
# the fields of one scaling type (dropped from a family's block before another type's are put in)
_SCALING_FIELDS = {"rope_type", "type", "factor", "beta_fast", "beta_slow", "original_max_position_embeddings",
                   "low_freq_factor", "high_freq_factor", "short_factor", "long_factor", "attention_factor", "mscale",
                   "mscale_all_dim", "truncate", "alpha"}


# fields a family's config class requires in every scaled block (Phi-3.5-MoE: the factors its rotary embedding puts
# on cos and sin instead of the type's attention factor)
ROTARY_BLOCK_FIELDS: dict[str, dict[str, Any]] = {"phimoe": {"short_mscale": 1.1, "long_mscale": 1.3}}


def scaling_blocks(pairs: int, family: M.Family) -> dict[str, dict[str, Any]]:
    """One RoPE block per scaling type transformers implements (LongRoPE's factor lists have ``pairs`` entries),
    plus the types a family's ``retype`` reaches (Hunyuan's "dynamic" with alpha)."""
    blocks = {
        "linear": {"rope_type": "linear", "factor": 4.0},
        "dynamic": {"rope_type": "dynamic", "factor": 4.0},
        "llama3": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": ROTARY_ORIGINAL},
        "longrope": {"rope_type": "longrope", "original_max_position_embeddings": ROTARY_ORIGINAL,
                     "short_factor": [1.0 + 0.01 * i for i in range(pairs)],
                     "long_factor": [1.0 + 0.5 * i for i in range(pairs)]},
        "yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": ROTARY_ORIGINAL,
                 "beta_fast": 32.0, "beta_slow": 1.0},
    }
    for stated, (name, new) in (family.retype or {}).items():
        blocks[new] = {"rope_type": stated, name: 50.0, "factor": 2.0}
    return blocks


def rotary_module(mod, config):
    """The family's own rotary module for ``config`` (the first ``*RotaryEmbedding`` class of its modeling file,
    outside vision and audio encoders, that accepts the config)."""
    errors = []
    for name, cls in vars(mod).items():
        if (name.endswith("RotaryEmbedding") and inspect.isclass(cls) and cls.__module__ == mod.__name__
                and not re.search(r"Vision|Audio|Encoder|ViT", name)):
            try:
                return cls(config)
            except Exception as exc:  # the reason is reported
                errors.append(f"{name}: {type(exc).__name__}: {str(exc)[:100]}")
    raise CannotCompare("; ".join(errors) or "no rotary class")


def _rotary_call(module, positions: np.ndarray, key: str | None):
    x = torch.zeros(1, dtype=torch.float32)
    kwargs = {"layer_type": key} if key and "layer_type" in inspect.signature(module.forward).parameters else {}
    pos = torch.tensor(positions)
    with torch.no_grad():
        try:
            out = module(x, pos, **kwargs)
        except Exception:  # M-RoPE modules take (3, batch, seq) ids: text positions on every axis
            out = module(x, pos[None].expand(3, *pos.shape), **kwargs)
    return out if isinstance(out, tuple) else (out, None)


def _buffer_key(family: M.Family, module, spec) -> str | None:
    """Which of the module's buffers serves the spec's layer: ``<key>_inv_freq`` of a per-layer-type module, or
    ``inv_freq``."""
    key = spec.layer_type
    if key is not None and family.rope_keys is not None:
        key = family.rope_keys.get(key, family.rope_keys.get("*"))
    if key is not None and hasattr(module, f"{key}_inv_freq"):
        return key
    if hasattr(module, "inv_freq"):
        return None
    typed = [n[: -len("_inv_freq")] for n, _ in module.named_buffers() if n.endswith("_inv_freq")
             and "original" not in n]
    if len(typed) == 1:
        return typed[0]
    raise CannotCompare(f"which of the rotary buffers {typed} serves layer type {spec.layer_type!r}")


def compare_rotary(spec, module, positions: np.ndarray, key: str | None) -> str | None:
    """None when the module's inverse frequencies, attention factor, cos and sin at ``positions`` (after the call)
    are the spec's, else what differs."""
    cos, sin = _rotary_call(module, positions, key)
    prefix = f"{key}_" if key else ""
    seq = int(positions.max()) + 1
    inv = getattr(module, f"{prefix}inv_freq").double().numpy()
    want = spec.inv_freq(seq)
    if inv.shape != want.shape or not np.allclose(inv, want, rtol=1e-5, atol=0):
        return f"inv_freq at length {seq}: code {inv[:2]}...{inv[-1:]}, spec {want[:2]}...{want[-1:]}"
    factor = float(getattr(module, f"{prefix}attention_scaling"))
    if not np.isclose(factor, spec.attention_factor, rtol=1e-6):
        return f"attention factor: code {factor}, spec {spec.attention_factor}"
    c, s = spec.cos_sin(positions)
    if spec.clockwise:  # the module's sin is the usual one; the family's rotate_half flips the turn
        s = -s
    if torch.is_complex(cos):  # Llama 4, DeepSeek-V2: factor * (cos + i sin) per pair
        got_c, got_s = cos.real.double().numpy(), cos.imag.double().numpy()
    else:
        got_c, got_s = cos.double().numpy(), sin.double().numpy()
    if got_c.ndim == positions.ndim + 2:  # (3, batch, seq, dims): the time axis (all axes are equal here)
        got_c, got_s = got_c[0], got_s[0]
    pairs = c.shape[-1]
    if got_c.shape[-1] == pairs:
        options = [(got_c, got_s)]
    elif got_c.shape[-1] == 2 * pairs:  # repeated per pair: cat (half-split) or repeat_interleave (interleaved)
        options = [(got_c[..., :pairs], got_s[..., :pairs]), (got_c[..., ::2], got_s[..., ::2])]
    else:
        return f"cos has {got_c.shape[-1]} entries for {pairs} pairs"
    bound = abs(spec.attention_factor) * (ANGLE_RTOL * np.abs(positions)[..., None] * want + ANGLE_ATOL) + 1e-6
    errors = [max(np.abs(oc - c).max(), np.abs(os_ - s).max()) for oc, os_ in options]
    for oc, os_ in options:
        if np.all(np.abs(oc - c) <= bound) and np.all(np.abs(os_ - s) <= bound):
            return None
    return f"cos/sin at positions up to {seq - 1}: max error {min(errors):.3g}"


def _nested(rope: Any) -> bool:
    return (isinstance(rope, dict) and "rope_type" not in rope and bool(rope)
            and all(v is None or isinstance(v, dict) for v in rope.values()))


def rotary_variant(family: M.Family, mod, cls, base: dict[str, Any], rope0: dict[str, Any], block_of,
                   schema: str) -> tuple[str, str]:
    """(outcome, detail) for one scaling type in one schema: "agree", "wrong", "rejected" (by rope_spec),
    "refused" (by the family's config class or rotary module) or "n/a" (no such form)."""
    def one(b, key):
        return {**{k: v for k, v in b.items() if k not in _SCALING_FIELDS}, **block_of(key)}
    nested = _nested(rope0)
    rope = {k: (v if v is None else one(v, k)) for k, v in rope0.items()} if nested else one(rope0, None)
    if schema == "v4":
        if nested:
            return "n/a", "rope_parameters nested by layer type have no transformers 4 form"
        rope = dict(rope)
        theta = rope.pop("rope_theta", None)
        scaling = {("type" if k == "rope_type" else k): v for k, v in rope.items()}
        extra = {k: v for k, v in base.items() if k != "rope_parameters"}
        extra["rope_scaling"] = scaling
        if theta is not None:
            extra["rope_theta"] = theta
    else:
        extra = {**base, "rope_parameters": rope}
    try:
        config = tiny_config(cls, extra)
        module = rotary_module(mod, config)
    except CannotCompare as exc:  # the family's config class or rotary module refuses this type
        return "refused", str(exc)[:160]
    subject: Any = config
    if schema == "v4":  # a transformers 4 config.json: rope_scaling and rope_theta, no rope_parameters
        subject = {k: v for k, v in config.to_dict().items() if k != "rope_parameters"}
        subject["rope_scaling"] = scaling
        if theta is not None:
            subject["rope_theta"] = theta
    seen = set()
    for i in range(getattr(config, "num_hidden_layers", None) or 1):
        try:
            spec = rope_spec(subject, layer=i)
        except (ValueError, TypeError) as exc:
            return "rejected", f"{type(exc).__name__}: {exc}"
        if not spec.uses_rope:
            continue
        key = _buffer_key(family, module, spec)
        same = (key, spec.base, spec.rope_type, repr(sorted(spec.rope_params.items())), spec.rotary_dim,
                spec.rotating_pairs, spec.attention_factor)
        if same in seen:
            continue
        seen.add(same)
        for positions in (ROTARY_SHORT, ROTARY_LONG, ROTARY_SHORT):
            diff = compare_rotary(spec, module, positions, key)
            if diff:
                return "wrong", f"layer {i}: {diff}"
    return "agree", f"{len(seen)} rotary settings"


def rotary_family(key: str, family: M.Family, cand: Candidate) -> dict[tuple[str, str], tuple[str, str]]:
    """Every scaling type, in both schemas, for one family: (type, schema) -> (outcome, detail)."""
    mod = importlib.import_module(f"transformers.models.{cand.name}.modeling_{cand.name}")
    cls = getattr(mod, cand.model_cls).config_class
    base = {**SWEEP_CONFIG.get(cand.name, {}), "max_position_embeddings": ROTARY_MAX_POSITIONS}
    if family.top_level_original:  # Phi-3: the top-level original length wins over the block's
        base["original_max_position_embeddings"] = ROTARY_ORIGINAL
    try:
        config0 = tiny_config(cls, base)
        module0 = rotary_module(mod, config0)
    except CannotCompare as exc:
        return {("*", "*"): ("cannot", str(exc))}
    rope0 = config0.to_dict().get("rope_parameters")
    if not isinstance(rope0, dict):
        return {("*", "*"): ("cannot", "its config has no rope_parameters")}
    sizes = {n[: -len("inv_freq")].rstrip("_") or None: b.shape[0] for n, b in module0.named_buffers()
             if n.endswith("inv_freq") and "original" not in n}
    out = {}
    for name in scaling_blocks(1, family):
        def block_of(k, name=name):
            block = scaling_blocks(sizes.get(k, max(sizes.values())), family)[name]
            return {**block, **ROTARY_BLOCK_FIELDS.get(cand.name, {})}
        for schema in ("v5", "v4"):
            try:
                out[(name, schema)] = rotary_variant(family, mod, cls, base, rope0, block_of, schema)
            except CannotCompare as exc:
                out[(name, schema)] = ("cannot", str(exc))
    return out


def rotary_families() -> list[tuple[str, M.Family, Candidate]]:
    """Every family rope_spec reads from transformers, with the sweep's candidate for each of its packages."""
    by_name = {c.name: c for c in CANDIDATES}
    found = []
    for key, family in M.FAMILIES.items():
        if family.layers and family.layers[0] == "nope":
            continue  # no rotation in its text model, so no rotary module to compare (the sweep runs it)
        for package in family.code.split(","):
            package = package.strip()
            if package.startswith("transformers.models.") and package.split(".")[-1] in by_name:
                found.append((key, family, by_name[package.split(".")[-1]]))
    return found


@pytest.mark.slow
def test_every_scaling_type_against_the_rotary_module():
    """Every family rope_spec reads, with every scaling type transformers implements (and Hunyuan's NTK-alpha), in
    both schemas, against the family's own rotary module: none is wrong; rope_spec refuses only with a message
    that names the field or the model type. ``ROPE_SWEEP`` limits it to some packages. The summary and its CPU
    time are printed (``-s``)."""
    only = [name for name in os.environ.get("ROPE_SWEEP", "").split(",") if name]
    start = time.process_time()
    results: dict[tuple[str, str, str], tuple[str, str]] = {}
    for key, family, cand in rotary_families():
        if only and cand.name not in only:
            continue
        for (name, schema), outcome in rotary_family(key, family, cand).items():
            results[(cand.name, name, schema)] = outcome
    seconds = time.process_time() - start
    counts: dict[str, int] = {}
    for kind, _ in results.values():
        counts[kind] = counts.get(kind, 0) + 1
    print(f"\nscaling types against the rotary modules: {counts} ({seconds:.1f} CPU-s)")
    for where, (kind, detail) in sorted(results.items()):
        if kind in ("wrong", "rejected"):
            print(f"  {kind}: {where}: {detail}")
    wrong = {where: detail for where, (kind, detail) in results.items() if kind == "wrong"}
    assert not wrong, f"rope_spec differs from the family's rotary module: {wrong}"
    for where, (kind, detail) in results.items():
        if kind == "rejected":
            assert "model_type" in detail or "missing the field" in detail or "rope_type" in detail, (where, detail)
    if not only:
        assert counts.get("agree", 0) >= 1000, counts
        # every family read by the standard reader agrees with its rotary module in some scaling type, or every
        # one is refused, by its code (Cosmos 3 Edge's config class, RecurrentGemma's module) or by rope_spec
        # with the reason (Phi-3.5-MoE)
        kinds: dict[str, set[str]] = {}
        for (name, _, _), (kind, _) in results.items():
            kinds.setdefault(name, set()).add(kind)
        missing = sorted(cand.name for _, family, cand in rotary_families() if family.read is None
                         and "agree" not in kinds[cand.name]
                         and not kinds[cand.name] <= {"refused", "rejected", "n/a"})
        assert not missing, f"families no scaling type could be compared for: {missing}"


def test_the_rotary_comparison_sees_small_differences():
    """compare_rotary fails a spec that is slightly off: dynamic NTK read as plain RoPE (only past
    max_position_embeddings), a base 1% off, an attention factor 1% off."""
    cand = next(c for c in CANDIDATES if c.name == "llama")
    mod = importlib.import_module("transformers.models.llama.modeling_llama")
    config = tiny_config(mod.LlamaForCausalLM.config_class,
                         {"max_position_embeddings": ROTARY_MAX_POSITIONS,
                          "rope_parameters": {"rope_type": "dynamic", "factor": 4.0, "rope_theta": 10000.0}})
    spec = rope_spec(config, layer=0)
    module = rotary_module(mod, config)
    assert cand and all(compare_rotary(spec, module, p, None) is None for p in (ROTARY_SHORT, ROTARY_LONG))
    plain = M.RopeSpec(**{**spec.__dict__, "rope_type": "default", "rope_params": {}})
    assert compare_rotary(plain, module, ROTARY_SHORT, None) is None  # inside the trained length they agree
    assert compare_rotary(plain, module, ROTARY_LONG, None)
    for other in (M.RopeSpec(**{**spec.__dict__, "base": spec.base * 1.01}),
                  M.RopeSpec(**{**spec.__dict__, "attention_factor": 1.01})):
        assert compare_rotary(other, module, ROTARY_LONG, None)


@pytest.mark.parametrize("key", sorted(k for k, f in M.FAMILIES.items() if f.class_defaults))
def test_class_defaults_are_the_config_classes(key):
    """The config-class defaults a family row records (Family.class_defaults) are the config class's own."""
    family = M.FAMILIES[key]
    package = family.code.split(".")[-1]
    mod = importlib.import_module(f"transformers.models.{package}.modeling_{package}")
    cand = next(c for c in CANDIDATES if c.name == package) if any(c.name == package for c in CANDIDATES) else None
    cls = getattr(mod, cand.model_cls).config_class if cand else next(
        c for n, c in vars(importlib.import_module(f"transformers.models.{package}")).items()
        if n.endswith("Config") and getattr(c, "model_type", None) in family.model_types)
    defaults = cls()
    for name, value in family.class_defaults.items():
        assert getattr(defaults, name) == value, (key, name)


def test_mllama_cross_attention_layers_against_its_code(monkeypatch):
    """Mllama's cross-attention layers (3 in the tiny 6-layer default layout) run only with vision states;
    without them the text model skips those layers and the sweep never sees them. Run it with vision
    states and two different rows of positions: the cross-attention layer leaves its query unrotated (its
    keys are the vision states'), as rope_spec's NoPE reading of cross_attention_layers says, and the
    self-attention layers around it rotate."""
    cand = next(c for c in CANDIDATES if c.name == "mllama")
    _register()

    def forward(model, ids, positions):
        _RECORD.clear()
        states = torch.randn(ids.shape[0], 4, model.config.hidden_size, generator=torch.Generator().manual_seed(3))
        with torch.no_grad():
            model.model(input_ids=ids, position_ids=torch.tensor(positions), use_cache=False,
                        cross_attention_states=states)
        return {int(i): (q.double().numpy(), k.double().numpy(), s) for i, q, k, s in _RECORD}

    monkeypatch.setitem(globals(), "_forward", forward)
    config, layers, _, _ = run_family(cand)
    assert sorted(layers) == list(range(config.num_hidden_layers)) and 3 in config.cross_attention_layers
    for i, (moved, still, kmoved, kstill, _) in layers.items():
        spec = rope_spec(config, layer=i)
        assert spec.uses_rope == (i not in config.cross_attention_layers)
        assert compare_layer(spec, moved, still, positions=POSITIONS) is None, i
