"""Quantised key caches and a shifted YaRN cache (rope_edu/data/trained_kvcache.json,
scripts/trained_kvcache.py).

The script's own pieces are checked on a tiny random LLaMA (no weights file): its forward pass without a
quantiser is :func:`rope_edu.llama.llama_forward`'s, and its cache shift is the fresh pass at the new
positions (rotation only) or that times the factor once per shift. Of the cached run, one slice is run
again on SmolLM2: the first tokens with a ``q4_0`` cache after RoPE (the script stores their
log-likelihoods), one pass of 32 tokens. The repeats on other passages of *Hamlet* (``--repeat``) are
checked for what chapters 12 and 14 draw from them: every row on every passage, the passages disjoint
and the tokens the play's, each with its own record and a slice (``q4_0`` before RoPE) run again.
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


def test_the_repeats_are_other_passages_with_every_row(cache):
    """At least one repeat; each is the play's tokens from its first token on (disjoint from every other
    passage), holds the first passage's rows, states its own command, threads and CPU time, and
    ``trained.kvcache_passages`` gives its perplexities and shares as counted here."""
    from rope_edu import trained

    reps = cache["repeats"]
    assert len(reps) >= 1
    want = {(r["cache"], r["order"]) for r in cache["quantised"]["runs"]}
    spans = [(0, cache["quantised"]["n_tokens"])]
    for rep in reps:
        assert rep["command"].startswith("python scripts/trained_kvcache.py") and "--repeat" in rep["command"]
        assert rep["environment"]["threads"] == 1
        q = rep["quantised"]
        assert rep["text"]["play"] == cache["text"]["play"] == script.PLAY
        assert q["n_tokens"] == len(rep["text"]["token_ids"]) == cache["quantised"]["n_tokens"]
        assert q["predicted"] == q["n_tokens"] - 1
        assert {(r["cache"], r["order"]) for r in q["runs"]} == want and len(q["runs"]) == len(want)
        for r in q["runs"]:
            assert math.isclose(r["perplexity"], math.exp(-r["mean_log_likelihood"]), rel_tol=1e-12)
            assert r["cpu_seconds"] > 0
        assert sum(r["cpu_seconds"] for r in q["runs"]) <= q["cpu_seconds"] <= rep["cpu_seconds_total"]
        assert rep["seconds_total"] > 0
        sl = rep["slice"]
        assert (sl["cache"], sl["order"]) == ("q4_0", "pre_rope") and len(sl["log_likelihoods"]) == sl["n_tokens"] - 1
        spans.append((rep["text"]["first_token"], rep["text"]["first_token"] + q["n_tokens"]))
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans  # disjoint passages
    S = trained.kvcache_passages(cache)
    assert [(p["first_token"], p["first_token"] + p["n_tokens"]) for p in S["passages"]] == \
        [(0, cache["quantised"]["n_tokens"])] + [(r["text"]["first_token"], r["text"]["first_token"]
                                                  + r["quantised"]["n_tokens"]) for r in reps]
    for i, q in enumerate([cache["quantised"]] + [r["quantised"] for r in reps]):
        ppl = {(r["cache"], r["order"]): r["perplexity"] for r in q["runs"]}
        for key, value in ppl.items():
            assert S["perplexity"][key][i] == value
        for name in script.PRE_ROPE:
            after, before = ppl[name, "post_rope"] - ppl["none", None], ppl[name, "pre_rope"] - ppl["none", None]
            assert S["removed"][name][i] == pytest.approx((after - before) / after, rel=1e-12)
    assert set(S["removed"]) == set(script.PRE_ROPE)


def test_kvcache_passages_refuses_what_is_not_the_script_output(cache):
    import copy

    from rope_edu import trained

    with pytest.raises(TypeError, match="result"):
        trained.kvcache_passages({"runs": []})
    fewer = copy.deepcopy(cache)
    fewer["repeats"][0]["quantised"]["runs"].pop()
    with pytest.raises(ValueError, match="runs"):
        trained.kvcache_passages(fewer)
    overlap = copy.deepcopy(cache)
    overlap["repeats"][0]["text"]["first_token"] = 1000
    with pytest.raises(ValueError, match="overlap"):
        trained.kvcache_passages(overlap)


def test_a_repeat_that_overlaps_a_passage_is_refused(cache):
    n = cache["quantised"]["n_tokens"]
    script.check_new_passage({"text": cache["text"], "quantised": cache["quantised"]}, n, n)  # the next one
    for start in (0, n - 1, n // 2):
        with pytest.raises(ValueError, match="overlap"):
            script.check_new_passage(cache, start, n)
    with pytest.raises(ValueError, match="--repeat"):
        script.check_new_passage(cache, -1, n)
    last = cache["repeats"][-1]["text"]["first_token"]
    with pytest.raises(ValueError, match=f"tokens {last} to"):
        script.check_new_passage(cache, last + 1, n)


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


@pytest.mark.slow
@pytest.mark.xdist_group("trained")
def test_the_repeats_read_the_play_and_their_slices_match_a_rerun(cache, smollm2_gguf, smollm2_tokenizer):
    """Each repeat's tokens are the play's from its first token on (through SmolLM2's tokenizer), and its
    slice (``q4_0`` before RoPE) is what the script's forward pass gives now."""
    from rope_edu import trained
    from run_record import play_tokens

    config, tensors = smollm2_gguf
    model = trained.llama_from_gguf(config, tensors, rows="gguf")
    for rep in cache["repeats"]:
        first, ids = rep["text"]["first_token"], rep["text"]["token_ids"]
        assert play_tokens([rep["text"]["play"]], first + len(ids), smollm2_tokenizer)[first:].tolist() == ids
        n = rep["slice"]["n_tokens"]
        again = script.slice_numbers(model, np.asarray(ids[:n]), "pre_rope")
        np.testing.assert_allclose(again["log_likelihoods"], rep["slice"]["log_likelihoods"], atol=2e-3)
