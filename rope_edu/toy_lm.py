"""A tiny causal transformer for chapter 11's length-generalisation experiment (torch, CPU-sized).

Five ways of giving it positions, one entry each in :data:`POSITION_SCHEMES`:

* ``"nope"``: nothing (the causal mask is the only source of order);
* ``"sinusoidal"``: the fixed table of Vaswani et al. added to the token embeddings;
* ``"learned"``: a trained table of absolute position vectors added to the embeddings (positions
  never seen in training keep their random initialisation);
* ``"alibi"``: the linear bias :math:`-m_h (i - j)` on the attention logits
  (:func:`rope_edu.alibi_slopes`);
* ``"rope"``: queries and keys rotated by :func:`rope_edu.torch_rope.apply_rope`.

and three synthetic tasks in :data:`TASKS`, all of which need positions:

* ``"shift"``: predict the token ``k`` places back, :math:`y_t = x_{t-k}` (a fixed relative offset);
* ``"first"``: every position predicts the sequence's first token (retrieval at a distance that
  grows with the position, up to ``length - 1``);
* ``"copy"``: ``m`` distinct tokens, a separator, then the same tokens again; predict each copied
  token (an offset of ``m = length // 2``, which doubles when the length does).

:func:`train_and_evaluate` trains one model and measures next-token accuracy at several sequence
lengths; ``scripts/length_generalisation.py`` runs the grid of schemes x seeds x tasks.
This module imports torch; ``import rope_edu`` does not import it.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import torch_rope
from ._checks import check_choice, check_int
from .alibi import alibi_slopes
from .encodings import sinusoidal_encoding

__all__ = ["POSITION_SCHEMES", "RESULTS_PATH", "TASKS", "ToyConfig", "TinyLM", "config_dict", "load_results",
           "make_batch", "summarise", "train_and_evaluate"]

#: The cached results of ``scripts/length_generalisation.py`` (shipped with the package).
RESULTS_PATH = Path(__file__).with_name("data") / "length_generalisation.json"

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


class _Block(nn.Module):
    def __init__(self, cfg: ToyConfig, scheme: str) -> None:
        super().__init__()
        self.scheme, self.h = scheme, cfg.n_heads
        self.dh = cfg.d_model // cfg.n_heads
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.out = nn.Linear(cfg.d_model, cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(), nn.Linear(4 * cfg.d_model, cfg.d_model))
        self.register_buffer("slopes", torch.tensor(alibi_slopes(cfg.n_heads), dtype=torch.float32), persistent=False)

    def attend(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)  # each (b, h, n, dh)
        pos = torch.arange(n)
        if self.scheme == "rope":
            q, k = torch_rope.apply_rope(q, pos), torch_rope.apply_rope(k, pos)
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
    """Pre-LayerNorm causal transformer with one position scheme of :data:`POSITION_SCHEMES`."""

    def __init__(self, cfg: ToyConfig, scheme: str) -> None:
        super().__init__()
        self.scheme = check_choice(scheme, POSITION_SCHEMES, "scheme")
        self.embed = nn.Embedding(cfg.vocab, cfg.d_model)
        if scheme == "learned":
            self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
            nn.init.normal_(self.pos.weight, std=0.02)
        if scheme == "sinusoidal":
            table = sinusoidal_encoding(cfg.max_len, cfg.d_model)
            self.register_buffer("table", torch.tensor(table, dtype=torch.float32), persistent=False)
        self.blocks = nn.ModuleList(_Block(cfg, scheme) for _ in range(cfg.n_layers))
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


def train_and_evaluate(cfg: ToyConfig, scheme: str, seed: int) -> dict:
    """Train one :class:`TinyLM` on ``cfg.task`` at ``cfg.train_len`` and test it at ``cfg.eval_lens``.

    Returns
    -------
    dict
        ``{"scheme", "seed", "accuracy": {length: fraction correct}, "accuracy_new_positions": {length:
        fraction correct at positions >= train_len}, "final_loss", "seconds", "cpu_seconds"}``; accuracy
        is over the scored positions of ``cfg.eval_batches`` fresh batches per length.
    """
    scheme = check_choice(scheme, POSITION_SCHEMES, "scheme")
    seed = check_int(seed, "seed", 0)
    torch.manual_seed(seed)
    model = TinyLM(cfg, scheme)
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
    return {"scheme": scheme, "seed": seed, "accuracy": acc,
            "accuracy_new_positions": {n: a for n, a in new.items() if n > cfg.train_len},
            "final_loss": float(loss.detach()), "seconds": time.perf_counter() - start,
            "cpu_seconds": time.process_time() - cpu_start}


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
