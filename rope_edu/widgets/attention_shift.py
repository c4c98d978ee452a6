"""Chapter 7 widget: attention logits under a shift of every position, and under a moved token.

Six tokens go through the query and key projections of one LLaMA-style attention head
(:func:`rope_edu.llama.project_qkv`), rotated by RoPE at their positions. The left heatmap shows
the logits ``q_m · k_n / sqrt(d)``; the right one their change from the unshifted sequence at
positions ``0..5``. Adding the same ``shift`` to every position changes nothing (up to rounding);
moving one token changes exactly its row and its column.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..llama import AttentionWeights, init_attention_weights, project_qkv
from ..plots import COLORS
from ._legacy import Demo

__all__ = ["TOKENS", "HIDDEN", "WEIGHTS", "EMBEDDINGS", "logits", "state", "draw", "controls", "frames", "DEMO"]

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


#: Fixed colour limits so that frames can be compared by eye.
_LIM = float(np.max(np.abs(logits(np.arange(len(TOKENS)))))) * 1.6


def draw(fig, shift: float = 0, move: float = 0, token: int = 3, note: str = "") -> None:
    """Two heatmaps: the logits, and their change from positions 0..5."""
    s = state(shift, move, token)
    labels = [f"{w}@{p:g}" for w, p in zip(TOKENS, s["positions"])]
    # Fixed axes rectangles (figure fractions), so that frames do not jump as tick labels change;
    # no layout engine, which would otherwise try (and warn) to rearrange them.
    fig.set_layout_engine("none")
    ax1, ax2 = fig.add_axes((0.13, 0.25, 0.273, 0.5)), fig.add_axes((0.60, 0.25, 0.273, 0.5))
    cax1, cax2 = fig.add_axes((0.41, 0.25, 0.015, 0.5)), fig.add_axes((0.88, 0.25, 0.015, 0.5))
    for ax, cax, data, cmap, lim, title in (
        (ax1, cax1, s["logits"], "cividis", _LIM, "logits q·k/√d"),
        (ax2, cax2, s["change"], "PuOr", _LIM / 2, "change from positions 0..5"),
    ):
        im = ax.imshow(data, cmap=cmap, vmin=-lim, vmax=lim)
        ax.set_xticks(range(len(TOKENS)), labels, rotation=60, fontsize=7)
        ax.set_yticks(range(len(TOKENS)), labels, fontsize=7)
        ax.set_xlabel("key (token@position)")
        ax.set_title(title, fontsize=9)
        ax.grid(False)
        fig.colorbar(im, cax=cax)
    ax1.set_ylabel("query (token@position)")
    if move:
        for ax in (ax1, ax2):  # outline the moved token's row and column
            ax.axhline(token - 0.5, color=COLORS["k"], lw=1)
            ax.axhline(token + 0.5, color=COLORS["k"], lw=1)
            ax.axvline(token - 0.5, color=COLORS["k"], lw=1)
            ax.axvline(token + 0.5, color=COLORS["k"], lw=1)
    head = f"shift all by {shift:g}, move '{TOKENS[token]}' (token {token}) by {move:g}:  max |change| = {s['max_change']:.1e}"
    fig.suptitle(head if not note else f"{note}\n{head}", fontsize=9)


def controls() -> dict[str, Any]:
    """Sliders: a shift of every position, and a move of one chosen token."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    return {
        "shift": w.IntSlider(value=0, min=0, max=100, description="shift every position by", style=style),
        "move": w.IntSlider(value=0, min=-6, max=12, description="move one token by", style=style),
        "token": w.IntSlider(value=3, min=0, max=len(TOKENS) - 1, description="token to move", style=style),
    }


def frames() -> list[dict[str, Any]]:
    """Kernel-free animation: shift every position (nothing changes), then move token 3 ("on")."""
    together = [{"shift": s, "move": 0, "token": 3, "note": "every position shifted: logits unchanged"}
                for s in range(0, 64, 8)]
    alone = [{"shift": 0, "move": m, "token": 3, "note": "one token moved: its row and column change"}
             for m in range(1, 11)]
    return together + alone


DEMO = Demo(draw=draw, controls=controls, frames=frames, figsize=(6.4, 3.5))
