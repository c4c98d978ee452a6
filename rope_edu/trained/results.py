"""The cached measurements on SmolLM2 (``rope_edu/data/trained_*.json``, written by the scripts
under ``scripts/``) and the summaries the chapters draw from them."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import check_choice, check_int

__all__ = ["RESULTS", "load_results", "CONTEXT_CACHES", "context_results", "window_perplexity", "retrieval_summary",
           "kvcache_passages"]


#: The cached measurements :func:`load_results` reads, ``rope_edu/data/trained_{name}.json``.
RESULTS = ("layout", "cache", "context", "context_s4", "context_2048", "context_controls", "probe", "interventions",
           "retrieval", "kvcache")


def load_results(name: str) -> dict[str, Any]:
    """A cached measurement on SmolLM2: ``rope_edu/data/trained_{name}.json``.

    Parameters
    ----------
    name : {"layout", "cache", "context", "context_s4", "context_2048", "context_controls", "probe", "interventions", "retrieval", "kvcache"}
        Written by ``scripts/trained_{name}.py`` (each file states its command and CPU time);
        ``"context"`` is ``trained_context.py`` at ``s = 2`` over 16,384 tokens, ``"context_s4"`` the
        same script at ``s = 4`` over 32,768 tokens (``--tokens 32768 --factor 4``), and
        ``"context_2048"`` the script with ``--tokens 2048``, every method inside the trained length;
        ``"interventions"`` and ``"retrieval"`` are ``trained_interventions.py`` and ``trained_retrieval.py``;
        ``"context_controls"`` is ``trained_context_controls.py`` (YaRN's attention factor and Position
        Interpolation's fast pairs switched off one at a time, inside the trained length); ``"kvcache"`` is
        ``trained_kvcache.py`` (keys in llama.cpp's and vLLM's quantised caches on several passages of
        *Hamlet*, :func:`kvcache_passages`, and a shifted YaRN cache).
    """
    import json
    from importlib import resources

    name = check_choice(name, RESULTS, "name")
    return json.loads((resources.files("rope_edu") / "data" / f"trained_{name}.json").read_text(encoding="utf-8"))


#: The cached runs of ``scripts/trained_context.py`` by scale factor s (see :func:`context_results`).
CONTEXT_CACHES = {2: "context", 4: "context_s4"}


def context_results(factor: int) -> dict[str, Any]:
    """The cached run of ``scripts/trained_context.py`` at scale ``factor`` (2: 16,384 tokens; 4: 32,768)."""
    factor = int(check_choice(str(factor), [str(f) for f in CONTEXT_CACHES], "factor"))
    result = load_results(CONTEXT_CACHES[factor])
    if result["factor"] != factor:
        raise ValueError(f"trained_{CONTEXT_CACHES[factor]}.json holds factor {result['factor']}, not {factor}")
    return result


def window_perplexity(run: dict[str, Any], n_tokens: int, block: int, window: int = 1024) -> np.ndarray:
    """Perplexity over each ``window`` tokens of a cached run of ``scripts/trained_context.py``.

    The cache keeps the mean log-likelihood of the predicted tokens in each block of ``block``
    positions (the token at position ``p`` is predicted for ``1 <= p < n_tokens``, so the first
    block holds one token fewer). A window is whole blocks; its perplexity is
    ``exp(-mean)`` over its predicted tokens, each block weighted by how many it holds.
    """
    n_tokens, block, window = check_int(n_tokens, "n_tokens", 2), check_int(block, "block", 1), check_int(window, "window", 1)
    if window % block or n_tokens % window:
        raise ValueError(f"window ({window}) must be whole blocks ({block}) and divide n_tokens ({n_tokens})")
    means = np.asarray(run["mean_log_likelihood_by_block"], dtype=float)
    starts = np.arange(0, n_tokens, block)
    if means.shape != starts.shape:
        raise ValueError(f"the run has {means.size} blocks, {n_tokens} tokens in blocks of {block} make {starts.size}")
    counts = np.minimum(starts + block, n_tokens) - np.maximum(starts, 1)  # predicted tokens per block
    per = window // block
    total = (means * counts).reshape(-1, per).sum(axis=1)
    return np.exp(-total / counts.reshape(-1, per).sum(axis=1))


# --- passkey retrieval (chapters 5 and 9, scripts/trained_retrieval.py) ----------------------------


def retrieval_summary(result: dict[str, Any] | None = None, *, depth: float | None = None,
                      methods: Any = ()) -> dict[str, Any]:
    """Greedy success and log-probability of the pass key by method and length, from a cached run of
    ``scripts/trained_retrieval.py`` (default: ``load_results("retrieval")``).

    Parameters
    ----------
    result : dict, optional
        The script's JSON (it is written trial by trial, so a run in progress has fewer keys at
        the later points: every cell states how many trials it holds).
    depth : float, optional
        Only the trials with the key at this depth (one of the run's ``depths``); default all.
    methods : sequence of str, optional
        Methods to give cells even if the run holds no trial of theirs yet (a run in progress).

    Returns
    -------
    dict
        ``"methods"`` and ``"lengths"`` (the run's, in order); ``"cells"``: a dict keyed by
        ``(method, length)`` of ``{"trials", "retrieved", "rate", "mean_log_prob", "skipped"}``
        (``rate`` and ``mean_log_prob`` are NaN for a cell with no trial; ``skipped`` is the reason
        the script gives for a point it does not run, or ``None``); ``"keys"``: how many different
        keys the trials used; ``"depths"``: the depths summarised.
    """
    import math

    result = load_results("retrieval") if result is None else result
    if not isinstance(result, dict) or "trials" not in result:
        raise TypeError("result must be the JSON dict scripts/trained_retrieval.py writes (with 'trials')")
    depths = [float(x) for x in result["depths"]]
    if depth is not None:
        if isinstance(depth, bool) or not isinstance(depth, (int, float)) or float(depth) not in depths:
            raise ValueError(f"depth must be one of the run's depths {depths}, got {depth!r}")
        depths = [float(depth)]
    if isinstance(methods, str) or not all(isinstance(m, str) for m in methods):
        raise TypeError(f"methods must be a sequence of method names, got {methods!r}")
    methods = list(dict.fromkeys([t["method"] for t in result["trials"]] + [t["method"] for t in result["skipped"]]
                                 + list(methods)))
    lengths = [int(x) for x in result["lengths"]]
    cells: dict[tuple[str, int], dict[str, Any]] = {}
    for m in methods:
        for n in lengths:
            rows = [t for t in result["trials"] if t["method"] == m and t["length"] == n and t["depth"] in depths]
            skip = [t["reason"] for t in result["skipped"] if t["method"] == m and t["length"] == n]
            k = len(rows)
            cells[(m, n)] = {
                "trials": k,
                "retrieved": sum(bool(t["greedy"]) for t in rows),
                "rate": sum(bool(t["greedy"]) for t in rows) / k if k else math.nan,
                "mean_log_prob": float(np.mean([t["log_prob"] for t in rows])) if k else math.nan,
                "skipped": skip[0] if skip else None,
            }
    keys = sorted({t["key"] for t in result["trials"] if t["depth"] in depths})
    return {"methods": methods, "lengths": lengths, "cells": cells, "keys": len(keys), "depths": depths}


# --- quantised key caches on several passages (chapters 12 and 14, scripts/trained_kvcache.py) ----


def kvcache_passages(result: dict[str, Any] | None = None) -> dict[str, Any]:
    """Perplexity with each quantised key cache, passage by passage, from a cached run of
    ``scripts/trained_kvcache.py`` (default: ``load_results("kvcache")``).

    The first passage is the run's own (the play's first tokens, ``result["quantised"]``); the others
    are its repeats (``result["repeats"]``, added by ``--repeat``), in the order they were run.

    Parameters
    ----------
    result : dict, optional
        The script's JSON.

    Returns
    -------
    dict
        ``"passages"``: one ``{"play", "first_token", "n_tokens", "predicted"}`` per passage (the
        tokens read are ``first_token`` to ``first_token + n_tokens - 1`` of the play);
        ``"perplexity"``: a dict keyed by ``(cache, order)`` as the runs name them (``("none", None)``
        for float32 keys) of arrays with one value per passage; ``"cost"``: the same keys but
        ``("none", None)``, each perplexity minus the float32 one of its passage; ``"removed"``: for
        each cache run in both orders, the share of its cost after RoPE that quantising before RoPE
        removes, ``1 - cost_before / cost_after``, per passage.

    Raises
    ------
    TypeError
        ``result`` is not the script's JSON.
    ValueError
        The passages do not hold the same runs, or two passages overlap.
    """
    result = load_results("kvcache") if result is None else result
    if not isinstance(result, dict) or "quantised" not in result or "text" not in result:
        raise TypeError("result must be the JSON dict scripts/trained_kvcache.py writes (with 'quantised')")
    parts = [(result["text"]["play"], 0, result["quantised"])]
    parts += [(r["text"]["play"], int(r["text"]["first_token"]), r["quantised"]) for r in result.get("repeats", [])]
    passages, table = [], []
    for play, first, q in parts:
        passages.append({"play": play, "first_token": first, "n_tokens": int(q["n_tokens"]),
                         "predicted": int(q["predicted"])})
        table.append({(r["cache"], r["order"]): float(r["perplexity"]) for r in q["runs"]})
    keys = list(table[0])
    for p, t in zip(passages, table):
        if set(t) != set(keys) or len(t) != len(keys):
            raise ValueError(f"the passage from token {p['first_token']} holds the runs {sorted(map(str, t))}, "
                             f"the first {sorted(map(str, keys))}")
    spans = sorted((p["play"], p["first_token"], p["first_token"] + p["n_tokens"]) for p in passages)
    for a, b in zip(spans, spans[1:]):
        if a[0] == b[0] and b[1] < a[2]:
            raise ValueError(f"the passages from tokens {a[1]} and {b[1]} of {a[0]} overlap")
    ppl = {k: np.array([t[k] for t in table]) for k in keys}
    base = ppl[("none", None)]
    cost = {k: v - base for k, v in ppl.items() if k != ("none", None)}
    removed = {c: 1 - cost[(c, "pre_rope")] / cost[(c, "post_rope")]
               for c, order in cost if order == "pre_rope" and (c, "post_rope") in cost}
    return {"passages": passages, "perplexity": ppl, "cost": cost, "removed": removed}
