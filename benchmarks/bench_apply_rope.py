"""Speed of rope_edu.apply_rope against a plain copy of the same array, for both layouts.

    .venv/bin/python benchmarks/bench_apply_rope.py [--repeats 21] [--shape 32 4096 128] [--clock cpu]

A copy reads and writes every byte once, so `time / copy time` says how close a rotation runs
to memory speed (the best any out-of-place implementation can do is about 1x). The default shape
is 32 heads x 4096 positions x 128 dims in float32 (64 MiB), positions 0..4095; apply_rope's time
includes everything it does (checks, float64 angles and their cos/sin, rotation). Rows:

* ``x * 1``: ``np.multiply(x, 1)``, the simplest computed result numpy writes into a new array,
  the baseline for the rows that return one: it reads what they read and fills as many new pages,
  with no rotation. Its ratio to ``x.copy()`` was 1.4-1.6 on the machines measured for issue 46:
  numpy's large arrays are given huge pages, whose first write costs a computed loop more than it
  costs ``memcpy`` (with huge pages turned off, ``x.copy()`` itself took 27 ms against 5.7 and the
  new-array ratios fell to 1.0-1.4);
* ``tables``: the angles m*theta_i and their cos and sin (float64, rounded to float32), which a
  call computes unless apply_rope kept them from an earlier call at the same positions;
* ``reference``: the same tables, then the rotation as rope.py writes it (``_rotate_pairs``, the
  pair equation with fancy indexing): what the tuned kernels are measured against;
* ``apply_rope [backend]``: apply_rope on each backend of rope_edu.kernels (numpy, the default;
  numba where installed, after one call that compiles it), called with the same positions each
  time, as a model's layers are: the tables come from apply_rope's cache (kernels.TABLES);
* ``..., new positions``: the same, with positions shifted by one more each call, so every call
  computes its tables;
* ``..., into out=``: the same into an array written before (``apply_rope(..., out=buf)``, as a
  model that rotates every layer into one buffer), timed against ``np.copyto(buf2, x)``, a copy
  into an array written before. A new array's first write to each of its pages costs the
  rotation far more than it costs ``x.copy()``'s memcpy: this row is the rotation without it.

The reference takes about a second a call, so it is timed over ``--repeats // 7`` rounds (at
least 3); its column gives how many times faster apply_rope is.

Timing: one warm-up call of each, then ``--repeats`` rounds in which the operation and the copy
are timed one after the other. On a shared machine other jobs only ever add time, so the
minimum over the rounds is the best estimate of the cost itself, and the ratio of the minima is
the headline number; the ratio of the medians is printed beside it to show how much the load
moved during the run. ``--clock cpu`` times with the process's CPU time instead of the wall
clock (every kernel here runs on one thread, like the copy): on a machine with more runnable
jobs than cores it leaves out the time spent waiting for a core. Other jobs also share the
memory bandwidth, which slows the copy more than the arithmetic, so a loaded machine gives lower
ratios than a quiet one: compare runs at a similar load (printed on the first line). Prints
ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import statistics
import time
from typing import Callable

import numpy as np

import rope_edu
from rope_edu import kernels
from rope_edu.rope import _rotate_pairs

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def paired_times(
    fn: Callable[[], object], copy: Callable[[], object], repeats: int, clock: Callable[[], float]
) -> tuple[list[float], list[float]]:
    """Times (s) of ``fn()`` and of ``copy()``, timed alternately, after one warm-up call each."""
    fn()
    copy()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for which, f in enumerate((fn, copy)):
            t0 = clock()
            f()
            times[which].append(clock() - t0)
    return times


def on_backend(name: str, fn: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        previous = kernels.use(name)
        try:
            return fn()
        finally:
            kernels.use(previous)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--shape", type=int, nargs=3, default=[32, 4096, 128], metavar=("HEADS", "SEQ", "DIM"))
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    heads, seq, dim = args.shape
    x = np.random.default_rng(0).standard_normal((heads, seq, dim)).astype(np.float32)
    positions = np.arange(seq)
    freqs = rope_edu.frequencies(dim)

    def tables() -> tuple[np.ndarray, np.ndarray]:
        angles = rope_edu.rope_angles(positions, freqs)
        return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)

    backends = [b for b in kernels.BACKENDS if b != "numba" or importlib.util.find_spec("numba")]
    load = " / ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"x: float32 {x.shape} ({x.nbytes / 2**20:.0f} MiB), positions 0..{seq - 1}; "
          f"{args.repeats} rounds, {args.clock} clock; load average {load} on {os.cpu_count()} CPUs")
    print("x copy = min time / min copy time (median / median in brackets: the load's effect); the copy is "
          "x.copy(), or np.copyto into an array written before for the rows into one; "
          "ref/t = the reference's min time / min time")
    print(f"{'operation':<46}{'min (ms)':>9}{'median':>8}{'x copy':>15}{'ref/t':>7}{'GB/s (r+w)':>12}")
    # (layout, label, backend or None, new positions each call? or "out": into out=) -> the call to time
    buffer, copy_buffer = np.ones_like(x), np.ones_like(x)  # written once: their pages are mapped

    def copy_into() -> object:
        return np.copyto(copy_buffer, x)

    def times_one() -> object:
        return np.multiply(x, np.float32(1))

    rows: dict[tuple[str, str, str | None, bool | str], Callable[[], object]] = {
        ("", "x.copy()", None, False): x.copy,
        ("", "np.copyto into an array written before", None, "out"): copy_into,
        ("", "x * 1 (a computed new array, no rotation)", None, False): times_one,
        ("", "tables (cos, sin of m θ_i)", None, False): tables,
    }
    shift = itertools.count(1)
    for layout in rope_edu.LAYOUTS:
        rows[(layout, "reference (rope.py)", None, False)] = lambda layout=layout: _rotate_pairs(x, *tables(), layout)
        for name in backends:
            rows[(layout, f"apply_rope [{name}]", name, False)] = on_backend(
                name, lambda layout=layout: rope_edu.apply_rope(x, positions, layout=layout)
            )
            rows[(layout, f"apply_rope [{name}], new positions", name, True)] = on_backend(
                name, lambda layout=layout: rope_edu.apply_rope(x, positions + next(shift), layout=layout)
            )
            rows[(layout, f"apply_rope [{name}], into out=", name, "out")] = on_backend(
                name, lambda layout=layout: rope_edu.apply_rope(x, positions, layout=layout, out=buffer)
            )
    reference, ratios = 0.0, {}
    times_one_ratio = 0.0
    for (layout, label, name, new), fn in rows.items():
        is_reference = label.startswith("reference")
        baseline = copy_into if new == "out" else x.copy  # a copy that writes where the row writes
        t, c = paired_times(fn, baseline, max(3, args.repeats // 7) if is_reference else args.repeats, clock)
        reference = min(t) if is_reference else reference
        times_one_ratio = min(t) / min(c) if fn is times_one else times_one_ratio
        if name:
            ratios[(name, new, layout)] = min(t) / min(c)
        to_ref = f"{reference / min(t):7.1f}" if name else " " * 7
        rate = f"{2 * x.nbytes / min(t) / 1e9:>12.1f}" if "tables" not in label else ""
        print(
            f"{(layout + ': ' if layout else '') + label:<46}{min(t) * 1e3:>9.1f}{statistics.median(t) * 1e3:>8.1f}"
            f"{min(t) / min(c):>8.2f} ({statistics.median(t) / statistics.median(c):4.2f}){to_ref}{rate}",
            flush=True,
        )
    print("\napply_rope / copy (min / min; issue 46's goal: <= 1.5 for both layouts). The rows into a new "
          f"array compare with x * 1 / x.copy() = {times_one_ratio:.2f}: a computed new array with no rotation, here")
    print(f"{'':<44}" + "".join(f"{layout:>13}" for layout in rope_edu.LAYOUTS))
    labels = {False: "same positions (tables kept)", True: "new positions each call",
              "out": "into out= (vs np.copyto into one)"}
    for name in backends:
        for new, what in labels.items():
            label = f"{name}, {what}"
            print(f"{label:<44}" + "".join(f"{ratios[(name, new, layout)]:>13.2f}" for layout in rope_edu.LAYOUTS))


if __name__ == "__main__":
    main()
