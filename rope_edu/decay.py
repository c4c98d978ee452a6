"""Wavelengths and the long-term decay analysis of RoPE (RoFormer, section 3.4.3).

Write a query and a key as ``dim // 2`` complex numbers, one per rotated pair:
:math:`\\tilde q_i = q_a + i\\,q_b` for the coordinates :math:`(a, b)` of pair :math:`i`.
With :math:`h_i = \\tilde q_i \\overline{\\tilde k_i}` (:func:`pair_products`) the RoPE score of a
query at position :math:`m` and a key at position :math:`n` is

.. math::

    (R_m q)^\\top (R_n k) = \\operatorname{Re} \\sum_{i=0}^{d/2-1} h_i\\, e^{\\mathrm{i}(m-n)\\theta_i}

(:func:`pair_score`). RoFormer bounds its modulus by Abel summation with the partial sums
:math:`S_j = \\sum_{i<j} e^{\\mathrm{i}(m-n)\\theta_i}` (:func:`partial_sums`):

.. math::

    \\Bigl|\\sum_i h_i e^{\\mathrm{i}(m-n)\\theta_i}\\Bigr|
    \\le \\max_i |h_{i+1} - h_i| \\sum_{j=1}^{d/2} |S_j|, \\qquad h_{d/2} := 0

(:func:`score_upper_bound`), and plots the content-free factor
:math:`\\frac{1}{d/2}\\sum_j |S_j|` against the distance (:func:`relative_upper_bound`,
RoFormer's Figure 2). :func:`expected_score` gives the mean score of random correlated queries
and keys, which is what a typical score does (as opposed to the worst case the bound covers).

Men et al. (2024) ask that a key similar to the query beat an unrelated key on average at every
distance of the context. With unit-variance coordinates the similar key's mean advantage at distance
:math:`\\delta` is :math:`\\sum_{i<d/2} \\cos\\delta\\theta_i` per unit of :math:`2\\sigma^2`
(:func:`similarity_advantage`); asking that it stay non-negative at :math:`\\delta = 0, \\dots, L-1` gives,
for a base, the longest context it serves (:func:`max_context`) and, for a context, the smallest
base that serves it (:func:`min_base`).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ._checks import as_real_array, check_choice, check_dim, check_int, check_inv_freq, check_positions
from .rope import LAYOUTS, frequencies

__all__ = [
    "wavelengths",
    "partial_sums",
    "relative_upper_bound",
    "pair_products",
    "pair_score",
    "score_upper_bound",
    "expected_score",
    "similarity_advantage",
    "max_context",
    "min_base",
]


def _distances(distance: Any) -> np.ndarray:
    """``distance`` as a float64 array of finite reals (any shape, a scalar gives shape ())."""
    return check_positions(distance, np.shape(distance), name="distance")


def _check_h(h: Any) -> np.ndarray:
    arr = np.asarray(h)
    if arr.dtype.kind not in "iufc" or arr.dtype == np.bool_:
        raise TypeError(f"h must be a real or complex array of pair products, got dtype {arr.dtype}")
    if arr.ndim < 1 or arr.shape[-1] < 1:
        raise ValueError(f"h must have shape (..., dim // 2) with dim // 2 >= 1, got shape {arr.shape}")
    arr = arr.astype(np.complex128, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError("h must be finite, got NaN or infinity")
    return arr


def _broadcast_rows(h: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Check that ``dist`` broadcasts against ``h.shape[:-1]``; return it with a trailing axis."""
    try:
        np.broadcast_shapes(dist.shape, h.shape[:-1])
    except ValueError:
        raise ValueError(
            f"distance of shape {dist.shape} does not broadcast against h.shape[:-1] = {h.shape[:-1]}"
        ) from None
    return dist[..., None]


def wavelengths(dim: int, base: float = 10000.0) -> np.ndarray:
    """Wavelengths :math:`\\lambda_i = 2\\pi / \\theta_i = 2\\pi\\, b^{2i/d}` of the pairs, in positions.

    Pair ``i`` is back where it started after :math:`\\lambda_i` positions. The shortest is
    :math:`2\\pi` (pair 0); the longest is :math:`2\\pi\\, b^{(d-2)/d}`, a factor
    :math:`b^{2/d}` short of :math:`2\\pi b`.

    Parameters
    ----------
    dim : int
        Even dimension :math:`d`.
    base : float, default 10000.0
        The base :math:`b > 1`.

    Returns
    -------
    numpy.ndarray, shape (dim // 2,), float64
        Increasing wavelengths, in positions (tokens).
    """
    return 2.0 * np.pi / frequencies(dim, base)


def partial_sums(distance: Any, dim: int, base: float = 10000.0) -> np.ndarray:
    """RoFormer's partial sums :math:`S_j = \\sum_{i=0}^{j-1} e^{\\mathrm{i}\\,\\delta\\,\\theta_i}`, ``j = 1 .. dim // 2``.

    Parameters
    ----------
    distance : array_like, shape (...)
        Relative distances :math:`\\delta = m - n` (integers or reals, any sign).
    dim : int
        Even dimension :math:`d`.
    base : float, default 10000.0
        The base :math:`b > 1` of :math:`\\theta_i = b^{-2i/d}`.

    Returns
    -------
    numpy.ndarray, shape (..., dim // 2), complex128
        ``out[..., j - 1]`` is :math:`S_j`; a cumulative sum over the pairs, vectorised over
        the distances.
    """
    dist = _distances(distance)
    theta = frequencies(dim, base)
    return np.cumsum(np.exp(1j * dist[..., None] * theta), axis=-1)


def relative_upper_bound(distance: Any, dim: int, base: float = 10000.0) -> np.ndarray:
    """RoFormer's relative upper bound :math:`\\frac{1}{d/2} \\sum_{j=1}^{d/2} |S_j|` (its Figure 2).

    The content-free factor of the long-term decay bound (see :func:`score_upper_bound`). It
    equals :math:`(d/2 + 1)/2` at distance 0, is even in the distance, and tends to shrink as
    the distance grows, but not monotonically: it oscillates.

    Parameters
    ----------
    distance : array_like, shape (...)
        Relative distances :math:`\\delta = m - n` (integers or reals, any sign).
    dim : int
        Even dimension :math:`d`.
    base : float, default 10000.0
        The base :math:`b > 1`.

    Returns
    -------
    numpy.ndarray, shape distance.shape, float64

    Examples
    --------
    >>> relative_upper_bound([0, 100], dim=128).round(3)
    array([32.5  , 10.227])
    """
    return np.abs(partial_sums(distance, dim, base)).mean(axis=-1)


def pair_products(q: Any, k: Any, layout: str = "interleaved") -> np.ndarray:
    """The products :math:`h_i = \\tilde q_i\\, \\overline{\\tilde k_i}` of the complex pairs of ``q`` and ``k``.

    Pair ``i`` of a vector ``x`` is the complex number :math:`x_a + \\mathrm{i} x_b`, where
    ``(a, b)`` are the coordinates the layout groups into pair ``i``. Then
    ``(apply_rope(q, m) * apply_rope(k, n)).sum(-1) == pair_score(h, m - n).real``.

    Parameters
    ----------
    q, k : array_like, shape (..., dim)
        Queries and keys (broadcast against each other). ``dim`` must be even.
    layout : {"interleaved", "half"}, default "interleaved"
        Which coordinates form a pair (see :data:`rope_edu.LAYOUTS`).

    Returns
    -------
    numpy.ndarray, shape (..., dim // 2), complex128
    """
    q = as_real_array(q, "q")
    k = as_real_array(k, "k")
    layout = check_choice(layout, LAYOUTS, "layout")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last dimension, got q.shape={q.shape} and k.shape={k.shape}")
    dim = check_dim(q.shape[-1], "q.shape[-1] (dim)")
    try:
        np.broadcast_shapes(q.shape, k.shape)
    except ValueError:
        raise ValueError(f"q of shape {q.shape} and k of shape {k.shape} do not broadcast") from None
    a, b = LAYOUTS[layout].pairs(dim)
    qc = q[..., a] + 1j * q[..., b]
    kc = k[..., a] + 1j * k[..., b]
    return qc * np.conj(kc)


def pair_score(h: Any, distance: Any, base: float = 10000.0) -> np.ndarray:
    """The complex sum :math:`\\sum_i h_i e^{\\mathrm{i}\\,\\delta\\,\\theta_i}`; its real part is the RoPE score.

    With ``h = pair_products(q, k)`` and ``distance = m - n``, the real part equals
    :math:`(R_m q)^\\top (R_n k)`.

    Parameters
    ----------
    h : array_like, shape (..., dim // 2)
        Pair products (real or complex).
    distance : array_like
        Relative distances :math:`\\delta = m - n`, broadcastable against ``h.shape[:-1]``.
    base : float, default 10000.0
        The base :math:`b > 1`; ``dim`` is ``2 * h.shape[-1]``.

    Returns
    -------
    numpy.ndarray, shape broadcast(h.shape[:-1], distance.shape), complex128
    """
    h = _check_h(h)
    dist = _broadcast_rows(h, _distances(distance))
    theta = frequencies(2 * h.shape[-1], base)
    return np.sum(h * np.exp(1j * dist * theta), axis=-1)


def score_upper_bound(h: Any, distance: Any, base: float = 10000.0) -> np.ndarray:
    """RoFormer's bound :math:`\\max_i |h_{i+1} - h_i| \\cdot \\sum_{j=1}^{d/2} |S_j|` on ``|pair_score(h, distance)|``.

    Obtained by Abel summation with :math:`h_{d/2} := 0`, so the maximum runs over
    ``i = 0 .. d/2 - 1`` and includes :math:`|h_{d/2-1}|`.

    Parameters
    ----------
    h : array_like, shape (..., dim // 2)
        Pair products (real or complex), e.g. from :func:`pair_products`.
    distance : array_like
        Relative distances, broadcastable against ``h.shape[:-1]``.
    base : float, default 10000.0
        The base :math:`b > 1`; ``dim`` is ``2 * h.shape[-1]``.

    Returns
    -------
    numpy.ndarray, shape broadcast(h.shape[:-1], distance.shape), float64
        Never smaller than ``abs(pair_score(h, distance, base))``.
    """
    h = _check_h(h)
    dist = _broadcast_rows(h, _distances(distance))[..., 0]
    dim = 2 * h.shape[-1]
    padded = np.concatenate([h, np.zeros(h.shape[:-1] + (1,), dtype=h.dtype)], axis=-1)
    max_step = np.abs(np.diff(padded, axis=-1)).max(axis=-1)
    total = np.abs(partial_sums(dist, dim, base)).sum(axis=-1)
    return max_step * total


def expected_score(distance: Any, dim: int, base: float = 10000.0, correlation: float = 1.0) -> np.ndarray:
    """Mean RoPE score :math:`\\mathbb{E}[q^\\top R_\\delta k] = \\rho\\, \\operatorname{tr} R_\\delta = 2\\rho \\sum_i \\cos(\\delta\\theta_i)`.

    For random vectors with :math:`q \\sim \\mathcal{N}(0, I_d)` and
    :math:`k = \\rho q + \\sqrt{1-\\rho^2}\\,\\varepsilon`, :math:`\\varepsilon \\sim \\mathcal{N}(0, I_d)`
    independent of :math:`q` (so :math:`\\mathbb{E}[k q^\\top] = \\rho I`):
    :math:`\\mathbb{E}[q^\\top R_\\delta k] = \\operatorname{tr}(R_\\delta\\,\\mathbb{E}[k q^\\top])
    = \\rho \\operatorname{tr} R_\\delta`. Independent vectors (:math:`\\rho = 0`) have mean
    score 0 at every distance; :math:`\\rho = 1` (``q == k``) gives
    :math:`2 \\operatorname{Re} S_{d/2}`, which shrinks with distance on average.

    Parameters
    ----------
    distance : array_like, shape (...)
        Relative distances :math:`\\delta` (any sign; the result is even in it).
    dim : int
        Even dimension :math:`d`.
    base : float, default 10000.0
        The base :math:`b > 1`.
    correlation : float, default 1.0
        :math:`\\rho \\in [-1, 1]`, the correlation of each coordinate of ``q`` with the same
        coordinate of ``k``.

    Returns
    -------
    numpy.ndarray, shape distance.shape, float64
    """
    if isinstance(correlation, (bool, np.bool_)) or not isinstance(correlation, numbers.Real):
        raise TypeError(f"correlation must be a real number in [-1, 1], got {correlation!r}")
    rho = float(correlation)
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"correlation must be in [-1, 1], got {rho}")
    dist = _distances(distance)
    theta = frequencies(dim, base)
    return 2.0 * rho * np.cos(dist[..., None] * theta).sum(axis=-1)


# --- Men et al.'s criterion: the base bounds the context -----------------------------------------


def _criterion_frequencies(dim: int, base: float, rotary_dim: int | None, inv_freq: Any) -> np.ndarray:
    """The ``dim // 2`` frequencies of the criterion's sum: the rotated pairs', then zeros."""
    dim = check_dim(dim)
    if inv_freq is not None:
        if rotary_dim is not None:
            raise ValueError("give rotary_dim or inv_freq, not both")
        if base != 10000.0:
            raise ValueError(f"give base or inv_freq, not both: inv_freq sets every frequency, so base={base!r} "
                             "would be ignored")
        arr = np.asarray(inv_freq)
        if arr.ndim != 1 or not 1 <= arr.shape[0] <= dim // 2:
            raise ValueError(f"inv_freq must have shape (k,) with 1 <= k <= dim // 2 = {dim // 2}, "
                             f"got shape {arr.shape}")
        rotated = check_inv_freq(arr, 2 * arr.shape[0])
    else:
        rot = dim if rotary_dim is None else check_dim(rotary_dim, "rotary_dim")
        if rot > dim:
            raise ValueError(f"rotary_dim must be <= dim = {dim}, got {rot}")
        rotated = frequencies(rot, base)
    return np.concatenate([rotated, np.zeros(dim // 2 - rotated.shape[0])])


def similarity_advantage(distance: Any, dim: int, base: float = 10000.0, *, rotary_dim: int | None = None,
                         inv_freq: Any = None) -> np.ndarray:
    """Men et al.'s criterion :math:`A(\\delta) = \\sum_{i=0}^{d/2-1} \\cos\\delta\\theta_i`.

    Men et al. write it :math:`B_{m,\\theta}` with :math:`m` the distance; it is called
    :math:`A` here because :math:`B(\\delta)` is RoFormer's bound (:func:`relative_upper_bound`).

    For a query :math:`q` with independent coordinates of variance :math:`\\sigma^2`, a similar key
    :math:`q + \\varepsilon` and an unrelated key :math:`k` (:math:`\\varepsilon`, :math:`k` independent
    of :math:`q`, :math:`\\varepsilon` of mean 0, :math:`k` of the same mean as :math:`q`), the similar
    key's mean score advantage at distance :math:`\\delta` is :math:`2\\sigma^2 A(\\delta)`; for
    :math:`\\sigma = 1` it is ``expected_score(distance, dim, base, correlation=1.0)``. Pairs that do
    not rotate (partial rotary, p-RoPE) have :math:`\\theta_i = 0` and add 1 at every distance.

    Parameters
    ----------
    distance : array_like, shape (...)
        Relative distances :math:`\\delta` (any sign; the result is even in it).
    dim : int
        Even head dimension :math:`d`: the sum runs over all :math:`d/2` pairs of the head.
    base : float, default 10000.0
        The base :math:`b > 1` of :math:`\\theta_i = b^{-2i/d_{\\text{rot}}}`.
    rotary_dim : int, optional
        How many of the ``dim`` coordinates rotate (even, default ``dim``); the other pairs have
        frequency 0.
    inv_freq : array_like, shape (k,), optional
        The rotated pairs' frequencies instead of ``base`` and ``rotary_dim`` (a scaled model's,
        :meth:`rope_edu.RopeSpec.inv_freq`), ``1 <= k <= dim // 2``; the other ``dim // 2 - k``
        pairs have frequency 0, and so do entries that are 0 (proportional RoPE). Leave ``base``
        at its default and ``rotary_dim`` unset when giving it (else ValueError).

    Returns
    -------
    numpy.ndarray, shape distance.shape, float64
    """
    theta = _criterion_frequencies(dim, base, rotary_dim, inv_freq)
    dist = _distances(distance)
    return np.cos(dist[..., None] * theta).sum(axis=-1)


def _advantage_range(theta: np.ndarray, start: int, stop: int,
                     slope_weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """:math:`\\sum_i \\cos m\\theta_i` for the integers ``start <= m < stop``, as one matrix product.

    With :math:`m = s + j` (block starts :math:`s`, offsets :math:`0 \\le j < C`),
    :math:`\\sum_i \\cos m\\theta_i = \\operatorname{Re} \\sum_i e^{\\mathrm{i} j\\theta_i} e^{\\mathrm{i} s\\theta_i}`:
    a (C, d/2) by (d/2, blocks) complex product, every angle computed exactly in float64. With
    ``slope_weights`` :math:`w_i` also :math:`\\sum_i w_i \\sin m\\theta_i` times :math:`m` (else None).
    """
    n = stop - start
    width = 64
    starts = start + width * np.arange(-(-n // width), dtype=np.float64)
    offsets = np.outer(np.arange(width), theta)
    cos_j, sin_j = np.cos(offsets), np.sin(offsets)
    # products of at most 2**18 multiply-adds: OpenBLAS runs them on one thread, which on a busy
    # machine is many times faster than its threads waiting for each other
    chunk = max(1, 2**18 // (width * theta.shape[0]))
    values, sines = [], []
    for k in range(0, starts.shape[0], chunk):
        angles = np.outer(theta, starts[k:k + chunk])
        cos_s, sin_s = np.cos(angles), np.sin(angles)
        values.append((cos_j @ cos_s - sin_j @ sin_s).T.reshape(-1))
        if slope_weights is not None:
            w = slope_weights[:, None]
            sines.append((sin_j @ (w * cos_s) + cos_j @ (w * sin_s)).T.reshape(-1))
    f = np.concatenate(values)[:n]
    if slope_weights is None:
        return f, None
    return f, np.concatenate(sines)[:n] * (start + np.arange(n))


def _first_negative(theta: np.ndarray, stop: int, first_block: int = 1024,
                    slope_weights: np.ndarray | None = None) -> tuple[int | None, np.ndarray, np.ndarray | None]:
    """First m < stop with a negative criterion; the criterion (and slope) up to the end of that block."""
    values: list[np.ndarray] = []
    slopes: list[np.ndarray] = []  # with slope_weights only
    start, size = 0, first_block
    while start < stop:
        end = min(stop, start + size)
        v, g = _advantage_range(theta, start, end, slope_weights)
        values.append(v)
        if g is not None:
            slopes.append(g)
        negative = np.flatnonzero(v < 0)
        if negative.size:
            return start + int(negative[0]), np.concatenate(values), (
                None if slope_weights is None else np.concatenate(slopes))
        start, size = end, size * 4
    return None, np.zeros(0), None


def max_context(dim: int, base: float = 10000.0, *, rotary_dim: int | None = None, inv_freq: Any = None,
                limit: int = 2**24) -> int | None:
    """The longest context a base serves by Men et al.'s criterion: the first distance where it fails.

    Returns the smallest integer distance :math:`\\delta \\ge 0` with
    :math:`A(\\delta) = \\sum_{i<d/2} \\cos\\delta\\theta_i < 0` (:func:`similarity_advantage`): a context
    of :math:`L` tokens has distances :math:`0, \\dots, L-1`, so the criterion holds for every
    :math:`L` up to the returned value and fails beyond it. The value is not monotone in the base:
    a larger base can serve a shorter context.

    Parameters
    ----------
    dim : int
        Even head dimension :math:`d`.
    base : float, default 10000.0
        The base :math:`b > 1`.
    rotary_dim : int, optional
        Rotated coordinates (default ``dim``); the other pairs have frequency 0.
    inv_freq : array_like, shape (k,), optional
        The rotated pairs' frequencies instead of ``base`` and ``rotary_dim`` (a scaled model's),
        ``1 <= k <= dim // 2``; the other pairs have frequency 0. Not together with a ``base`` other
        than the default or with ``rotary_dim`` (ValueError).
    limit : int, default 2**24
        Distances searched: ``0 .. limit - 1``.

    Returns
    -------
    int or None
        The first failing distance, or None when the criterion holds at every distance below
        ``limit``. It is None whatever ``limit`` when at least half of the pairs do not rotate: the
        zero-frequency pairs then add at least as much as the rotating ones can take away.

    Examples
    --------
    >>> max_context(128, 10_000.0), max_context(128, 500_000.0)
    (1707, 18438)
    >>> max_context(96, rotary_dim=24) is None    # GPT-NeoX: a quarter of each head rotates
    True
    """
    theta = _criterion_frequencies(dim, base, rotary_dim, inv_freq)
    limit = check_int(limit, "limit", 1)
    if np.count_nonzero(theta == 0) >= np.count_nonzero(theta):
        return None
    first, _, _ = _first_negative(theta, limit)
    return first


def min_base(context: int, dim: int, *, rtol: float = 1e-7) -> float:
    """The smallest base that serves ``context`` tokens by Men et al.'s criterion (full RoPE).

    The infimum of the bases :math:`b > 1` with :math:`\\sum_{i<d/2} \\cos m\\, b^{-2i/d} \\ge 0` for
    every :math:`m = 0, \\dots, L-1`. The bases that pass are not an interval: above the returned
    value some bases fail again, and near it the passing windows can be narrower than
    :math:`10^{-3}` relative, so a base rounded to two digits can fail.

    The search sweeps :math:`x = \\ln b` upwards from 0 and proves each step. Where the criterion
    :math:`f(m) < 0` at distance :math:`m` for the base :math:`b`, it stays negative for every larger
    base up to :math:`x + \\Delta`, the first root of :math:`f + f'\\Delta + \\tfrac12 M\\Delta^2`, with
    :math:`f' = m \\sum_i w_i\\theta_i \\sin m\\theta_i` its slope in :math:`x` (:math:`w_i = 2i/d`) and
    :math:`M = m^2 \\sum_i (w_i\\theta_i)^2 + m \\sum_i w_i^2\\theta_i \\ge |f''|` on the step (the
    :math:`\\theta_i` only shrink as the base grows); the sweep jumps by the largest such step over
    the distances it has computed. Steps shorter than ``rtol`` (in :math:`\\ln b`) are taken as
    ``rtol``, so a passing window narrower than that could be stepped over, and the result is at
    most a factor :math:`e^{\\text{rtol}}` above the edge of the window it finds. The cost grows
    faster than :math:`L^2`: about a second for :math:`L = 4096`, minutes for :math:`L = 2^{16}`.

    Parameters
    ----------
    context : int
        The context length :math:`L \\ge 1`.
    dim : int
        Even head dimension :math:`d` (every pair rotates).
    rtol : float, default 1e-7
        The smallest step, relative; in (0, 0.1].

    Returns
    -------
    float
        The smallest base that passes (1.0 for ``context <= 2``, where every base passes).

    Examples
    --------
    >>> print(f"{min_base(1024, 128):.6g}")
    4293.44
    """
    context = check_int(context, "context", 1)
    dim = check_dim(dim)
    if isinstance(rtol, (bool, np.bool_)) or not isinstance(rtol, numbers.Real):
        raise TypeError(f"rtol must be a real number in (0, 0.1], got {rtol!r}")
    if not 0.0 < float(rtol) <= 0.1:
        raise ValueError(f"rtol must be in (0, 0.1], got {rtol}")
    if context <= 2:
        return 1.0
    weights = 2.0 * np.arange(dim // 2) / dim
    log_b = 0.0
    while True:
        b = float(np.exp(log_b))
        theta = b ** -weights
        first, f, slope = _first_negative(theta, context, min(1024, context), weights * theta)
        if first is None:
            return b
        bad = f < 0
        m = np.flatnonzero(bad).astype(np.float64)
        f, slope = f[bad], slope[bad]
        curvature = m**2 * float(np.sum((weights * theta) ** 2)) + m * float(np.sum(weights**2 * theta))
        step = (np.sqrt(slope**2 - 2.0 * curvature * f) - slope) / curvature
        log_b += max(float(np.max(step)) * (1.0 - 1e-9), float(rtol))
