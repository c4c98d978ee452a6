"""Chapters 8 and 12 on a trained model: KV caches and low-precision positions in SmolLM2-135M.

Runs the book's numpy forward pass (:func:`rope_edu.llama.llama_forward` on the weights
:mod:`rope_edu.trained` reads from the GGUF file, float32) on the opening of Hamlet and measures:

1. **Incremental decoding.** A prefill of ``--prefill`` tokens, then one token at a time through
   the KV cache, against one pass over all of them: the largest logit difference.
2. **llama.cpp's context shift on real weights** (chapter 12). From a cache of ``--shift-tokens``
   tokens, keep the first ``n_keep``, drop the next ``n_discard`` and move the rest back by
   ``n_discard``, re-rotating their keys by ``-n_discard`` (the "K-shift"). Compared, layer by
   layer, with the cache a fresh pass over the kept tokens builds: at layer 0 a key depends only
   on its token and position, so re-rotation gives the fresh key (to rounding); from layer 1 on,
   a kept token's hidden state attended to the dropped tokens, so its key and value are not the
   fresh ones, and re-rotation cannot make them so. Then the next ``--continuation`` tokens of the
   text are scored with each cache: fresh, shifted (re-rotated), and moved without re-rotation.
3. **Positions in bfloat16** (chapter 8). The same ``--window`` tokens run at positions
   ``offset + t`` for several offsets, once exact and once with the positions rounded to bfloat16
   (which holds consecutive integers only up to 256): perplexity and the largest logit change
   from the pass at offset 0. Exact positions give the same model at every offset (RoPE is
   relative; only float32 rounding of the angles moves it).

Writes ``rope_edu/data/trained_cache.json`` with the CPU time of each part.

    .venv/bin/python scripts/trained_cache.py                          # the cached run
    .venv/bin/python scripts/trained_cache.py --window 32 --out /tmp/c.json  # a short check
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

#: Offsets of the low-precision position runs (SmolLM2 was trained on 8,192 tokens).
OFFSETS = (0, 1024, 4096, 7936)
#: llama.cpp context shift: tokens kept at the start, tokens dropped after them.
N_KEEP, N_DISCARD = 4, 48


def _cpu():
    return time.process_time()


def incremental(model, ids, prefill: int) -> dict:
    import numpy as np

    from rope_edu.llama import llama_forward

    c = _cpu()
    full, _ = llama_forward(ids, model)
    out, caches = llama_forward(ids[:prefill], model)
    steps = [out]
    for t in range(prefill, ids.shape[0]):
        out, caches = llama_forward(ids[t : t + 1], model, caches=caches)
        steps.append(out)
    inc = np.concatenate(steps, axis=1)
    diff = np.abs(inc - full)
    return {"n_tokens": int(ids.shape[0]), "prefill": prefill,
            "max_abs_logit_difference": float(diff.max()),
            "max_abs_logit": float(np.abs(full).max()),
            "same_argmax": bool((inc.argmax(-1) == full.argmax(-1)).all()),
            "cpu_seconds": _cpu() - c}


def shift_cache(caches, n_keep: int, n_discard: int, model, rerotate: bool):
    """llama.cpp's context shift on every layer's cache: keep, drop, move back (re-rotating or not)."""
    import numpy as np

    from rope_edu import apply_rope
    from rope_edu.llama import KVCache

    length = caches[0].length
    kept = np.r_[np.arange(n_keep), np.arange(n_keep + n_discard, length)]
    shifts = np.where(kept < n_keep, 0, -n_discard).astype(np.float64)
    out = []
    for cache, layer in zip(caches, model.layers):
        keys = cache.keys[:, :, kept]
        if rerotate:
            att = layer.attention
            keys = apply_rope(keys, shifts, layout=att.layout, inv_freq=att.frequencies)
        out.append(KVCache(keys, cache.values[:, :, kept], cache.layer_idx))
    return out, kept


def context_shift(model, ids, n_tokens: int, n_keep: int, n_discard: int, continuation: int) -> dict:
    import numpy as np

    from rope_edu.llama import llama_forward, token_log_likelihoods

    c = _cpu()
    prompt, cont = ids[:n_tokens], ids[n_tokens : n_tokens + continuation]
    _, caches = llama_forward(prompt, model)
    shifted, kept = shift_cache(caches, n_keep, n_discard, model, rerotate=True)
    unrotated, _ = shift_cache(caches, n_keep, n_discard, model, rerotate=False)
    fresh_ids = np.concatenate([prompt[kept], cont])
    fresh_logits, fresh_caches = llama_forward(fresh_ids, model)

    def rel(a, b):
        return float(np.linalg.norm(a - b) / np.linalg.norm(b))

    moved = slice(n_keep, None)  # the rows that moved; the first n_keep are untouched
    layers = []
    for s, f in zip(shifted, fresh_caches):
        fk, fv = f.keys[:, :, : kept.size], f.values[:, :, : kept.size]
        layers.append({"layer": s.layer_idx,
                       "keys_relative_error": rel(s.keys[:, :, moved], fk[:, :, moved]),
                       "values_relative_error": rel(s.values[:, :, moved], fv[:, :, moved]),
                       "keep_keys_relative_error": rel(s.keys[:, :, :n_keep], fk[:, :, :n_keep])})
    # score the continuation: log p(cont[j + 1] | ...) from the logits of cont[j], j = 0 .. C - 2
    n_kept = kept.size

    def score(cache_list) -> list[float]:
        logits, _ = llama_forward(cont, model, np.arange(n_kept, n_kept + cont.size), caches=cache_list)
        return token_log_likelihoods(logits[0], cont).tolist()

    runs = {"fresh pass over the kept tokens": token_log_likelihoods(fresh_logits[0, n_kept:], cont).tolist(),
            "shifted cache, keys re-rotated": score(shifted),
            "shifted cache, keys not re-rotated": score(unrotated)}
    return {"n_tokens": n_tokens, "n_keep": n_keep, "n_discard": n_discard, "continuation": int(cont.size),
            "layers": layers,
            "runs": {k: {"log_likelihoods": v, "perplexity": float(np.exp(-np.mean(v)))} for k, v in runs.items()},
            "cpu_seconds": _cpu() - c}


def bf16(positions):
    """``positions`` rounded to bfloat16 (round to nearest even), back as float64."""
    import torch

    return torch.tensor(positions, dtype=torch.float64).to(torch.bfloat16).double().numpy()


def low_precision_positions(model, ids, offsets) -> dict:
    import numpy as np

    from rope_edu.llama import llama_forward, token_log_likelihoods

    c = _cpu()
    n = ids.shape[0]
    base_logits = None
    runs = []
    for offset in offsets:
        for kind in ("float32", "bfloat16"):
            pos = offset + np.arange(n, dtype=np.float64)
            if kind == "bfloat16":
                pos = bf16(pos)
            logits, _ = llama_forward(ids, model, pos)
            if base_logits is None:
                base_logits = logits
            ll = token_log_likelihoods(logits[0], ids)
            runs.append({"offset": int(offset), "positions": kind,
                         "distinct_positions": int(np.unique(pos).size),
                         "perplexity": float(np.exp(-ll.mean())), "log_likelihoods": ll.tolist(),
                         "max_abs_logit_change": float(np.abs(logits - base_logits).max())})
            print(f"offset {offset:5d} {kind:8s}: perplexity {runs[-1]['perplexity']:8.2f}, "
                  f"max logit change {runs[-1]['max_abs_logit_change']:.4f}", flush=True)
    return {"n_tokens": int(n), "runs": runs, "cpu_seconds": _cpu() - c}


def main(argv: list[str] | None = None) -> dict:

    from rope_edu import trained

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prefill", type=int, default=64)
    parser.add_argument("--decode", type=int, default=32, help="tokens decoded one at a time after the prefill")
    parser.add_argument("--shift-tokens", type=int, default=128)
    parser.add_argument("--continuation", type=int, default=32)
    parser.add_argument("--window", type=int, default=256, help="tokens per low-precision position run")
    parser.add_argument("--out", type=Path, default=ROOT / "rope_edu" / "data" / "trained_cache.json")
    args = parser.parse_args(argv)

    clock = Clock()
    config, model = trained.load_llama()
    n = max(args.prefill + args.decode, args.shift_tokens + args.continuation, args.window)
    ids = play_tokens(["hamlet"], n)
    result = {
        "model": {"file": trained.SMOLLM2_FILE, "dtype": "float32", "context_length": config.context_length},
        "text": {"play": "hamlet", "token_ids": ids.tolist()},
        "incremental": incremental(model, ids[: args.prefill + args.decode], args.prefill),
    }
    print("incremental:", {k: v for k, v in result["incremental"].items()}, flush=True)
    result["context_shift"] = context_shift(model, ids, args.shift_tokens, N_KEEP, N_DISCARD, args.continuation)
    cs = result["context_shift"]
    print("context shift keys error by layer:", [round(r["keys_relative_error"], 6) for r in cs["layers"]])
    print("context shift perplexities:", {k: round(v["perplexity"], 3) for k, v in cs["runs"].items()}, flush=True)
    result["positions"] = low_precision_positions(model, ids[: args.window], OFFSETS)
    result = {**record("trained_cache.py", argv, clock, "numpy"), **result}
    write_json(args.out, result)
    print(f"wrote {args.out} ({result['cpu_seconds_total']:.0f} CPU-s, {result['seconds_total']:.0f} s)")
    return result


if __name__ == "__main__":
    main()
