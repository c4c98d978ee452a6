"""The relative schemes RoPE was chosen over, and RoPE with linear attention.

* :func:`shaw_relative_logits`: learned relative key embeddings (Shaw, Uszkoreit and Vaswani,
  2018): the logit of query :math:`i` and key :math:`j` is
  :math:`q_i^\\top (k_j + a_{\\mathrm{clip}(j - i, -K, K)})`, one learned vector per clipped offset.
* :func:`t5_relative_bucket`: T5's bucketed relative positions (Raffel et al., 2020): offsets map to
  ``num_buckets`` buckets, exact for small offsets and logarithmic up to ``max_distance``; each
  bucket has one learned scalar bias per head.
* :func:`linear_attention`: RoFormer's §3.3 (Su et al.): RoPE inside kernelised linear attention,
  rotating the feature-mapped queries and keys in the numerator only.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._checks import as_real_array, check_choice, check_dim, check_int
from .rope import apply_rope

__all__ = ["LINEAR_ATTENTION_FORMS", "linear_attention", "shaw_relative_logits", "t5_relative_bucket"]


def shaw_relative_logits(q: Any, k: Any, rel_keys: Any, *, max_distance: int) -> np.ndarray:
    """Logits :math:`q_i^\\top (k_j + a_{\\mathrm{clip}(j-i,-K,K)})` of Shaw et al. (unscaled).

    Parameters
    ----------
    q : array_like, shape (..., n, d)
        Queries at positions ``0 .. n-1``.
    k : array_like, shape (..., n, d)
        Keys at the same positions.
    rel_keys : array_like, shape (2 * max_distance + 1, d)
        Row ``r + max_distance`` is the learned vector :math:`a_r` for the clipped offset
        :math:`r = j - i \\in [-K, K]`.
    max_distance : int
        The clipping distance :math:`K \\ge 0`.

    Returns
    -------
    numpy.ndarray, shape (..., n, n), float64
        Computed as ``q kᵀ`` plus ``q · a`` gathered per offset: the (n, n, d) table of relative
        vectors is the memory cost the method is known for, and is built here on purpose.
    """
    q = as_real_array(q, "q", min_ndim=2).astype(np.float64)
    k = as_real_array(k, "k", min_ndim=2).astype(np.float64)
    K = check_int(max_distance, "max_distance", 0)
    a = as_real_array(rel_keys, "rel_keys", min_ndim=2).astype(np.float64)
    if q.shape[-2:] != k.shape[-2:]:
        raise ValueError(f"q and k must have the same (n, d) in their last two axes, got {q.shape} and {k.shape}")
    if a.shape != (2 * K + 1, q.shape[-1]):
        raise ValueError(
            f"rel_keys must have shape (2 * max_distance + 1, d) = ({2 * K + 1}, {q.shape[-1]}), got {a.shape}"
        )
    n = q.shape[-2]
    offset = np.clip(np.arange(n)[None, :] - np.arange(n)[:, None], -K, K) + K  # (n, n), j - i
    table = a[offset]  # (n, n, d): the pairwise table
    return q @ np.swapaxes(k, -1, -2) + np.einsum("...id,ijd->...ij", q, table)


def t5_relative_bucket(
    relative_position: Any,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    """T5's bucket of every relative position ``key - query``.

    Half of the buckets (per direction when ``bidirectional``) hold the exact offsets
    ``0 .. max_exact - 1``; the rest cover ``max_exact .. max_distance`` in logarithmically growing
    bins, and every offset at or beyond ``max_distance`` shares the last bucket (which starts
    earlier: bucket ``max_exact + j`` starts at ``ceil(max_exact * (max_distance / max_exact) **
    (j / (nb - max_exact)))``, so with T5's defaults the causal form's bucket 31 holds every
    offset from 113 on). A causal model
    (``bidirectional=False``) maps every key after the query to bucket 0.

    Parameters
    ----------
    relative_position : array_like of int
        ``key_position - query_position``.
    bidirectional : bool, default True
        Separate buckets for keys before and after the query (T5's encoder).
    num_buckets : int, default 32
        Total number of buckets (T5: 32), >= 2 (>= 4 when bidirectional).
    max_distance : int, default 128
        Offsets at or beyond this share the last bucket (T5: 128).

    Returns
    -------
    numpy.ndarray, same shape, int64
        Buckets in ``[0, num_buckets)``.
    """
    rel = np.asarray(relative_position)
    if rel.dtype.kind not in "iu":
        raise TypeError(f"relative_position must be an integer array (key - query offsets), got dtype {rel.dtype}")
    if not isinstance(bidirectional, (bool, np.bool_)):
        raise TypeError(f"bidirectional must be True or False, got {bidirectional!r}")
    nb = check_int(num_buckets, "num_buckets", 4 if bidirectional else 2)
    rel = rel.astype(np.int64)
    bucket = np.zeros(rel.shape, dtype=np.int64)
    if bidirectional:
        nb //= 2
        bucket += (rel > 0) * nb
        dist = np.abs(rel)
    else:
        dist = np.maximum(-rel, 0)
    max_exact = nb // 2
    md = check_int(max_distance, "max_distance", max_exact + 1)
    # Large offsets: max_exact + floor(log(dist / max_exact) / log(max_distance / max_exact) * (nb - max_exact)),
    # computed in float32 as T5 (Mesh TensorFlow and transformers) does, so bucket edges agree.
    with np.errstate(divide="ignore"):
        ratio = np.log(np.maximum(dist, 1).astype(np.float32) / np.float32(max_exact))
    scaled = ratio / np.float32(np.log(md / max_exact)) * np.float32(nb - max_exact)
    large = np.minimum(max_exact + scaled.astype(np.int64), nb - 1)
    return bucket + np.where(dist < max_exact, dist, large)


# --- RoPE with linear attention (RoFormer §3.3) -------------------------------------------------


def _elu_plus_one(x: np.ndarray) -> np.ndarray:
    # phi(x) = elu(x) + 1 > 0 (Katharopoulos et al. 2020), the feature map RoFormer's §3.3 uses.
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def _parallel(qf: np.ndarray, kf: np.ndarray, qr: np.ndarray, kr: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    num_w = qr @ np.swapaxes(kr, -1, -2)  # rotated numerator weights (may be negative)
    den_w = qf @ np.swapaxes(kf, -1, -2)  # unrotated, positive denominator
    if causal:
        keep = np.tril(np.ones(num_w.shape[-2:], dtype=bool))
        num_w = np.where(keep, num_w, 0.0)
        den_w = np.where(keep, den_w, 0.0)
    return (num_w @ v) / den_w.sum(-1, keepdims=True)


def _recurrent(qf: np.ndarray, kf: np.ndarray, qr: np.ndarray, kr: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    # Linear time: S = sum_j (R_j phi(k_j)) v_j^T and z = sum_j phi(k_j), as prefix sums when causal.
    outer = kr[..., :, :, None] * v[..., :, None, :]  # (..., n, d, d_v)
    if causal:
        S = np.cumsum(outer, axis=-3)
        z = np.cumsum(kf, axis=-2)
        num = np.einsum("...nd,...nde->...ne", qr, S)
        den = np.einsum("...nd,...nd->...n", qf, z)[..., None]
    else:
        S = outer.sum(-3)
        z = kf.sum(-2)
        num = qr @ S
        den = (qf @ z[..., :, None])
    return num / den


#: How to evaluate :func:`linear_attention`: ``"parallel"`` materialises the ``n x n`` weights
#: (quadratic, for checking); ``"recurrent"`` uses running sums (linear in ``n``).
LINEAR_ATTENTION_FORMS: dict[str, Callable[..., np.ndarray]] = {"parallel": _parallel, "recurrent": _recurrent}


def linear_attention(
    q: Any,
    k: Any,
    v: Any,
    positions: Any = None,
    *,
    causal: bool = True,
    base: float = 10000.0,
    form: str = "parallel",
) -> np.ndarray:
    """Linear attention with RoPE as in RoFormer §3.3 (feature map :math:`\\phi = \\mathrm{elu} + 1`).

    .. math:: \\mathrm{out}_i = \\frac{\\sum_j \\big(R_i\\phi(q_i)\\big)^\\top \\big(R_j\\phi(k_j)\\big)\\, v_j}
                                     {\\sum_j \\phi(q_i)^\\top \\phi(k_j)}

    with the sums over :math:`j \\le i` when ``causal``. The numerator is rotated, so its weights
    depend on :math:`j - i` only through the rotation and can be negative; the denominator is left
    unrotated so that it stays positive (the weights no longer form a probability distribution).

    Parameters
    ----------
    q, k : array_like, shape (..., n, d)
        Queries and keys (``d`` even), before the feature map.
    v : array_like, shape (..., n, d_v)
    positions : array_like, shape (n,), optional
        Token positions; default ``0 .. n-1``. Zeros switch RoPE off (plain linear attention).
    causal : bool, default True
    base : float, default 10000.0
    form : {"parallel", "recurrent"}, default "parallel"
        See :data:`LINEAR_ATTENTION_FORMS`; both give the same numbers.

    Returns
    -------
    numpy.ndarray, shape (..., n, d_v), float64
    """
    q = as_real_array(q, "q", min_ndim=2).astype(np.float64)
    k = as_real_array(k, "k", min_ndim=2).astype(np.float64)
    v = as_real_array(v, "v", min_ndim=2).astype(np.float64)
    check_dim(q.shape[-1], "q.shape[-1] (d)")
    if q.shape[-2:] != k.shape[-2:]:
        raise ValueError(f"q and k must have the same (n, d) in their last two axes, got {q.shape} and {k.shape}")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(f"v must have as many tokens as k (axis -2), got v.shape={v.shape} and k.shape={k.shape}")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    form = check_choice(form, LINEAR_ATTENTION_FORMS, "form")
    n = q.shape[-2]
    pos = np.arange(n) if positions is None else positions
    qf, kf = _elu_plus_one(q), _elu_plus_one(k)
    qr = apply_rope(qf, pos, base=base)
    kr = apply_rope(kf, pos, base=base)
    out = LINEAR_ATTENTION_FORMS[form](qf, kf, qr, kr, v, bool(causal))
    return out
