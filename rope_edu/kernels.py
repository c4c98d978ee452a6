"""Tuned kernels behind :func:`rope_edu.apply_rope`: the reference's numbers, near memory speed.

:mod:`rope_edu.rope` says what the rotation is (``_rotate_pairs``: the pair equation in four
lines). This module computes the same numbers faster; read it only for speed.
``tests/test_kernels.py`` checks every kernel against ``_rotate_pairs``.

Backends (:data:`BACKENDS`), chosen with :func:`use`:

* ``"numpy"`` (the default, what the book runs). Interleaved pairs are read as complex numbers and
  multiplied by :math:`e^{\\mathrm{i} m\\theta_i}` in one pass (numpy's complex multiply, which may
  fuse a multiply and an add, so it can differ from the reference in the last bit). Half-split pairs
  (:math:`i, i + d/2`) have no complex view; they are rotated as
  ``[xa, xb] * [cos, cos] + [xb, xa] * [-sin, sin]`` over cache-sized blocks (three passes per
  block, x read from memory once), bit for bit the reference.
* ``"numba"`` (optional: ``pip install "rope_edu[fast]"``): the pair equation as a compiled loop,
  one pass over memory for either layout, bit for bit the reference
  (:mod:`rope_edu.kernels_numba`). The first call of each dtype compiles (about a second; cached on
  disk after that).

Every kernel takes ``x`` of shape ``(..., seq, dim)`` in a working dtype (float32 or float64:
:data:`DTYPES`) and ``cos``, ``sin`` of shape broadcastable to ``x.shape[:-1] + (dim // 2,)`` in
the same dtype, and returns a new array of ``x``'s shape, or writes into ``out`` (C-contiguous, of
``x``'s shape and dtype, not overlapping ``x``) and returns it.

Where the time goes (``make bench``, (32, 4096, 128) float32, one quiet 2-core machine): into an
``out`` that has been written before, the one-pass kernels take 1.0-1.2 times what ``np.copyto``
into it takes (numpy's interleaved one, both numba ones; the same kernel measures anywhere from 0.85
to 1.5 over fresh pairs of buffers, so read several runs) and numpy's half-split one, three passes
a block, about 2.7 times. Into a new array, most of a one-pass kernel's extra time is the first
write to each of the new array's pages, which a copy's ``memcpy`` pays far less for: the
benchmark's ``x * 1`` row, a computed new array with no rotation, is 1.4-1.6 times ``x.copy()``.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections import OrderedDict
from typing import Callable

import numpy as np

from ._checks import check_choice

__all__ = ["BACKENDS", "DTYPES", "TABLES", "TableCache", "use", "backend", "rotate"]

Kernel = Callable[..., np.ndarray]  # kernel(x, cos, sin, out=None)

#: Working dtypes the kernels are written for (apply_rope rotates any other with the reference).
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _plain(a: np.ndarray) -> np.ndarray:
    """``a`` itself if it is C-contiguous and writable, else a copy that is (one compiled numba
    version per dtype then serves every call)."""
    return a if a.flags.c_contiguous and a.flags.writeable else np.array(a, order="C")


def _group_rows(
    x_shape: tuple[int, ...], cos: np.ndarray, sin: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The distinct tables of the rows of ``x`` (all axes but the last two), and which row uses which.

    ``cos`` and ``sin`` broadcast to ``x_shape[:-1] + (h,)``; along every leading axis where they
    have size 1 (e.g. one table for all heads) the kernels read one table, not a copy per row.

    Returns
    -------
    cos, sin : numpy.ndarray, shape (T, seq or 1, h)
        The ``T`` distinct tables (``seq`` is ``x_shape[-2]``; 1 where one position serves a row),
        views of the given ones where their memory allows.
    which : numpy.ndarray of intp, shape (rows,), or None
        ``which[r]`` is the table of row ``r`` of ``x.reshape(rows, seq, dim)``; ``None`` when every
        row uses table 0 (positions shared by all batches and heads: the usual case).
    """
    lead = x_shape[:-1] if len(x_shape) >= 2 else (1,)
    aligned = (1,) * (len(lead) + 1 - cos.ndim) + cos.shape  # the table's shape, axes lined up with x's
    n_tables = int(np.prod(aligned[:-2], dtype=np.int64))
    cos3, sin3 = (t.reshape(n_tables, *aligned[-2:]) for t in (cos, sin))
    if n_tables == 1:
        return cos3, sin3, None
    ids = np.arange(n_tables).reshape(aligned[:-2])
    return cos3, sin3, np.broadcast_to(ids, lead[:-1]).ravel()


# --- the cos/sin tables, kept for the next call ----------------------------------------------


class TableCache:
    """The cos and sin tables of the last few calls, by positions, frequencies and dtype.

    Their float64 cos and sin cost about half a copy of a (32, 4096, 128) float32 ``x``
    (``make bench``), and a model rotates the queries and keys of every layer at the same
    positions: like a model's own rotary module, which computes cos and sin once per forward pass,
    :func:`rope_edu.apply_rope` computes them once and reuses them while they are among the last
    ``size`` it used. The tables are the ones ``compute`` returns, so results do not change.

    Parameters
    ----------
    size : int, default 4
        Tables kept (least recently used dropped first).
    max_bytes : int, default 8 MiB
        Larger tables (very many positions) are computed every time, not kept.
    """

    def __init__(self, size: int = 4, max_bytes: int = 8 << 20) -> None:
        self.size, self.max_bytes = size, max_bytes
        self.hits = self.misses = 0
        self._kept: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    def get(
        self,
        positions: np.ndarray,
        inv_freq: np.ndarray,
        dtype: np.dtype,
        compute: Callable[[np.ndarray, np.ndarray, np.dtype], tuple[np.ndarray, np.ndarray]],
    ) -> tuple[np.ndarray, np.ndarray]:
        """``compute(positions, inv_freq, dtype)``, or the tables it gave before for equal arguments."""
        if 2 * positions.size * inv_freq.size * dtype.itemsize > self.max_bytes:
            return compute(positions, inv_freq, dtype)
        key = (positions.shape, positions.tobytes(), inv_freq.tobytes(), dtype.str)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                self.hits += 1
                return found
        tables = compute(positions, inv_freq, dtype)
        with self._lock:
            self.misses += 1
            self._kept[key] = tables
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return tables

    def clear(self) -> None:
        """Forget every table (and the hit and miss counts)."""
        with self._lock:
            self._kept.clear()
            self.hits = self.misses = 0


#: The tables apply_rope keeps (the kernels never write to them).
TABLES = TableCache()


# --- numpy --------------------------------------------------------------------------------


def _numpy_interleaved(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    # (x[2i] + i x[2i+1]) * (cos + i sin): one complex multiply, one pass over memory. The table
    # keeps the positions' own shape and is broadcast over the heads by the multiplication.
    complex_dtype = np.result_type(x.dtype, np.complex64)
    rot = np.empty(cos.shape, dtype=complex_dtype)
    rot.real, rot.imag = cos, sin
    xc = np.ascontiguousarray(x).view(complex_dtype)
    if out is None:
        return np.multiply(xc, rot).view(x.dtype)
    np.multiply(xc, rot, out=out.view(complex_dtype))
    return out


#: Bytes of x per block in the half-split loop (128 KiB): a block of x, of the result, of the
#: one temporary and of the two tables stay in a core's L2 cache together (2 MiB here).
BLOCK_BYTES = 1 << 17


def _numpy_half(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    # Pairs (i, i + d/2). Seen as (..., 2, d/2), a row is [xa, xb] and its rotation is
    #   [xa, xb] * [cos, cos]  +  [xb, xa] * [-sin, sin],
    # two products with full-width tables and one sum: three vectorised passes, each as long as
    # possible. They run over cache-sized blocks (positions outer, rows of heads inner, so a
    # block of the tables is reused by every head while it is in the cache): x is read from
    # memory once and the result written once, like a copy. The same float products and sums
    # as the reference (-sin is exact, a + (-b) is a - b), so the same bits.
    d = x.shape[-1]
    h = d // 2
    seq = x.shape[-2] if x.ndim >= 2 else 1
    x4 = np.ascontiguousarray(x).reshape(-1, seq, 2, h)
    cos3, sin3, which = _group_rows(x.shape, cos, sin)
    cos_t = np.empty((*cos3.shape[:-1], 2, h), dtype=x.dtype)  # [cos, cos]
    sin_t = np.empty_like(cos_t)  # [-sin, sin]
    cos_t[..., 0, :] = cos_t[..., 1, :] = cos3
    sin_t[..., 1, :] = sin3
    np.negative(sin3, out=sin_t[..., 0, :])
    result = np.empty_like(x4) if out is None else out.reshape(x4.shape)
    block = max(1, BLOCK_BYTES // x4.itemsize)  # elements per block
    n_pos = min(seq, max(1, block // d))  # positions per block
    n_rows = max(1, block // (n_pos * d))  # rows (heads) per block, > 1 for short sequences
    tmp = np.empty((n_rows, n_pos, 2, h), dtype=x.dtype)
    for s0 in range(0, seq, n_pos):
        ps = slice(s0, s0 + n_pos) if cos_t.shape[1] > 1 else slice(0, 1)
        c, s = cos_t[:, ps], sin_t[:, ps]
        for r0 in range(0, x4.shape[0], n_rows):
            xk = x4[r0 : r0 + n_rows, s0 : s0 + n_pos]  # a block of x, (rows, positions, 2, d/2)
            ok = result[r0 : r0 + n_rows, s0 : s0 + n_pos]
            t = tmp[: xk.shape[0], : xk.shape[1]]
            cb, sb = (c, s) if which is None else (c[which[r0 : r0 + n_rows]], s[which[r0 : r0 + n_rows]])
            np.multiply(xk, cb, out=ok)
            np.multiply(xk[:, :, ::-1], sb, out=t)  # [xb, xa] * [-sin, sin]
            ok += t
    return result.reshape(x.shape) if out is None else out


# --- numba (optional) -----------------------------------------------------------------------


@functools.cache
def _compiled(layout: str) -> Callable[..., None]:
    import numba  # only when this backend runs

    from . import kernels_numba

    return numba.njit(cache=True)(kernels_numba.KERNELS[layout])


def _numba_kernel(layout: str) -> Kernel:
    def rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        seq = x.shape[-2] if x.ndim >= 2 else 1
        x3 = _plain(np.ascontiguousarray(x).reshape(-1, seq, x.shape[-1]))
        cos3, sin3, which = _group_rows(x.shape, cos, sin)
        which = np.zeros(x3.shape[0], dtype=np.intp) if which is None else which.astype(np.intp)
        out3 = np.empty_like(x3) if out is None else out.reshape(x3.shape)
        _compiled(layout)(x3, _plain(cos3), _plain(sin3), which, out3)
        return out3.reshape(x.shape) if out is None else out

    return rotate


def _numba_available() -> bool:
    return importlib.util.find_spec("numba") is not None


#: ``{backend: {layout: kernel}}``; ``kernel(x, cos, sin, out=None)`` as in the module docstring.
BACKENDS: dict[str, dict[str, Kernel]] = {
    "numpy": {"interleaved": _numpy_interleaved, "half": _numpy_half},
    "numba": {"interleaved": _numba_kernel("interleaved"), "half": _numba_kernel("half")},
}

_current = "numpy"


def use(name: str) -> str:
    """Make :func:`rope_edu.apply_rope` run on backend ``name``; returns the previous backend's name.

    Parameters
    ----------
    name : {"numpy", "numba"}
        ``"numba"`` needs numba installed (``pip install "rope_edu[fast]"``).

    Returns
    -------
    str
        The backend in use before, to restore with ``use(previous)``.
    """
    global _current
    name = check_choice(name, BACKENDS, "backend")
    if name == "numba" and not _numba_available():
        raise ImportError('backend "numba" needs numba: pip install "rope_edu[fast]" (or numba)')
    previous, _current = _current, name
    return previous


def backend() -> str:
    """The name of the backend :func:`rope_edu.apply_rope` runs on (default ``"numpy"``)."""
    return _current


def rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, layout: str, out: np.ndarray | None = None) -> np.ndarray:
    """Rotate the pairs of ``layout`` in ``x`` with the current backend's kernel.

    Parameters
    ----------
    x : numpy.ndarray, shape (..., seq, dim), float32 or float64
    cos, sin : numpy.ndarray, shape broadcastable to x.shape[:-1] + (dim // 2,), x's dtype
    layout : {"interleaved", "half"}
    out : numpy.ndarray, shape x.shape, x's dtype, C-contiguous, optional
        Where to write the result (it must not overlap ``x``); a new array if None.

    Returns
    -------
    numpy.ndarray, shape x.shape, x's dtype
        What ``rope_edu.rope._rotate_pairs(x, cos, sin, layout)`` returns (bit for bit, or within
        one rounding for numpy's complex multiply): ``out`` where given.
    """
    return BACKENDS[_current][layout](x, cos, sin, out=out)
