"""Chapter 1 widget: reorder a sentence and watch what self-attention outputs for each word.

Without positions, self-attention gives every word the same output whatever the order: the
output rows only move with their words, and the two copies of "the" get identical rows. Adding
the sinusoidal position encoding of chapter 2 to the embeddings breaks that symmetry.

The figure (``js/token_order.js``) has two controls, the order (an index into :data:`ORDERS`)
and whether positions are added. It draws the outputs as a heatmap (one row per position) and the
change of each word's output as bars; :func:`data` precomputes both for every order, and
:func:`readouts` gives the numbers it prints.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ..attention import attention
from ..encodings import sinusoidal_encoding
from ._core import Control, Figure, snap_zero

__all__ = [
    "SENTENCE", "ORDERS", "D_MODEL", "ZERO", "weights", "embed", "outputs", "state", "readouts", "data", "CONTROLS",
    "DEMO",
]

#: The sentence in its original order; tokens are identified by their index in it.
SENTENCE: tuple[str, ...] = ("the", "cat", "sat", "on", "the", "mat")

#: Orders the widget offers: ``ORDERS[j][p]`` is the index (in :data:`SENTENCE`) of the token
#: placed at position ``p``. Order 0 is the original sentence.
ORDERS: tuple[tuple[int, ...], ...] = (
    (0, 1, 2, 3, 4, 5),  # the cat sat on the mat
    (0, 5, 2, 3, 4, 1),  # the mat sat on the cat
    (3, 4, 5, 0, 1, 2),  # on the mat the cat sat
    (5, 4, 3, 2, 1, 0),  # mat the on sat cat the
    (2, 0, 1, 3, 4, 5),  # sat the cat on the mat
    (1, 0, 2, 5, 4, 3),  # cat the sat mat the on
)

#: Width of the toy embeddings, queries, keys and values.
D_MODEL = 8

#: Below this the readouts print 0 (:func:`~rope_edu.widgets.snap_zero`): without positions the
#: changes are 0 in exact arithmetic and about 1e-16 in floating point; real ones exceed 0.05.
ZERO = 1e-12


@lru_cache(maxsize=1)
def _parameters() -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """Fixed (seeded) word embeddings and projections of the toy one-head attention layer."""
    rng = np.random.default_rng(0)
    vocab = sorted(set(SENTENCE))
    emb = {w: rng.standard_normal(D_MODEL) for w in vocab}
    w_q, w_k, w_v = (rng.standard_normal((D_MODEL, D_MODEL)) / np.sqrt(D_MODEL) for _ in range(3))
    return emb, w_q, w_k, w_v


def weights() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Copies of the toy layer's projections ``(W_q, W_k, W_v)``, each of shape (D_MODEL, D_MODEL).

    The layer computes ``attention(X @ W_q, X @ W_k, X @ W_v)`` for token vectors ``X``.
    """
    _, w_q, w_k, w_v = _parameters()
    return w_q.copy(), w_k.copy(), w_v.copy()


def embed(words: tuple[str, ...] | list[str]) -> np.ndarray:
    """Embeddings of ``words``, shape ``(len(words), D_MODEL)``: one fixed vector per word, so equal
    words get equal rows."""
    emb, *_ = _parameters()
    unknown = [w for w in words if w not in emb]
    if unknown:
        raise ValueError(f"words must come from {sorted(emb)}, got unknown {unknown}")
    return np.array([emb[w] for w in words]).reshape(len(words), D_MODEL)


def _check_order(order: Any) -> int:
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)):
        raise TypeError(f"order must be an integer index into ORDERS, got {order!r}")
    if not 0 <= order < len(ORDERS):
        raise ValueError(f"order must be in 0..{len(ORDERS) - 1}, got {order}")
    return int(order)


def _check_flag(positions: Any) -> bool:
    if not isinstance(positions, (bool, np.bool_)):
        raise TypeError(f"positions must be True or False, got {positions!r}")
    return bool(positions)


def outputs(order: int, positions: bool = False) -> np.ndarray:
    """Self-attention outputs for the sentence in order ``ORDERS[order]``.

    ``X`` holds the embeddings in that order (plus ``sinusoidal_encoding(n, D_MODEL)`` if
    ``positions``); the output is ``attention(X W_q, X W_k, X W_v)`` (no mask).

    Returns
    -------
    numpy.ndarray, shape (len(SENTENCE), D_MODEL)
        Row ``p`` is the output at position ``p``.
    """
    order = _check_order(order)
    positions = _check_flag(positions)
    _, w_q, w_k, w_v = _parameters()
    words = [SENTENCE[i] for i in ORDERS[order]]
    x = embed(words)
    if positions:
        x = x + sinusoidal_encoding(len(words), D_MODEL)
    return attention(x @ w_q, x @ w_k, x @ w_v)


def state(order: int, positions: bool = False) -> dict[str, Any]:
    """Everything the widget shows, computed without drawing.

    Returns
    -------
    dict
        ``words`` (the sentence in this order), ``outputs`` (shape (n, D_MODEL), row ``p`` for
        position ``p``), ``change`` (shape (n,): for the token at each position, the norm of the
        difference between its output here and its output in the original order, with the same
        ``positions`` setting), ``the_gap`` (norm of the difference between the outputs of the
        two copies of "the"), ``max_change`` (``change.max()``).
    """
    order = _check_order(order)
    perm = np.array(ORDERS[order])
    out = outputs(order, positions)
    ref = outputs(0, positions)
    change = np.linalg.norm(out - ref[perm], axis=-1)
    the = [p for p, i in enumerate(perm) if SENTENCE[i] == "the"]
    return {
        "words": [SENTENCE[i] for i in perm],
        "outputs": out,
        "change": change,
        "the_gap": float(np.linalg.norm(out[the[0]] - out[the[1]])),
        "max_change": float(change.max()),
    }


def readouts(order: int, positions: bool) -> dict[str, float]:
    """The numbers the figure prints for its controls, by readout name.

    ``max_change``: the largest change of a word's output against the original order (0 without
    positions); ``the_gap``: ``‖out(the) − out(the)‖`` between the two copies of "the". Both are
    printed as 0 below :data:`ZERO` (floating-point rounding of a true 0, :func:`snap_zero`).
    """
    s = state(order, positions)
    return {"max_change": snap_zero(s["max_change"], ZERO), "the_gap": snap_zero(s["the_gap"], ZERO)}


def data() -> dict[str, Any]:
    """What the figure draws, for every order and both settings of ``positions``.

    Lists indexed ``[positions][order]`` (``positions`` 0 or 1): ``outputs`` (rounded to 4
    decimals, only coloured), ``change`` (rounded to 4 decimals, only drawn as bars),
    ``max_change`` and ``the_gap`` (exact: the readouts, before :func:`snap_zero`);
    ``vrange[positions]``: the colour range shared by every order with that setting (so their
    heatmaps compare), ``cmax``: the bar range shared by all; ``zero``: :data:`ZERO`.
    """
    states = [[state(j, pos) for j in range(len(ORDERS))] for pos in (False, True)]
    outs = [np.stack([s["outputs"] for s in row]) for row in states]
    return {
        "sentence": list(SENTENCE),
        "orders": [list(o) for o in ORDERS],
        "outputs": [np.round(o, 4) for o in outs],
        "change": [[np.round(s["change"], 4) for s in row] for row in states],
        "max_change": [[s["max_change"] for s in row] for row in states],
        "the_gap": [[s["the_gap"] for s in row] for row in states],
        "vrange": [[float(o.min()), float(o.max())] for o in outs],
        "cmax": max(s["max_change"] for row in states for s in row),
        "zero": ZERO,
    }


CONTROLS = [
    Control("order", "word order (0 = original)", 0, min=0, max=len(ORDERS) - 1, step=1),
    Control("positions", "add sinusoidal positions", False, kind="checkbox"),
]

#: The chapter 1 figure: self-attention outputs of the sentence in one of :data:`ORDERS`, and
#: how far each word's output moved against the original order.
DEMO = Figure(
    "token_order", CONTROLS, data=data, readouts=readouts,
    title="Self-attention outputs of a reordered sentence, without and with position encodings",
)
