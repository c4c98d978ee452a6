"""Speed of rope_edu.apply_rope against a plain copy of the same array.

    .venv/bin/python benchmarks/bench_apply_rope.py [--repeats 15] [--shape 32 4096 128]

A copy reads and writes every byte once, so `time / copy time` says how close a rotation runs
to memory speed (the best any out-of-place implementation can do is about 1x). The default shape
is 32 heads x 4096 positions x 128 dims in float32 (64 MiB). Prints ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import rope_edu


def best_of(fn, repeats: int) -> float:
    fn()  # warm-up (page faults, caches)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--shape", type=int, nargs=3, default=[32, 4096, 128], metavar=("HEADS", "SEQ", "DIM"))
    args = parser.parse_args()
    heads, seq, dim = args.shape
    x = np.random.default_rng(0).standard_normal((heads, seq, dim)).astype(np.float32)
    positions = np.arange(seq)
    copy = best_of(x.copy, args.repeats)
    mib = x.nbytes / 2**20
    print(f"x: float32 {x.shape} ({mib:.0f} MiB); median of {args.repeats} runs")
    print(f"{'operation':<32}{'time (ms)':>10}{'ratio to copy':>15}{'GB/s (r+w)':>12}")
    print(f"{'x.copy()':<32}{copy * 1e3:>10.1f}{1.0:>15.2f}{2 * x.nbytes / copy / 1e9:>12.1f}")
    for layout in rope_edu.LAYOUTS:
        t = best_of(lambda: rope_edu.apply_rope(x, positions, layout=layout), args.repeats)
        print(f"{'apply_rope layout=' + repr(layout):<32}{t * 1e3:>10.1f}{t / copy:>15.2f}{2 * x.nbytes / t / 1e9:>12.1f}")


if __name__ == "__main__":
    main()
