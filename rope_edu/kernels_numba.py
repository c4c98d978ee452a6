"""The rotation as loops, for numba to compile: the optional ``"numba"`` backend of :mod:`rope_edu.kernels`.

One pass over memory: each pair is read, turned and written once, which is what a copy does, so
these run at about a copy's speed. The loop body is the pair equation of :mod:`rope_edu.rope`,

    x_a' = x_a cos - x_b sin
    x_b' = x_a sin + x_b cos

with the same float operations in the same order (numba does not fuse a multiply and an add
unless asked to), so the results are the reference's bit for bit.

Arguments of both kernels: ``x`` and ``out`` of shape ``(rows, seq, dim)``; ``cos`` and ``sin`` of
shape ``(tables, seq or 1, dim // 2)``; ``which[r]`` the table of row ``r``. All C-contiguous, of
one dtype (float32 or float64: one compilation each, cached on disk).

This module imports no numba: :mod:`rope_edu.kernels` compiles these functions when the backend is
first used (run as they are, they give the same numbers, slowly).
"""

from __future__ import annotations

import numpy as np

__all__ = ["KERNELS", "ROWS_AT_ONCE"]

#: Rows (heads) rotated together, position by position. A position's cos and sin are then read from
#: memory once for every two rows instead of once a row: a whole table (4096 positions x 64 pairs,
#: float32 cos and sin: 2 MiB) falls out of the fast caches between one row and the next, and
#: reading it again for every row cost a quarter of a copy's time on top of the rotation. Two rows
#: are two streams in and two out, which the hardware prefetchers follow; at three or more rows the
#: kernels got slower again (the compiled kernels timed alone, (32, 4096, 128) float32, 2-core machine:
#: 1.43, 1.08, 1.17, 1.22 times np.copyto for one to four rows).
ROWS_AT_ONCE = 2


def rotate_interleaved(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, which: np.ndarray, out: np.ndarray) -> None:
    rows, seq, dim = x.shape
    for r0 in range(0, rows, ROWS_AT_ONCE):
        for p in range(seq):
            q = p if cos.shape[1] > 1 else 0
            for r in range(r0, min(r0 + ROWS_AT_ONCE, rows)):
                t = which[r]
                for i in range(dim // 2):  # pair i = (2i, 2i + 1)
                    xa, xb, c, s = x[r, p, 2 * i], x[r, p, 2 * i + 1], cos[t, q, i], sin[t, q, i]
                    out[r, p, 2 * i] = xa * c - xb * s
                    out[r, p, 2 * i + 1] = xa * s + xb * c


def rotate_half(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, which: np.ndarray, out: np.ndarray) -> None:
    rows, seq, dim = x.shape
    h = dim // 2
    for r0 in range(0, rows, ROWS_AT_ONCE):
        for p in range(seq):
            q = p if cos.shape[1] > 1 else 0
            for r in range(r0, min(r0 + ROWS_AT_ONCE, rows)):
                t = which[r]
                for i in range(h):  # pair i = (i, i + d/2)
                    xa, xb, c, s = x[r, p, i], x[r, p, i + h], cos[t, q, i], sin[t, q, i]
                    out[r, p, i] = xa * c - xb * s
                    out[r, p, i + h] = xa * s + xb * c


#: The loop of each layout of :data:`rope_edu.LAYOUTS`.
KERNELS = {"interleaved": rotate_interleaved, "half": rotate_half}
