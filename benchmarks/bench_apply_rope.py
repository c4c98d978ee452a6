"""Speed of rope_edu.apply_rope against a plain copy of the same array.

    .venv/bin/python benchmarks/bench_apply_rope.py [--repeats 21] [--shape 32 4096 128]

A copy reads and writes every byte once, so `time / copy time` says how close a rotation runs
to memory speed (the best any out-of-place implementation can do is about 1x). The default shape
is 32 heads x 4096 positions x 128 dims in float32 (64 MiB), positions 0..4095; the time
includes everything ``apply_rope`` does (checks, float64 angles and their cos/sin, rotation).

Timing: one warm-up call of each, then ``--repeats`` rounds in which the rotation and the copy
are timed one after the other. On a shared machine other jobs only ever add time, so the
minimum over the rounds is the best estimate of the cost itself, and the ratio of the minima is
the headline number; the ratio of the medians is printed beside it to show how much the load
moved during the run. Prints ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

import numpy as np

import rope_edu


def paired_times(fn: Callable[[], object], copy: Callable[[], object], repeats: int) -> tuple[list[float], list[float]]:
    """Wall times (s) of ``fn()`` and of ``copy()``, timed alternately, after one warm-up call each."""
    fn()
    copy()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for which, f in enumerate((fn, copy)):
            t0 = time.perf_counter()
            f()
            times[which].append(time.perf_counter() - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--shape", type=int, nargs=3, default=[32, 4096, 128], metavar=("HEADS", "SEQ", "DIM"))
    args = parser.parse_args()
    heads, seq, dim = args.shape
    x = np.random.default_rng(0).standard_normal((heads, seq, dim)).astype(np.float32)
    positions = np.arange(seq)
    mib = x.nbytes / 2**20
    print(f"x: float32 {x.shape} ({mib:.0f} MiB); {args.repeats} rounds, each timing the operation and a copy")
    print("ratio = min time / min copy time (median / median in brackets: the load's effect)")
    print(f"{'operation':<32}{'min (ms)':>10}{'median':>9}{'ratio to copy':>15}{'GB/s (r+w)':>12}")
    ops = {"x.copy()": x.copy}
    for layout in rope_edu.LAYOUTS:
        ops[f"apply_rope layout={layout!r}"] = lambda layout=layout: rope_edu.apply_rope(x, positions, layout=layout)
    for name, fn in ops.items():
        t, c = paired_times(fn, x.copy, args.repeats)
        ratio, ratio_median = min(t) / min(c), statistics.median(t) / statistics.median(c)
        print(
            f"{name:<32}{min(t) * 1e3:>10.1f}{statistics.median(t) * 1e3:>9.1f}"
            f"{ratio:>8.2f} ({ratio_median:4.2f}){2 * x.nbytes / min(t) / 1e9:>12.1f}"
        )


if __name__ == "__main__":
    main()
