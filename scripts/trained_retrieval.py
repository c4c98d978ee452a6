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
* ``log_prob``: the log-probability (natural log) of the whole correct answer " NNNNN", its
  leading space token included, summed over its tokens; ``first_guess`` is the token the model
  ranks first at the first answer position. That position is the space before the digits, so
  ``first_guess`` does not say which digits a failing model would write (the book does not use it).

Dynamic NTK leaves the frequencies unchanged while the pass is no longer than the trained length,
so inside it its trials would be plain RoPE's trials: they are not run (recorded as skipped, with
the reason), not copied.

The prompts of one method and length share their beginning (the introduction and the filler up
to the key), so each (method, length) first runs the filler up to the deepest key once and keeps
every layer's keys and values after RoPE (a KV cache, exactly what a causal pass computes for those
positions whatever follows); each trial then runs only its own rest (the key, the remaining filler,
the question and the answer) against the cache's first ``needle_position`` entries. ``--check``
compares that with one whole pass on a short prompt (they agree to float32 rounding).
The JSON is rewritten after each trial, so an interrupted run keeps what it finished.

    .venv/bin/python scripts/trained_retrieval.py                       # the cached run
    .venv/bin/python scripts/trained_retrieval.py --lengths 1024 --keys 1 --out /tmp/r.json   # a short check
    .venv/bin/python scripts/trained_retrieval.py --check       # the cached path against a whole pass
    .venv/bin/python scripts/trained_retrieval.py --verify      # one cached trial past L per method, again
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from run_record import Clock, record, write_json  # scripts/run_record.py, beside this file

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
    """Token ids of one trial (prompt then answer, ``length`` tokens in all), the answer's ids and
    the needle's position.

    The filler's token ids are repeated (tokenized once). The needle goes after
    ``round(depth * n)`` filler tokens, where ``n`` is the filler's length for the first of
    :data:`KEYS` (so every key of a depth shares the same beginning), and the filler after it is
    cut so that the whole sequence is exactly ``length`` tokens.
    """
    import numpy as np

    def enc(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    def fixed(k: int) -> int:
        return len(enc(NEEDLE.format(key=k))) + len(enc(ANSWER.format(key=k)))

    intro, filler, question = enc(INTRO), enc(FILLER), enc(QUESTION)
    needle, answer = enc(NEEDLE.format(key=key)), enc(ANSWER.format(key=key))
    n_ref = length - len(intro) - len(question) - fixed(KEYS[0])
    n_filler = length - len(intro) - len(question) - len(needle) - len(answer)
    if min(n_ref, n_filler) < 1:
        raise ValueError(f"length {length} is too short for the prompt's fixed parts")
    hay = (filler * (n_filler // len(filler) + 2))
    cut = int(round(depth * n_ref))
    ids = intro + hay[:cut] + needle + hay[cut:n_filler] + question + answer
    assert len(ids) == length
    return np.asarray(ids, dtype=np.int64), np.asarray(answer, dtype=np.int64), len(intro) + cut


def forward(model, ids, start: int = 0, cache=None, keep: bool = False):
    """The final hidden states of ``ids`` at positions ``start, start + 1, ...`` after a KV cache
    of the first ``start`` positions (``cache``: per layer, keys after RoPE and values, shape
    (kv_heads, start, head_dim)); with ``keep`` also this pass's cache. The same steps as
    :meth:`rope_edu.torch_rope.TorchLlama.hidden_states`, whose layers it reads."""
    import torch

    from rope_edu.torch_rope import apply_rope

    ids = torch.as_tensor(ids)
    s = ids.shape[0]
    pos = torch.arange(start, start + s)
    h = model.embed[ids][None]
    out_cache = []
    for i, L in enumerate(model.layers):
        x = model.rms_norm(h, L["norm1"])
        q = (x @ L["q"].T).view(1, s, L["n_heads"], L["head_dim"]).transpose(1, 2)
        k = (x @ L["k"].T).view(1, s, L["n_kv_heads"], L["head_dim"]).transpose(1, 2)
        v = (x @ L["v"].T).view(1, s, L["n_kv_heads"], L["head_dim"]).transpose(1, 2)
        rope = dict(layout=L["layout"], inv_freq=L["inv_freq"])
        q, k = apply_rope(q, pos, **rope), apply_rope(k, pos, **rope)
        if L["scaling"] != 1.0:
            q, k = q * L["scaling"], k * L["scaling"]
        if start:
            k = torch.cat([cache[i][0][:, :, :start], k], dim=2)
            v = torch.cat([cache[i][1][:, :, :start], v], dim=2)
        if keep:
            out_cache.append((k, v))
        rep = L["n_heads"] // L["n_kv_heads"]
        kr, vr = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        if not start:
            att = torch.nn.functional.scaled_dot_product_attention(q, kr, vr, is_causal=True)
        else:  # query t (position start + t) sees keys 0 .. start + t, a block of queries at a time
            parts = []
            for a in range(0, s, 2048):
                b = min(s, a + 2048)
                mask = torch.arange(start + b)[None, :] <= (start + torch.arange(a, b))[:, None]
                parts.append(torch.nn.functional.scaled_dot_product_attention(
                    q[:, :, a:b], kr[:, :, : start + b], vr[:, :, : start + b], attn_mask=mask))
            att = torch.cat(parts, dim=2)
        h = h + att.transpose(1, 2).reshape(1, s, -1) @ L["o"].T
        x = model.rms_norm(h, L["norm2"])
        h = h + (torch.nn.functional.silu(x @ L["gate"].T) * (x @ L["up"].T)) @ L["down"].T
    return model.rms_norm(h, model.norm)[0], out_cache


def score(model, ids, answer, start: int = 0, cache=None) -> dict:
    """Teacher-forced scores of the answer (the last ``len(answer)`` tokens of ``ids``); with a
    ``cache`` of the first ``start`` tokens, only ``ids[start:]`` is run."""
    import numpy as np

    from rope_edu.llama import log_softmax

    hidden = forward(model, ids[start:], start, cache)[0]
    n = answer.shape[0]
    logits = (hidden[-n - 1 : -1] @ model.head.T).numpy().astype(np.float64)  # predicts each answer token
    logp = log_softmax(logits)
    picked = logp[np.arange(n), answer]
    top = logp.argmax(-1)
    return {"greedy": bool((top == answer).all()), "log_prob": float(picked.sum()),
            "first_guess": int(top[0]), "first_correct": int(answer[0])}


def main(argv: list[str] | None = None) -> dict:
    import torch

    from rope_edu import trained

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--depths", type=float, nargs="+", default=list(DEPTHS))
    parser.add_argument("--keys", type=int, default=2, help="how many of KEYS to try at each point")
    parser.add_argument("--factor", type=float, default=2.0)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--resume", action="store_true",
                        help="keep the trials already in --out and run only the missing ones")
    parser.add_argument("--verify", nargs="*", metavar="METHOD",
                        help="rerun, by one whole pass, one cached trial past the trained length per method "
                             "(default: every method) and compare it with --out; writes nothing")
    parser.add_argument("--check", action="store_true", help="compare the cached path with a whole pass, then stop")
    parser.add_argument("--out", type=Path, default=ROOT / "rope_edu" / "data" / "trained_retrieval.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    clock = Clock()
    config, tensors = trained.read_gguf()
    tok = trained.load_tokenizer()
    trained_length = config.context_length
    trials: list[dict] = []
    skipped: list[dict] = []
    from rope_edu.torch_rope import TorchLlama

    if args.check:
        return check(config, tensors, tok)
    if args.verify:
        return verify(config, tensors, tok, args)
    prefixes: list[dict] = []
    todo_lengths = list(args.lengths)  # a resumed run adds only these lengths' missing trials
    if args.resume and args.out.exists():  # an earlier run's trials (and its grid) are kept
        earlier = json.loads(args.out.read_text(encoding="utf-8"))
        trials, prefixes, skipped = earlier["trials"], earlier.get("prefixes", []), earlier["skipped"]
        args.lengths = sorted(set(earlier["lengths"]) | set(args.lengths))  # ascending: the figure draws them in order
        args.cpu_before = earlier.get("cpu_seconds_total", 0.0) + earlier.get("cpu_seconds_before", 0.0)
    done = {(t["method"], t["length"], t["depth"], t["key"]) for t in trials}
    for length in todo_lengths:
        for name in args.methods:
            point = {"method": name, "length": length}
            dynamic = METHODS[name][0] == "dynamic"
            if dynamic and length <= trained_length:
                if point not in [{k: x[k] for k in point} for x in skipped]:
                    skipped.append({**point, "reason": "dynamic NTK's frequencies are plain RoPE's for a pass "
                                                       "no longer than the trained length"})
                continue
            todo = [(d, k) for d in args.depths for k in KEYS[: args.keys] if (name, length, d, k) not in done]
            if not todo:
                continue
            inv_freq, scaling = method_frequencies(name, config.head_dim, config.base, args.factor,
                                                   length if dynamic else None)
            model = TorchLlama(trained.llama_from_gguf(config, tensors, inv_freq=inv_freq, attention_scaling=scaling))
            deepest_depth = max(d for d, _ in todo)
            deepest = prompt_ids(tok, length, deepest_depth, KEYS[0])[2]
            c, w = time.process_time(), time.perf_counter()
            with torch.no_grad():  # the shared beginning, once
                _, cache = forward(model, prompt_ids(tok, length, deepest_depth, KEYS[0])[0][:deepest], keep=True)
            prefixes.append({**point, "tokens": deepest, "cpu_seconds": time.process_time() - c,
                             "seconds": time.perf_counter() - w})
            for depth, key in todo:
                ids, answer, where = prompt_ids(tok, length, depth, key)
                c, w = time.process_time(), time.perf_counter()
                with torch.no_grad():
                    result = score(model, ids, answer, where, cache)
                trials.append({**point, "depth": depth, "key": key, "needle_position": where, **result,
                               "cpu_seconds": time.process_time() - c, "seconds": time.perf_counter() - w})
                print(f"L {length:6d} {name:24s} depth {depth:.1f} key {key} greedy {result['greedy']!s:5s} "
                      f"log p {result['log_prob']:8.2f}  ({trials[-1]['seconds']:.0f} s)", flush=True)
                write(args, argv, clock, config, trials, skipped, prefixes)
            del cache, model
    result = write(args, argv, clock, config, trials, skipped, prefixes)
    print(f"wrote {args.out} ({result['cpu_seconds_total']:.0f} CPU-s, {result['seconds_total']:.0f} s)")
    return result


def check(config, tensors, tok, length: int = 600) -> dict:
    """A trial through the shared-beginning cache against one whole pass (TorchLlama's own)."""
    import numpy as np
    import torch

    from rope_edu import trained
    from rope_edu.torch_rope import TorchLlama

    inv_freq, scaling = method_frequencies("YaRN", config.head_dim, config.base, 2.0, None)
    model = TorchLlama(trained.llama_from_gguf(config, tensors, inv_freq=inv_freq, attention_scaling=scaling))
    ids, answer, where = prompt_ids(tok, length, 0.5, KEYS[1])
    with torch.no_grad():
        whole = model.hidden_states(ids)[0].numpy()
        _, cache = forward(model, ids[:where], keep=True)
        rest = forward(model, ids[where:], where, cache)[0].numpy()
    err = float(np.abs(rest - whole[where:]).max() / np.abs(whole).max())
    print(f"cached rest vs whole pass: largest difference {err:.2e} of the largest hidden value")
    assert err < 1e-4, err
    return {"relative_difference": err}


def rerun(config, tensors, tok, trial: dict, factor: float) -> dict:
    """One cached ``trial`` again, by one whole pass (no shared-beginning cache): its scores."""
    import torch

    from rope_edu import trained
    from rope_edu.torch_rope import TorchLlama

    dynamic = METHODS[trial["method"]][0] == "dynamic"
    inv_freq, scaling = method_frequencies(trial["method"], config.head_dim, config.base, factor,
                                           trial["length"] if dynamic else None)
    model = TorchLlama(trained.llama_from_gguf(config, tensors, inv_freq=inv_freq, attention_scaling=scaling))
    ids, answer, where = prompt_ids(tok, trial["length"], trial["depth"], trial["key"])
    assert where == trial["needle_position"], (where, trial["needle_position"])
    with torch.no_grad():
        return score(model, ids, answer)


def verify(config, tensors, tok, args) -> dict:
    """:func:`rerun` one trial past the trained length per method (the shortest such length, the
    key nearest the end, the first key) and compare with the cache; raises if they differ."""
    cached = json.loads(args.out.read_text(encoding="utf-8"))
    methods = args.verify or list(METHODS)
    out = {}
    for name in methods:
        past = [t for t in cached["trials"] if t["method"] == name and t["length"] > config.context_length]
        if not past:
            print(f"{name}: no cached trial past the trained length")
            continue
        trial = min(past, key=lambda t: (t["length"], -t["depth"], t["key"]))
        again = rerun(config, tensors, tok, trial, cached["factor"])
        diff = abs(again["log_prob"] - trial["log_prob"])
        print(f"{name:24s} L {trial['length']} depth {trial['depth']} key {trial['key']}: log p {again['log_prob']:.4f} "
              f"(cached {trial['log_prob']:.4f}), greedy {again['greedy']} (cached {trial['greedy']})", flush=True)
        assert again["greedy"] == trial["greedy"] and diff < 2e-3, (name, again, trial)
        out[name] = {"log_prob": again["log_prob"], "cached": trial["log_prob"]}
    return out


def write(args, argv, clock, config, trials, skipped, prefixes) -> dict:
    from rope_edu import trained

    head = record("trained_retrieval.py", argv, clock, "torch", "numpy", threads=args.threads)
    environment = head.pop("environment")
    result = {
        **head,
        "cpu_seconds_before": getattr(args, "cpu_before", 0.0),  # earlier runs this one resumed
        "environment": environment,
        "model": {"file": trained.SMOLLM2_FILE, "dtype": "float32", "engine": "rope_edu.torch_rope.TorchLlama",
                  "context_length": config.context_length},
        "prompt": {"intro": INTRO, "filler": FILLER, "needle": NEEDLE, "question": QUESTION, "answer": ANSWER},
        "factor": args.factor,
        "original_max_position_embeddings": config.context_length,
        # the keys tried (a resumed run may try fewer keys at the lengths it adds: see "trials")
        "lengths": args.lengths, "depths": args.depths,
        "keys": [k for k in KEYS if k in KEYS[: args.keys] or any(t["key"] == k for t in trials)],
        "prefixes": prefixes,
        "trials": trials,
        "skipped": skipped,
    }
    write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()
