"""A tiny causal transformer for chapter 13's length-generalisation experiment (torch, CPU-sized).

Five ways of giving it positions, one entry each in :data:`POSITION_SCHEMES`:

* ``"nope"``: nothing (the causal mask is the only source of order);
* ``"sinusoidal"``: the fixed table of Vaswani et al. added to the token embeddings;
* ``"learned"``: a trained table of absolute position vectors added to the embeddings (positions
  never seen in training keep their random initialisation);
* ``"alibi"``: the linear bias :math:`-m_h (i - j)` on the attention logits
  (:func:`rope_edu.alibi_slopes`);
* ``"rope"``: queries and keys rotated by :func:`rope_edu.torch_rope.apply_rope`; with
  ``rope_fraction=p < 1`` only the fastest ``p`` of each head's pairs rotate and the slower ones keep
  frequency 0 (p-RoPE, Barbero et al. 2024; :func:`rotating_pairs`).

and three synthetic tasks in :data:`TASKS`, all of which need positions:

* ``"shift"``: predict the token ``k`` places back, :math:`y_t = x_{t-k}` (a fixed relative offset);
* ``"first"``: every position predicts the sequence's first token (retrieval at a distance that
  grows with the position, up to ``length - 1``);
* ``"copy"``: ``m`` distinct tokens, a separator, then the same tokens again; predict each copied
  token (an offset of ``m = length // 2``, which doubles when the length does).

:func:`train_and_evaluate` trains one model and measures next-token accuracy at several sequence
lengths (and, with ``freeze_at_eval``, with chosen pairs stopped at evaluation);
``scripts/length_generalisation.py`` runs the grid of schemes x seeds x tasks, and
``scripts/p_rope_experiment.py`` RoPE against p-RoPE (chapter 5).
This module imports torch; ``import rope_edu`` does not import it.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import torch_rope
from ._checks import check_choice, check_int, check_real
from .alibi import alibi_slopes
from .encodings import sinusoidal_encoding
from .rope import frequencies

__all__ = ["POSITION_SCHEMES", "P_ROPE_RESULTS_PATH", "RESULTS_PATH", "TASKS", "ToyConfig", "TinyLM", "config_dict",
           "load_results", "make_batch", "rotating_pairs", "summarise", "train_and_evaluate"]

# Paths, not importlib.resources Traversables: load_results takes a path (the scripts write these
# files, the chapter reads them back), and the package is installed as files (never zipped).
#: The cached results of ``scripts/length_generalisation.py`` (shipped with the package).
RESULTS_PATH = Path(__file__).with_name("data") / "length_generalisation.json"
#: The cached results of ``scripts/p_rope_experiment.py`` (RoPE against p-RoPE, chapter 5).
P_ROPE_RESULTS_PATH = Path(__file__).with_name("data") / "p_rope.json"

POSITION_SCHEMES: tuple[str, ...] = ("nope", "sinusoidal", "learned", "alibi", "rope")


# --- tasks ------------------------------------------------------------------------------------


def _shift_batch(batch: int, length: int, vocab: int, k: int, gen: torch.Generator):
    x = torch.randint(0, vocab, (batch, length), generator=gen)
    y = torch.zeros_like(x)
    y[:, k:] = x[:, :-k]
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[:, k:] = True  # the first k tokens have nothing k places back
    return x, y, mask


def _copy_batch(batch: int, length: int, vocab: int, k: int, gen: torch.Generator):
    # m = length // 2 distinct random tokens, a separator (token vocab - 1), then the same tokens again:
    # at position m + j the model must predict token j, found m positions back (or by matching content).
    m = length // 2
    if vocab - 1 < m:
        raise ValueError(f"vocab must be > length // 2 for the copy task (distinct tokens), got {vocab} <= {m}")
    a = torch.rand(batch, vocab - 1, generator=gen).argsort(dim=1)[:, :m]
    sep = torch.full((batch, 1), vocab - 1)
    x = torch.cat([a, sep, a], dim=1)[:, :length]
    y = torch.zeros_like(x)
    y[:, m : 2 * m] = a
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[:, m : 2 * m] = True
    return x, y, mask


def _first_batch(batch: int, length: int, vocab: int, k: int, gen: torch.Generator):
    # Every position from 1 on predicts the sequence's first token: retrieval at a growing distance.
    x = torch.randint(0, vocab, (batch, length), generator=gen)
    y = x[:, :1].expand(batch, length).clone()
    mask = torch.ones_like(x, dtype=torch.bool)
    mask[:, 0] = False
    return x, y, mask


#: ``make(batch, length, vocab, k, generator) -> (x, y, mask)``: inputs, targets, scored positions.
TASKS: dict[str, Callable[..., tuple[torch.Tensor, torch.Tensor, torch.Tensor]]] = {
    "shift": _shift_batch,
    "copy": _copy_batch,
    "first": _first_batch,
}


def make_batch(task: str, batch: int, length: int, vocab: int, k: int = 3, seed: int = 0):
    """One batch of ``task`` as long tensors ``(x, y, mask)`` of shape (batch, length)."""
    task = check_choice(task, TASKS, "task")
    gen = torch.Generator().manual_seed(check_int(seed, "seed", 0))
    return TASKS[task](check_int(batch, "batch", 1), check_int(length, "length", k + 2), check_int(vocab, "vocab", 2),
                       check_int(k, "k", 1), gen)


# --- model ------------------------------------------------------------------------------------


@dataclass
class ToyConfig:
    """Sizes and training settings of one run (the defaults are the cached experiment's)."""

    task: str = "shift"
    vocab: int = 16
    k: int = 3
    train_len: int = 32
    eval_lens: tuple[int, ...] = (32, 64)
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    steps: int = 500
    batch: int = 32
    lr: float = 3e-3
    eval_batches: int = 8

    @property
    def max_len(self) -> int:
        return max(self.train_len, *self.eval_lens)


def rotating_pairs(head_dim: int, rope_fraction: float) -> int:
    """How many of a head's ``head_dim // 2`` pairs rotate under p-RoPE with ``p = rope_fraction``.

    Parameters
    ----------
    head_dim : int
        Size of a query/key head (even).
    rope_fraction : float
        Fraction ``p`` of the pairs that keep their frequency, in [0, 1]: the fastest ones,
        :math:`\\theta_i = b^{-2i/d}` for :math:`i < p\\,d/2` (rounded to the nearest pair).

    Returns
    -------
    int
        ``round(rope_fraction * head_dim / 2)``: 0 is NoPE, ``head_dim // 2`` is RoPE.
    """
    head_dim = check_int(head_dim, "head_dim", 2)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    p = check_real(rope_fraction, "rope_fraction")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"rope_fraction must be in [0, 1], got {rope_fraction}")
    return int(round(p * head_dim / 2))


def _check_frozen(frozen: Sequence[int], head_dim: int, name: str) -> tuple[int, ...]:
    pairs = tuple(check_int(i, name, 0) for i in frozen)
    if any(i >= head_dim // 2 for i in pairs):
        raise ValueError(f"{name} must hold pair indices below head_dim // 2 = {head_dim // 2}, got {pairs}")
    return pairs


class _Block(nn.Module):
    def __init__(self, cfg: ToyConfig, scheme: str, rope_fraction: float = 1.0) -> None:
        super().__init__()
        self.scheme, self.h = scheme, cfg.n_heads
        self.dh = cfg.d_model // cfg.n_heads
        # None: every pair at RoPE's own frequencies (the cached experiment's exact code path)
        self.inv_freq: torch.Tensor | None = None
        kept = rotating_pairs(self.dh, rope_fraction)
        if kept < self.dh // 2:
            self.set_frozen(range(kept, self.dh // 2))
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.out = nn.Linear(cfg.d_model, cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(), nn.Linear(4 * cfg.d_model, cfg.d_model))
        self.register_buffer("slopes", torch.tensor(alibi_slopes(cfg.n_heads), dtype=torch.float32), persistent=False)

    def set_frozen(self, pairs: Iterable[int]) -> None:
        """Give the listed pairs frequency 0 (they stop rotating); the others keep RoPE's."""
        freqs = frequencies(self.dh, 10000.0)
        freqs[list(pairs)] = 0.0
        self.inv_freq = torch.tensor(freqs, dtype=torch.float32)

    def attend(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)  # each (b, h, n, dh)
        pos = torch.arange(n)
        if self.scheme == "rope":
            q = torch_rope.apply_rope(q, pos, inv_freq=self.inv_freq)
            k = torch_rope.apply_rope(k, pos, inv_freq=self.inv_freq)
        logits = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
        dist = (pos[:, None] - pos[None, :]).float()  # i - j
        if self.scheme == "alibi":
            logits = logits - self.slopes[:, None, None] * dist
        logits = logits.masked_fill(dist < 0, float("-inf"))
        y = torch.softmax(logits, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, n, -1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attend(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    """Pre-LayerNorm causal transformer with one position scheme of :data:`POSITION_SCHEMES`.

    ``rope_fraction`` (scheme ``"rope"`` only) is p-RoPE's ``p``: the fraction of each head's pairs
    that rotate, the fastest ones (:func:`rotating_pairs`); 1 is RoPE.
    """

    def __init__(self, cfg: ToyConfig, scheme: str, rope_fraction: float = 1.0) -> None:
        super().__init__()
        self.scheme = check_choice(scheme, POSITION_SCHEMES, "scheme")
        rotating_pairs(cfg.d_model // cfg.n_heads, rope_fraction)  # validates it
        if rope_fraction != 1.0 and scheme != "rope":
            raise ValueError(f"rope_fraction applies to scheme 'rope' only, got scheme {scheme!r}")
        self.embed = nn.Embedding(cfg.vocab, cfg.d_model)
        if scheme == "learned":
            self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
            nn.init.normal_(self.pos.weight, std=0.02)
        if scheme == "sinusoidal":
            table = sinusoidal_encoding(cfg.max_len, cfg.d_model)
            self.register_buffer("table", torch.tensor(table, dtype=torch.float32), persistent=False)
        self.blocks = nn.ModuleList(_Block(cfg, scheme, rope_fraction) for _ in range(cfg.n_layers))
        self.ln = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        n = tokens.shape[1]
        if self.scheme == "learned":
            x = x + self.pos.weight[:n]
        elif self.scheme == "sinusoidal":
            x = x + self.table[:n]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


# --- training and evaluation --------------------------------------------------------------------


def _accuracy(model: TinyLM, cfg: ToyConfig, length: int, seed: int) -> tuple[float, float]:
    """Fraction of scored tokens predicted right, over all of them and over those at positions
    ``>= cfg.train_len`` (positions the model never saw in training; NaN when there are none)."""
    correct = total = new_correct = new_total = 0
    beyond = torch.arange(length) >= cfg.train_len
    with torch.no_grad():
        for i in range(cfg.eval_batches):
            x, y, mask = make_batch(cfg.task, cfg.batch, length, cfg.vocab, cfg.k, seed=10_000 + 97 * i + seed)
            hit = (model(x).argmax(-1) == y) & mask
            correct += int(hit.sum())
            total += int(mask.sum())
            new_correct += int((hit & beyond).sum())
            new_total += int((mask & beyond).sum())
    return correct / max(total, 1), (new_correct / new_total if new_total else float("nan"))


def train_and_evaluate(cfg: ToyConfig, scheme: str, seed: int, *, rope_fraction: float = 1.0,
                       freeze_at_eval: Mapping[str, Sequence[int]] | None = None) -> dict:
    """Train one :class:`TinyLM` on ``cfg.task`` at ``cfg.train_len`` and test it at ``cfg.eval_lens``.

    Parameters
    ----------
    cfg : ToyConfig
    scheme : str
        Key of :data:`POSITION_SCHEMES`.
    seed : int
        Seeds the initialisation and the training batches.
    rope_fraction : float, default 1.0
        p-RoPE's ``p`` for scheme ``"rope"`` (see :class:`TinyLM`).
    freeze_at_eval : mapping of str to sequence of int, optional
        Scheme ``"rope"`` only. For each name, the trained model is evaluated once more with those
        pairs (indices into a head's ``head_dim // 2`` pairs) given frequency 0 in every layer: a
        probe of what the model uses them for. The model itself is not changed.

    Returns
    -------
    dict
        ``{"scheme", "seed", "accuracy": {length: fraction correct}, "accuracy_new_positions": {length:
        fraction correct at positions >= train_len}, "final_loss", "seconds", "cpu_seconds"}``; accuracy
        is over the scored positions of ``cfg.eval_batches`` fresh batches per length. With
        ``rope_fraction`` other than 1 also ``"rope_fraction"``, and with ``freeze_at_eval``
        ``"accuracy_frozen": {name: {length: fraction correct}}``.
    """
    scheme = check_choice(scheme, POSITION_SCHEMES, "scheme")
    seed = check_int(seed, "seed", 0)
    head_dim = cfg.d_model // cfg.n_heads
    probes = {str(name): _check_frozen(pairs, head_dim, f"freeze_at_eval[{name!r}]")
              for name, pairs in (freeze_at_eval or {}).items()}
    if probes and scheme != "rope":
        raise ValueError(f"freeze_at_eval applies to scheme 'rope' only, got scheme {scheme!r}")
    torch.manual_seed(seed)
    model = TinyLM(cfg, scheme, rope_fraction)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0, foreach=True)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=cfg.steps, pct_start=0.1)
    gen = torch.Generator().manual_seed(seed)
    start, cpu_start = time.perf_counter(), time.process_time()
    loss = torch.tensor(float("nan"))
    for _ in range(cfg.steps):
        x, y, mask = TASKS[cfg.task](cfg.batch, cfg.train_len, cfg.vocab, cfg.k, gen)
        logits = model(x)
        loss = F.cross_entropy(logits[mask], y[mask])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    model.eval()
    acc, new = {}, {}
    for n in cfg.eval_lens:
        acc[int(n)], new[int(n)] = _accuracy(model, cfg, int(n), seed)
    run: dict[str, Any] = {"scheme": scheme, "seed": seed, "accuracy": acc,
           "accuracy_new_positions": {n: a for n, a in new.items() if n > cfg.train_len},
           "final_loss": float(loss.detach())}
    if rope_fraction != 1.0:
        run["rope_fraction"] = float(rope_fraction)
    if probes:
        trained = [block.inv_freq for block in model.blocks]
        run["accuracy_frozen"] = {}
        for name, pairs in probes.items():
            frozen = set(pairs) | set(range(rotating_pairs(head_dim, rope_fraction), head_dim // 2))
            for block in model.blocks:
                block.set_frozen(sorted(frozen))
            run["accuracy_frozen"][name] = {int(n): _accuracy(model, cfg, int(n), seed)[0] for n in cfg.eval_lens}
        for block, inv_freq in zip(model.blocks, trained):
            block.inv_freq = inv_freq
    run.update(seconds=time.perf_counter() - start, cpu_seconds=time.process_time() - cpu_start)
    return run


def config_dict(cfg: ToyConfig) -> dict:
    """The config as a JSON-friendly dict (tuples as lists)."""
    d = asdict(cfg)
    d["eval_lens"] = list(cfg.eval_lens)
    return d


def summarise(runs: list[dict], key: str = "accuracy") -> dict:
    """Mean, standard deviation (ddof=1), min and max over seeds of ``run[key]``, per scheme and length."""
    out: dict = {}
    for scheme in dict.fromkeys(r["scheme"] for r in runs):
        rs = [r for r in runs if r["scheme"] == scheme]
        lens = sorted({int(n) for r in rs for n in r[key]})
        out[scheme] = {}
        for n in lens:
            a = np.array([r[key].get(n, r[key].get(str(n))) for r in rs], dtype=float)
            out[scheme][str(n)] = {"mean": float(a.mean()), "std": float(a.std(ddof=1)) if a.size > 1 else 0.0,
                                   "min": float(a.min()), "max": float(a.max()), "n_seeds": int(a.size)}
    return out


def load_results(path: Path | str = RESULTS_PATH) -> dict:
    """The cached experiment: ``{"command", "seconds_total", "environment", "config", "runs", "summary",
    "summary_new_positions"}``; accuracies are keyed by length as strings (JSON keys)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))
