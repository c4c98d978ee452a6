"""Cost of the three teaching implementations of chapter 6: dense matrix, complex form, rotate_half.

    .venv/bin/python benchmarks/bench_implementations.py [--dims 16 32 64 128 256] [--tokens 256]
                                                        [--heads 8] [--repeats 7]

Every call rotates x of shape (heads, tokens, dim) from positions 0..tokens-1, cos/sin tables (or
the dense matrices) included, as `rope_edu.time_implementations` does; the best of ``--repeats``
calls is kept. The dense matrix does dim**2 multiply-adds per vector, the other two O(dim), so the
last column (dense / complex) should grow with dim. ``apply_rope`` (the package's kernel, both
layouts) is printed alongside for reference. Prints times and ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import rope_edu


def best_of(fn, repeats: int) -> float:
    fn()  # warm-up (page faults, caches)
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    impls = {
        **rope_edu.IMPLEMENTATIONS,
        "apply_rope interleaved": lambda x, p, base: rope_edu.apply_rope(x, p, base=base),
        "apply_rope half": lambda x, p, base: rope_edu.apply_rope(x, p, base=base, layout="half"),
    }
    short = {name: name.split(" (")[0] for name in impls}
    rng = np.random.default_rng(0)
    pos = np.arange(args.tokens)
    n_vectors = args.heads * args.tokens
    print(f"microseconds per vector; x of shape ({args.heads}, {args.tokens}, dim), float64, best of {args.repeats}")
    print(f"{'dim':>5} | " + " | ".join(f"{short[n]:>22}" for n in impls) + " | dense / complex")
    for dim in args.dims:
        x = rng.standard_normal((args.heads, args.tokens, dim))
        us = {
            name: best_of(lambda fn=fn: fn(x, pos, base=10000.0), args.repeats) / n_vectors * 1e6
            for name, fn in impls.items()
        }
        ratio = us["dense matrix"] / us["complex (interleaved)"]
        print(f"{dim:>5} | " + " | ".join(f"{us[n]:>22.3f}" for n in impls) + f" | {ratio:>15.1f}")


if __name__ == "__main__":
    main()
