"""ALiBi: attention with linear biases (Press, Smith and Lewis, 2022).

ALiBi adds no vector to the tokens and rotates nothing. Head :math:`h` adds
:math:`-m_h\\,(i - j)` to the logit of query :math:`i` and key :math:`j \\le i` (a causal model),
a penalty growing linearly with the distance, with a fixed slope :math:`m_h` per head:

.. math:: m_h = 2^{-8h/H}, \\qquad h = 1, \\dots, H

for :math:`H` heads when :math:`H` is a power of two (the slopes form a geometric sequence from
:math:`2^{-8/H}` down to :math:`2^{-8}`). For other :math:`H` the paper's reference code takes the
:math:`2^{\\lfloor\\log_2 H\\rfloor}` slopes of the nearest smaller power of two and fills the
remaining heads with every other slope of the next power of two (:func:`alibi_slopes`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._checks import as_real_array, check_int

__all__ = ["alibi_slopes", "alibi_bias"]


def _power_of_two_slopes(n: int) -> np.ndarray:
    # 2^(-8h/n), h = 1..n
    return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)


def alibi_slopes(num_heads: int) -> np.ndarray:
    """The ALiBi slope :math:`m_h` of every head.

    Parameters
    ----------
    num_heads : int
        Number of attention heads :math:`H \\ge 1`.

    Returns
    -------
    numpy.ndarray, shape (num_heads,), float64
        For :math:`H = 2^k`: :math:`2^{-8h/H}`, :math:`h = 1..H`. Otherwise, with
        :math:`P = 2^{\\lfloor \\log_2 H \\rfloor}`: the :math:`P` slopes for :math:`P` heads,
        followed by the slopes number 1, 3, 5, ... (counting from 1) of :math:`2P` heads, as many as
        needed (what BLOOM and MPT do).

    Examples
    --------
    >>> alibi_slopes(8).tolist()
    [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]
    >>> alibi_slopes(6).tolist()  # 4 heads' slopes, then slopes 1 and 3 of 8 heads
    [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]
    """
    n = check_int(num_heads, "num_heads", 1)
    p = 1 << (n.bit_length() - 1)  # largest power of two <= n
    slopes = _power_of_two_slopes(p)
    if p == n:
        return slopes
    extra = _power_of_two_slopes(2 * p)[0::2][: n - p]
    return np.concatenate([slopes, extra])


def alibi_bias(slopes: Any, query_positions: Any, key_positions: Any = None) -> np.ndarray:
    """The ALiBi bias :math:`-m_h\\,(i - j)` for every head, query and key.

    Add it to the attention logits of a causal model before the softmax (together with the causal
    mask: ALiBi itself does not mask). For keys after the query (:math:`j > i`) the bias is
    positive; a causal mask removes those entries anyway.

    Parameters
    ----------
    slopes : array_like, shape (heads,)
        Slopes :math:`m_h`, e.g. ``alibi_slopes(heads)``.
    query_positions : array_like, shape (n_queries,)
        Positions :math:`i` of the queries.
    key_positions : array_like, shape (n_keys,), optional
        Positions :math:`j` of the keys; default: the query positions.

    Returns
    -------
    numpy.ndarray, shape (heads, n_queries, n_keys), float64
    """
    m = as_real_array(slopes, "slopes").astype(np.float64)
    if m.ndim != 1:
        raise ValueError(f"slopes must have shape (heads,), got shape {m.shape}")
    if not np.all(np.isfinite(m)) or np.any(m < 0):
        raise ValueError("slopes must be finite and >= 0 (a penalty that grows with distance)")
    qp = as_real_array(query_positions, "query_positions").astype(np.float64)
    if qp.ndim != 1:
        raise ValueError(f"query_positions must have shape (n_queries,), got shape {qp.shape}")
    kp = qp if key_positions is None else as_real_array(key_positions, "key_positions").astype(np.float64)
    if kp.ndim != 1:
        raise ValueError(f"key_positions must have shape (n_keys,), got shape {kp.shape}")
    if not (np.all(np.isfinite(qp)) and np.all(np.isfinite(kp))):
        raise ValueError("query_positions and key_positions must be finite")
    distance = qp[:, None] - kp[None, :]
    return -m[:, None, None] * distance[None]
