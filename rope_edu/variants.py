"""Variants of RoPE that change the rotation itself, as their public code does it.

* :func:`ntk_alpha_base`: Hunyuan's NTK-alpha, a larger base :math:`b\\,\\alpha^{d/(d-2)}`
  (transformers' ``hunyuan_v1_dense``, vLLM's ``DynamicNTKAlphaRotaryEmbedding``).
* :func:`rerope_distances`, :func:`leaky_rerope_logits`: ReRoPE and Leaky ReRoPE (Su,
  ``bojone/rerope``): distances up to a window are kept, longer ones are clipped (ReRoPE) or
  compressed by a factor (Leaky ReRoPE).
* :func:`fope_cos_sin`, :func:`apply_fope`: FoPE (Hua et al.; vLLM's ``FourierRotaryEmbedding``):
  each pair's cos and sin become a learned mix of several frequencies, and the frequencies too
  slow to complete a turn within the training length are set to zero. ``unkept="vllm"`` fills
  the pairs left over as vLLM 0.33 and the FoPE authors' reference code do (cos = sin = 1),
  not as cos 1, sin 0 (the formula's zero-phase reading).
* :func:`xdrope_angles`: XD-RoPE (Hunyuan-VL; vLLM's ``XDRotaryEmbedding`` before 0.33): consecutive
  blocks of pairs take their angle from different position axes.
* :func:`vo_rope_output`: VO-RoPE (Su): values are rotated by their position and the output back
  by the query's, so the output mixes values turned by the relative distance.
* :func:`pope_logits`: PoPE (Gopalakrishnan et al.): each component becomes a magnitude
  (softplus) whose phase comes from the position alone, plus an optional learned offset.
* :func:`path_logits`: PaTH attention (Yang et al.): the transform between a key and a query is a
  product of data-dependent Householder-like matrices, one per token between them.

Plain numpy; every function validates its arguments with :mod:`rope_edu._checks`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ._checks import (
    as_real_array,
    check_base,
    check_choice,
    check_dim,
    check_int,
    check_positions,
    check_real,
    finite_float64,
    real_array,
)
from .rope import frequencies

# What FoPE puts in the pairs whose frequency it drops: a zero frequency (cos 1, sin 0), or what
# vLLM 0.33's FourierRotaryEmbedding pads them with (F.pad(..., value=1) on both cos and sin).
_UNKEPT = {"identity": (1.0, 0.0), "vllm": (1.0, 1.0)}

__all__ = [
    "ntk_alpha_base",
    "rerope_distances",
    "leaky_rerope_logits",
    "fope_frequencies",
    "fope_cos_sin",
    "apply_fope",
    "xdrope_angles",
    "vo_rope_output",
    "pope_logits",
    "path_logits",
]


def ntk_alpha_base(base: float, alpha: float, dim: int) -> float:
    """Hunyuan's NTK-alpha base, :math:`b' = b\\,\\alpha^{d/(d-2)}`.

    Parameters
    ----------
    base : float
        The model's RoPE base :math:`b` (> 1).
    alpha : float
        ``rope_scaling["alpha"]`` (>= 1; 1 leaves the base unchanged).
    dim : int
        Number of rotated coordinates :math:`d` (even, >= 4).

    Returns
    -------
    float
        The new base; the frequencies are then :math:`b'^{-2i/d}` as for plain RoPE.

    Notes
    -----
    Its exponent is :math:`d/(d-2)`, the one of NTK-aware scaling (:func:`rope_edu.scaling.ntk_base`):
    the slowest pair, :math:`i = d/2 - 1`, turns :math:`\\alpha` times slower, the fastest not at all.
    """
    base = check_base(base)
    alpha = check_real(alpha, "alpha")
    if alpha < 1.0:
        raise ValueError(f"alpha must be >= 1 (1 leaves the base unchanged), got {alpha}")
    dim = check_dim(dim)
    if dim < 4:
        raise ValueError(f"dim must be >= 4 for NTK-alpha (its exponent is dim / (dim - 2)), got {dim}")
    return base * alpha ** (dim / (dim - 2))


def _window_and_factor(window: Any, factor: Any) -> tuple[int, float | None]:
    window = check_int(window, "window", minimum=1)
    if factor is None:
        return window, None
    factor = check_real(factor, "factor")
    if factor <= 1.0:
        raise ValueError(f"factor must be > 1 (or None for ReRoPE), got {factor}")
    return window, factor


def rerope_distances(query_positions: Any, key_positions: Any, window: int, factor: float | None = None) -> np.ndarray:
    """The relative distance each query-key pair is rotated by under ReRoPE or Leaky ReRoPE.

    Parameters
    ----------
    query_positions : array_like, shape (q,)
        Positions :math:`m` of the queries.
    key_positions : array_like, shape (k,)
        Positions :math:`n` of the keys.
    window : int
        :math:`w`: distances :math:`m - n < w` are kept as they are.
    factor : float or None, default None
        :math:`k > 1` for Leaky ReRoPE, where a distance :math:`t \\ge w` becomes
        :math:`w + (t - w)/k`; None for ReRoPE, where it becomes :math:`w`.

    Returns
    -------
    numpy.ndarray, shape (q, k), float64
        The distance each pair's score sees; NaN where the key comes after the query (a causal
        mask hides those pairs).
    """
    m = finite_float64(as_real_array(query_positions, "query_positions"), "query_positions")
    n = finite_float64(as_real_array(key_positions, "key_positions"), "key_positions")
    if m.ndim != 1 or n.ndim != 1:
        raise ValueError(f"query_positions and key_positions must be 1-d, got shapes {m.shape} and {n.shape}")
    window, factor = _window_and_factor(window, factor)
    t = m[:, None] - n[None, :]
    far = window + (t - window) / factor if factor is not None else np.full_like(t, float(window))
    out = np.where(t < window, t, far)
    return np.where(t < 0, np.nan, out)


def leaky_rerope_logits(
    q: Any, k: Any, positions: Any, window: int, factor: float, *, base: float = 10000.0
) -> np.ndarray:
    """Causal logits of Leaky ReRoPE computed as ``bojone/rerope`` does, with two RoPE passes.

    The first pass is plain RoPE. The second rotates keys at :math:`n` and queries at
    :math:`m + w(k-1)`, both with linear interpolation by :math:`k`, so that pair's angle is
    :math:`(m - n + w(k-1))/k = w + (m - n - w)/k`. Each pair takes the first pass's logit when
    :math:`m - n < w`, the second's otherwise.

    Parameters
    ----------
    q, k : array_like, shape (seq, dim)
        Unrotated queries and keys of one head, half-split layout.
    positions : array_like, shape (seq,)
        Their positions (the same for queries and keys).
    window : int
        :math:`w`.
    factor : float
        :math:`k > 1`.
    base : float, default 10000.0

    Returns
    -------
    numpy.ndarray, shape (seq, seq), float64
        Logits :math:`q_m \\cdot k_n` (unscaled); ``-inf`` above the diagonal.
    """
    from .rope import apply_rope

    q = finite_float64(as_real_array(q, "q", min_ndim=2), "q")
    k = finite_float64(as_real_array(k, "k", min_ndim=2), "k")
    if q.ndim != 2 or q.shape != k.shape:
        raise ValueError(f"q and k must both have shape (seq, dim), got {q.shape} and {k.shape}")
    dim = check_dim(q.shape[1], "q.shape[1]")
    pos = check_positions(positions, q.shape[:-1])
    if pos.shape != (q.shape[0],):
        raise ValueError(f"positions must have shape ({q.shape[0]},), got {pos.shape}")
    window, leak = _window_and_factor(window, factor)
    if leak is None:
        raise ValueError("factor must be a number > 1 for Leaky ReRoPE")
    factor = leak
    base = check_base(base)
    theta = frequencies(dim, base)
    near = apply_rope(q, pos, inv_freq=theta, layout="half") @ apply_rope(k, pos, inv_freq=theta, layout="half").T
    slow = theta / factor
    offset = window * (factor - 1)
    far = apply_rope(q, pos + offset, inv_freq=slow, layout="half") @ apply_rope(k, pos, inv_freq=slow, layout="half").T
    t = pos[:, None] - pos[None, :]
    logits = np.where(t < window, near, far)
    return np.where(t < 0, -np.inf, logits)


def fope_frequencies(dim: int, base: float, max_positions: int) -> tuple[np.ndarray, int]:
    """FoPE's kept frequencies: those that turn more than once in ``max_positions`` tokens.

    Parameters
    ----------
    dim : int
        Rotated coordinates :math:`d`.
    base : float
    max_positions : int
        The training length :math:`L` (``max_position_embeddings``).

    Returns
    -------
    inv_freq : numpy.ndarray, shape (kept,)
        The frequencies :math:`\\theta_i > 2\\pi/L`, fastest first.
    kept : int
        Their number; pairs ``kept .. dim//2 - 1`` get frequency 0 (they are not rotated).
    """
    theta = frequencies(check_dim(dim), check_base(base))
    max_positions = check_int(max_positions, "max_positions", minimum=1)
    kept = theta[theta > 2.0 * np.pi / max_positions]
    return kept, int(kept.size)


def _coef(value: Any, name: str, kept: int) -> np.ndarray:
    arr = finite_float64(real_array(value, name, "a real-valued array"), name)
    if arr.shape != (kept, kept):
        raise ValueError(f"{name} must have shape (kept, kept) = ({kept}, {kept}), got {arr.shape}")
    return arr


def fope_cos_sin(
    positions: Any,
    dim: int,
    base: float,
    max_positions: int,
    cos_coef: Any = None,
    sin_coef: Any = None,
    *,
    unkept: str = "identity",
) -> tuple[np.ndarray, np.ndarray]:
    """FoPE's cos and sin tables: each pair's entry is a mix of the kept frequencies.

    For pair :math:`j < \\text{kept}`: :math:`C_j(m) = \\sum_i A_{ij}\\cos(m\\theta_i)`,
    :math:`S_j(m) = \\sum_i B_{ij}\\sin(m\\theta_i)`; the other pairs have :math:`C = 1, S = 0`
    (``unkept="identity"``, frequency zero) or :math:`C = S = 1` (``unkept="vllm"``).

    Parameters
    ----------
    positions : array_like, shape (seq,)
    dim : int
    base : float
    max_positions : int
        Training length :math:`L` (see :func:`fope_frequencies`).
    cos_coef, sin_coef : array_like, shape (kept, kept), optional
        :math:`A` and :math:`B` (learned per key-value head in a model); identity when left out.
    unkept : {"identity", "vllm"}, default "identity"
        What the pairs past ``kept`` get. ``"identity"``: cos 1 and sin 0, no rotation (a zero
        phase, the formula's reading). ``"vllm"``: cos 1 and sin 1, as vLLM 0.33's
        ``FourierRotaryEmbedding`` and the FoPE authors' reference code
        (TsinghuaC3I/Fourier-Position-Embedding, ``olmo/model.py``) pad them: a fixed map (a
        turn by 45 degrees times :math:`\\sqrt 2`) that carries no position but doubles those
        pairs' share of a score. Use the padding the checkpoint was trained with.

    Returns
    -------
    cos, sin : numpy.ndarray, shape (seq, dim // 2)
    """
    pad_cos, pad_sin = _UNKEPT[check_choice(unkept, _UNKEPT, "unkept")]
    inv_freq, kept = fope_frequencies(dim, base, max_positions)
    pos = finite_float64(as_real_array(positions, "positions"), "positions")
    if pos.ndim != 1:
        raise ValueError(f"positions must be 1-d, got shape {pos.shape}")
    eye = np.eye(kept)
    a = eye if cos_coef is None else _coef(cos_coef, "cos_coef", kept)
    b = eye if sin_coef is None else _coef(sin_coef, "sin_coef", kept)
    angles = pos[:, None] * inv_freq
    cos = np.full((pos.size, dim // 2), pad_cos)
    sin = np.full((pos.size, dim // 2), pad_sin)
    cos[:, :kept] = np.cos(angles) @ a
    sin[:, :kept] = np.sin(angles) @ b
    return cos, sin


def apply_fope(
    x: Any,
    positions: Any,
    *,
    base: float,
    max_positions: int,
    cos_coef: Any = None,
    sin_coef: Any = None,
    unkept: str = "identity",
) -> np.ndarray:
    """Apply FoPE to ``x`` (half-split layout), as vLLM's ``FourierRotaryEmbedding`` does.

    Pair :math:`j` (coordinates :math:`j` and :math:`j + d/2`) becomes
    :math:`(x_j C_j - x_{j+d/2} S_j,\\; x_{j+d/2} C_j + x_j S_j)`.

    Parameters
    ----------
    x : array_like, shape (seq, dim)
    positions : array_like, shape (seq,)
    base, max_positions, cos_coef, sin_coef, unkept
        As for :func:`fope_cos_sin` (``unkept="vllm"`` for the tables of vLLM 0.33 and of
        FoPE's reference code).

    Returns
    -------
    numpy.ndarray, shape (seq, dim), float64
    """
    x = finite_float64(as_real_array(x, "x", min_ndim=2), "x")
    if x.ndim != 2:
        raise ValueError(f"x must have shape (seq, dim), got {x.shape}")
    dim = check_dim(x.shape[1], "x.shape[1]")
    check_positions(positions, x.shape[:-1])
    cos, sin = fope_cos_sin(positions, dim, base, max_positions, cos_coef, sin_coef, unkept=unkept)
    h = dim // 2
    a, b = x[:, :h], x[:, h:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=1)


def xdrope_angles(positions: Any, section: Sequence[int], dim: int, base: float = 10000.0) -> np.ndarray:
    """XD-RoPE's angles: block :math:`a` of ``section[a]`` consecutive pairs turns with axis :math:`a`.

    Parameters
    ----------
    positions : array_like, shape (axes, seq)
        One row of positions per axis (vLLM's Hunyuan-VL passed four, P/W/H/T); text tokens have
        the same position on every axis.
    section : sequence of int, length axes
        Pairs per axis, summing to ``dim // 2``.
    dim : int
    base : float, default 10000.0
        The base (already NTK-alpha-scaled in Hunyuan-VL, see :func:`ntk_alpha_base`).

    Returns
    -------
    numpy.ndarray, shape (seq, dim // 2), float64
        Angle of every pair; pass it through ``np.cos``/``np.sin`` or compare with
        :func:`rope_edu.rope_angles`.
    """
    dim = check_dim(dim)
    theta = frequencies(dim, check_base(base))
    pos = finite_float64(as_real_array(positions, "positions", min_ndim=2), "positions")
    if pos.ndim != 2:
        raise ValueError(f"positions must have shape (axes, seq), got {pos.shape}")
    sec = [check_int(s, "section entries", minimum=1) for s in section]
    if len(sec) != pos.shape[0]:
        raise ValueError(f"section has {len(sec)} entries but positions has {pos.shape[0]} axes")
    if sum(sec) != dim // 2:
        raise ValueError(f"section must sum to dim // 2 = {dim // 2}, got {sum(sec)}")
    axis = np.repeat(np.arange(len(sec)), sec)  # which axis each pair reads
    return pos[axis].T * theta


def vo_rope_output(weights: Any, v: Any, positions: Any, *, base: float = 10000.0, layout: str = "half") -> np.ndarray:
    """VO-RoPE: :math:`o_m = R_m^{\\top} \\sum_n a_{mn} R_n v_n = \\sum_n a_{mn} R_{n-m} v_n`.

    Parameters
    ----------
    weights : array_like, shape (q, k)
        Attention weights :math:`a_{mn}` (rows of a softmax, or any numbers).
    v : array_like, shape (k, dim)
        Values, unrotated.
    positions : array_like, shape (k,) or a pair of them
        Positions of the keys/values; the queries take the same ones when ``q == k``. Pass
        ``(query_positions, key_positions)`` for different ones.
    base : float, default 10000.0
    layout : {"half", "interleaved"}, default "half"

    Returns
    -------
    numpy.ndarray, shape (q, dim), float64
    """
    from .rope import apply_rope

    a = finite_float64(as_real_array(weights, "weights", min_ndim=2), "weights")
    val = finite_float64(as_real_array(v, "v", min_ndim=2), "v")
    if a.ndim != 2 or val.ndim != 2 or a.shape[1] != val.shape[0]:
        raise ValueError(f"weights must have shape (q, k) and v shape (k, dim), got {a.shape} and {val.shape}")
    check_dim(val.shape[1], "v.shape[1]")
    if isinstance(positions, tuple) and len(positions) == 2:
        qpos, kpos = positions
    else:
        if a.shape[0] != a.shape[1]:
            raise ValueError("positions must be (query_positions, key_positions) when weights is not square")
        qpos = kpos = positions
    kpos = check_positions(kpos, val.shape[:-1], "key positions")
    qpos = check_positions(qpos, (a.shape[0],), "query positions")
    mixed = a @ apply_rope(val, kpos, base=base, layout=layout)
    return apply_rope(mixed, -qpos, base=base, layout=layout)


def pope_logits(
    q: Any, k: Any, query_positions: Any, key_positions: Any, *, base: float = 10000.0, phase_bias: Any = None
) -> np.ndarray:
    """PoPE logits: :math:`\\sum_c \\mu^q_{m,c}\\,\\mu^k_{n,c} \\cos((m-n)\\theta_c + \\delta_c)`.

    Each of the ``dim`` components of a query or key becomes a magnitude
    :math:`\\mu = \\operatorname{softplus}(x_c) > 0` with phase :math:`m\\theta_c`, one frequency per
    component (:math:`\\theta_c = b^{-c/\\text{dim}}`): the content sets the magnitudes only, the
    position the phases only. Equivalently: RoPE on the ``2 * dim`` vector
    :math:`(\\mu_0, 0, \\mu_1, 0, \\dots)` in the interleaved layout.

    Parameters
    ----------
    q : array_like, shape (q, dim)
    k : array_like, shape (k, dim)
    query_positions : array_like, shape (q,)
    key_positions : array_like, shape (k,)
    base : float, default 10000.0
    phase_bias : array_like, shape (dim,), optional
        :math:`\\delta_c`, the paper's optional learned offset per component (0 when left out).
        With it each term peaks at the distance where :math:`(m-n)\\theta_c + \\delta_c` is a whole
        turn, and the content, through the magnitudes, weighs those peaks: the score need no
        longer be largest at distance 0. (The sign with which the paper adds it is not pinned here.)

    Returns
    -------
    numpy.ndarray, shape (q, k), float64
    """
    q = finite_float64(as_real_array(q, "q", min_ndim=2), "q")
    k = finite_float64(as_real_array(k, "k", min_ndim=2), "k")
    if q.ndim != 2 or k.ndim != 2 or q.shape[1] != k.shape[1]:
        raise ValueError(f"q and k must have shapes (q, dim) and (k, dim), got {q.shape} and {k.shape}")
    m = check_positions(query_positions, q.shape[:-1], "query_positions")
    n = check_positions(key_positions, k.shape[:-1], "key_positions")
    dim = q.shape[1]
    theta = frequencies(2 * dim, check_base(base))
    mq, mk = np.logaddexp(0.0, q), np.logaddexp(0.0, k)  # softplus
    phase = (m[:, None, None] - n[None, :, None]) * theta
    if phase_bias is not None:
        delta = finite_float64(real_array(phase_bias, "phase_bias", "a real-valued array"), "phase_bias")
        if delta.shape != (dim,):
            raise ValueError(f"phase_bias must have shape (dim,) = ({dim},), got {delta.shape}")
        phase = phase + delta
    return np.einsum("mc,nc,mnc->mn", mq, mk, np.cos(phase))


def path_logits(q: Any, k: Any, w: Any, beta: Any) -> np.ndarray:
    """PaTH attention's causal logits: :math:`s_{mn} = q_m^{\\top} H_m H_{m-1} \\cdots H_{n+1}\\, k_n`.

    Each token :math:`t` brings a Householder-like matrix :math:`H_t = I - \\beta_t\\, \\hat w_t \\hat
    w_t^{\\top}` (:math:`\\hat w_t = w_t / \\lVert w_t \\rVert`); a key is multiplied by the matrix of
    every token that comes after it, up to the query's, the latest on the left (as a cached key would
    be, one new token at a time). :math:`s_{mm} = q_m^{\\top} k_m`. There are no positions: the transform
    between a key and a query depends on the tokens between them, not on how many there are. With
    every :math:`\\beta_t = 0` the logits are plain dot products; :math:`\\beta_t = 2` is a reflection.

    Parameters
    ----------
    q, k, w : array_like, shape (seq, dim)
        Queries, keys and the direction of each token's matrix (a zero row is refused).
    beta : array_like, shape (seq,)
        The strength of each token's matrix, in [0, 2] (the paper's :math:`2\\,\\sigma(\\cdot)`).

    Returns
    -------
    numpy.ndarray, shape (seq, seq), float64
        Row :math:`m`, column :math:`n`; ``-inf`` above the diagonal (keys after the query).
    """
    q = finite_float64(as_real_array(q, "q", min_ndim=2), "q")
    k = finite_float64(as_real_array(k, "k", min_ndim=2), "k")
    w = finite_float64(as_real_array(w, "w", min_ndim=2), "w")
    if q.ndim != 2 or q.shape != k.shape or q.shape != w.shape:
        raise ValueError(f"q, k and w must have the same shape (seq, dim), got {q.shape}, {k.shape} and {w.shape}")
    b = finite_float64(real_array(beta, "beta", "a real-valued array"), "beta")
    if b.shape != q.shape[:1]:
        raise ValueError(f"beta must have shape (seq,) = ({q.shape[0]},), got {b.shape}")
    if b.size and (b.min() < 0 or b.max() > 2):
        raise ValueError(f"beta must lie in [0, 2], got values from {b.min()} to {b.max()}")
    norms = np.linalg.norm(w, axis=1)
    if np.any(norms == 0):
        raise ValueError("w must have no zero row (each token's matrix needs a direction)")
    unit = w / norms[:, None]
    seq = q.shape[0]
    out = np.full((seq, seq), -np.inf)
    for n in range(seq):
        key = k[n].copy()
        out[n, n] = q[n] @ key
        for m in range(n + 1, seq):
            key = key - b[m] * unit[m] * (unit[m] @ key)  # H_m applied to the key carried so far
            out[m, n] = q[m] @ key
    return out
