"""numpy vs torch eager vs torch.compile for RoPE, each timed against a plain copy of the same data.

    .venv/bin/python benchmarks/bench_torch.py                    # CPU, or CUDA when present
    .venv/bin/python benchmarks/bench_torch.py --device cpu --repeats 10
    .venv/bin/python benchmarks/bench_torch.py --device cuda --json gpu_run.json

Shape (batch 1, 32 heads, 4096 positions, head_dim 128), positions 0..4095, both layouts, in
float32 (and bfloat16 on a GPU). Every rotation reads x once and writes its result once, the
same traffic as a copy, so ``time / copy time`` says how close it runs to memory speed (about 1x
is the best an out-of-place rotation can do). The bandwidth column is that minimal traffic,
2 * x.nbytes (cos/sin are 1/32 of it and left out), divided by the median time.

Timing: warm-up calls first (page faults, caches, and the compile, whose first-call time is
printed on its own), then ``--repeats`` calls of the operation alternating with calls of the
copy it is compared with, and the ratio of their medians (alternating keeps the ratio honest on
a machine whose load changes during the run); on CUDA each call is bracketed by
``torch.cuda.synchronize()``. Prints ratios; asserts nothing.
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

import torch  # noqa: E402

import rope_edu  # noqa: E402
from rope_edu import torch_rope  # noqa: E402

SHAPE = (1, 32, 4096, 128)


def sync_for(device: torch.device) -> Callable[[], None]:
    return torch.cuda.synchronize if device.type == "cuda" else (lambda: None)


def paired_times(fn: Callable[[], object], copy: Callable[[], object], repeats: int,
                 sync: Callable[[], None], warmup: int = 2) -> tuple[float, float]:
    """Median wall times (s) of ``fn()`` and of ``copy()``, timed alternately.

    Alternating the two makes their ratio robust to the machine getting busier or quieter
    during the run (other jobs on a shared CPU); ``warmup`` untimed calls of each come first.
    """
    for _ in range(warmup):
        fn()
        copy()
    times: dict[int, list[float]] = {0: [], 1: []}
    for _ in range(repeats):
        for which, f in enumerate((fn, copy)):
            sync()
            t0 = time.perf_counter()
            f()
            sync()
            times[which].append(time.perf_counter() - t0)
    return statistics.median(times[0]), statistics.median(times[1])


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads"


def run(device: torch.device, dtypes: list[torch.dtype], repeats: int) -> list[dict]:
    sync = sync_for(device)
    rows: list[dict] = []
    positions = torch.arange(SHAPE[-2], device=device)

    def measure(impl: str, layout: str, dtype: str, dev: str, fn, copy, nbytes: int, sync, **extra) -> None:
        t, t_copy = paired_times(fn, copy, repeats, sync)
        rows.append({
            "implementation": impl, "layout": layout, "dtype": dtype, "device": dev, "ms": t * 1e3,
            "copy_ms": t_copy * 1e3, "ratio_to_copy": t / t_copy, "GB_per_s": 2 * nbytes / t / 1e9, **extra,
        })

    no_sync = lambda: None  # noqa: E731
    if torch.float32 in dtypes:  # numpy: the package's core, on the CPU, against a numpy copy
        x_np = np.random.default_rng(0).standard_normal(SHAPE, dtype=np.float32)
        pos_np = np.arange(SHAPE[-2])
        measure("numpy copy", "-", "float32", "cpu", x_np.copy, x_np.copy, x_np.nbytes, no_sync)
        for layout in rope_edu.LAYOUTS:
            fn = lambda: rope_edu.apply_rope(x_np, pos_np, layout=layout)  # noqa: E731
            measure("numpy apply_rope", layout, "float32", "cpu", fn, x_np.copy, x_np.nbytes, no_sync)

    for dtype in dtypes:
        name = str(dtype).removeprefix("torch.")
        x = torch.randn(SHAPE, generator=torch.Generator().manual_seed(0)).to(device=device, dtype=dtype)
        nbytes = x.numel() * x.element_size()
        measure("torch copy (clone)", "-", name, device.type, x.clone, x.clone, nbytes, sync)
        for layout in torch_rope.LAYOUTS:
            eager = lambda: torch_rope.apply_rope(x, positions, layout=layout)  # noqa: E731
            measure("torch eager", layout, name, device.type, eager, x.clone, nbytes, sync)
            sync()
            t0 = time.perf_counter()
            out = torch_rope.apply_rope_compiled(x, positions, layout=layout)  # compiles
            sync()
            compile_s = time.perf_counter() - t0
            torch.testing.assert_close(out, eager(), rtol=1e-2, atol=1e-2)
            fused = lambda: torch_rope.apply_rope_compiled(x, positions, layout=layout)  # noqa: E731
            measure("torch.compile", layout, name, device.type, fused, x.clone, nbytes, sync, first_call_s=compile_s)
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"{'implementation':<20}{'layout':<13}{'dtype':<10}{'device':<7}{'time (ms)':>10}{'x copy':>8}{'GB/s':>8}")
    for r in rows:
        note = f"   (first call, with compile: {r['first_call_s']:.1f} s)" if "first_call_s" in r else ""
        print(
            f"{r['implementation']:<20}{r['layout']:<13}{r['dtype']:<10}{r['device']:<7}"
            f"{r['ms']:>10.2f}{r['ratio_to_copy']:>8.2f}{r['GB_per_s']:>8.1f}{note}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="torch device (default: cuda when available, else cpu)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed calls per measurement, median reported (default: 10 on cpu, 50 on cuda)")
    parser.add_argument("--json", metavar="PATH", help="also write the results, device and date to PATH")
    parser.add_argument("--no-thp", action="store_true",
                        help="leave torch's CPU allocator without transparent huge pages (THP_MEM_ALLOC_ENABLE unset)")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch.cuda.is_available() is False on this machine")
    repeats = args.repeats or (50 if device.type == "cuda" else 10)
    dtypes = [torch.float32] + ([torch.bfloat16] if device.type == "cuda" else [])
    # torch's own import-time DeprecationWarning (torch.jit.script_method) when torch.compile loads
    warnings.filterwarnings("ignore", message="`torch.jit.script_method` is deprecated", category=DeprecationWarning)

    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = {
        "date": when, "device": device_name(device), "torch": torch.__version__, "numpy": np.__version__,
        "shape": list(SHAPE), "repeats": repeats, "cpu_count": os.cpu_count(),
        "THP_MEM_ALLOC_ENABLE": os.environ.get("THP_MEM_ALLOC_ENABLE", ""),
    }
    print(f"RoPE benchmark, {when}: x of shape {SHAPE}, positions 0..{SHAPE[-2] - 1}, median of {repeats}")
    print(f"device: {header['device']}; torch {torch.__version__}, numpy {np.__version__}; "
          f"THP_MEM_ALLOC_ENABLE={header['THP_MEM_ALLOC_ENABLE'] or 'unset'}")
    print("'x copy' = time / time of a plain copy of the same tensor on the same device;")
    print("GB/s = 2 * x.nbytes (read x, write the result) / time; the copy rows compare a copy with")
    print("itself, so their distance from 1.00 shows the timing noise of this run\n")
    rows = run(device, dtypes, repeats)
    print_table(rows)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({**header, "rows": rows}, f, indent=1)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
