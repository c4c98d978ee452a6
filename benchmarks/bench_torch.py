"""numpy vs torch eager vs torch.compile for RoPE, each timed against a plain copy of the same data.

    .venv/bin/python benchmarks/bench_torch.py                    # CPU, or CUDA when present
    .venv/bin/python benchmarks/bench_torch.py --device cpu --repeats 15
    python benchmarks/bench_torch.py --device cuda --json benchmarks/results/gpu_h100.json \\
        | tee benchmarks/results/gpu_h100.txt                     # records a GPU run that chapter 8 prints

Shape (batch 1, 32 heads, 4096 positions, head_dim 128), positions 0..4095, both layouts, in
float32 (and bfloat16 on a GPU). Every rotation reads x once and writes its result once, the
same traffic as a copy, so ``time / copy time`` says how close it runs to memory speed (about 1x
is the best an out-of-place rotation can do). The bandwidth column is that minimal traffic,
2 * x.nbytes (the cos/sin tables are 1/32 of it and left out), divided by the time. Each call
includes everything the function does: argument checks, the cos/sin table (computed once per
position and broadcast over the heads) and the rotation.

Timing. Warm-up calls first (page faults, caches, and the compile, whose first-call time is
printed on its own). Then ``--repeats`` rounds, each timing the operation and then the copy it
is compared with (alternating keeps the ratio honest on a machine whose load changes). Other
jobs only ever add time, so the headline is the ratio of the minima; the ratio of the medians is
printed beside it to show the load's effect.

* CPU: one call per timing.
* CUDA: ``--inner`` calls back to back per timing, between CUDA events, then divided: the time
  per call of a program that launches one call after another, Python and launch overheads
  included (a call costs at least its host time, even when its kernels are faster). A second
  column replays the same calls from a CUDA graph, which launches the recorded kernels without
  running any Python: the device time of the kernels alone, and their achieved bandwidth.

Prints ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
import warnings
from typing import Callable

import numpy as np

# numpy asks the kernel for transparent huge pages for large arrays; torch's CPU allocator does
# so only with THP_MEM_ALLOC_ENABLE=1 (read once, at torch's first allocation). Without it every
# fresh 64 MiB result costs ~16k page faults, which on a small CPU can triple the time of a plain
# clone and would hide the kernels being compared. Set it (unless --no-thp) before importing torch.
if "--no-thp" not in sys.argv:
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")

import torch

import rope_edu
from rope_edu import torch_rope

SHAPE = (1, 32, 4096, 128)


class Timer:
    """Seconds per call of a function on one device (see the module docstring)."""

    def __init__(self, device: torch.device, inner: int, replay: bool = False):
        self.cuda = device.type == "cuda"
        self.inner = inner if self.cuda else 1
        self.calls = 1 if replay else self.inner  # a replay runs all `inner` recorded calls at once

    def __call__(self, fn: Callable[[], object]) -> float:
        if not self.cuda:
            t0 = time.perf_counter()
            fn()
            return time.perf_counter() - t0
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(self.calls):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / self.inner

    def graphed(self, fn: Callable[[], object]) -> Callable[[], object] | None:
        """A function replaying ``inner`` calls of ``fn`` from a CUDA graph (None if capture fails)."""
        if not self.cuda:
            return None
        try:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):  # warm-up on a side stream, as capture requires
                for _ in range(3):
                    fn()
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for _ in range(self.inner):
                    fn()
        except Exception as err:  # report and go on without the column
            print(f"  (CUDA graph capture failed: {type(err).__name__}: {err}; no kernel-only time)")
            return None
        return graph.replay


def device_of(timer: Timer) -> torch.device:
    return torch.device("cuda" if timer.cuda else "cpu")


def paired_times(fn, copy, repeats: int, timer: Callable[[Callable[[], object]], float],
                 warmup: int = 2) -> tuple[list[float], list[float]]:
    """Per-call times (s) of ``fn`` and of ``copy``, timed alternately after ``warmup`` calls of each."""
    for _ in range(warmup):
        fn()
        copy()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        times[0].append(timer(fn))
        times[1].append(timer(copy))
    return times


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads"


def run(device: torch.device, dtypes: list[torch.dtype], repeats: int, inner: int) -> list[dict]:
    rows: list[dict] = []
    positions = torch.arange(SHAPE[-2], device=device)
    cpu_timer, timer = Timer(torch.device("cpu"), 1), Timer(device, inner)

    def measure(impl: str, layout: str, dtype: str, dev: str, fn, copy, nbytes: int,
                t: Timer, **extra) -> None:
        op, cp = paired_times(fn, copy, repeats, t)
        row = {
            "implementation": impl, "layout": layout, "dtype": dtype, "device": dev,
            "ms": min(op) * 1e3, "ms_median": statistics.median(op) * 1e3,
            "copy_ms": min(cp) * 1e3, "copy_ms_median": statistics.median(cp) * 1e3,
            "ratio_to_copy": min(op) / min(cp),
            "ratio_to_copy_median": statistics.median(op) / statistics.median(cp),
            "GB_per_s": 2 * nbytes / min(op) / 1e9, **extra,
        }
        g_op, g_cp = t.graphed(fn), t.graphed(copy)
        if g_op is not None and g_cp is not None:
            gop, gcp = paired_times(g_op, g_cp, repeats, Timer(device_of(t), t.inner, replay=True), warmup=1)
            row.update({
                "kernel_ms": min(gop) * 1e3, "kernel_copy_ms": min(gcp) * 1e3,
                "kernel_ratio_to_copy": min(gop) / min(gcp), "kernel_GB_per_s": 2 * nbytes / min(gop) / 1e9,
            })
        rows.append(row)

    if torch.float32 in dtypes:  # numpy: the package's core, on the CPU, against a numpy copy
        x_np = np.random.default_rng(0).standard_normal(SHAPE, dtype=np.float32)
        pos_np = np.arange(SHAPE[-2])
        measure("numpy copy", "-", "float32", "cpu", x_np.copy, x_np.copy, x_np.nbytes, cpu_timer)
        for layout in rope_edu.LAYOUTS:
            fn = lambda: rope_edu.apply_rope(x_np, pos_np, layout=layout)  # noqa: E731
            measure("numpy apply_rope", layout, "float32", "cpu", fn, x_np.copy, x_np.nbytes, cpu_timer)

    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for dtype in dtypes:
        name = str(dtype).removeprefix("torch.")
        x = torch.randn(SHAPE, generator=torch.Generator().manual_seed(0)).to(device=device, dtype=dtype)
        nbytes = x.numel() * x.element_size()
        measure("torch copy (clone)", "-", name, device.type, x.clone, x.clone, nbytes, timer)
        for layout in torch_rope.LAYOUTS:
            eager = lambda: torch_rope.apply_rope(x, positions, layout=layout)  # noqa: E731
            measure("torch eager", layout, name, device.type, eager, x.clone, nbytes, timer)
            sync()
            t0 = time.perf_counter()
            out = torch_rope.apply_rope_compiled(x, positions, layout=layout)  # compiles
            sync()
            compile_s = time.perf_counter() - t0
            torch.testing.assert_close(out, eager(), rtol=1e-2, atol=1e-2)
            fused = lambda: torch_rope.apply_rope_compiled(x, positions, layout=layout)  # noqa: E731
            measure("torch.compile", layout, name, device.type, fused, x.clone, nbytes, timer,
                    first_call_s=compile_s)
    return rows


def print_table(rows: list[dict]) -> None:
    kernels = any("kernel_ms" in r for r in rows)
    head = f"{'implementation':<20}{'layout':<13}{'dtype':<10}{'device':<7}{'min ms':>9}{'x copy':>8}{'(median)':>9}{'GB/s':>8}"
    if kernels:
        head += f"  |{'kernel ms':>10}{'x copy':>8}{'GB/s':>8}"
    print(head)
    for r in rows:
        line = (f"{r['implementation']:<20}{r['layout']:<13}{r['dtype']:<10}{r['device']:<7}"
                f"{r['ms']:>9.3f}{r['ratio_to_copy']:>8.2f}{'(' + format(r['ratio_to_copy_median'], '.2f') + ')':>9}"
                f"{r['GB_per_s']:>8.1f}")
        if kernels:
            line += (f"  |{r['kernel_ms']:>10.4f}{r['kernel_ratio_to_copy']:>8.2f}{r['kernel_GB_per_s']:>8.0f}"
                     if "kernel_ms" in r else f"  |{'-':>10}{'-':>8}{'-':>8}")
        if "first_call_s" in r:
            line += f"   (first call, with compile: {r['first_call_s']:.1f} s)"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="torch device (default: cuda when available, else cpu)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed rounds per measurement, min and median reported (default: 15 on cpu, 30 on cuda)")
    parser.add_argument("--inner", type=int, default=20, help="calls per timing on CUDA (default 20)")
    parser.add_argument("--json", metavar="PATH", help="also write the results, device and date to PATH")
    parser.add_argument("--no-thp", action="store_true",
                        help="leave torch's CPU allocator without transparent huge pages (THP_MEM_ALLOC_ENABLE unset)")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch.cuda.is_available() is False on this machine")
    repeats = args.repeats or (30 if device.type == "cuda" else 15)
    dtypes = [torch.float32] + ([torch.bfloat16] if device.type == "cuda" else [])
    # torch's own import-time DeprecationWarning (torch.jit.script_method) when torch.compile loads
    warnings.filterwarnings("ignore", message="`torch.jit.script_method` is deprecated", category=DeprecationWarning)

    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = {
        "date": when, "device": device_name(device), "torch": torch.__version__, "numpy": np.__version__,
        "cuda": torch.version.cuda if device.type == "cuda" else None,
        "shape": list(SHAPE), "repeats": repeats, "inner": args.inner if device.type == "cuda" else 1,
        "cpu_count": os.cpu_count(), "THP_MEM_ALLOC_ENABLE": os.environ.get("THP_MEM_ALLOC_ENABLE", ""),
        "command": "python " + " ".join(sys.argv),
    }
    print(f"RoPE benchmark, {when}: x of shape {SHAPE}, positions 0..{SHAPE[-2] - 1}")
    print(f"device: {header['device']}; torch {torch.__version__}"
          + (f" (CUDA {header['cuda']})" if header["cuda"] else "")
          + f", numpy {np.__version__}; THP_MEM_ALLOC_ENABLE={header['THP_MEM_ALLOC_ENABLE'] or 'unset'}")
    print(f"{repeats} rounds of (operation, copy)" + (f", {args.inner} calls per timing" if header["cuda"] else "")
          + "; 'min ms' = the fastest round, per call; 'x copy' = min / min of a plain copy of the same")
    print("tensor on the same device, the median ratio in brackets; GB/s = 2 * x.nbytes / min time. The")
    print("copy rows compare a copy with itself, so their distance from 1.00 shows the timing noise.")
    if header["cuda"]:
        print("kernel columns: the same calls replayed from a CUDA graph (no Python, no launch overhead).")
    print()
    rows = run(device, dtypes, repeats, args.inner)
    print_table(rows)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({**header, "rows": rows}, f, indent=1)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
