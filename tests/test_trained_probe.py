"""What SmolLM2-135M does with its rotation pairs (rope_edu.trained probes, scripts/trained_probe.py).

The probe functions on small constructed inputs where the answer is known, then the cached run
(rope_edu/data/trained_probe.json) against a rerun of its first 64 tokens: the pass is causal,
so the cache's "slice" statistics are what a 64-token pass gives. The model is loaded once per
module (~10-20 s); three 64-token passes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from rope_edu import apply_rope, frequencies, trained
from rope_edu.llama import llama_forward

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import trained_probe as probe_script  # noqa: E402

sys.path.pop(0)

CACHE = ROOT / "rope_edu" / "data" / "trained_probe.json"


# --- the functions, on inputs with known answers ------------------------------------------------


def test_stopped_frequencies():
    theta = frequencies(64, 1e5)
    got = trained.stopped_frequencies(64, 1e5, slowest=8)
    np.testing.assert_array_equal(got[:24], theta[:24])
    assert (got[24:] == 0).all()
    got = trained.stopped_frequencies(64, 1e5, fastest=4)
    assert (got[:4] == 0).all() and np.array_equal(got[4:], theta[4:])
    with pytest.raises(ValueError, match="slowest \\+ fastest"):
        trained.stopped_frequencies(64, 1e5, slowest=20, fastest=20)


def test_pair_norms_do_not_see_the_rotation():
    x = np.random.default_rng(0).standard_normal((2, 10, 16))
    rotated = apply_rope(x, np.arange(10) * 7.0, base=100.0, layout="half")
    np.testing.assert_allclose(trained.pair_norms(rotated), trained.pair_norms(x), atol=1e-12)
    a, b = np.arange(8), np.arange(8) + 8
    np.testing.assert_allclose(trained.pair_norms(x), np.hypot(x[..., a], x[..., b]).mean(-2))
    with pytest.raises(ValueError, match="layout"):
        trained.pair_norms(x, layout="diagonal")


def test_head_stats_and_distance_on_a_previous_token_head():
    s = 8
    att = np.zeros((s, s))
    att[0, 0] = 1.0
    att[np.arange(1, s), np.arange(s - 1)] = 1.0  # every query looks one token back
    stats = trained.head_positional_stats(att, local=2)
    assert stats["previous"] == 1.0 and stats["local"] == 1.0 and stats["self"] == 0.0
    assert stats["first"] == pytest.approx(1 / (s - 1))
    by_d = trained.attention_by_distance(att)
    assert by_d[1] == 1.0 and by_d[0] == 0.0 and np.isnan(by_d[-1])
    with pytest.raises(ValueError, match="square"):
        trained.head_positional_stats(np.ones((3, 4)))


def test_pair_margins_sum_to_the_score_margin():
    rng = np.random.default_rng(1)
    s, d = 12, 16
    q, k = rng.standard_normal((s, d)), rng.standard_normal((s, d))
    theta = frequencies(d, 100.0)
    pos = np.arange(s)
    qr = apply_rope(q, pos, inv_freq=theta, layout="half")
    kr = apply_rope(k, pos, inv_freq=theta, layout="half")
    scores = qr @ kr.T / np.sqrt(d)
    t = np.arange(2, s)
    want = np.mean([scores[i, i - 1] - scores[i, 1 : i + 1].mean() for i in t])
    got = trained.pair_margins(q, k, pos, theta, distance=1)
    assert got.shape == (d // 2,)
    np.testing.assert_allclose(got.sum(), want, atol=1e-12)


# --- the cached run against a rerun of its first tokens ----------------------------------------



@pytest.fixture(scope="module")
def cache():
    return json.loads(CACHE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def loaded(smollm2_gguf):
    config, tensors = smollm2_gguf
    return config, trained.llama_from_gguf(config, tensors)


@pytest.fixture(scope="module")
def rerun(loaded, cache):
    config, model = loaded
    n = cache["slice"]["n_tokens"]
    ids = np.asarray(cache["text"]["token_ids"][:n])
    probe = trained.attention_probe(model, ids)
    return ids, probe, probe_script.statistics(probe, n, frequencies(config.head_dim, config.base))


@pytest.mark.slow
@pytest.mark.xdist_group("trained")
def test_probe_pass_is_the_forward_pass(loaded, rerun):
    _, model = loaded
    ids, probe, _ = rerun
    logits, _ = llama_forward(ids, model)
    np.testing.assert_allclose(probe["logits"], logits[0], atol=2e-3)
    np.testing.assert_allclose(probe["attention"].sum(-1), 1.0, atol=1e-5)


@pytest.mark.slow
@pytest.mark.xdist_group("trained")
def test_cached_slice_matches_a_rerun(cache, rerun):
    _, _, stats = rerun
    want = cache["slice"]
    for key in ("q_pair_norms", "k_pair_norms"):
        np.testing.assert_allclose(stats[key], want[key], atol=2e-3, err_msg=key)
    for key in want["heads"]:
        np.testing.assert_allclose(stats["heads"][key], want["heads"][key], atol=1e-4, err_msg=key)
    np.testing.assert_allclose(stats["attention_by_distance"], want["attention_by_distance"], atol=1e-5)
    got = [(h["layer"], h["head"], h["kind"]) for h in stats["positional_heads"]]
    assert got == [(h["layer"], h["head"], h["kind"]) for h in want["positional_heads"]]
    for g, w in zip(stats["positional_heads"], want["positional_heads"]):
        np.testing.assert_allclose(g["pair_margins"], w["pair_margins"], atol=2e-3)


@pytest.mark.slow
@pytest.mark.xdist_group("trained")
def test_cached_stopped_pairs_match_a_rerun(loaded, cache, rerun):
    config, model = loaded
    ids, _, _ = rerun
    for name in ("slowest 16", "fastest 4"):
        run = cache["stopped_pairs"]["runs"][name]
        theta = trained.stopped_frequencies(config.head_dim, config.base, slowest=run["slowest"],
                                            fastest=run["fastest"])
        got = trained.perplexity(model.with_attention(inv_freq=theta), ids)["log_likelihoods"]
        np.testing.assert_allclose(got, run["log_likelihoods"][: ids.size - 1], atol=2e-3, err_msg=name)


def test_cache_states_its_cpu_time_and_model(cache):
    assert cache["cpu_seconds_total"] > 0 and cache["model"]["file"] == trained.SMOLLM2_FILE
    assert len(cache["text"]["token_ids"]) == cache["full"]["n_tokens"]
    q = np.asarray(cache["full"]["q_pair_norms"])
    assert q.shape == (cache["model"]["n_layers"], cache["model"]["n_heads"], cache["model"]["head_dim"] // 2)


# --- the interventions (scripts/trained_interventions.py) ----------------------------------------

INTERVENTIONS = ROOT / "rope_edu" / "data" / "trained_interventions.json"


@pytest.fixture(scope="module")
def interventions():
    return json.loads(INTERVENTIONS.read_text(encoding="utf-8"))


def test_head_scores_are_the_rotated_dot_products():
    rng = np.random.default_rng(2)
    s, d = 10, 16
    q, k = rng.standard_normal((s, d)), rng.standard_normal((s, d))
    theta = frequencies(d, 100.0)
    pos = np.arange(s)
    rot = {"inv_freq": theta, "layout": "half"}
    want = apply_rope(q, pos, **rot) @ apply_rope(k, pos, **rot).T / 4.0
    got = trained.head_scores(q, k, theta)
    low = np.tril_indices(s)
    np.testing.assert_allclose(got[low], want[low], atol=1e-12)
    assert np.isneginf(got[np.triu_indices(s, 1)]).all()
    # every angle 0: the plain dot products, whatever the positions
    np.testing.assert_allclose(trained.head_scores(q, k, 0 * theta)[low], (q @ k.T / 4.0)[low], atol=1e-12)


def test_pair_term_sizes_are_the_mean_size_of_one_pairs_part_of_the_scores():
    """With every pair but one zeroed, a head's scores are that pair's term alone."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import trained_interventions as script

    sys.path.pop(0)
    rng = np.random.default_rng(4)
    s, d, i = 12, 8, 2
    q, k = rng.standard_normal((1, 2, s, d)), rng.standard_normal((1, 1, s, d))
    q[..., [j for j in range(d) if j % (d // 2) != i]] = 0.0
    theta = frequencies(d, 100.0)
    sizes = script.pair_term_sizes({"q": q, "k": k}, theta)
    keep = np.tril(np.ones((s, s), bool))
    keep[:, 0] = False
    want = np.mean([np.abs(trained.head_scores(q[0, h], k[0, 0], theta)[keep]).mean() for h in range(2)])
    assert sizes[i] == pytest.approx(want, abs=1e-6)
    assert np.allclose(np.delete(sizes, i), 0.0)


def test_previous_token_use_of_a_perfect_and_a_blind_head():
    s = 9
    perfect = np.full((s, s), -np.inf)
    for t in range(s):
        perfect[t, : t + 1] = 0.0
        perfect[t, max(t - 1, 0)] = 10.0
    use = trained.previous_token_use(perfect)
    assert use["accuracy"] == 1.0 and use["weight"] > 0.99
    # margin: 10 minus the mean over keys 1..t of the logits (10 on one of them)
    assert use["margin"] == pytest.approx(np.mean([10 - 10 / t for t in range(2, s)]))
    blind = np.where(np.tril(np.ones((s, s))) > 0, 0.0, -np.inf)
    use = trained.previous_token_use(blind)
    assert use["margin"] == 0.0 and use["weight"] == pytest.approx(np.mean([1 / (t + 1) for t in range(2, s)]))


def test_uniform_attention_falls_under_the_distance_average():
    """The no-effect baseline: uniform causal attention ignores position, yet its mean by distance
    falls, since distance δ is averaged over the queries t > δ only."""
    a = trained.uniform_attention(256)
    np.testing.assert_allclose(a.sum(-1), 1.0)
    by_d = trained.attention_by_distance(a)
    want = [np.mean(1.0 / (np.arange(d + 1, 256) + 1)) for d in (1, 32)]
    assert by_d[1] == pytest.approx(want[0]) and by_d[32] == pytest.approx(want[1])
    assert f"{by_d[1] / by_d[32]:.2f}" == "1.99"


def test_shifted_frequencies_move_the_angles_of_other_pairs_by_the_same_amounts():
    theta = frequencies(64, 1e5)
    got = trained.shifted_frequencies(64, 1e5, np.arange(16), np.arange(16, 32))
    stop = trained.stopped_frequencies(64, 1e5, slowest=16)
    np.testing.assert_allclose(np.sort(np.abs(got - theta)), np.sort(np.abs(stop - theta)), atol=1e-15)
    np.testing.assert_array_equal(got[16:], theta[16:])


@pytest.mark.parametrize("call, error, match", [
    (lambda: trained.shifted_frequencies(64, 1e5, [0, 1], [2]), ValueError, "same length"),
    (lambda: trained.shifted_frequencies(64, 1e5, [40], [0]), ValueError, "pairs"),
    (lambda: trained.shifted_frequencies(64, 1e5, [0.5], [0]), TypeError, "pairs"),
    (lambda: trained.head_scores(np.ones((4, 8)), np.ones((5, 8)), np.ones(4)), ValueError, "q and k"),
    (lambda: trained.head_scores(np.ones((4, 8)), np.ones((4, 8)), np.ones(3)), ValueError, "inv_freq"),
    (lambda: trained.previous_token_use(np.zeros((2, 2))), ValueError, "scores"),
    (lambda: trained.uniform_attention(0), ValueError, "n"),
])
def test_intervention_functions_reject_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_interventions_cache_states_its_run(interventions, cache):
    I = interventions
    assert I["cpu_seconds_total"] > 0 and I["model"]["file"] == trained.SMOLLM2_FILE
    assert I["text"]["token_ids"] == cache["text"]["token_ids"]  # the probe's tokens
    assert "--threads 1" in I["command"]
    heads = [(h["layer"], h["head"]) for h in cache["full"]["positional_heads"] if h["kind"] == "previous-token"]
    assert [tuple(h) for h in I["previous_token_heads"]] == heads
    # the same statistic as the probe's
    np.testing.assert_allclose(I["distance"]["by_distance"]["trained"], cache["full"]["attention_by_distance"],
                               atol=2e-6)
    n = I["text"]["n_tokens"]
    np.testing.assert_allclose(I["distance"]["by_distance"]["position-blind (uniform)"],
                               trained.attention_by_distance(trained.uniform_attention(n))[: n - 1], atol=1e-6)


@pytest.mark.slow
@pytest.mark.xdist_group("trained")
def test_cached_interventions_match_a_rerun(loaded, rerun, interventions):
    """The slice (one previous-token head, its first tokens: trained, pair 0 stopped, no rotation)
    from the rerun's queries and keys, and one matched-change pass over the rerun's 64 tokens."""
    config, model = loaded
    ids, probe, _ = rerun
    sl = interventions["slice"]
    n, layer, head = sl["n_tokens"], sl["layer"], sl["head"]
    rep = probe["q"].shape[1] // probe["k"].shape[1]
    q, k = probe["q"][layer, head, :n], probe["k"][layer, head // rep, :n]
    theta = frequencies(config.head_dim, config.base).astype(np.float64)
    off = theta.copy()
    off[0] = 0.0
    p31 = trained.shifted_frequencies(config.head_dim, config.base, np.array([31]), np.array([0]))
    for name, th in (("trained", theta), ("pair 0 stopped", off), ("rotation removed", 0 * theta),
                     ("pair 31 given pair 0's change", p31)):
        got = trained.previous_token_use(trained.head_scores(q, k, th))
        for key in ("accuracy", "weight", "margin"):
            assert got[key] == pytest.approx(sl[name][key], abs=2e-3), (name, key)
    run = interventions["matched_stops"]["runs"]["slowest 4 given the fastest 4's change"]
    got = trained.perplexity(model.with_attention(inv_freq=np.asarray(run["inv_freq"])), ids)["log_likelihoods"]
    np.testing.assert_allclose(got, run["log_likelihoods"][: ids.size - 1], atol=2e-3)
