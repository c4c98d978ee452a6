"""Absolute position encodings: the tables chapter 2 compares, and the sinusoidal shift matrix.

An *absolute* (additive) encoding gives every position :math:`p` a vector :math:`PE(p)` that is
added to the token embedding at that position. This module builds five of them as tables of
shape ``(n_positions, dim)`` (row ``p`` is :math:`PE(p)`):

* :func:`integer_encoding`: :math:`PE(p) = p` (unbounded);
* :func:`normalised_encoding`: :math:`PE(p) = p / (N - 1)` (depends on the length :math:`N`);
* :func:`binary_encoding`: the bits of :math:`p` (bounded and unique, but it jumps);
* :func:`learned_encoding`: a table of free parameters, one row per position up to a maximum
  (BERT, GPT-2); here a fixed random stand-in for the trained values;
* :func:`sinusoidal_encoding`: Vaswani et al. (2017),

  .. math::

      PE(p)_{2i} = \\sin(p\\,\\theta_i), \\qquad PE(p)_{2i+1} = \\cos(p\\,\\theta_i),
      \\qquad \\theta_i = b^{-2i/d},

  with the book's frequencies :func:`rope_edu.frequencies` (``i`` counted from 0).

**The shift matrix.** For the sinusoidal table there is one matrix :math:`M(k)`, the same for
every :math:`p`, with :math:`PE(p + k) = M(k)\\,PE(p)` (:func:`shift_matrix`). It is block
diagonal; the block of pair :math:`i` acts on the pair :math:`(\\sin p\\theta_i, \\cos p\\theta_i)`:

.. math::

    \\begin{pmatrix} \\cos k\\theta_i & \\sin k\\theta_i \\\\ -\\sin k\\theta_i & \\cos k\\theta_i \\end{pmatrix},

a **clockwise** turn by :math:`k\\theta_i` in the plane of coordinates :math:`(2i, 2i+1)`: the
opposite direction to RoPE's :math:`R_k` (see ``book/notation.md``), because the table stores
:math:`(\\sin, \\cos)` and not :math:`(\\cos, \\sin)`. So ``shift_matrix(k, d) ==
rotation_matrix(-k, d) == rotation_matrix(k, d).T``.

:func:`shift_gap` is the shift test of chapter 3: how far a position encoding's logit moves when
both tokens move by the same amount (0 for an encoding that sees relative positions only).

:func:`additive_logit_terms` splits the attention logit of additive encodings into its four
terms (content-content, content-position, position-content, position-position).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ._checks import as_real_array, check_base, check_dim, check_int, check_positions, check_real
from .rope import frequencies

__all__ = [
    "ENCODINGS",
    "Encoding",
    "integer_encoding",
    "normalised_encoding",
    "binary_encoding",
    "learned_encoding",
    "sinusoidal_encoding",
    "sinusoidal_at",
    "shift_matrix",
    "additive_logit_terms",
    "shift_gap",
]


# --- validation ------------------------------------------------------------------------------






def _positions(n_positions: int) -> np.ndarray:
    return np.arange(n_positions, dtype=np.float64)


# --- the four tables -------------------------------------------------------------------------


def integer_encoding(n_positions: int, dim: int = 1) -> np.ndarray:
    """The raw position as a feature: ``PE(p) = p`` in every one of ``dim`` columns.

    Unique and length-independent, but unbounded: at position 1000 the "encoding" is a thousand
    times larger than a unit-scale token embedding it is added to.

    Parameters
    ----------
    n_positions : int
        Number of positions :math:`N >= 0` (rows).
    dim : int, default 1
        Number of identical columns (the width of the embedding it would be added to), >= 1.

    Returns
    -------
    numpy.ndarray, shape (n_positions, dim), float64
        ``out[p, j] == p``.
    """
    n_positions = check_int(n_positions, "n_positions", minimum=0)
    dim = check_int(dim, "dim", minimum=1)
    return np.repeat(_positions(n_positions)[:, None], dim, axis=1)


def normalised_encoding(n_positions: int, dim: int = 1) -> np.ndarray:
    """The position divided by the last position: ``PE(p) = p / (N - 1)``, in [0, 1].

    Bounded, but the same position gets a different value in sequences of different lengths,
    and the gap between neighbours, ``1 / (N - 1)``, shrinks as the sequence grows.

    Parameters
    ----------
    n_positions : int
        Number of positions :math:`N >= 0`. A single position (``N = 1``) is encoded as 0.
    dim : int, default 1
        Number of identical columns, >= 1.

    Returns
    -------
    numpy.ndarray, shape (n_positions, dim), float64
        ``out[p, j] == p / (n_positions - 1)`` (0 when ``n_positions == 1``).
    """
    n_positions = check_int(n_positions, "n_positions", minimum=0)
    dim = check_int(dim, "dim", minimum=1)
    return integer_encoding(n_positions, dim) / max(n_positions - 1, 1)


def binary_encoding(n_positions: int, n_bits: int | None = None) -> np.ndarray:
    """The bits of the position, least significant first: ``out[p, j] = floor(p / 2**j) mod 2``.

    Column ``j`` is a square wave of period ``2**(j + 1)`` positions: column 0 flips at every
    step, column 1 every two steps, and so on, like the wheels of an odometer.

    Parameters
    ----------
    n_positions : int
        Number of positions :math:`N >= 0`.
    n_bits : int, optional
        Number of bits (columns), >= 1 and large enough that ``2**n_bits >= n_positions`` (every
        position then has its own code). Default: the fewest bits that do, at least 1.

    Returns
    -------
    numpy.ndarray, shape (n_positions, n_bits), float64
        Entries 0.0 or 1.0.
    """
    n_positions = check_int(n_positions, "n_positions", minimum=0)
    needed = max(1, (n_positions - 1).bit_length())
    if n_bits is None:
        n_bits = needed
    n_bits = check_int(n_bits, "n_bits", minimum=1)
    if n_bits < needed:
        raise ValueError(
            f"n_bits={n_bits} gives only {2 ** n_bits} distinct codes for n_positions={n_positions}; "
            f"use n_bits >= {needed}"
        )
    p = np.arange(n_positions, dtype=np.int64)[:, None]
    j = np.arange(n_bits, dtype=np.int64)[None, :]
    return ((p >> j) & 1).astype(np.float64)


def learned_encoding(n_positions: int, dim: int, max_positions: int = 512, seed: int = 0) -> np.ndarray:
    """A stand-in for a learned position table: the first ``n_positions`` rows of a fixed table.

    Models such as BERT (512 rows) and GPT-2 (1024 rows) learn one free vector per position. The
    trained values are whatever training made them; what every such table shares is its shape:
    ``max_positions`` rows and nothing beyond. This function returns rows of one fixed table of
    independent normal values with standard deviation 0.02, drawn once from ``seed``, so a shorter
    table is always the start of a longer one.

    Parameters
    ----------
    n_positions : int
        Number of positions :math:`N`, ``0 <= N <= max_positions``.
    dim : int
        Width of the table, >= 1.
    max_positions : int, default 512
        Number of rows the table has (the longest sequence the model was trained for), >= 1.
    seed : int, default 0
        Seed of the random values (``numpy.random.default_rng``), >= 0.

    Returns
    -------
    numpy.ndarray, shape (n_positions, dim), float64
        ``learned_encoding(n, d)`` equals ``learned_encoding(max_positions, d)[:n]``.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If ``n_positions > max_positions`` (a learned table has no row there) or an argument is
        out of range.
    """
    n_positions = check_int(n_positions, "n_positions", minimum=0)
    dim = check_int(dim, "dim", minimum=1)
    max_positions = check_int(max_positions, "max_positions", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    if n_positions > max_positions:
        raise ValueError(
            f"n_positions={n_positions} exceeds max_positions={max_positions}: a learned table has "
            f"no row for positions >= {max_positions}"
        )
    table = np.random.default_rng(seed).normal(0.0, 0.02, size=(max_positions, dim))
    return table[:n_positions]


def sinusoidal_at(positions: Any, dim: int, base: float = 10000.0) -> np.ndarray:
    """Sinusoidal encoding of arbitrary (real, possibly negative) positions.

    ``out[..., 2i] = sin(p θ_i)`` and ``out[..., 2i + 1] = cos(p θ_i)`` with
    ``θ_i = base ** (-2i / dim)`` from :func:`rope_edu.frequencies`.

    Parameters
    ----------
    positions : array_like, shape (...)
        Positions (integers or finite reals; a scalar gives one vector).
    dim : int
        Even encoding width :math:`d`.
    base : float, default 10000.0
        Frequency base :math:`b > 1` (Vaswani et al. use 10000).

    Returns
    -------
    numpy.ndarray, shape (*positions.shape, dim), float64
    """
    dim = check_dim(dim)
    base = check_base(base)
    pos = check_positions(positions, np.shape(positions))
    angles = pos[..., None] * frequencies(dim, base)
    out = np.empty(pos.shape + (dim,), dtype=np.float64)
    out[..., 0::2] = np.sin(angles)
    out[..., 1::2] = np.cos(angles)
    return out


def sinusoidal_encoding(n_positions: int, dim: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal table of Vaswani et al. (2017) for positions ``0 .. n_positions - 1``.

    ``PE[p, 2i] = sin(p θ_i)``, ``PE[p, 2i + 1] = cos(p θ_i)``, ``θ_i = base ** (-2i / dim)``.
    Read pair ``i`` as a point on the unit circle: it starts at ``(0, 1)`` for ``p = 0`` and
    turns **clockwise** by ``θ_i`` per position (see :func:`shift_matrix`).

    Parameters
    ----------
    n_positions : int
        Number of positions :math:`N >= 0` (rows).
    dim : int
        Even encoding width :math:`d` (columns).
    base : float, default 10000.0
        Frequency base :math:`b > 1`.

    Returns
    -------
    numpy.ndarray, shape (n_positions, dim), float64
        Entries in [-1, 1]; every row has squared norm ``dim / 2``.

    Examples
    --------
    >>> sinusoidal_encoding(2, 2).round(4)
    array([[0.    , 1.    ],
           [0.8415, 0.5403]])
    """
    n_positions = check_int(n_positions, "n_positions", minimum=0)
    dim = check_dim(dim)
    base = check_base(base)
    return sinusoidal_at(_positions(n_positions), dim, base)


def shift_matrix(k: float, dim: int, base: float = 10000.0) -> np.ndarray:
    """The matrix :math:`M(k)` with ``PE(p + k) == M(k) @ PE(p)`` for every position ``p``.

    Block diagonal; the block of pair ``i`` (coordinates ``2i, 2i + 1``, holding
    ``(sin pθ_i, cos pθ_i)``) is::

        [[ cos kθ_i,  sin kθ_i],
         [-sin kθ_i,  cos kθ_i]]

    from ``sin(a + b) = sin a cos b + cos a sin b`` and ``cos(a + b) = cos a cos b - sin a sin b``
    with ``a = pθ_i``, ``b = kθ_i``. It turns each pair **clockwise** by ``kθ_i``: the inverse
    of RoPE's counter-clockwise :math:`R_k`, i.e. ``rotation_matrix(-k, dim, base=base)``.

    Parameters
    ----------
    k : float
        The shift (any finite real; negative shifts move back).
    dim : int
        Even encoding width :math:`d`.
    base : float, default 10000.0
        Frequency base :math:`b > 1`, as in :func:`sinusoidal_encoding`.

    Returns
    -------
    numpy.ndarray, shape (dim, dim), float64
        Orthogonal, independent of ``p``, with ``M(a) @ M(b) == M(a + b)``.
    """
    k = check_real(k, "k")
    dim = check_dim(dim)
    base = check_base(base)
    ang = k * frequencies(dim, base)
    c, s = np.cos(ang), np.sin(ang)
    a, b = np.arange(0, dim, 2), np.arange(1, dim, 2)
    mat = np.zeros((dim, dim))
    mat[a, a] = c
    mat[a, b] = s
    mat[b, a] = -s
    mat[b, b] = c
    return mat


# --- where absolute position leaks into the logit ----------------------------------------------


def additive_logit_terms(x_q: Any, x_k: Any, pe_q: Any, pe_k: Any, w_q: Any, w_k: Any) -> dict[str, np.ndarray]:
    """The four terms of the logit :math:`(x_m + p_m)^\\top W_q^\\top W_k (x_n + p_n)`.

    With :math:`A = W_q^\\top W_k` the logit of a query token (embedding :math:`x_m`, position
    vector :math:`p_m`) and a key token (:math:`x_n`, :math:`p_n`) expands into

    * ``"content"``: :math:`x_m^\\top A x_n` (no position),
    * ``"content_position"``: :math:`x_m^\\top A p_n` (the key's absolute position),
    * ``"position_content"``: :math:`p_m^\\top A x_n` (the query's absolute position),
    * ``"position"``: :math:`p_m^\\top A p_n` (both positions),

    whose sum is the full logit (returned as ``"total"``, computed from the sums
    :math:`x + p` directly, not by adding the terms). The logit is not divided by
    :math:`\\sqrt{d}`.

    Parameters
    ----------
    x_q, pe_q : array_like, shape (..., d_model)
        Query-side token embedding(s) and position vector(s).
    x_k, pe_k : array_like, shape (..., d_model)
        Key-side token embedding(s) and position vector(s). All four broadcast together.
    w_q, w_k : array_like, shape (d_head, d_model)
        Projections: the query is ``w_q @ (x_q + pe_q)``, the key ``w_k @ (x_k + pe_k)``.

    Returns
    -------
    dict of str to numpy.ndarray, each of the common broadcast shape of the four inputs' leading axes
        Keys ``"content"``, ``"content_position"``, ``"position_content"``, ``"position"``,
        ``"total"``.
    """
    names = ("x_q", "x_k", "pe_q", "pe_k")
    vecs = [as_real_array(v, n).astype(np.float64) for v, n in zip((x_q, x_k, pe_q, pe_k), names)]
    w_q = as_real_array(w_q, "w_q", min_ndim=2).astype(np.float64)
    w_k = as_real_array(w_k, "w_k", min_ndim=2).astype(np.float64)
    for w, n in ((w_q, "w_q"), (w_k, "w_k")):
        if w.ndim != 2:
            raise ValueError(f"{n} must be a matrix of shape (d_head, d_model), got shape {w.shape}")
    if w_q.shape != w_k.shape:
        raise ValueError(f"w_q and w_k must have the same shape (d_head, d_model), got {w_q.shape} and {w_k.shape}")
    d_model = w_q.shape[1]
    for v, n in zip(vecs, names):
        if v.shape[-1] != d_model:
            raise ValueError(f"{n} must have last axis d_model = {d_model} (w_q.shape[1]), got shape {v.shape}")
    try:
        xq, xk, pq, pk = np.broadcast_arrays(*vecs)  # every term gets the common shape
    except ValueError:
        raise ValueError(
            "leading axes of x_q, x_k, pe_q, pe_k do not broadcast: " + ", ".join(str(v.shape) for v in vecs)
        ) from None
    a = w_q.T @ w_k

    def bilinear(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.sum((u @ a) * v, axis=-1)

    return {
        "content": bilinear(xq, xk),
        "content_position": bilinear(xq, pk),
        "position_content": bilinear(pq, xk),
        "position": bilinear(pq, pk),
        "total": np.sum(((xq + pq) @ w_q.T) * ((xk + pk) @ w_k.T), axis=-1),
    }


# --- registry ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Encoding:
    """One absolute encoding the book compares.

    Attributes
    ----------
    name : str
        Key in :data:`ENCODINGS`.
    table : callable
        ``table(n_positions, dim) -> ndarray (n_positions, dim)`` (for ``"binary"``, ``dim`` is
        the number of bits).
    problem : str
        What goes wrong with it, in one line (``""`` for the sinusoidal table).
    max_positions : int or None
        The most positions ``table`` can encode (``None``: any number).
    """

    name: str
    table: Callable[[int, int], np.ndarray]
    problem: str
    max_positions: int | None = None


ENCODINGS: dict[str, Encoding] = {
    "integer": Encoding(
        "integer", integer_encoding,
        "unbounded: grows with the position and swamps the token embedding",
    ),
    "normalised": Encoding(
        "normalised", normalised_encoding,
        "depends on the sequence length: position p gets a different code in every length",
    ),
    "binary": Encoding(
        "binary", binary_encoding,
        "discrete jumps: neighbours can differ in many bits, and no fixed linear map sends p to p + 1",
    ),
    "learned": Encoding(
        "learned", learned_encoding,
        "a fixed number of rows: no code at all past the longest training sequence",
        max_positions=512,
    ),
    "sinusoidal": Encoding("sinusoidal", sinusoidal_encoding, ""),
}


def shift_gap(f_q: Callable[[np.ndarray, np.ndarray], Any], f_k: Callable[[np.ndarray, np.ndarray], Any],
              *, trials: int = 500, seed: int = 1, max_position: int = 50) -> float:
    """The shift test: the largest change of an encoding's logit when both tokens move together.

    Draws ``trials`` random 2-D queries ``q`` and keys ``k``, positions ``m, n`` and shifts ``s``
    (integers in ``[-max_position, max_position]``) and returns

    .. math::

        \\max \\big|\\langle f_q(q, m + s), f_k(k, n + s)\\rangle - \\langle f_q(q, m), f_k(k, n)\\rangle\\big|.

    An encoding whose logit depends on ``m - n`` only gives 0 (up to rounding); one that sees
    absolute positions (an additive table) gives a clearly positive number.

    Parameters
    ----------
    f_q, f_k : callable
        ``f(x, positions)``: the encoding of queries and of keys, taking vectors of shape
        ``(trials, 2)`` and integer positions of shape ``(trials,)`` and returning encoded vectors
        of shape ``(trials, 2)``.
    trials : int
        Number of random cases, at least 1.
    seed : int
        Seed of ``numpy.random.default_rng``: the same seed draws the same cases.
    max_position : int
        Positions and shifts are drawn from ``-max_position .. max_position``, at least 0.

    Returns
    -------
    float
        The largest absolute change of the logit over the cases.

    Examples
    --------
    >>> shift_gap(lambda x, p: x, lambda x, p: x)
    0.0
    """
    for name, f in (("f_q", f_q), ("f_k", f_k)):
        if not callable(f):
            raise TypeError(f"{name} must be a function f(x, positions), got {type(f).__name__}")
    trials = check_int(trials, "trials", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    max_position = check_int(max_position, "max_position", minimum=0)
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, trials, 2))
    m, n, s = rng.integers(-max_position, max_position + 1, size=(3, trials))

    def logits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        fq, fk = np.asarray(f_q(q, a), dtype=float), np.asarray(f_k(k, b), dtype=float)
        for name, out in (("f_q", fq), ("f_k", fk)):
            if out.shape != (trials, 2):
                raise ValueError(f"{name} must return encoded vectors of shape ({trials}, 2), got shape {out.shape}")
        return np.sum(fq * fk, axis=-1)

    return float(np.max(np.abs(logits(m + s, n + s) - logits(m, n))))
