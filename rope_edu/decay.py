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
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ._checks import as_real_array, check_choice, check_dim, check_positions
from .rope import LAYOUTS, frequencies

__all__ = [
    "wavelengths",
    "partial_sums",
    "relative_upper_bound",
    "pair_products",
    "pair_score",
    "score_upper_bound",
    "expected_score",
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
