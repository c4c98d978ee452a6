"""rope_edu.toy_lm (chapter 13's experiment): the tasks, the five position schemes, a short training
run, the summary statistics, and the cached results in rope_edu/data/length_generalisation.json."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
pytest.importorskip("torch")  # make check skips this file where torch is missing
import torch

from rope_edu import toy_lm as T

ROOT = Path(__file__).resolve().parents[1]


def test_shift_batch():
    x, y, mask = T.make_batch("shift", 4, 20, 16, k=3, seed=1)
    assert x.shape == y.shape == mask.shape == (4, 20)
    assert not mask[:, :3].any() and mask[:, 3:].all()
    assert torch.equal(y[:, 3:], x[:, :-3])


def test_first_batch():
    x, y, mask = T.make_batch("first", 4, 20, 16, seed=1)
    assert not mask[:, 0].any() and mask[:, 1:].all()
    assert torch.equal(y, x[:, :1].expand(4, 20))


def test_copy_batch():
    x, y, mask = T.make_batch("copy", 5, 20, 32, seed=2)
    m = 10
    assert (x[:, m] == 31).all()  # the separator
    assert torch.equal(x[:, m + 1:], x[:, : m - 1])  # the copy, one step behind its target
    assert torch.equal(y[:, m:], x[:, :m]) and mask[:, m:].all() and not mask[:, :m].any()
    assert all(len(set(row[:m].tolist())) == m for row in x)  # distinct tokens: copying is unambiguous


@pytest.mark.parametrize("scheme", T.POSITION_SCHEMES)
def test_forward_shapes_beyond_the_trained_length(scheme):
    cfg = T.ToyConfig(d_model=16, n_heads=2, train_len=8, eval_lens=(8, 16))
    torch.manual_seed(0)
    model = T.TinyLM(cfg, scheme)
    x, *_ = T.make_batch("shift", 3, 16, cfg.vocab, seed=0)
    assert model(x).shape == (3, 16, cfg.vocab)


def _prefix_shuffled_logits(scheme: str) -> tuple[torch.Tensor, torch.Tensor]:
    cfg = T.ToyConfig(d_model=16, n_heads=2, n_layers=1, train_len=12, eval_lens=(12,))
    torch.manual_seed(0)
    model = T.TinyLM(cfg, scheme).eval()
    x, *_ = T.make_batch("shift", 2, 12, cfg.vocab, seed=3)
    perm = torch.cat([torch.randperm(11, generator=torch.Generator().manual_seed(0)), torch.tensor([11])])
    with torch.no_grad():
        return model(x)[:, -1], model(x[:, perm])[:, -1]


def test_nope_sees_no_order_before_the_last_token():
    """Without positions, one causal layer sees the tokens before the last one as a set (with two
    layers it would not: the earlier tokens' own outputs depend on their prefixes, the NoPE mechanism)."""
    a, b = _prefix_shuffled_logits("nope")
    torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("scheme", [s for s in T.POSITION_SCHEMES if s != "nope"])
def test_every_other_scheme_sees_the_order(scheme):
    a, b = _prefix_shuffled_logits(scheme)
    assert (a - b).abs().max() > 1e-4


@pytest.mark.slow
def test_training_run_is_reproducible_and_well_formed():
    cfg = T.ToyConfig(d_model=16, n_heads=2, train_len=8, eval_lens=(8, 16), steps=4, batch=8, eval_batches=1)
    a = T.train_and_evaluate(cfg, "rope", 0)
    b = T.train_and_evaluate(cfg, "rope", 0)
    assert a["accuracy"] == b["accuracy"] and a["final_loss"] == b["final_loss"]
    assert set(a["accuracy"]) == {8, 16} and set(a["accuracy_new_positions"]) == {16}
    assert all(0.0 <= v <= 1.0 for v in a["accuracy"].values())


def test_summarise():
    runs = [{"scheme": "rope", "accuracy": {32: a}} for a in (0.5, 0.7, 0.9)]
    s = T.summarise(runs)["rope"]["32"]
    assert s["mean"] == pytest.approx(0.7) and s["std"] == pytest.approx(np.std([0.5, 0.7, 0.9], ddof=1))
    assert (s["min"], s["max"], s["n_seeds"]) == (0.5, 0.9, 3)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: T.make_batch("sort", 2, 10, 16), ValueError, "task"),
    (lambda: T.make_batch("copy", 2, 40, 16), ValueError, "vocab"),
    (lambda: T.make_batch("shift", 2, 4, 16, k=3), ValueError, "length"),
    (lambda: T.make_batch("shift", 0, 10, 16), ValueError, "batch"),
    (lambda: T.TinyLM(T.ToyConfig(), "xpos"), ValueError, "scheme"),
    (lambda: T.train_and_evaluate(T.ToyConfig(), "rope", -1), ValueError, "seed"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_cached_results_are_consistent_with_the_code():
    result = T.load_results()
    assert result["command"].startswith("python scripts/length_generalisation.py")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import length_generalisation as script
    finally:
        sys.path.pop(0)
    for task, cfg in result["config"].items():
        expected = T.config_dict(T.ToyConfig(**script.TASK_SETTINGS[task]))
        assert cfg == expected, f"{task}: the cached config differs from the script's: re-run the script"
        runs = [r for r in result["runs"] if r["task"] == task]
        assert {r["scheme"] for r in runs} == set(T.POSITION_SCHEMES) and len({r["seed"] for r in runs}) >= 3
        assert result["summary"][task] == T.summarise(runs)
        assert result["summary_new_positions"][task] == T.summarise(runs, "accuracy_new_positions")
