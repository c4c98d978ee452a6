"""Passkey retrieval on a trained model: can SmolLM2-135M still *use* a token far back?

Perplexity (``scripts/trained_context.py``) says whether the model still predicts text past its
trained context; it does not say whether it can fetch one fact from far back. This script hides a
five-digit pass key in a haystack of filler sentences, asks for it at the end, and scores the
model's answer, for plain RoPE and each scaling method at factor s (default 2), at several total
lengths inside and past the trained 8,192 tokens, with the key at several depths and several keys
at each point.

One causal pass per trial (the torch forward :class:`rope_edu.torch_rope.TorchLlama`, float32,
the weights :mod:`rope_edu.trained` reads from the GGUF file, each method's frequencies and
attention factor from ``scripts/trained_context.method_frequencies``). The pass runs over the
prompt *followed by the correct answer* (teacher forcing), which gives two scores at once:

* ``greedy``: True when the arg-max token at every answer position is the correct digit token.
  This is exactly "greedy decoding writes the key": if the first answer token is the arg-max, the
  second step sees the same context as the teacher-forced pass, and so on.
* ``log_prob``: the log-probability (natural log) of the whole correct answer, summed over its
  tokens; ``first_guess`` is the token the model ranks first at the first answer position (what it
  would begin its answer with).

Dynamic NTK leaves the frequencies unchanged while the pass is no longer than the trained length,
so inside it its trials would be plain RoPE's trials: they are not run (recorded as skipped, with
the reason), not copied.

Trials are run key by key (every length, depth and method for the first key, then the second...),
and the JSON is rewritten after each trial, so an interrupted run keeps a complete first key.

    .venv/bin/python scripts/trained_retrieval.py                       # the cached run
    .venv/bin/python scripts/trained_retrieval.py --lengths 1024 --keys 1 --out /tmp/r.json   # a short check
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("TQDM_DISABLE", "1")

from trained_context import METHODS, method_frequencies  # noqa: E402  (the same methods and frequencies)

INTRO = ("Below is a long text. Most of it is repeated filler, but somewhere in it a pass key is "
         "written down. Read it all, remember the pass key, and give it when asked.\n")
FILLER = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "
NEEDLE = "\nThe pass key is {key}. Remember it. {key} is the pass key.\n"
QUESTION = "\nWhat is the pass key? The pass key is"
ANSWER = " {key}"

#: Default grid: total prompt lengths (tokens), depths of the key (fraction of the filler before
#: it) and the keys (fixed, so a rerun tries the same ones).
LENGTHS = (4096, 7168, 12288, 16384)
DEPTHS = (0.1, 0.5, 0.9)
KEYS = (71432, 28096, 53917)


def prompt_ids(tokenizer, length: int, depth: float, key: int):
    """Token ids of one trial (prompt then answer, ``length`` tokens in all) and the answer's ids.

    The filler's token ids are repeated (tokenized once), cut so that the whole sequence is exactly
    ``length`` tokens, and the needle goes after ``round(depth * filler)`` of them.
    """
    import numpy as np

    def enc(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    intro, filler = enc(INTRO), enc(FILLER)
    needle, question, answer = enc(NEEDLE.format(key=key)), enc(QUESTION), enc(ANSWER.format(key=key))
    n_filler = length - len(intro) - len(needle) - len(question) - len(answer)
    if n_filler < 1:
        raise ValueError(f"length {length} is too short for the prompt's fixed parts")
    hay = (filler * (n_filler // len(filler) + 1))[:n_filler]
    cut = int(round(depth * n_filler))
    ids = intro + hay[:cut] + needle + hay[cut:] + question + answer
    assert len(ids) == length
    return np.asarray(ids, dtype=np.int64), np.asarray(answer, dtype=np.int64), len(intro) + cut


def score(model, ids, answer) -> dict:
    """Teacher-forced scores of the answer (the last ``len(answer)`` tokens of ``ids``)."""
    import numpy as np

    from rope_edu.llama import log_softmax

    hidden = model.hidden_states(ids)[0]
    n = answer.shape[0]
    logits = (hidden[-n - 1 : -1] @ model.head.T).numpy().astype(np.float64)  # predicts each answer token
    logp = log_softmax(logits)
    picked = logp[np.arange(n), answer]
    top = logp.argmax(-1)
    return {"greedy": bool((top == answer).all()), "log_prob": float(picked.sum()),
            "first_guess": int(top[0]), "first_correct": int(answer[0])}


def main(argv: list[str] | None = None) -> dict:
    import numpy as np
    import torch

    from rope_edu import trained

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--depths", type=float, nargs="+", default=list(DEPTHS))
    parser.add_argument("--keys", type=int, default=2, help="how many of KEYS to try at each point")
    parser.add_argument("--factor", type=float, default=2.0)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "rope_edu" / "data" / "trained_retrieval.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    wall, cpu = time.perf_counter(), time.process_time()
    config, tensors = trained.read_gguf()
    tok = trained.load_tokenizer()
    trained_length = config.context_length
    models: dict = {}
    trials: list[dict] = []
    skipped: list[dict] = []
    for key in KEYS[: args.keys]:
        for length in args.lengths:
            for depth in args.depths:
                ids, answer, where = prompt_ids(tok, length, depth, key)
                for name in args.methods:
                    point = {"method": name, "length": length, "depth": depth, "key": key}
                    dynamic = METHODS[name][0] == "dynamic"
                    if dynamic and length <= trained_length:
                        skipped.append({**point, "reason": "dynamic NTK's frequencies are plain RoPE's for a pass "
                                                           "no longer than the trained length"})
                        continue
                    cache_key = (name, length if dynamic else None)
                    if cache_key not in models:
                        from rope_edu.torch_rope import TorchLlama

                        inv_freq, scaling = method_frequencies(name, config.head_dim, config.base, args.factor,
                                                               length if dynamic else None)
                        models.clear() if dynamic else None  # one dynamic model at a time (memory)
                        models[cache_key] = TorchLlama(trained.llama_from_gguf(
                            config, tensors, inv_freq=inv_freq, attention_scaling=scaling))
                    c, w = time.process_time(), time.perf_counter()
                    with torch.no_grad():
                        result = score(models[cache_key], ids, answer)
                    trials.append({**point, "needle_position": where, **result,
                                   "cpu_seconds": time.process_time() - c, "seconds": time.perf_counter() - w})
                    print(f"key {key} L {length:6d} depth {depth:.1f} {name:24s} greedy {result['greedy']!s:5s} "
                          f"log p {result['log_prob']:8.2f}  ({trials[-1]['seconds']:.0f} s)", flush=True)
                    write(args, argv, wall, cpu, config, trials, skipped)
    result = write(args, argv, wall, cpu, config, trials, skipped)
    print(f"wrote {args.out} ({result['cpu_seconds_total']:.0f} CPU-s, {result['seconds_total']:.0f} s)")
    return result


def write(args, argv, wall, cpu, config, trials, skipped) -> dict:
    import numpy as np
    import torch

    from rope_edu import trained

    result = {
        "command": "python scripts/trained_retrieval.py " + shlex.join(argv if argv is not None else sys.argv[1:]),
        "seconds_total": time.perf_counter() - wall,
        "cpu_seconds_total": time.process_time() - cpu,
        "environment": {"torch": torch.__version__, "numpy": np.__version__, "python": platform.python_version(),
                        "cpus": os.cpu_count(), "threads": args.threads},
        "model": {"file": trained.SMOLLM2_FILE, "dtype": "float32", "engine": "rope_edu.torch_rope.TorchLlama",
                  "context_length": config.context_length},
        "prompt": {"intro": INTRO, "filler": FILLER, "needle": NEEDLE, "question": QUESTION, "answer": ANSWER},
        "factor": args.factor,
        "original_max_position_embeddings": config.context_length,
        "lengths": args.lengths, "depths": args.depths, "keys": list(KEYS[: args.keys]),
        "trials": trials,
        "skipped": skipped,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
