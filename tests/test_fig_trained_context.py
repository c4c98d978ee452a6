"""Chapter 9's measured-perplexity figure (rope_edu.widgets.trained_context): its numbers are the
cache's (rope_edu/data/trained_context*.json, read here directly), its readouts, and its JavaScript
``compute`` under Node.js. No model runs here (tests/test_trained.py reruns the caches' slices)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from rope_edu import trained
from rope_edu.widgets import JS_DIR, Figure
from rope_edu.widgets import trained_context as fig
from node_figure import call_js

DATA = Path(__file__).resolve().parents[1] / "rope_edu" / "data"
CACHES = {"2": DATA / "trained_context.json", "4": DATA / "trained_context_s4.json"}


def cached(factor: str) -> dict:
    return json.loads(CACHES[factor].read_text(encoding="utf-8"))


def test_the_figure_offers_both_scales_and_every_method_the_script_runs():
    assert fig.FACTORS == ("2", "4")
    assert [name for _, name in fig.METHODS] == sorted(cached("2")["runs"], key=[n for _, n in fig.METHODS].index)
    for f in fig.FACTORS:
        T = cached(f)
        assert T["factor"] == float(f) and T["text"]["n_tokens"] == 8192 * int(f) == trained.context_results(int(f))[
            "text"]["n_tokens"]
        assert set(T["runs"]) <= {name for _, name in fig.METHODS}


@pytest.mark.parametrize("factor", ["2", "4"])
def test_data_is_the_cache_window_by_window(factor):
    """Each plotted point is exp(-mean log-likelihood) over its 1,024 tokens, from the cache's blocks
    weighted by their predicted tokens; four windows together give the cache's own range perplexity."""
    T, d = cached(factor), fig.data()["factors"][factor]
    n, block = T["text"]["n_tokens"], T["block"]
    assert (d["n_tokens"], d["trained"]) == (n, 8192)
    for key, name in fig.METHODS:
        if name not in T["runs"]:
            assert key not in d["perplexity"]
            continue
        run = T["runs"][name]
        ll = np.asarray(run["mean_log_likelihood_by_block"])
        counts = np.array([min(a + block, n) - max(a, 1) for a in range(0, n, block)])
        per = fig.WINDOW // block
        want = np.exp(-(ll * counts).reshape(-1, per).sum(1) / counts.reshape(-1, per).sum(1))
        np.testing.assert_allclose(d["perplexity"][key], want, rtol=1e-12)
        assert len(d["perplexity"][key]) == n // fig.WINDOW
        # the same weighting over 2,048 and 4,096 tokens is the cache's perplexity by range
        for a, b in ((0, 2048), (2048, 4096), (4096, 8192), (12288, 16384), (24576, 32768)):
            if b <= n:
                got = trained.window_perplexity(run, n, block, b - a)[a // (b - a)]
                assert got == pytest.approx(run["perplexity_by_range"][f"{a}-{b}"], rel=1e-12)


def test_readouts_are_the_cache_at_the_window():
    T = cached("2")
    yarn = trained.window_perplexity(T["runs"]["YaRN"], 16384, 256)
    r = fig.readouts("2", 13312, plain=False, yarn=True, pi=False)
    perplexity = {k: v for k, v in r.items() if not k.endswith(("_rate", "_logp"))}  # retrieval: below
    assert perplexity == {"start": 13312.0, "yarn": pytest.approx(yarn[13])}
    # past the end of the s = 2 text the figure reads its last window
    r = fig.readouts("2", 30720, plain=True, yarn=True)
    assert r["start"] == 15360.0 and r["plain"] == pytest.approx(
        trained.window_perplexity(T["runs"]["plain RoPE"], 16384, 256)[-1])
    assert fig.readouts("4", 0) == {"start": 0.0}  # nothing checked: only the window
    assert fig.window_start(2, 20480) == 15360 and fig.window_start(4, 20480) == 20480


def test_javascript_compute_agrees_with_readouts():
    keys = [k for k, _ in fig.METHODS]
    states = []
    for (f, pos, pattern), (length, depth) in zip(
            itertools.product(fig.FACTORS, (0, 7168, 15360, 16384, 31744),
                              ((1, 0, 0, 0, 1, 0), (1, 1, 1, 1, 1, 1), (0,) * 6)),
            itertools.cycle(itertools.product(fig.LENGTHS, fig.DEPTHS))):
        states.append({"factor": f, "position": pos, "length": length, "depth": depth,
                       **{k: bool(b) for k, b in zip(keys, pattern)}})
    states += [{"factor": "2", "position": 0, "length": n, "depth": d, **{k: True for k in keys}}
               for n in fig.LENGTHS for d in fig.DEPTHS]
    out = call_js("trained_context", "compute", [[s] for s in states], extra=[fig.data()], pick="readouts")
    for s, got in zip(states, out):
        want = fig.readouts(**s)
        assert set(got) == set(want), s
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-12), (s, key)


@pytest.mark.parametrize("call, error, match", [
    (lambda: fig.readouts("3", 0), ValueError, "factor"),
    (lambda: fig.readouts("2", 100), ValueError, "position"),
    (lambda: fig.readouts("2", -1024), ValueError, "position"),
    (lambda: fig.readouts("2", 0, rope=True), ValueError, "check box"),
    (lambda: fig.DEMO.state(position=40000), ValueError, "position"),
    (lambda: fig.readouts("2", 0, length="5000"), ValueError, "length"),
    (lambda: fig.readouts("2", 0, depth="0.3"), ValueError, "depth"),
    (lambda: fig.retrieval("0.3"), ValueError, "depth"),
    (lambda: trained.retrieval_summary({"lengths": []}), TypeError, "result"),
    (lambda: trained.retrieval_summary(depth=0.3), ValueError, "depth"),
    (lambda: trained.context_results(3), ValueError, "factor"),
    (lambda: trained.window_perplexity({"mean_log_likelihood_by_block": [0.0] * 3}, 1024, 256), ValueError, "blocks"),
    (lambda: trained.window_perplexity({"mean_log_likelihood_by_block": [0.0] * 4}, 1024, 256, 300), ValueError,
     "window"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_figure_wiring_and_live_widget():
    assert isinstance(fig.DEMO, Figure) and fig.DEMO.name == "trained_context"
    assert (JS_DIR / "trained_context.js").is_file()
    w = fig.DEMO.widget(factor=2, yarn=False)
    assert (w.factor, w.position, w.plain, w.yarn) == ("2", 12288, True, False)


def test_plain_rope_is_the_same_run_at_both_scales():
    """Plain RoPE does not depend on s: the s = 4 run (32,768 tokens, one thread) scores the first
    16,384 tokens as the s = 2 run did, two passes made separately, up to float32 summation order."""
    two, four = (cached(f)["runs"]["plain RoPE"] for f in ("2", "4"))
    assert four["method"] == two["method"] == "default"
    np.testing.assert_allclose(four["log_likelihoods_head"], two["log_likelihoods_head"], atol=1e-3)
    for key, value in two["perplexity_by_range"].items():
        assert four["perplexity_by_range"][key] == pytest.approx(value, rel=1e-3), key
    np.testing.assert_allclose(four["mean_log_likelihood_by_block"][:64], two["mean_log_likelihood_by_block"],
                               atol=2e-3)


RETRIEVAL = DATA / "trained_retrieval.json"


def test_retrieval_summary_counts_the_cache_trial_by_trial():
    """Every (method, length) cell is the cache's trials there, counted here independently: how many,
    how many the greedy answer got right, the mean log-probability; dynamic NTK's skipped points
    inside L carry the script's reason and no trial."""
    R = json.loads(RETRIEVAL.read_text(encoding="utf-8"))
    S = trained.retrieval_summary(R)
    assert S["lengths"] == R["lengths"] and S["depths"] == R["depths"]
    assert sum(c["trials"] for c in S["cells"].values()) == len(R["trials"])
    for (m, n), c in S["cells"].items():
        rows = [t for t in R["trials"] if t["method"] == m and t["length"] == n]
        assert c["trials"] == len(rows) and c["retrieved"] == sum(t["greedy"] for t in rows)
        if rows:
            assert c["mean_log_prob"] == pytest.approx(sum(t["log_prob"] for t in rows) / len(rows))
            assert c["rate"] == c["retrieved"] / c["trials"]
        else:
            assert np.isnan(c["rate"]) and np.isnan(c["mean_log_prob"])
        if m == "dynamic NTK" and n <= R["original_max_position_embeddings"]:
            assert not rows  # never run inside L (the script records why, once it reaches the point)
        assert c["skipped"] is None or "plain RoPE" in c["skipped"]
    for depth in R["depths"]:
        D = trained.retrieval_summary(R, depth=depth)
        assert sum(c["trials"] for c in D["cells"].values()) == sum(t["depth"] == depth for t in R["trials"])


def test_retrieval_lengths_ascend_and_the_cpu_time_covers_every_resumed_run():
    """The length menu and the panel's line follow the cache's order, so it ascends (a resumed run
    once appended 7,168 after 16,384); the CPU time a page states is this run's plus the runs it
    resumed, which together cover every trial's and every shared prefix's own time."""
    R = json.loads(RETRIEVAL.read_text(encoding="utf-8"))
    assert R["lengths"] == sorted(R["lengths"]) and list(fig.LENGTHS) == [str(n) for n in R["lengths"]]
    spent = sum(t["cpu_seconds"] for t in R["trials"]) + sum(p["cpu_seconds"] for p in R["prefixes"])
    assert R["cpu_seconds_total"] < spent <= R["cpu_seconds_total"] + R["cpu_seconds_before"]


def test_the_retrieval_grid_is_complete():
    """Every method has trials at every length and depth, except the points the script skips
    (dynamic NTK inside L): the chapters' sentences no longer allow for a run in progress."""
    R = json.loads(RETRIEVAL.read_text(encoding="utf-8"))
    S = trained.retrieval_summary(R, methods=[name for _, name in fig.METHODS])
    for (m, n), c in S["cells"].items():
        assert bool(c["trials"]) != bool(c["skipped"]), (m, n)
    for depth in R["depths"]:
        D = trained.retrieval_summary(R, depth=depth)
        assert all(c["trials"] for c in D["cells"].values() if not c["skipped"]), depth


def test_retrieval_readouts_are_the_summary_at_the_chosen_length_and_depth():
    R = json.loads(RETRIEVAL.read_text(encoding="utf-8"))
    keys = dict(fig.METHODS)
    for n in fig.LENGTHS:
        for depth in fig.DEPTHS:
            S = trained.retrieval_summary(R, depth=None if depth == "all" else float(depth))
            r = fig.readouts("2", 0, n, depth, **{k: True for k in keys})
            for key, name in fig.METHODS:
                c = S["cells"].get((name, int(n)))
                if c and c["trials"]:
                    assert r[f"{key}_rate"] == pytest.approx(100 * c["rate"])
                    assert r[f"{key}_logp"] == pytest.approx(c["mean_log_prob"])
                else:
                    assert f"{key}_rate" not in r and f"{key}_logp" not in r
            # an unchecked method prints nothing
            assert not any(k.endswith(("_rate", "_logp")) for k in fig.readouts("2", 0, n, depth))
    d = fig.data()["retrieval"]
    assert d["lengths"] == R["lengths"] and d["factor"] == R["factor"] == 2.0
    assert set(d["depths"]) == set(fig.DEPTHS)
