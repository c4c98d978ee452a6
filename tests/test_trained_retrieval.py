"""The passkey retrieval cache (rope_edu/data/trained_retrieval.json, scripts/trained_retrieval.py).

A slice of the cache is run again: one trial, by one whole causal pass instead of the script's
shared-beginning KV cache, must give the cached scores. One trial per method past the trained
length is what ``python scripts/trained_retrieval.py --verify`` reruns (about six CPU-minutes on
2 cores: too long for every test run); here the trial is plain RoPE's inside it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")  # make check skips this file where torch is missing
pytest.importorskip("gguf")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import trained_retrieval as script  # noqa: E402

CACHE = ROOT / "rope_edu" / "data" / "trained_retrieval.json"


@pytest.fixture(scope="module")
def cache() -> dict:
    return json.loads(CACHE.read_text(encoding="utf-8"))


def test_cache_states_its_run(cache):
    assert cache["model"]["file"] and cache["model"]["context_length"] == 8192
    assert cache["factor"] == 2.0
    assert {t["method"] for t in cache["trials"]} <= set(script.METHODS)
    for t in cache["trials"]:
        assert t["length"] in cache["lengths"] and t["depth"] in cache["depths"] and t["key"] in cache["keys"]
        assert t["cpu_seconds"] > 0
    points = {(t["method"], t["length"], t["depth"], t["key"]) for t in cache["trials"]}
    assert len(points) == len(cache["trials"]), "a trial is cached twice"
    # dynamic NTK is not run inside the trained length (its frequencies are plain RoPE's there)
    assert not any(t["method"] == "dynamic NTK" and t["length"] <= 8192 for t in cache["trials"])


@pytest.mark.slow
@pytest.mark.xdist_group("trained")
def test_a_cached_trial_matches_a_whole_pass(cache, smollm2_gguf, smollm2_tokenizer):
    config, tensors = smollm2_gguf
    tok = smollm2_tokenizer
    trial = next(t for t in cache["trials"] if t["method"] == "plain RoPE" and t["length"] == min(cache["lengths"])
                 and t["depth"] == max(cache["depths"]) and t["key"] == cache["keys"][0])
    again = script.rerun(config, tensors, tok, trial, cache["factor"])
    assert again["greedy"] == trial["greedy"]
    assert again["first_guess"] == trial["first_guess"]
    assert abs(again["log_prob"] - trial["log_prob"]) < 2e-3, (again, trial)
