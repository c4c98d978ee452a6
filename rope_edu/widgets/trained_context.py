"""Chapter 9 figure: SmolLM2-135M's measured perplexity by position, and its passkey retrieval by
length, plain RoPE against the scalings.

Nothing is computed here but what the caches hold: :func:`data` reads the cached runs of
``scripts/trained_context.py`` (:func:`rope_edu.trained.context_results`: ``s = 2`` over the first
16,384 tokens of *Hamlet*, ``s = 4`` over its first 32,768) and turns each method's mean
log-likelihood per block into the perplexity of every 1,024 tokens
(:func:`rope_edu.trained.window_perplexity`); and the run of ``scripts/trained_retrieval.py``
(:func:`rope_edu.trained.retrieval_summary`: at ``s = 2``, the share of trials whose greedy answer
is the pass key and the mean log-probability of the key, by method, prompt length and depth of the
key). The reader picks the methods (check boxes), the scale ``s``, a window along the text, a
prompt length and a depth; the figure (``js/trained_context.js``) draws the perplexity against the
position on a log axis and, under it, the share of keys retrieved against the prompt length, marks
the trained length ``L = 8192``, the window and the length, and prints each shown method's numbers
there (:func:`readouts`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._checks import check_choice, check_int
from ..trained import CONTEXT_CACHES, context_results, load_results, retrieval_summary, window_perplexity
from ..scaling import METHODS as SCALING_METHODS
from ._core import Control, Figure

__all__ = ["METHODS", "SHORT", "FACTORS", "WINDOW", "MAX_START", "DEPTHS", "LENGTHS", "window_start", "series", "retrieval",
           "readouts", "data", "CONTROLS", "DEMO"]

#: The methods, as (check box name, the cache's and the book's plain name: the method's label).
METHODS: tuple[tuple[str, str], ...] = tuple(
    (box, SCALING_METHODS[name].label)
    for box, name in (("plain", "default"), ("pi", "linear"), ("ntk", "ntk"), ("dynamic", "dynamic"),
                      ("yarn", "yarn"), ("llama3", "llama3")))
#: A method's check box label: its plain name, Position Interpolation as the book abbreviates it (the six
#: boxes then take two rows on a phone; the key beside the drawing names it in full).
SHORT: dict[str, str] = {key: "PI" if key == "pi" else name for key, name in METHODS}
#: Scale factors with a cached run (the drop-down's options).
FACTORS: tuple[str, ...] = tuple(str(f) for f in CONTEXT_CACHES)
#: Tokens per plotted point.
WINDOW = 1024
#: Largest window start on the slider (the s = 4 text: 32,768 tokens).
MAX_START = 32768 - WINDOW


@functools.lru_cache(maxsize=None)
def _retrieval_run() -> dict[str, Any]:
    return load_results("retrieval")


#: The retrieval run's prompt lengths (the length menu's options) and depths of the key ("all": every depth).
LENGTHS: tuple[str, ...] = tuple(str(n) for n in _retrieval_run()["lengths"])
DEPTHS: tuple[str, ...] = ("all",) + tuple(str(float(x)) for x in _retrieval_run()["depths"])


@functools.lru_cache(maxsize=None)
def _retrieval(depth: str) -> dict[str, Any]:
    S = retrieval_summary(_retrieval_run(), depth=None if depth == "all" else float(depth),
                          methods=[name for _, name in METHODS])
    out: dict[str, Any] = {}
    for key, name in METHODS:
        cells = [S["cells"].get((name, int(n))) for n in LENGTHS]
        out[key] = {
            "trials": [c["trials"] if c else 0 for c in cells],
            "retrieved": [c["retrieved"] if c else 0 for c in cells],
            "rate": [c["rate"] if c and c["trials"] else None for c in cells],
            "log_prob": [c["mean_log_prob"] if c and c["trials"] else None for c in cells],
            "skipped": [bool(c and c["skipped"]) for c in cells],
        }
    return out


def retrieval(depth: str = "all") -> dict[str, Any]:
    """The retrieval run at one depth (``"all"``, or one of :data:`DEPTHS`), by check box name: per
    length of :data:`LENGTHS`, the trials, how many the greedy answer got right, their share and the
    mean log-probability of the key (``None`` where the run holds no trial), and whether the script
    skips that point (dynamic NTK inside ``L``)."""
    R = _retrieval(check_choice(str(depth), DEPTHS, "depth"))
    return {k: {f: list(v) for f, v in r.items()} for k, r in R.items()}


@functools.lru_cache(maxsize=None)
def _series(factor: int) -> dict[str, Any]:
    T = context_results(factor)
    n = T["text"]["n_tokens"]
    return {
        "n_tokens": n,
        "trained": T["original_max_position_embeddings"],
        "perplexity": {name: window_perplexity(run, n, T["block"], WINDOW) for name, run in T["runs"].items()},
    }


def series(factor: int) -> dict[str, Any]:
    """The perplexity of every ``WINDOW`` tokens of each cached method at ``factor``, with the text's length."""
    S = _series(int(check_choice(str(factor), FACTORS, "factor")))
    return {**S, "perplexity": {k: v.copy() for k, v in S["perplexity"].items()}}


def window_start(factor: int, position: int) -> int:
    """The window the figure reads at slider ``position``: the last one of a shorter text past its end."""
    return min(check_int(position, "position", 0), series(factor)["n_tokens"] - WINDOW)


def readouts(factor: str, position: int, length: str = LENGTHS[-1], depth: str = "all",
             **shown: bool) -> dict[str, float]:
    """The numbers the figure prints: the window's first token and each checked method's perplexity there
    (a method missing from the cache prints nothing); at the prompt ``length`` and ``depth``, each checked
    method's share of keys retrieved in percent (``<key>_rate``) and mean log-probability of the key (``<key>_logp``),
    where the retrieval run holds trials."""
    s = int(check_choice(str(factor), FACTORS, "factor"))
    col = LENGTHS.index(check_choice(str(length), LENGTHS, "length"))
    R = _retrieval(check_choice(str(depth), DEPTHS, "depth"))
    position = check_int(position, "position", 0)
    if position > MAX_START or position % WINDOW:
        raise ValueError(f"position must be a multiple of {WINDOW} in [0, {MAX_START}], got {position}")
    unknown = set(shown) - {key for key, _ in METHODS}
    if unknown:
        raise ValueError(f"no method check box named {sorted(unknown)}; check boxes: {[k for k, _ in METHODS]}")
    S = _series(s)
    start = min(position, S["n_tokens"] - WINDOW)
    out = {"start": float(start)}
    for key, name in METHODS:
        if shown.get(key, False) and name in S["perplexity"]:
            out[key] = float(S["perplexity"][name][start // WINDOW])
    for key, _ in METHODS:
        if shown.get(key, False) and R[key]["trials"][col]:
            out[f"{key}_rate"] = 100 * float(R[key]["rate"][col])
            out[f"{key}_logp"] = float(R[key]["log_prob"][col])
    return out


def data() -> dict[str, Any]:
    """Every cached factor's windows, by check box name, and the methods' plain names."""
    run = _retrieval_run()
    out: dict[str, Any] = {"window": WINDOW, "names": dict(METHODS), "short": dict(SHORT), "factors": {},
                           "retrieval": {"factor": run["factor"], "lengths": [int(n) for n in LENGTHS],
                                         "trained": run["original_max_position_embeddings"],
                                         "depths": {d: retrieval(d) for d in DEPTHS}}}
    for f in FACTORS:
        S = series(int(f))
        out["factors"][f] = {
            "n_tokens": S["n_tokens"],
            "trained": S["trained"],
            "perplexity": {key: np.asarray(S["perplexity"][name]) for key, name in METHODS if name in S["perplexity"]},
        }
    return out


# Short labels, so that on a phone the controls take five rows above the drawing they change.
CONTROLS = [
    Control("factor", "scale s", "2", kind="select", options=list(FACTORS),
            labels=[f"s = {f}" for f in FACTORS]),
    Control("position", "window start", 12288, min=0, max=MAX_START, step=WINDOW),
    Control("length", "pass-key prompt length", LENGTHS[-1], kind="select", options=list(LENGTHS),
            labels=[f"{int(n):,} tokens" for n in LENGTHS]),
    Control("depth", "key at", "all", kind="select", options=list(DEPTHS),
            labels=["every depth"] + [f"{float(x):.0%} of the way in" for x in DEPTHS[1:]]),
    *[Control(key, SHORT[key], key in ("plain", "pi", "yarn"), kind="checkbox") for key, _ in METHODS],
]

#: The chapter 9 figure: measured perplexity by position on SmolLM2-135M, by method and scale.
DEMO = Figure(
    "trained_context", CONTROLS, data=data, readouts=readouts,
    title="Measured perplexity of SmolLM2-135M against the position in the text, and its passkey retrieval "
          "against the prompt length, by method",
)
