"""p-RoPE in rope_edu.toy_lm and chapter 5's cached experiment (rope_edu/data/p_rope.json)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
pytest.importorskip("torch")  # make check skips this file where torch is missing
import torch

from rope_edu import frequencies
from rope_edu import toy_lm as T

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("p, kept", [(1.0, 8), (0.75, 6), (0.5, 4), (0.25, 2), (0.0, 0)])
def test_rotating_pairs(p, kept):
    assert T.rotating_pairs(16, p) == kept


def test_p_rope_model_turns_only_the_fastest_pairs():
    cfg = T.ToyConfig(d_model=32, n_heads=2, n_layers=1, train_len=8, eval_lens=(8,))
    model = T.TinyLM(cfg, "rope", rope_fraction=0.25)
    kept = model.blocks[0].inv_freq.numpy()
    np.testing.assert_allclose(kept[:2], frequencies(16, 10000.0)[:2], rtol=1e-6)
    assert not kept[2:].any()
    assert T.TinyLM(cfg, "rope").blocks[0].inv_freq is None  # RoPE keeps its own code path


@pytest.mark.slow
def test_p_zero_is_nope_and_freezing_restores_the_model():
    cfg = T.ToyConfig(d_model=16, n_heads=2, n_layers=1, train_len=12, eval_lens=(12,))
    x, *_ = T.make_batch("shift", 2, 12, cfg.vocab, seed=3)
    torch.manual_seed(0)
    zero = T.TinyLM(cfg, "rope", rope_fraction=0.0).eval()
    torch.manual_seed(0)
    nope = T.TinyLM(cfg, "nope").eval()
    with torch.no_grad():
        torch.testing.assert_close(zero(x), nope(x), atol=1e-6, rtol=1e-6)
    small = T.ToyConfig(d_model=16, n_heads=2, train_len=8, eval_lens=(8, 16), steps=3, batch=4, eval_batches=1)
    plain = T.train_and_evaluate(small, "rope", 0)
    probed = T.train_and_evaluate(small, "rope", 0, freeze_at_eval={"fast": (0, 1)})
    assert plain["accuracy"] == probed["accuracy"] and set(probed["accuracy_frozen"]) == {"fast"}


@pytest.mark.parametrize("call, exc, match", [
    (lambda: T.rotating_pairs(15, 0.5), ValueError, "head_dim"),
    (lambda: T.rotating_pairs(16, 1.5), ValueError, "rope_fraction"),
    (lambda: T.rotating_pairs(16, "x"), TypeError, "rope_fraction"),
    (lambda: T.TinyLM(T.ToyConfig(), "alibi", rope_fraction=0.5), ValueError, "rope_fraction"),
    (lambda: T.train_and_evaluate(T.ToyConfig(), "nope", 0, freeze_at_eval={"a": (0,)}), ValueError, "freeze_at_eval"),
    (lambda: T.train_and_evaluate(T.ToyConfig(), "rope", 0, freeze_at_eval={"a": (8,)}), ValueError, "freeze_at_eval"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_cached_results_are_consistent_with_the_code():
    result = T.load_results(T.P_ROPE_RESULTS_PATH)
    assert result["command"].startswith("python scripts/p_rope_experiment.py")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import length_generalisation as lg
        import p_rope_experiment as script
    finally:
        sys.path.pop(0)
    for task, cfg in result["config"].items():
        assert cfg == T.config_dict(T.ToyConfig(**lg.TASK_SETTINGS[task]))
        runs = [r for r in result["runs"] if r["task"] == task]
        assert {r["rope_fraction"] for r in runs} == set(script.FRACTIONS)
        assert len({r["seed"] for r in runs}) >= 3
        assert result["summary"][task] == script.summarise_fractions(runs)
        assert result["summary_new_positions"][task] == script.summarise_fractions(runs, "accuracy_new_positions")
        assert result["summary_probes"][task] == script.summarise_probes(runs)
    assert result["probes"] == {k: list(v) for k, v in script.PROBES.items()}


def test_freezing_pairs_stops_exactly_those_pairs():
    # freeze_at_eval's mechanism: no pair frozen is RoPE (its inv_freq path equals the default one),
    # the fastest pairs frozen changes the output, every pair frozen is NoPE with the same weights
    cfg = T.ToyConfig(d_model=16, n_heads=2, n_layers=1, train_len=12, eval_lens=(12,))
    x, *_ = T.make_batch("shift", 2, 12, cfg.vocab, seed=3)
    torch.manual_seed(0)
    model = T.TinyLM(cfg, "rope").eval()
    torch.manual_seed(0)
    nope = T.TinyLM(cfg, "nope").eval()
    outputs = {}
    with torch.no_grad():
        outputs["rope"] = model(x)
        for name, pairs in (("none", ()), ("fast", (0, 1)), ("all", range(4))):
            for block in model.blocks:
                block.set_frozen(pairs)
            outputs[name] = model(x)
        outputs["nope"] = nope(x)
    torch.testing.assert_close(outputs["none"], outputs["rope"], atol=1e-5, rtol=1e-5)
    assert (outputs["fast"] - outputs["rope"]).abs().max() > 1e-3
    torch.testing.assert_close(outputs["all"], outputs["nope"], atol=1e-6, rtol=1e-6)
