"""Chapter 1 widget: reorder a sentence and watch what self-attention outputs for each word.

Without positions, self-attention gives every word the same output whatever the order: the
output rows only move with their words, and the two copies of "the" get identical rows. Adding
the sinusoidal position encoding of chapter 2 to the embeddings breaks that symmetry.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ..attention import attention
from ..encodings import sinusoidal_encoding
from ..plots import COLORS
from ._legacy import Demo

__all__ = ["SENTENCE", "ORDERS", "D_MODEL", "weights", "embed", "outputs", "state", "draw", "controls", "frames", "DEMO"]

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


@lru_cache(maxsize=2)
def _limits(positions: bool) -> tuple[float, float, float]:
    """Colour range of the outputs (shared by every order with the same ``positions``, so their
    frames are comparable) and the bar range (shared by all frames)."""
    outs = np.stack([outputs(j, positions) for j in range(len(ORDERS))])
    cmax = float(max(state(j, True)["max_change"] for j in range(len(ORDERS))))
    return float(outs.min()), float(outs.max()), cmax


def draw(fig, order: int = 0, positions: bool = False) -> None:
    """Heatmap of the outputs (one row per position) and the change of each word's output."""
    s = state(order, positions)
    vmin, vmax, cmax = _limits(bool(positions))
    n = len(s["words"])
    ax, bx = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]}, sharey=True)
    im = ax.imshow(s["outputs"], cmap="cividis", vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_yticks(range(n), [f"{p}: {w}" for p, w in enumerate(s["words"])])
    ax.set_xticks(range(D_MODEL))
    ax.set_xlabel("output feature")
    ax.set_ylabel("position: word")
    ax.grid(False)
    fig.colorbar(im, ax=ax, shrink=0.8, label="output value")
    bx.barh(range(n), s["change"], color=COLORS["k"] if positions else COLORS["q"])
    bx.set_xlim(0, 1.05 * cmax)
    if s["max_change"] < 1e-9:
        bx.text(0.5 * cmax, (n - 1) / 2, "0 for every word:\nthe outputs only\nmoved with their words",
                ha="center", va="center", fontsize=8, color=COLORS["q"])
    bx.set_xlabel("‖output − output in\noriginal order‖")
    mode = "embeddings + positions" if positions else "embeddings only (no positions)"
    fig.suptitle(
        f"“{' '.join(s['words'])}”  —  {mode}\n"
        f"largest change {s['max_change']:.3f};  ‖out(the) − out(the)‖ = {s['the_gap']:.3f}",
        fontsize=9,
    )


def controls() -> dict[str, Any]:
    """The live widget's controls: which order, and whether positions are added."""
    import ipywidgets as w

    return {
        "order": w.IntSlider(value=0, min=0, max=len(ORDERS) - 1, description="order",
                             style={"description_width": "initial"}),
        "positions": w.Checkbox(value=False, description="add sinusoidal positions"),
    }


def frames() -> list[dict[str, Any]]:
    """Kernel-free animation: every order without positions, then every order with them."""
    return [{"order": j, "positions": pos} for pos in (False, True) for j in range(len(ORDERS))]


DEMO = Demo(draw=draw, controls=controls, frames=frames, figsize=(6.5, 3.6), interval=900)
