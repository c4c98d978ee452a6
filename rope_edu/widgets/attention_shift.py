"""Chapter 7 widget: attention logits under a shift of every position, and under a moved token.

Six tokens go through the query and key projections of one LLaMA-style attention head
(:func:`rope_edu.llama.project_qkv`), rotated by RoPE at their positions. The left heatmap shows
the logits ``q_m · k_n / sqrt(d)``; the right one their change from the unshifted sequence at
positions ``0..5``. Adding the same ``shift`` to every position changes nothing (up to rounding);
moving one token changes exactly its row and its column.

The figure (``js/attention_shift.js``) has three controls: the shift of every position, the move
of one token and which token moves. The browser turns the queries and keys that :func:`data`
computes with ``rope_edu`` by their positions and prints :func:`readouts`, which the browser
tests compare with the page.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..llama import AttentionWeights, init_attention_weights, project_qkv
from ._core import Control, Figure

__all__ = ["TOKENS", "HIDDEN", "WEIGHTS", "EMBEDDINGS", "logits", "state", "readouts", "data", "CONTROLS", "DEMO"]

#: The short sequence the heatmap shows (labels only: the embeddings are random).
TOKENS: tuple[str, ...] = ("the", "cat", "sat", "on", "the", "mat")
HIDDEN = 16
_rng = np.random.default_rng(7)
#: One head of dimension 8, half-split RoPE with base 10 000 (as in Hugging Face's LLaMA).
WEIGHTS: AttentionWeights = init_attention_weights(_rng, HIDDEN, n_heads=1, n_kv_heads=1, head_dim=8)
#: Hidden states of the six tokens, shape (1, 6, HIDDEN); equal words get equal embeddings.
EMBEDDINGS: np.ndarray = _rng.normal(size=(1, len(TOKENS), HIDDEN))[:, [0, 1, 2, 3, 0, 5]]


def logits(positions: Any, x: Any = EMBEDDINGS, weights: AttentionWeights = WEIGHTS) -> np.ndarray:
    """Attention logits ``q_m · k_n / sqrt(head_dim)`` of one head, before mask and softmax.

    Parameters
    ----------
    positions : array_like, shape (seq,)
    x : array_like, shape (1, seq, hidden)
    weights : AttentionWeights
        A single-head layer (``n_heads == 1``).

    Returns
    -------
    numpy.ndarray, shape (seq, seq)
        Row ``m`` (query), column ``n`` (key).
    """
    if not isinstance(weights, AttentionWeights) or weights.n_heads != 1:
        raise ValueError("weights must be AttentionWeights of a single-head layer (n_heads == 1)")
    q, k, _ = project_qkv(x, weights, positions)
    return (q[0, 0] @ k[0, 0].T) / np.sqrt(weights.head_dim)


def state(shift: float = 0, move: float = 0, token: int = 3) -> dict[str, Any]:
    """Everything the widget shows, without drawing.

    Parameters
    ----------
    shift : float
        Added to every position (``0..5`` become ``shift..shift+5``).
    move : float
        Added to the position of ``token`` only (after the shift).
    token : int
        Which token moves, ``0 <= token < len(TOKENS)``.

    Returns
    -------
    dict
        ``positions`` (shape (6,)), ``logits`` (shape (6, 6)), ``baseline`` (the logits at
        positions ``0..5``), ``change`` (``logits - baseline``), ``max_change``
        (``max |change|``) and ``changed`` (boolean (6, 6): ``|change| > 1e-9``).
    """
    n = len(TOKENS)
    if isinstance(token, (bool, np.bool_)) or not isinstance(token, (int, np.integer)) or not 0 <= token < n:
        raise ValueError(f"token must be an integer in [0, {n}), got {token!r}")
    for name, value in (("shift", shift), ("move", move)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite real number, got {value!r}")
    base_positions = np.arange(n, dtype=np.float64)
    positions = base_positions + shift
    positions[token] += move
    now, before = logits(positions), logits(base_positions)
    change = now - before
    return {
        "positions": positions,
        "logits": now,
        "baseline": before,
        "change": change,
        "max_change": float(np.max(np.abs(change))),
        "changed": np.abs(change) > 1e-9,
    }


#: Fixed colour limits, so that states can be compared by eye.
_LIM = float(np.max(np.abs(logits(np.arange(len(TOKENS)))))) * 1.6


def readouts(shift: int, move: int, token: int) -> dict[str, float]:
    """The numbers the figure prints (from :func:`state`).

    ``position_i``: the position of token ``i``; ``max_change``: the largest change of a logit
    from positions ``0..5`` (0 when no logit changed by more than 1e-9, i.e. a change that is
    floating-point rounding only); ``n_changed``: how many of the 36 logits changed.
    """
    s = state(shift, move, token)
    out: dict[str, float] = {f"position_{i}": float(p) for i, p in enumerate(s["positions"])}
    out["max_change"] = s["max_change"] if s["changed"].any() else 0.0
    out["n_changed"] = int(s["changed"].sum())
    return out


def data() -> dict[str, Any]:
    """What the browser needs to recompute the logits at any positions: the head's queries and
    keys before RoPE (shape (6, 8), from :func:`rope_edu.llama.project_qkv` at position 0, where
    the rotation is the identity), its frequencies and layout, and the colour scales' limit (the
    colour maps are the engine's: cividis for the logits, PuOr for their change)."""
    q, k, _ = project_qkv(EMBEDDINGS, WEIGHTS, np.zeros(len(TOKENS)))
    return {
        "tokens": list(TOKENS),
        "q": q[0, 0], "k": k[0, 0],
        "inv_freq": WEIGHTS.frequencies, "layout": WEIGHTS.layout, "head_dim": WEIGHTS.head_dim,
        "lim": _LIM, "threshold": 1e-9,
    }


CONTROLS = [
    Control("shift", "shift every position by", 0, min=0, max=100, step=1),
    Control("move", "move one token by", 0, min=-6, max=12, step=1),
    Control("token", "token to move (index)", 3, min=0, max=len(TOKENS) - 1, step=1),
]

#: The chapter 7 figure: the logits of one head, and their change, as positions shift or a token moves.
DEMO = Figure(
    "attention_shift", CONTROLS, data=data, readouts=readouts,
    title="Attention logits with RoPE: unchanged when every position shifts, changed in one row and "
          "column when one token moves",
)
