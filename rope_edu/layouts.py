"""Implementations and layouts: the same RoPE written three ways, and how they relate.

Chapter 6 of the book. :func:`rope_edu.apply_rope` is the package's fast kernel; this module
holds the *teaching* implementations found in real code bases, each written the way its
original is, in numpy:

* :func:`dense_rope`: multiply every vector by the dense :math:`d \\times d` matrix
  :math:`R_m`; :math:`O(d^2)` per vector;
* :func:`rope_complex`: the interleaved layout as complex arithmetic, as in Meta's LLaMA
  reference code (``torch.polar``, ``torch.view_as_complex``); :math:`O(d)`;
* :func:`rope_rotate_half`: the half-split layout with a full-width cos/sin table and
  :func:`rotate_half`, as in GPT-NeoX and Hugging Face ``transformers``; :math:`O(d)`.

It also holds the tools around them: :func:`cos_sin_table` (the full-width tables of each
layout), :func:`interleaved_to_half` and :func:`half_to_interleaved` (convert q/k projection
weights from one layout to the other, as the LLaMA-to-Hugging-Face conversion does),
:func:`buggy_rope_mixed_layouts` (a deliberate bug: one layout's table with the other layout's
rotation) and :func:`check_rotation` / :func:`is_rope_consistent` (the check that catches it).

Index conventions are those of :mod:`rope_edu.rope`: pair :math:`i` turns at
:math:`\\theta_i = b^{-2i/d}` and, read as a complex number (first coordinate real), is multiplied
by :math:`e^{\\mathrm{i} m\\theta_i}` (counter-clockwise).
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ._checks import as_real_array, check_base, check_choice, check_dim, check_positions, float_dtype
from .rope import LAYOUTS, resolve_inv_freq, layout_permutation, rope_angles

__all__ = [
    "TABLE_LAYOUTS",
    "TableLayout",
    "IMPLEMENTATIONS",
    "RopeCheck",
    "freqs_cis",
    "rope_complex",
    "rotate_half",
    "rotate_every_two",
    "cos_sin_table",
    "rope_from_table",
    "rope_rotate_half",
    "rope_half_split",
    "dense_rope",
    "buggy_rope_mixed_layouts",
    "interleaved_to_half",
    "half_to_interleaved",
    "check_rotation",
    "is_rope_consistent",
    "time_implementations",
]


# --- small shared checks ----------------------------------------------------------------------


def _check_x(x: Any, name: str = "x") -> tuple[np.ndarray, int]:
    """``x`` as a real array with an even last axis; returns the array and ``dim``."""
    arr = as_real_array(x, name)
    dim = check_dim(arr.shape[-1], f"{name}.shape[-1] (dim)")
    return arr, dim


def _work(x: np.ndarray) -> np.dtype:
    """Floating dtype the computation runs in (float16 is promoted to float32, like apply_rope)."""
    return np.result_type(float_dtype(x.dtype), np.float32)


# --- the interleaved layout as complex numbers (Meta's LLaMA reference code) -----------------


def freqs_cis(positions: Any, dim: int, *, base: float = 10000.0, inv_freq: Any = None) -> np.ndarray:
    """The unit complex numbers :math:`e^{\\mathrm{i} m \\theta_i}` for every position and pair.

    The table Meta's reference code builds once with ``torch.polar(ones, angles)`` and calls
    ``freqs_cis`` ("cos + i sin").

    Parameters
    ----------
    positions : array_like, shape (...)
        Positions :math:`m` (integers or reals).
    dim : int
        Even dimension :math:`d`.
    base : float, default 10000.0
        Frequency base, used when ``inv_freq`` is not given.
    inv_freq : array_like, shape (dim // 2,), optional
        Frequencies to use instead of ``frequencies(dim, base)``.

    Returns
    -------
    numpy.ndarray, shape (..., dim // 2), complex128
        Entry ``[..., i]`` is ``exp(1j * m * theta_i)``; every entry has modulus 1.
    """
    dim = check_dim(dim)
    pos = np.asarray(positions)
    pos = check_positions(pos, pos.shape)
    return np.exp(1j * rope_angles(pos, resolve_inv_freq(dim, base, inv_freq)))


def rope_complex(x: Any, positions: Any, *, base: float = 10000.0, inv_freq: Any = None) -> np.ndarray:
    """RoPE in the interleaved layout, written as complex multiplication (Meta's LLaMA style).

    Coordinates ``(x[2i], x[2i+1])`` are read as the complex number ``x[2i] + 1j * x[2i+1]``,
    multiplied by ``exp(1j * m * theta_i)``, and written back as real and imaginary parts.
    Equal to ``apply_rope(x, positions, layout="interleaved")``.

    Parameters
    ----------
    x : array_like, shape (..., seq, dim)
        Queries or keys; ``dim`` even.
    positions : array_like, shape (seq,) or broadcastable to x.shape[:-1]
        Position of every token.
    base, inv_freq
        As in :func:`freqs_cis`.

    Returns
    -------
    numpy.ndarray, shape x.shape
        Floating input keeps its dtype; integer input gives float64.
    """
    x, dim = _check_x(x)
    pos = check_positions(positions, x.shape[:-1])
    rot = freqs_cis(pos, dim, base=base, inv_freq=inv_freq)       # (..., dim/2) complex
    pairs = x.astype(np.float64).reshape(*x.shape[:-1], dim // 2, 2)  # (..., dim/2, 2)
    z = pairs[..., 0] + 1j * pairs[..., 1]                          # one complex number per pair
    zr = z * rot                                                    # the whole rotation
    out = np.stack([zr.real, zr.imag], axis=-1).reshape(x.shape)    # back to interleaved reals
    return out.astype(float_dtype(x.dtype), copy=False)


# --- full-width cos/sin tables and the "rotate" partners -----------------------------------


def rotate_half(x: Any) -> np.ndarray:
    """``[x1, x2] -> [-x2, x1]`` with ``x1, x2`` the two halves of the last axis.

    Hugging Face's helper of the same name. It pairs coordinate ``i`` with ``i + d/2``
    (not ``2i`` with ``2i + 1``): ``x * cos + rotate_half(x) * sin`` with a ``"half"`` table
    turns every pair ``(x[i], x[i + d/2])`` counter-clockwise.

    Parameters
    ----------
    x : array_like, shape (..., dim)
        ``dim`` even.

    Returns
    -------
    numpy.ndarray, shape x.shape
    """
    x, dim = _check_x(x)
    x = x.astype(np.result_type(x.dtype, np.int8), copy=False)  # signed, so -x is exact
    h = dim // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def rotate_every_two(x: Any) -> np.ndarray:
    """``[x0, x1, x2, x3, ...] -> [-x1, x0, -x3, x2, ...]``: the interleaved partner of :func:`rotate_half`.

    (GPT-J's name.) ``x * cos + rotate_every_two(x) * sin`` with an ``"interleaved"`` table
    turns every pair ``(x[2i], x[2i+1])`` counter-clockwise.

    Parameters
    ----------
    x : array_like, shape (..., dim)
        ``dim`` even.

    Returns
    -------
    numpy.ndarray, shape x.shape
    """
    x, _ = _check_x(x)
    x = x.astype(np.result_type(x.dtype, np.int8), copy=False)  # signed, so -x is exact
    out = np.empty_like(x)
    out[..., 0::2] = -x[..., 1::2]
    out[..., 1::2] = x[..., 0::2]
    return out


@dataclass(frozen=True)
class TableLayout:
    """How a layout spreads the ``dim // 2`` angles over a full-width table, and its partner.

    Attributes
    ----------
    spread : callable
        ``spread(angles)``: shape ``(..., dim // 2)`` to ``(..., dim)``; entry ``j`` of the result
        holds the angle of the pair that coordinate ``j`` belongs to.
    partner : callable
        ``partner(x)``: moves each coordinate's pair partner into its place, with the sign that
        makes ``x * cos + partner(x) * sin`` a counter-clockwise rotation.
    freq_index : callable
        ``freq_index(dim)``: for each coordinate ``j``, the index ``i`` of the frequency its table
        entry holds.
    """

    spread: Callable[[np.ndarray], np.ndarray]
    partner: Callable[[Any], np.ndarray]
    freq_index: Callable[[int], np.ndarray]


#: Full-width tables: interleaved repeats each angle twice ``[a0, a0, a1, a1, ...]``; half-split
#: repeats the whole list ``[a0, a1, ..., a0, a1, ...]`` (Hugging Face's ``cat((freqs, freqs))``).
TABLE_LAYOUTS: dict[str, TableLayout] = {
    "interleaved": TableLayout(
        spread=lambda a: np.repeat(a, 2, axis=-1),
        partner=rotate_every_two,
        freq_index=lambda dim: np.arange(dim) // 2,
    ),
    "half": TableLayout(
        spread=lambda a: np.concatenate([a, a], axis=-1),
        partner=rotate_half,
        freq_index=lambda dim: np.arange(dim) % (dim // 2),
    ),
}


def cos_sin_table(
    positions: Any, dim: int, *, base: float = 10000.0, layout: str = "half", inv_freq: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Full-width ``cos`` and ``sin`` tables of the angles :math:`m\\theta_i`, in one layout.

    ``"interleaved"`` repeats each angle twice, ``[m θ0, m θ0, m θ1, m θ1, ...]``; ``"half"``
    repeats the list, ``[m θ0, ..., m θ_{d/2-1}, m θ0, ..., m θ_{d/2-1}]``. A table must be used
    with the rotation of the same layout (:func:`rope_from_table`); mixing them is the bug of
    :func:`buggy_rope_mixed_layouts`.

    Parameters
    ----------
    positions : array_like, shape (...)
        Positions :math:`m`.
    dim : int
        Even dimension :math:`d`.
    base : float, default 10000.0
    layout : {"interleaved", "half"}, default "half"
    inv_freq : array_like, shape (dim // 2,), optional

    Returns
    -------
    (cos, sin) : two numpy.ndarray, shape (..., dim), float64
    """
    dim = check_dim(dim)
    layout = check_choice(layout, TABLE_LAYOUTS, "layout")
    pos = np.asarray(positions)
    pos = check_positions(pos, pos.shape)
    angles = TABLE_LAYOUTS[layout].spread(rope_angles(pos, resolve_inv_freq(dim, base, inv_freq)))
    return np.cos(angles), np.sin(angles)


def _check_table(cos: Any, sin: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cos = as_real_array(cos, "cos")
    sin = as_real_array(sin, "sin")
    if cos.shape != sin.shape:
        raise ValueError(f"cos and sin must have the same shape, got cos.shape={cos.shape} and sin.shape={sin.shape}")
    if cos.shape[-1] != x.shape[-1]:
        raise ValueError(
            f"cos and sin must be full-width tables with last axis dim = {x.shape[-1]} (see cos_sin_table), "
            f"got cos.shape={cos.shape}"
        )
    try:
        ok = np.broadcast_shapes(cos.shape, x.shape) == x.shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"cos of shape {cos.shape} does not broadcast to x.shape = {x.shape}")
    return cos, sin


def rope_from_table(x: Any, cos: Any, sin: Any, *, layout: str = "half") -> np.ndarray:
    """``x * cos + partner(x) * sin``: the rotation of ``layout`` driven by a precomputed table.

    Correct only when ``cos, sin`` come from ``cos_sin_table(..., layout=layout)``; any table is
    accepted (that is how the classic bug happens).

    Parameters
    ----------
    x : array_like, shape (..., seq, dim)
    cos, sin : array_like, shape broadcastable to x.shape, last axis dim
    layout : {"interleaved", "half"}, default "half"
        Which partner function pairs the coordinates (:func:`rotate_every_two` or :func:`rotate_half`).

    Returns
    -------
    numpy.ndarray, shape x.shape
    """
    x, _ = _check_x(x)
    layout = check_choice(layout, TABLE_LAYOUTS, "layout")
    cos, sin = _check_table(cos, sin, x)
    work = _work(x)
    xw = x.astype(work, copy=False)
    out = xw * cos.astype(work, copy=False) + TABLE_LAYOUTS[layout].partner(xw) * sin.astype(work, copy=False)
    return out.astype(float_dtype(x.dtype), copy=False)


def rope_rotate_half(x: Any, cos: Any, sin: Any) -> np.ndarray:
    """Hugging Face style RoPE: ``x * cos + rotate_half(x) * sin`` with a ``"half"`` table.

    Equal to ``apply_rope(x, positions, layout="half")`` when
    ``cos, sin = cos_sin_table(positions, dim, layout="half")``.

    Parameters
    ----------
    x : array_like, shape (..., seq, dim)
    cos, sin : array_like, shape broadcastable to x.shape, last axis dim

    Returns
    -------
    numpy.ndarray, shape x.shape
    """
    return rope_from_table(x, cos, sin, layout="half")


def rope_half_split(x: Any, positions: Any, *, base: float = 10000.0, inv_freq: Any = None) -> np.ndarray:
    """Half-split RoPE from positions: the ``"half"`` table, then :func:`rope_rotate_half`.

    Parameters
    ----------
    x : array_like, shape (..., seq, dim)
    positions : array_like, shape (seq,) or broadcastable to x.shape[:-1]
    base, inv_freq
        As in :func:`cos_sin_table`.

    Returns
    -------
    numpy.ndarray, shape x.shape
    """
    x, dim = _check_x(x)
    pos = check_positions(positions, x.shape[:-1])
    cos, sin = cos_sin_table(pos, dim, base=base, layout="half", inv_freq=inv_freq)
    return rope_rotate_half(x, cos, sin)


def dense_rope(
    x: Any, positions: Any, *, base: float = 10000.0, layout: str = "interleaved", inv_freq: Any = None
) -> np.ndarray:
    """RoPE as a dense matrix-vector product ``R_m @ x`` for every token: :math:`O(d^2)` per vector.

    Builds one :math:`d \\times d` matrix per position (as :func:`rope_edu.rotation_matrix`, but
    for all positions at once) and multiplies. For teaching and for cost comparisons only.

    Parameters
    ----------
    x : array_like, shape (..., seq, dim)
    positions : array_like, shape (seq,) or broadcastable to x.shape[:-1]
    base, layout, inv_freq
        As in :func:`rope_edu.apply_rope`.

    Returns
    -------
    numpy.ndarray, shape x.shape
    """
    x, dim = _check_x(x)
    layout = check_choice(layout, LAYOUTS, "layout")
    pos = check_positions(positions, x.shape[:-1])
    ang = rope_angles(pos, resolve_inv_freq(dim, base, inv_freq))  # (..., dim/2)
    cos, sin = np.cos(ang), np.sin(ang)
    a, b = LAYOUTS[layout].pairs(dim)
    mats = np.zeros(pos.shape + (dim, dim))
    mats[..., a, a] = cos
    mats[..., a, b] = -sin
    mats[..., b, a] = sin
    mats[..., b, b] = cos
    out = np.matmul(mats, x.astype(np.float64)[..., None])[..., 0]
    return out.astype(float_dtype(x.dtype), copy=False)


# --- the classic bug -------------------------------------------------------------------------

_OTHER = {"interleaved": "half", "half": "interleaved"}


def buggy_rope_mixed_layouts(
    x: Any, positions: Any, *, base: float = 10000.0, rotation: str = "half"
) -> np.ndarray:
    """A DELIBERATE BUG, for demonstration: one layout's rotation with the other layout's table.

    With the default ``rotation="half"`` this is ``x * cos + rotate_half(x) * sin`` where
    ``cos, sin`` repeat each angle twice (the ``"interleaved"`` table). Pair ``(i, i + d/2)``
    then reads two different angles, so the map is not a rotation: norms change and scores stop
    depending on ``m - n`` only. Never use it except to see what goes wrong; for ``dim == 2``
    the two tables coincide and the bug is invisible.

    Parameters
    ----------
    x : array_like, shape (..., seq, dim)
    positions : array_like, shape (seq,) or broadcastable to x.shape[:-1]
    base : float, default 10000.0
    rotation : {"interleaved", "half"}, default "half"
        The layout of the rotation; the table is built for the other one.

    Returns
    -------
    numpy.ndarray, shape x.shape
    """
    x, dim = _check_x(x)
    rotation = check_choice(rotation, TABLE_LAYOUTS, "rotation")
    pos = check_positions(positions, x.shape[:-1])
    cos, sin = cos_sin_table(pos, dim, base=base, layout=_OTHER[rotation])
    return rope_from_table(x, cos, sin, layout=rotation)


# --- converting projection weights between layouts -----------------------------------------


def _check_weight(w: Any, n_heads: Any) -> tuple[np.ndarray, int, int]:
    w = as_real_array(w, "w")
    if w.ndim != 2:
        raise ValueError(
            f"w must be a 2-D projection weight of shape (n_heads * head_dim, in_features), got a {w.ndim}-d array "
            f"(for a bias of shape (n,), pass b[:, None])"
        )
    if isinstance(n_heads, (bool, np.bool_)) or not isinstance(n_heads, numbers.Integral):
        raise TypeError(f"n_heads must be a positive integer, got {n_heads!r} of type {type(n_heads).__name__}")
    n_heads = int(n_heads)
    if n_heads <= 0:
        raise ValueError(f"n_heads must be a positive integer, got {n_heads}")
    rows = w.shape[0]
    if rows % n_heads:
        raise ValueError(f"n_heads ({n_heads}) must divide w.shape[0] = {rows} (rows = n_heads * head_dim)")
    head_dim = check_dim(rows // n_heads, f"head_dim (= w.shape[0] // n_heads = {rows} // {n_heads})")
    return w, n_heads, head_dim


def _permute_rows(w: np.ndarray, n_heads: int, head_dim: int, perm: np.ndarray) -> np.ndarray:
    heads = w.reshape(n_heads, head_dim, w.shape[1])  # head h owns rows h*head_dim .. (h+1)*head_dim - 1
    return heads[:, perm, :].reshape(w.shape)


def interleaved_to_half(w: Any, n_heads: int) -> np.ndarray:
    """Reorder the output rows of a q or k projection so an interleaved model runs half-split.

    Within each head, row ``j`` of the result is row ``P[j]`` of ``w`` with
    ``P = layout_permutation(head_dim) = [0, 2, ..., head_dim - 2, 1, 3, ..., head_dim - 1]``:
    the result computes ``q' = q[..., P]`` head by head, and with
    ``R_half(m) = Π R_int(m) Πᵀ`` (``Π`` the permutation matrix with ``(Π q)_j = q_{P[j]}``)
    every attention score is unchanged:
    ``(R_half(m) Π q)ᵀ (R_half(n) Π k) = (R_int(m) q)ᵀ (R_int(n) k)``. This is the row
    permutation the LLaMA-to-Hugging-Face weight conversion applies to ``wq`` and ``wk``.
    Apply it to both W_q and W_k (with their own head counts under grouped-query attention);
    W_v and W_o are left alone.

    Parameters
    ----------
    w : array_like, shape (n_heads * head_dim, in_features)
        A projection weight in the ``y = x @ w.T`` convention (``torch.nn.Linear.weight``).
    n_heads : int
        Number of heads the rows are split into (``n_kv_heads`` for ``W_k`` under GQA).
        ``head_dim = w.shape[0] // n_heads`` must be even.

    Returns
    -------
    numpy.ndarray, shape w.shape, dtype w.dtype
        A new array.
    """
    w, n_heads, head_dim = _check_weight(w, n_heads)
    return _permute_rows(w, n_heads, head_dim, layout_permutation(head_dim))


def half_to_interleaved(w: Any, n_heads: int) -> np.ndarray:
    """The inverse of :func:`interleaved_to_half`: rows ``P⁻¹`` = ``argsort(P)`` within each head.

    Parameters
    ----------
    w : array_like, shape (n_heads * head_dim, in_features)
    n_heads : int

    Returns
    -------
    numpy.ndarray, shape w.shape, dtype w.dtype
    """
    w, n_heads, head_dim = _check_weight(w, n_heads)
    return _permute_rows(w, n_heads, head_dim, np.argsort(layout_permutation(head_dim)))


# --- the one-line check ------------------------------------------------------------------------


@dataclass(frozen=True)
class RopeCheck:
    """What :func:`check_rotation` measured. All errors are relative (divided by the norms).

    Attributes
    ----------
    norm_error : float
        ``max | ||fn(x, m)|| / ||x|| - 1 |``: zero for any rotation.
    shift_error : float
        ``max |<fn(q, m+s), fn(k, n+s)> - <fn(q, m), fn(k, n)>| / (||q|| ||k||)``: zero when scores
        depend on ``m - n`` only.
    position_effect : float
        ``max |<fn(q, m), fn(k, n)> - <q, k>| / (||q|| ||k||)``: zero would mean ``fn`` ignores
        positions (the identity passes the two checks above).
    tol : float
        Tolerance used for :attr:`ok`.
    """

    norm_error: float
    shift_error: float
    position_effect: float
    tol: float

    @property
    def ok(self) -> bool:
        """Norms kept, scores relative, and positions do matter."""
        return self.norm_error <= self.tol and self.shift_error <= self.tol and self.position_effect > self.tol


def _call(fn: Callable[..., Any], x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    out = np.asarray(fn(x, pos))
    if out.shape != x.shape or out.dtype.kind not in "iuf" or not np.all(np.isfinite(out)):
        raise ValueError(
            f"fn(x, positions) must return a finite real array of x's shape {x.shape}, "
            f"got shape {out.shape} and dtype {out.dtype}"
        )
    return out.astype(np.float64)


def check_rotation(
    fn: Callable[[np.ndarray, np.ndarray], Any],
    dim: int = 8,
    *,
    n_positions: int = 16,
    shift: int = 1000,
    tol: float = 1e-8,
    seed: int = 0,
) -> RopeCheck:
    """Test the two properties every RoPE implementation has, whatever its layout.

    Rotates a random query ``q`` and key ``k`` at positions ``0 .. n_positions - 1`` and at the
    same positions plus ``shift``, and measures (1) whether norms are kept and (2) whether the
    score matrix ``S[m, n] = <fn(q, m), fn(k, n)>`` depends on ``m - n`` only (it must be
    constant along its diagonals and unchanged by the shift). A layout mix-up fails both.

    A pass is necessary, not sufficient: a correct rotation with wrong frequencies (say, the
    exponent's sign dropped) passes; compare with :func:`rope_edu.apply_rope` for those.

    Parameters
    ----------
    fn : callable
        ``fn(x, positions)`` with ``x`` of shape ``(seq, dim)`` and ``positions`` of shape ``(seq,)``
        (integers), returning the rotated ``x``.
    dim : int, default 8
        Even dimension, at least 4 (in 2 dimensions both layouts are the same, so a mix-up
        cannot show).
    n_positions : int, default 16
        Number of consecutive positions tried, at least 2.
    shift : int, default 1000
        Offset added to every position for the shift test (non-zero).
    tol : float, default 1e-8
        Tolerance on the relative errors (loosen it for float32 implementations).
    seed : int, default 0
        Seed of the random ``q`` and ``k``.

    Returns
    -------
    RopeCheck
        The three measured numbers; ``.ok`` is the verdict.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable fn(x, positions), got {type(fn).__name__}")
    dim = check_dim(dim)
    if dim < 4:
        raise ValueError(f"dim must be at least 4 (in 2 dimensions both layouts coincide and a mix-up cannot show), got {dim}")
    for name, val, low in (("n_positions", n_positions, 2), ("shift", shift, None), ("seed", seed, 0)):
        if isinstance(val, (bool, np.bool_)) or not isinstance(val, numbers.Integral):
            raise TypeError(f"{name} must be an integer, got {val!r} of type {type(val).__name__}")
        if (low is not None and val < low) or (name == "shift" and val == 0):
            raise ValueError(f"{name} must be {'non-zero' if low is None else f'at least {low}'}, got {val}")
    if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, numbers.Real):
        raise TypeError(f"tol must be a real number between 0 and 1, got {tol!r} of type {type(tol).__name__}")
    if not 0 < float(tol) < 1:
        raise ValueError(f"tol must be a real number between 0 and 1, got {tol!r}")

    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, dim))
    near = np.arange(n_positions)
    far = near + int(shift)
    qs = np.tile(q, (n_positions, 1))
    ks = np.tile(k, (n_positions, 1))
    q_near, q_far = _call(fn, qs, near), _call(fn, qs, far)
    k_near, k_far = _call(fn, ks, near), _call(fn, ks, far)
    q_norm, k_norm = np.linalg.norm(q), np.linalg.norm(k)
    norm_ratios = np.concatenate([
        np.linalg.norm(np.concatenate([q_near, q_far]), axis=-1) / q_norm,
        np.linalg.norm(np.concatenate([k_near, k_far]), axis=-1) / k_norm,
    ])
    scale = q_norm * k_norm
    s_near = q_near @ k_near.T  # S[m, n] = <fn(q, m), fn(k, n)>
    s_far = q_far @ k_far.T
    diagonal = np.abs(s_near[1:, 1:] - s_near[:-1, :-1]).max()
    shifted = np.abs(s_far - s_near).max()
    return RopeCheck(
        norm_error=float(np.abs(norm_ratios - 1.0).max()),
        shift_error=float(max(diagonal, shifted) / scale),
        position_effect=float(np.abs(s_near - q @ k).max() / scale),
        tol=float(tol),
    )


def is_rope_consistent(fn: Callable[[np.ndarray, np.ndarray], Any], dim: int = 8, *, tol: float = 1e-8) -> bool:
    """One-line check: ``assert is_rope_consistent(my_rope)``. See :func:`check_rotation`."""
    return check_rotation(fn, dim, tol=tol).ok


# --- cost -------------------------------------------------------------------------------------

#: The three implementations compared in chapter 6, as ``fn(x, positions, base=...)``.
IMPLEMENTATIONS: dict[str, Callable[..., np.ndarray]] = {
    "dense matrix": dense_rope,
    "complex (interleaved)": rope_complex,
    "rotate_half (half-split)": rope_half_split,
}


def time_implementations(
    dims: Sequence[int] = (16, 64, 256),
    *,
    n_tokens: int = 64,
    n_heads: int = 4,
    repeats: int = 5,
    base: float = 10000.0,
    seed: int = 0,
) -> list[dict[str, float]]:
    """Time every entry of :data:`IMPLEMENTATIONS` with ``time.perf_counter``.

    Each call rotates ``x`` of shape ``(n_heads, n_tokens, dim)`` from positions
    ``0 .. n_tokens - 1`` (tables included); the best of ``repeats`` calls is kept.

    Parameters
    ----------
    dims : sequence of int
        Even head dimensions to try.
    n_tokens, n_heads, repeats : int
        Positive sizes.
    base : float, default 10000.0
    seed : int, default 0

    Returns
    -------
    list of dict
        One dict per ``dim``: ``{"dim": dim, name: microseconds per vector, ...}`` for every
        name in :data:`IMPLEMENTATIONS`. Timings vary from machine to machine and run to run.
    """
    dims = [check_dim(d, "dims[i]") for d in dims]
    if not dims:
        raise ValueError("dims must contain at least one even dimension")
    for name, val in (("n_tokens", n_tokens), ("n_heads", n_heads), ("repeats", repeats)):
        if isinstance(val, (bool, np.bool_)) or not isinstance(val, numbers.Integral) or val <= 0:
            raise ValueError(f"{name} must be a positive integer, got {val!r}")
    base = check_base(base)
    rng = np.random.default_rng(seed)
    pos = np.arange(n_tokens)
    rows = []
    for dim in dims:
        x = rng.standard_normal((n_heads, n_tokens, dim))
        row: dict[str, float] = {"dim": dim}
        for name, fn in IMPLEMENTATIONS.items():
            best = np.inf
            for _ in range(repeats):
                t0 = time.perf_counter()
                fn(x, pos, base=base)
                best = min(best, time.perf_counter() - t0)
            row[name] = best / (n_heads * n_tokens) * 1e6
        rows.append(row)
    return rows
