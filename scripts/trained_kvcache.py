"""Chapter 14 on a trained model: quantised key caches and a shifted YaRN cache in SmolLM2-135M.

Runs the book's numpy forward pass (float32, the 4-bit GGUF weights of SmolLM2-135M-Instruct, in the
file's own row order with interleaved pairs, as llama.cpp runs it) on the opening of Hamlet:

1. **Quantised key caches** (issue 41 item 9). Perplexity of the first ``--tokens`` tokens with every
   layer's keys stored as an engine's cache flag stores them and read back, and nothing else changed
   (queries, values and the rest in float32):

   * llama.cpp's ``-ctk q8_0`` and ``-ctk q4_0``: blocks of 32 coordinates along the head, one float16
     scale per block, ggml's rounding (:func:`rope_edu.kvquant.ggml_quantize`); ``q4_0`` also with the
     keys first multiplied by the 64 x 64 Walsh-Hadamard matrix (:func:`rope_edu.kvquant.hadamard`,
     the head is 64 wide), which llama.cpp does for a quantised K cache since ggml-org/llama.cpp#21038;
   * vLLM's ``fp8`` (e4m3) with one scale per layer or per key-value head, each taken from this
     text's own keys (largest size / 448), and with the uncalibrated scale 1.0
     (:func:`rope_edu.kvquant.quantize_fp8`, :func:`rope_edu.kvquant.round_e4m3`).

   Each is run with the keys quantised after RoPE (what the engines cache) and, as the control that
   switches the rotation's part off, before RoPE (the same quantiser on the unrotated keys, then the
   rotation), beside the pass with no quantisation.
2. **A shifted cache with YaRN** (issue 41 item 10). The model with YaRN at factor ``--factor`` over its
   trained 8,192 tokens (frequencies and the factor :math:`1 + 0.1\\ln s` on cos and sin, as
   transformers computes them) runs a prefix of ``--prefix`` tokens at positions starting at
   ``max(SHIFTS) * --delta``. Its cached keys are then moved back by ``--delta`` positions, again and
   again, by rotating them: (a) the rotation only, (b) the rotation with YaRN's factor applied once
   more at every shift (what a K-shift that calls the forward pass's RoPE does). After k shifts each
   cache is compared with the prefix run afresh at its new positions: the keys' relative error and
   norm ratio per layer, and the perplexity of the next ``--continuation`` tokens read with it.

Writes ``rope_edu/data/trained_kvcache.json`` with the CPU time of each part, and the log-likelihoods of
a slice (the first ``--slice`` tokens, ``q4_0`` after RoPE) that ``tests/test_trained_kvcache.py``
recomputes.

3. **Repeats of part 1 on other passages** (``--repeat START ...``). Part 1 again, every row, on the
   ``--tokens`` tokens of *Hamlet* from token ``START`` on (token ids ``START`` to ``START + tokens - 1``
   of the play as SmolLM2's tokenizer cuts the whole text, run at positions 0 to ``tokens - 1``). The
   file's earlier results are kept as they are: each passage is added under ``"repeats"`` with its own
   record (command, CPU time, threads) and a slice (its first ``--slice`` tokens, ``q4_0`` *before*
   RoPE) that the test recomputes, and the file is written after each passage. A start already there,
   or one whose tokens overlap another passage's, is refused.

    .venv/bin/python scripts/trained_kvcache.py                        # the cached run
    # the cached repeats: tokens 2,048 to 12,287 in five passages, about 420 CPU-s each on one thread
    OMP_NUM_THREADS=1 nice .venv/bin/python scripts/trained_kvcache.py --repeat 2048 4096 6144 --threads 1
    OMP_NUM_THREADS=1 nice .venv/bin/python scripts/trained_kvcache.py --repeat 8192 10240 --threads 1
    .venv/bin/python scripts/trained_kvcache.py --tokens 64 --prefix 32 --continuation 16 --out /tmp/k.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from run_record import Clock, play_tokens, record, write_json  # scripts/run_record.py, beside this file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TQDM_DISABLE", "1")

#: The numbers of shifts after which the shifted caches are compared (the prefix starts at max(SHIFTS) * delta).
SHIFTS = (1, 2, 4, 8)


def _cpu() -> float:
    return time.process_time()


def _hadamard_q4(k):
    from rope_edu.kvquant import ggml_quantize, hadamard

    h = hadamard(k.shape[-1])
    return ggml_quantize(k @ h, "q4_0") @ h


def _fp8_unit(k):
    from rope_edu.kvquant import round_e4m3

    return round_e4m3(k)


def quantisers() -> dict[str, Callable[[Any], Any]]:
    """The caches measured, by name: a function from keys ``(batch, kv_heads, seq, head_dim)`` to the keys read back."""
    from rope_edu.kvquant import ggml_quantize, quantize_fp8

    return {
        "q8_0": lambda k: ggml_quantize(k, "q8_0"),
        "q4_0": lambda k: ggml_quantize(k, "q4_0"),
        "q4_0, Hadamard 64": _hadamard_q4,
        "fp8 e4m3, scale per layer": lambda k: quantize_fp8(k, "tensor"),
        "fp8 e4m3, scale per head": lambda k: quantize_fp8(k, "head"),
        "fp8 e4m3, scale 1.0": _fp8_unit,
    }


#: The caches also run with the keys quantised before RoPE (the control).
PRE_ROPE = ("q8_0", "q4_0", "fp8 e4m3, scale per layer", "fp8 e4m3, scale per head")


def forward_quantised(model, ids, quantise=None, where: str = "post_rope"):
    """Logits of one causal pass over ``ids`` (positions 0..S-1) with every layer's keys passed through
    ``quantise`` after RoPE (``where="post_rope"``) or before it (``"pre_rope"``); ``quantise`` None is
    :func:`rope_edu.llama.llama_forward`'s pass. Returns logits of shape (1, S, vocab)."""
    import numpy as np

    from rope_edu import apply_rope
    from rope_edu.attention import attention
    from rope_edu.llama import merge_heads, repeat_kv, rms_norm, split_heads, swiglu_mlp

    if where not in ("pre_rope", "post_rope"):
        raise ValueError(f"where must be 'pre_rope' or 'post_rope', got {where!r}")
    tokens = np.asarray(ids)[None, :]
    pos = np.arange(tokens.shape[1])[None, :]
    h = model.embed_tokens[tokens]
    for layer in model.layers:
        att = layer.attention
        x = rms_norm(h, layer.input_norm, model.eps)
        q = split_heads(x @ att.q_proj.T, att.n_heads)
        k = split_heads(x @ att.k_proj.T, att.n_kv_heads)
        v = split_heads(x @ att.v_proj.T, att.n_kv_heads)
        if quantise is not None and where == "pre_rope":
            k = quantise(k).astype(k.dtype)
        rope = dict(layout=att.layout, inv_freq=att.frequencies)
        q, k = apply_rope(q, pos, **rope), apply_rope(k, pos, **rope)
        if att.attention_scaling != 1.0:
            q, k = q * q.dtype.type(att.attention_scaling), k * k.dtype.type(att.attention_scaling)
        if quantise is not None and where == "post_rope":
            k = quantise(k).astype(k.dtype)
        heads = attention(q, repeat_kv(k, att.n_rep), repeat_kv(v, att.n_rep), causal=True)
        h = h + merge_heads(heads) @ att.o_proj.T
        h = h + swiglu_mlp(rms_norm(h, layer.post_attention_norm, model.eps), layer.mlp)
    head = model.embed_tokens if model.lm_head is None else model.lm_head
    return rms_norm(h, model.norm, model.eps) @ head.T


def quantised_caches(model, ids) -> dict:
    import numpy as np

    from rope_edu.llama import token_log_likelihoods

    c = _cpu()
    runs = []
    todo = [("none", None, "post_rope")] + [(n, f, "post_rope") for n, f in quantisers().items()]
    todo += [(n, quantisers()[n], "pre_rope") for n in PRE_ROPE]
    for name, fn, where in todo:
        t = _cpu()
        ll = token_log_likelihoods(forward_quantised(model, ids, fn, where)[0], ids)
        runs.append({"cache": name, "order": where if fn is not None else None,
                     "perplexity": float(np.exp(-ll.mean())), "mean_log_likelihood": float(ll.mean()),
                     "cpu_seconds": _cpu() - t})
        print(f"{name:28s} {where:9s}: perplexity {runs[-1]['perplexity']:.4f} "
              f"({runs[-1]['cpu_seconds']:.0f} CPU-s)", flush=True)
    return {"n_tokens": int(ids.size), "predicted": int(ids.size - 1), "runs": runs, "cpu_seconds": _cpu() - c}


def shift_keys(caches, delta: float, inv_freq, layout: str, factor: float = 1.0):
    """Every layer's cached keys moved back by ``delta`` positions by rotating them by ``-delta``, times
    ``factor`` (1: the rotation only; YaRN's attention factor: the K-shift that re-applies it)."""
    import numpy as np

    from rope_edu import apply_rope
    from rope_edu.llama import KVCache

    out = []
    for cache in caches:
        shifts = np.full(cache.length, -float(delta))
        keys = apply_rope(cache.keys, shifts, layout=layout, inv_freq=inv_freq)
        if factor != 1.0:
            keys = keys * keys.dtype.type(factor)
        out.append(KVCache(keys.astype(cache.keys.dtype), cache.values, cache.layer_idx))
    return out


def shifted_cache(model, ids, prefix: int, continuation: int, delta: int, factor_yarn: float) -> dict:
    import numpy as np

    from rope_edu.llama import llama_forward, token_log_likelihoods

    c = _cpu()
    att = model.layers[0].attention
    inv_freq, layout, a = att.frequencies, att.layout, att.attention_scaling
    head, cont = ids[:prefix], ids[prefix : prefix + continuation]
    start = max(SHIFTS) * delta

    def score(caches, first: int) -> list[float]:
        logits, _ = llama_forward(cont, model, np.arange(first, first + cont.size), caches=caches)
        return token_log_likelihoods(logits[0], cont).tolist()

    def ppl(ll) -> float:
        return float(np.exp(-np.mean(ll)))

    _, cached = llama_forward(head, model, np.arange(start, start + prefix))
    unshifted = ppl(score(cached, start + prefix))
    caches = {"rotation only": list(cached), "rotation and YaRN's factor again": list(cached)}
    steps = []
    for k in range(1, max(SHIFTS) + 1):
        caches["rotation only"] = shift_keys(caches["rotation only"], delta, inv_freq, layout)
        caches["rotation and YaRN's factor again"] = shift_keys(caches["rotation and YaRN's factor again"], delta,
                                                                inv_freq, layout, factor=a)
        if k not in SHIFTS:
            continue
        first = start - k * delta
        _, fresh = llama_forward(head, model, np.arange(first, first + prefix))
        step: dict[str, Any] = {"shifts": k, "positions_from": first,
                                "recomputed": {"perplexity": ppl(score(fresh, first + prefix))}}
        for name, shifted in caches.items():
            err = [float(np.linalg.norm(s.keys - f.keys) / np.linalg.norm(f.keys)) for s, f in zip(shifted, fresh)]
            norm = [float(np.linalg.norm(s.keys) / np.linalg.norm(f.keys)) for s, f in zip(shifted, fresh)]
            step[name] = {"perplexity": ppl(score(shifted, first + prefix)),
                          "keys_relative_error": err, "key_norm_ratio": norm}
        steps.append(step)
        print(f"{k} shifts: " + ", ".join(f"{n} {step[n]['perplexity']:.3f}"
                                         for n in ("recomputed", *caches)), flush=True)
    return {"prefix": prefix, "continuation": int(cont.size), "predicted": int(cont.size - 1), "delta": delta,
            "start": start, "factor": factor_yarn, "attention_factor": a, "unshifted_perplexity": unshifted,
            "steps": steps, "cpu_seconds": _cpu() - c}


def slice_numbers(model, ids, where: str = "post_rope") -> dict:
    """The log-likelihoods the test recomputes: ``q4_0`` after RoPE (or before it, ``where="pre_rope"``)
    on the first tokens."""
    from rope_edu.kvquant import ggml_quantize
    from rope_edu.llama import token_log_likelihoods

    logits = forward_quantised(model, ids, lambda k: ggml_quantize(k, "q4_0"), where)
    return {"n_tokens": int(ids.size), "cache": "q4_0", "order": where,
            "log_likelihoods": token_log_likelihoods(logits[0], ids).tolist()}


#: The play every passage is read from.
PLAY = "hamlet"


def passages(result: dict) -> list[dict]:
    """Every passage part 1 was run on, first the cached run's (the play's first tokens), then the
    repeats: ``{"first_token", "n_tokens", "token_ids", "quantised"}`` each, ``quantised`` as
    :func:`quantised_caches` returns it."""
    first = result["quantised"]
    out = [{"first_token": 0, "n_tokens": first["n_tokens"],
            "token_ids": result["text"]["token_ids"][: first["n_tokens"]], "quantised": first}]
    for r in result.get("repeats", []):
        out.append({"first_token": r["text"]["first_token"], "n_tokens": r["quantised"]["n_tokens"],
                    "token_ids": r["text"]["token_ids"], "quantised": r["quantised"]})
    return out


def check_new_passage(result: dict, start: int, tokens: int) -> None:
    """``ValueError`` unless the ``tokens`` tokens from ``start`` overlap no passage already in ``result``."""
    if start < 0:
        raise ValueError(f"--repeat starts must be 0 or more, got {start}")
    for p in passages(result):
        if start < p["first_token"] + p["n_tokens"] and p["first_token"] < start + tokens:
            raise ValueError(f"--repeat {start}: tokens {start} to {start + tokens - 1} overlap the passage "
                             f"of tokens {p['first_token']} to {p['first_token'] + p['n_tokens'] - 1}")


def repeat_passages(args, argv) -> dict:
    """Part 1 on each passage of ``args.repeat`` not yet in ``args.out``, added to it (see the module's
    docstring); returns the whole result."""
    import json

    from rope_edu import trained

    result = json.loads(args.out.read_text(encoding="utf-8"))
    n = result["quantised"]["n_tokens"] if args.tokens is None else args.tokens
    config, tensors = trained.read_gguf()
    model = trained.llama_from_gguf(config, tensors, rows="gguf")
    for start in args.repeat:
        check_new_passage(result, start, n)
        clock = Clock()
        ids = play_tokens([PLAY], start + n)[start:]
        print(f"{PLAY} tokens {start} to {start + n - 1}", flush=True)
        text = {"play": PLAY, "first_token": start, "token_ids": ids.tolist()}
        part = {"slice": slice_numbers(model, ids[: args.slice], "pre_rope"), "quantised": quantised_caches(model, ids)}
        threads = args.threads if args.threads is not None else os.environ.get("OMP_NUM_THREADS")
        entry = {**record("trained_kvcache.py", argv, clock, "numpy", "gguf", "transformers", threads=threads),
                 "text": text, **part}
        result.setdefault("repeats", []).append(entry)
        write_json(args.out, result)
        print(f"wrote {args.out} ({entry['cpu_seconds_total']:.0f} CPU-s, {entry['seconds_total']:.0f} s)",
              flush=True)
    return result


def yarn_model(config, tensors, factor: float):
    """SmolLM2 with YaRN at ``factor`` over its trained context (GGUF rows, interleaved pairs)."""
    from rope_edu import trained
    from rope_edu.scaling import scaled_frequencies

    inv, att = scaled_frequencies("yarn", config.head_dim, config.base, factor=factor,
                                  original_max_position_embeddings=config.context_length)
    return trained.llama_from_gguf(config, tensors, rows="gguf", inv_freq=inv, attention_scaling=att)


def main(argv: list[str] | None = None) -> dict:
    from rope_edu import trained

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=None,
                        help="tokens scored with each quantised cache (default 2048; with --repeat, the "
                             "cached run's)")
    parser.add_argument("--prefix", type=int, default=512, help="tokens in the shifted cache")
    parser.add_argument("--continuation", type=int, default=256, help="tokens read after the shifted cache")
    parser.add_argument("--delta", type=int, default=256, help="positions each shift moves the cache back")
    parser.add_argument("--factor", type=float, default=2.0, help="YaRN's scale factor in the shift runs")
    parser.add_argument("--slice", type=int, default=32, help="tokens of the slice the test recomputes")
    parser.add_argument("--out", type=Path, default=ROOT / "rope_edu" / "data" / "trained_kvcache.json")
    parser.add_argument("--repeat", type=int, nargs="+", metavar="START",
                        help="keep --out as it is and add part 1 on the passages of Hamlet from these tokens")
    parser.add_argument("--threads", type=int, default=None,
                        help="BLAS threads (set before numpy is imported; recorded with each repeat)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        if args.threads < 1:
            parser.error(f"--threads must be 1 or more, got {args.threads}")
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)  # read when numpy's BLAS starts, if it has not yet
    if args.repeat:
        return repeat_passages(args, argv)
    args.tokens = 2048 if args.tokens is None else args.tokens

    clock = Clock()
    config, tensors = trained.read_gguf()
    model = trained.llama_from_gguf(config, tensors, rows="gguf")
    ids = play_tokens([PLAY], max(args.tokens, args.prefix + args.continuation))
    result: dict[str, Any] = {
        "model": {"file": trained.SMOLLM2_FILE, "dtype": "float32", "rows": "gguf", "layout": "interleaved",
                  "context_length": config.context_length, "head_dim": config.head_dim},
        "text": {"play": PLAY, "token_ids": ids.tolist()},
        "slice": slice_numbers(model, ids[: args.slice]),
        "quantised": quantised_caches(model, ids[: args.tokens]),
    }
    yarn = yarn_model(config, tensors, args.factor)
    result["shifted"] = shifted_cache(yarn, ids, args.prefix, args.continuation, args.delta, args.factor)
    result = {**record("trained_kvcache.py", argv, clock, "numpy", "gguf", "transformers"), **result}
    write_json(args.out, result)
    print(f"wrote {args.out} ({result['cpu_seconds_total']:.0f} CPU-s, {result['seconds_total']:.0f} s)")
    return result


if __name__ == "__main__":
    main()
