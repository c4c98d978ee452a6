"""Chapter 9 page 2: what makes a scaling cost perplexity inside the trained length, switched off.

Two causes are separated on SmolLM2-135M (the 4-bit GGUF weights, float32, the torch pass of
``scripts/trained_context.py``), over the first ``--tokens`` tokens of *Hamlet* (1,024 by default,
inside the trained 8,192; the first tokens of ``trained_context_2048.json``):

* **YaRN's attention factor.** YaRN multiplies the logits by ``a**2`` (``a`` = 1.07 at s = 2,
  1.14 at s = 4) besides changing the frequencies. Each YaRN run is repeated with its frequencies
  and ``a = 1``, and plain RoPE's frequencies are run with YaRN's ``a`` at s = 4: which of the two
  changes costs the perplexity. (NTK-aware and Llama 3.1 have ``a = 1``: their cost is their
  frequencies'.)
* **Position Interpolation's fast pairs.** PI divides every frequency by s. It is repeated with
  only pairs 0-10 divided (the pairs YaRN keeps exactly at s = 2) and with only pairs 11-31
  divided, the rest as trained.

Writes ``--out`` (``rope_edu/data/trained_context_controls.json``): each run's frequencies, ``a``,
perplexity over the tokens, the first ``--keep`` per-token log-likelihoods (the slice
``tests/test_trained.py`` reruns) and its CPU time.

    .venv/bin/python scripts/trained_context_controls.py --threads 1     # the cached run
    .venv/bin/python scripts/trained_context_controls.py --tokens 64 --out /tmp/c.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from run_record import Clock, record, write_json  # scripts/run_record.py, beside this file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("TQDM_DISABLE", "1")

#: Pairs Position Interpolation is confined to in the split runs: (name, first, last + 1).
PI_SPLIT = (("Position Interpolation on pairs 0-10 only", 0, 11),
            ("Position Interpolation on pairs 11-31 only", 11, 32))


def variants(head_dim: int, base: float) -> dict:
    """name -> (frequencies, attention factor a), every run of the script."""
    import numpy as np

    from trained_context import method_frequencies

    def freqs(name, s):
        inv, a = method_frequencies(name, head_dim, base, s)
        return np.asarray(inv, dtype=np.float64), float(a)

    plain, _ = freqs("plain RoPE", 2.0)
    out = {"plain RoPE": (plain, 1.0)}
    for s in (2.0, 4.0):
        yarn, a = freqs("YaRN", s)
        out[f"YaRN s={s:g}"] = (yarn, a)
        out[f"YaRN s={s:g} frequencies, a = 1"] = (yarn, 1.0)
        if s == 4.0:
            out[f"plain RoPE frequencies, YaRN s={s:g}'s a"] = (plain, a)
    pi, _ = freqs("Position Interpolation", 2.0)
    out["Position Interpolation s=2"] = (pi, 1.0)
    for name, lo, hi in PI_SPLIT:
        th = plain.copy()
        th[lo:hi] = pi[lo:hi]
        out[name + ", s=2"] = (th, 1.0)
    return out


def main(argv: list[str] | None = None) -> dict:
    import numpy as np
    import torch

    from rope_edu import trained
    from rope_edu.torch_rope import TorchLlama
    from trained_context import log_likelihoods, text_tokens

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--keep", type=int, default=48)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "rope_edu" / "data" / "trained_context_controls.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    clock = Clock()
    config, tensors = trained.read_gguf()
    ids = text_tokens(args.tokens)
    runs = {}
    for name, (inv, a) in variants(config.head_dim, config.base).items():
        c = time.process_time()
        model = TorchLlama(trained.llama_from_gguf(config, tensors, inv_freq=inv, attention_scaling=a))
        ll = log_likelihoods(model, ids)
        runs[name] = {"inv_freq": inv.tolist(), "attention_factor": a,
                      "perplexity": float(np.exp(-ll.mean())),
                      "log_likelihoods_head": ll[: args.keep].tolist(),
                      "cpu_seconds": time.process_time() - c}
        print(f"{name:48s} a={a:.3f} perplexity {runs[name]['perplexity']:8.3f} "
              f"({runs[name]['cpu_seconds']:.0f} CPU-s)", flush=True)
    result = {
        **record("trained_context_controls.py", argv, clock, "torch", "numpy", threads=args.threads),
        "model": {"file": trained.SMOLLM2_FILE, "dtype": "float32", "engine": "rope_edu.torch_rope.TorchLlama",
                  "context_length": config.context_length},
        "text": {"play": "hamlet", "n_tokens": int(ids.shape[0]), "token_ids_head": ids[: args.keep].tolist()},
        "pi_split": [list(p) for p in PI_SPLIT],
        "runs": runs,
    }
    write_json(args.out, result)
    print(f"wrote {args.out} ({result['cpu_seconds_total']:.0f} CPU-s, {result['seconds_total']:.0f} s)")
    return result


if __name__ == "__main__":
    main()
