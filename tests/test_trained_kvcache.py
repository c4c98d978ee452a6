"""Quantised key caches and a shifted YaRN cache (rope_edu/data/trained_kvcache.json,
scripts/trained_kvcache.py).

The script's own pieces are checked on a tiny random LLaMA (no weights file): its forward pass without a
quantiser is :func:`rope_edu.llama.llama_forward`'s, and its cache shift is the fresh pass at the new
positions (rotation only) or that times the factor once per shift. Of the cached run, one slice is run
again on SmolLM2: the first tokens with a ``q4_0`` cache after RoPE (the script stores their
log-likelihoods), one pass of 32 tokens.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))
import trained_kvcache as script  # noqa: E402

CACHE = ROOT / "rope_edu" / "data" / "trained_kvcache.json"


@pytest.fixture(scope="module")
def cache() -> dict:
    return json.loads(CACHE.read_text(encoding="utf-8"))


def test_cache_states_its_run(cache):
    from rope_edu import trained

    assert trained.load_results("kvcache") == cache
    assert cache["command"].startswith("python scripts/trained_kvcache.py") and cache["cpu_seconds_total"] > 0
    assert cache["model"]["rows"] == "gguf" and cache["model"]["context_length"] == 8192
    q = cache["quantised"]
    runs = {(r["cache"], r["order"]) for r in q["runs"]}
    want = {("none", None)} | {(n, "post_rope") for n in script.quantisers()} | {(n, "pre_rope") for n in script.PRE_ROPE}
    assert runs == want and len(q["runs"]) == len(want)
    assert q["n_tokens"] == len(cache["text"]["token_ids"][: q["n_tokens"]]) and q["predicted"] == q["n_tokens"] - 1
    for r in q["runs"]:
        assert math.isclose(r["perplexity"], math.exp(-r["mean_log_likelihood"]), rel_tol=1e-12)
    sh = cache["shifted"]
    assert [s["shifts"] for s in sh["steps"]] == list(script.SHIFTS)
    assert sh["start"] == max(script.SHIFTS) * sh["delta"]
    assert math.isclose(sh["attention_factor"], 1 + 0.1 * math.log(sh["factor"]), rel_tol=1e-12)
    for s in sh["steps"]:
        assert s["positions_from"] == sh["start"] - s["shifts"] * sh["delta"]
        for name in ("rotation only", "rotation and YaRN's factor again"):
            assert len(s[name]["keys_relative_error"]) == len(s[name]["key_norm_ratio"]) == 30


def _tiny_model(seed: int = 0, scaling: float = 1.0):
    from test_llama import random_llama

    model = random_llama(seed, n_layers=3, head_dim=64, hidden=64, heads=2, kv=1, base=100.0)
    return model if scaling == 1.0 else model.with_attention(attention_scaling=scaling)


def test_forward_without_a_quantiser_is_llama_forward():
    from rope_edu.llama import llama_forward

    model = _tiny_model()
    ids = np.random.default_rng(1).integers(0, model.vocab, 20)
    want = llama_forward(ids, model)[0]
    for where in ("pre_rope", "post_rope"):
        np.testing.assert_allclose(script.forward_quantised(model, ids, None, where), want, atol=1e-12)
        np.testing.assert_allclose(script.forward_quantised(model, ids, lambda k: k, where), want, atol=1e-12)
    with pytest.raises(ValueError, match="where"):
        script.forward_quantised(model, ids, None, "during")


def test_quantising_before_rope_is_rotating_quantised_keys():
    """Layer 0's keys read back from a pre-RoPE cache are the rotated quantised projections."""
    from rope_edu import apply_rope
    from rope_edu.kvquant import ggml_quantize
    from rope_edu.llama import rms_norm, split_heads

    model = _tiny_model()
    ids = np.random.default_rng(2).integers(0, model.vocab, 12)
    seen = []

    def spy(k):
        seen.append(k.copy())
        return ggml_quantize(k, "q4_0")

    script.forward_quantised(model, ids, spy, "pre_rope")
    att = model.layers[0].attention
    raw = split_heads(rms_norm(model.embed_tokens[ids][None], model.layers[0].input_norm, model.eps)
                      @ att.k_proj.T, att.n_kv_heads)
    np.testing.assert_allclose(seen[0], raw, atol=1e-12)  # unrotated keys reach the quantiser
    seen.clear()
    script.forward_quantised(model, ids, spy, "post_rope")
    np.testing.assert_allclose(seen[0], apply_rope(raw, np.arange(12)[None], layout=att.layout,
                                                   inv_freq=att.frequencies), atol=1e-12)


@pytest.mark.parametrize("factor", [1.0, 1.0693])
def test_a_shifted_cache_is_the_fresh_one_or_that_times_the_factor(factor):
    """No token is dropped, so every layer's cache, shifted k times by delta, is the prefix run afresh at
    the new positions (RoPE is relative), times factor**k when the shift re-applies a factor."""
    from rope_edu.llama import llama_forward

    model = _tiny_model(3, scaling=1.0693)
    att = model.layers[0].attention
    ids = np.random.default_rng(4).integers(0, model.vocab, 10)
    _, caches = llama_forward(ids, model, 40 + np.arange(10))
    for _ in range(3):
        caches = script.shift_keys(caches, 8, att.frequencies, att.layout, factor)
    _, fresh = llama_forward(ids, model, 16 + np.arange(10))
    for got, want in zip(caches, fresh):
        np.testing.assert_allclose(got.keys, factor ** 3 * want.keys, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(got.values, want.values, atol=1e-12)


@pytest.mark.slow
@pytest.mark.xdist_group("trained")
def test_the_cached_slice_matches_a_rerun(cache, smollm2_gguf):
    from rope_edu import trained

    config, tensors = smollm2_gguf
    model = trained.llama_from_gguf(config, tensors, rows="gguf")
    n = cache["slice"]["n_tokens"]
    again = script.slice_numbers(model, np.asarray(cache["text"]["token_ids"][:n]))
    np.testing.assert_allclose(again["log_likelihoods"], cache["slice"]["log_likelihoods"], atol=2e-3)
