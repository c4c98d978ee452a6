"""Chapter 9 figure: SmolLM2-135M's measured perplexity by position, plain RoPE against the scalings.

Nothing is computed here but what the cache holds: :func:`data` reads the cached runs of
``scripts/trained_context.py`` (:func:`rope_edu.trained.context_results`: ``s = 2`` over 16,384
tokens of *Hamlet* + *King Lear*, ``s = 4`` over 32,768) and turns each method's mean
log-likelihood per block into the perplexity of every 1,024 tokens
(:func:`rope_edu.trained.window_perplexity`). The reader picks the methods (check boxes), the scale
``s`` and a window along the text; the figure (``js/trained_context.js``) draws the perplexity
against the position on a log axis, marks the trained length ``L = 8192`` and the window, and
prints each shown method's perplexity there (:func:`readouts`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._checks import check_choice, check_int
from ..trained import CONTEXT_CACHES, context_results, window_perplexity
from ._core import Control, Figure

__all__ = ["METHODS", "FACTORS", "WINDOW", "MAX_START", "window_start", "series", "readouts", "data", "CONTROLS", "DEMO"]

#: The methods, as (check box name, the cache's and the book's plain name).
METHODS: tuple[tuple[str, str], ...] = (
    ("plain", "plain RoPE"),
    ("pi", "Position Interpolation"),
    ("ntk", "NTK-aware"),
    ("dynamic", "dynamic NTK"),
    ("yarn", "YaRN"),
    ("llama3", "Llama 3.1"),
)
#: Scale factors with a cached run (the drop-down's options).
FACTORS: tuple[str, ...] = tuple(str(f) for f in CONTEXT_CACHES)
#: Tokens per plotted point.
WINDOW = 1024
#: Largest window start on the slider (the s = 4 text: 32,768 tokens).
MAX_START = 32768 - WINDOW


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


def readouts(factor: str, position: int, **shown: bool) -> dict[str, float]:
    """The numbers the figure prints: the window's first token and each checked method's perplexity there
    (a method missing from the cache prints nothing)."""
    s = int(check_choice(str(factor), FACTORS, "factor"))
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
    return out


def data() -> dict[str, Any]:
    """Every cached factor's windows, by check box name, and the methods' plain names."""
    out: dict[str, Any] = {"window": WINDOW, "names": dict(METHODS), "factors": {}}
    for f in FACTORS:
        S = series(int(f))
        out["factors"][f] = {
            "n_tokens": S["n_tokens"],
            "trained": S["trained"],
            "perplexity": {key: np.asarray(S["perplexity"][name]) for key, name in METHODS if name in S["perplexity"]},
        }
    return out


CONTROLS = [
    Control("factor", "scale s (the text runs to s × 8,192 tokens)", "4", kind="select", options=list(FACTORS),
            labels=[f"s = {f}" for f in FACTORS]),
    Control("position", "window along the text (first token)", 12288, min=0, max=MAX_START, step=WINDOW),
    *[Control(key, name, key in ("plain", "pi", "yarn"), kind="checkbox") for key, name in METHODS],
]

#: The chapter 9 figure: measured perplexity by position on SmolLM2-135M, by method and scale.
DEMO = Figure(
    "trained_context", CONTROLS, data=data, readouts=readouts,
    title="Measured perplexity of SmolLM2-135M against the position in the text, by method and scale s",
)
