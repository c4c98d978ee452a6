"""RoPE on torch tensors: the checks, frequencies and angles, the layout kernels, eager and compiled.

The torch counterparts of :mod:`rope_edu.rope`, under :mod:`rope_edu.torch_rope`'s precision policy
(its docstring): :func:`frequencies`, :func:`rope_angles`, :data:`LAYOUTS` (one
:class:`TorchLayout` kernel per layout), :func:`apply_rope` and :func:`apply_rope_compiled`, all
over ``x`` of shape ``(..., seq, dim)`` with positions broadcasting to ``x.shape[:-1]``; and the
checks they share (with the numpy checks' wording), which :mod:`.model` reads too.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch

from .. import rope as _np_rope
from .._checks import check_base, check_choice, check_dim, check_inv_freq, check_positions

__all__ = [
    "ANGLE_DTYPES",
    "LAYOUTS",
    "TorchLayout",
    "frequencies",
    "rope_angles",
    "apply_rope",
    "apply_rope_compiled",
    "check_float_dtype",
    "check_positions_tensor",
    "check_inv_freq_tensor",
]


#: Dtypes allowed for the angles inside :func:`apply_rope` (half precision is refused).
ANGLE_DTYPES: tuple[torch.dtype, ...] = (torch.float32, torch.float64)

# --- checks: the torch counterparts of rope_edu._checks, with the same wording ---------------


def _is_real_dtype(dtype: torch.dtype) -> bool:
    """Floating or integer: not complex, not bool."""
    return dtype.is_floating_point or (not dtype.is_complex and dtype != torch.bool)


def _check_tensor(x: Any, name: str = "x") -> torch.Tensor:
    """``x`` must be a real (integer or floating) tensor with at least one axis."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor (use rope_edu.apply_rope for numpy arrays), "
            f"got {type(x).__name__}"
        )
    if not _is_real_dtype(x.dtype):
        raise TypeError(f"{name} must be a real-valued (integer or floating) tensor, got dtype {x.dtype}")
    if x.ndim < 1:
        raise ValueError(f"{name} must have at least 1 axis/axes, got a {x.ndim}-d tensor")
    return x


def check_float_dtype(dtype: Any, name: str, allowed: tuple[torch.dtype, ...] | None = None) -> torch.dtype:
    """``dtype`` must be a floating ``torch.dtype`` (one of ``allowed`` when given)."""
    if not isinstance(dtype, torch.dtype):
        raise TypeError(
            f"{name} must be a torch.dtype such as torch.float32, got {dtype!r} of type {type(dtype).__name__}"
        )
    if not dtype.is_floating_point:
        raise ValueError(f"{name} must be a floating dtype, got {dtype}")
    if allowed is not None and dtype not in allowed:
        names = " or ".join(str(d) for d in allowed)
        raise ValueError(
            f"{name} must be {names}, got {dtype}: angles in half precision lose positions "
            f"(bfloat16 holds consecutive integers only up to 256, float16 up to 2048)"
        )
    return dtype


def check_positions_tensor(positions: Any, shape: tuple[int, ...], name: str = "positions") -> torch.Tensor:
    """Positions as a tensor that broadcasts to ``shape`` (``x.shape[:-1]``).

    Non-tensors go through the numpy check (:func:`rope_edu._checks.check_positions`). Tensors are
    checked here with the same rules; their finiteness only on the CPU, since checking a CUDA
    tensor would wait for the device (NaN positions there give NaN rows).
    """
    if not isinstance(positions, torch.Tensor):
        return torch.from_numpy(check_positions(positions, shape, name))
    if not _is_real_dtype(positions.dtype):
        raise TypeError(f"{name} must be integers or real numbers, got dtype {positions.dtype}")
    try:
        ok = tuple(torch.broadcast_shapes(positions.shape, shape)) == tuple(shape)
    except RuntimeError:
        ok = False
    if not ok:
        raise ValueError(
            f"{name} of shape {tuple(positions.shape)} does not broadcast to x.shape[:-1] = {tuple(shape)}; "
            f"pass one position per token, e.g. shape ({shape[-1] if shape else 1},)"
        )
    on_cpu = positions.device.type == "cpu"
    if positions.dtype.is_floating_point and on_cpu and not bool(torch.isfinite(positions).all()):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    return positions


def check_inv_freq_tensor(inv_freq: Any, dim: int, name: str = "inv_freq") -> torch.Tensor:
    """Frequencies as a tensor of shape ``(dim // 2,)`` (finiteness checked on the CPU)."""
    if not isinstance(inv_freq, torch.Tensor):
        return torch.from_numpy(check_inv_freq(inv_freq, dim, name))
    if not _is_real_dtype(inv_freq.dtype):
        raise TypeError(f"{name} must be a real-valued array, got dtype {inv_freq.dtype}")
    if tuple(inv_freq.shape) != (dim // 2,):
        raise ValueError(
            f"{name} must have shape (dim // 2,) = ({dim // 2},) for dim={dim}, got shape {tuple(inv_freq.shape)}"
        )
    on_cpu = inv_freq.device.type == "cpu"
    if inv_freq.dtype.is_floating_point and on_cpu and not bool(torch.isfinite(inv_freq).all()):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    return inv_freq


# --- frequencies and angles -----------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _cached_frequencies(dim: int, base: float, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    # One host-to-device copy per (dim, base, device, dtype), not one per call. Internal only:
    # the cached tensor is never handed to a caller who could modify it in place.
    return torch.from_numpy(_np_rope.frequencies(dim, base)).to(device=device, dtype=dtype)


def frequencies(
    dim: int,
    base: float = 10000.0,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Rotation frequencies :math:`\\theta_i = b^{-2i/d}` as a tensor.

    Computed in float64 by :func:`rope_edu.frequencies` (so both paths share one definition) and
    rounded once to ``dtype``.

    Parameters
    ----------
    dim : int
        Even feature dimension :math:`d`.
    base : float, default 10000.0
        The base :math:`b > 1`.
    device : torch.device or str, optional
        Where the tensor lives (default: the CPU).
    dtype : torch.dtype, default torch.float32
        Any floating dtype; ``torch.bfloat16`` shows how coarsely half precision stores them.

    Returns
    -------
    torch.Tensor, shape (dim // 2,)
        Radians per position, from ``1.0`` (pair 0) down to ``base ** (-(dim - 2) / dim)``.
    """
    dim = check_dim(dim)
    base = check_base(base)
    dtype = check_float_dtype(dtype, "dtype")
    return torch.from_numpy(_np_rope.frequencies(dim, base)).to(device=device, dtype=dtype)


def rope_angles(positions: Any, inv_freq: Any, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Angles :math:`m\\theta_i` computed entirely in ``dtype``.

    Positions and frequencies are rounded to ``dtype`` and multiplied there, as happens when a
    model's RoPE buffers are cast along with its weights (``model.to(torch.bfloat16)``). Any
    floating dtype is allowed, so that chapter 8 can show what half precision does;
    :func:`apply_rope` itself only accepts :data:`ANGLE_DTYPES`.

    Parameters
    ----------
    positions : torch.Tensor or array_like, shape (...)
        Token positions (integers or reals).
    inv_freq : torch.Tensor or array_like, shape (dim // 2,)
        Frequencies, e.g. from :func:`frequencies` (pass them in float64 to round them only here).
    dtype : torch.dtype, default torch.float32
        Floating dtype of the whole computation.

    Returns
    -------
    torch.Tensor, shape (..., dim // 2), dtype ``dtype``
        On the device of ``inv_freq`` when it is a tensor, else of ``positions``, else the CPU.
    """
    dtype = check_float_dtype(dtype, "dtype")
    if isinstance(inv_freq, torch.Tensor):
        if inv_freq.ndim != 1:
            raise ValueError(f"inv_freq must have shape (dim // 2,), got shape {tuple(inv_freq.shape)}")
        freqs = check_inv_freq_tensor(inv_freq, 2 * inv_freq.shape[0])
    else:
        arr = np.asarray(inv_freq)
        if arr.ndim != 1:
            raise ValueError(f"inv_freq must have shape (dim // 2,), got shape {arr.shape}")
        freqs = check_inv_freq_tensor(arr, 2 * arr.shape[0])
    pos_shape = tuple(positions.shape) if isinstance(positions, torch.Tensor) else np.shape(positions)
    pos = check_positions_tensor(positions, tuple(pos_shape))
    device = inv_freq.device if isinstance(inv_freq, torch.Tensor) else pos.device
    return _angles(pos.to(device=device, dtype=dtype), freqs.to(device=device, dtype=dtype))


def _angles(pos: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    return pos.unsqueeze(-1) * inv_freq


def _cos_sin(pos: torch.Tensor, inv_freq: torch.Tensor, out_dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """The tables cos(m theta_i), sin(m theta_i), once per position (not per head).

    Angles of shape ``pos.shape + (dim // 2,)`` (``(seq, dim // 2)`` when all heads share the
    positions), in the dtype of ``pos`` and ``inv_freq`` (float32 or float64); cos and sin rounded
    once to the rotation's working dtype ``promote(out_dtype, float32)``. Both entry points compute
    them here, eagerly, and hand them to a layout kernel, which broadcasts them over the heads:
    inside a compiled kernel they would be fused into the rotation's loop and recomputed for
    every head (32 times at 32 heads).
    """
    work = torch.promote_types(out_dtype, torch.float32)
    angles = _angles(pos, inv_freq)
    return angles.cos().to(work), angles.sin().to(work)


# --- layouts: one kernel each -------------------------------------------------------------
# Both compute, for every pair (a, b) of coordinates and its angle m*theta_i,
#     a' = a cos - b sin,   b' = a sin + b cos     (counter-clockwise, as in book/notation.md)
# with cos, sin of shape (..., seq, dim // 2) broadcast against x's (..., seq, dim // 2) halves.
# A kernel is the rotation and the final rounding, given the cos/sin tables, so that
# apply_rope_compiled can hand it to torch.compile as one function: one fused pass over x.
# Two separate functions (not one with a layout switch) give each layout its own torch.compile
# recompile budget (8 variants per function).
#
# Eager PyTorch runs one kernel per operation, and on a CPU every fresh temporary also costs
# page faults, so the eager branches use as few full-size operations and temporaries as they can.
# Under torch.compile the plain formula is used: the compiler fuses it into a single loop
# (in-place updates of views, or complex numbers, would only get in its way).


def _complex_viewable(x: torch.Tensor) -> bool:
    """Whether ``x`` can be read as complex numbers in place (``torch.view_as_complex``)."""
    return (
        x.dtype in (torch.float32, torch.float64)
        and x.stride(-1) == 1
        and x.storage_offset() % 2 == 0
        and all(s % 2 == 0 for s in x.stride()[:-1])
    )


def _rope_interleaved(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    # Pairs (2i, 2i+1).
    x = x.to(cos.dtype)  # no copy for float32/float64 x; one for half precision and integers
    if not torch.compiler.is_compiling() and _complex_viewable(x):
        # Eager: read each pair in place as one complex number and multiply by e^{i m theta}:
        # one kernel, one pass over memory (Meta's LLaMA code does the same).
        z = torch.view_as_complex(x.unflatten(-1, (-1, 2)))
        return torch.view_as_real(z * torch.complex(cos, sin)).flatten(-2).to(out_dtype)
    pairs = x.unflatten(-1, (-1, 2))
    xa, xb = pairs[..., 0], pairs[..., 1]
    return torch.stack((xa * cos - xb * sin, xa * sin + xb * cos), dim=-1).flatten(-2).to(out_dtype)


def _rope_half(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    # Pairs (i, i + d/2): the two contiguous halves xa = x[..., :h], xb = x[..., h:].
    h = x.shape[-1] // 2
    if torch.compiler.is_compiling():
        x = x.to(cos.dtype)
        xa, xb = x[..., :h], x[..., h:]
        return torch.cat((xa * cos - xb * sin, xb * cos + xa * sin), dim=-1).to(out_dtype)
    # Eager: one full-size result, out = x * [cos, cos] (read in x's own dtype and promoted to the
    # working dtype on the fly: no upcast copy of a bfloat16 x), then the sin terms added in place
    # into its two halves (addcmul_(u, v, value=c) adds c*u*v): three passes, one allocation.
    # This is Hugging Face's x*cos + rotate_half(x)*sin without materialising rotate_half(x).
    xa, xb = x[..., :h], x[..., h:]
    out = x * torch.cat((cos, cos), dim=-1)
    out[..., :h].addcmul_(xb, sin, value=-1)
    out[..., h:].addcmul_(xa, sin)
    return out.to(out_dtype)


@dataclass(frozen=True)
class TorchLayout:
    """The torch kernel of one layout of :data:`rope_edu.LAYOUTS` (same names, same pairs).

    Attributes
    ----------
    name : str
        Key in :data:`LAYOUTS` and in :data:`rope_edu.LAYOUTS`.
    kernel : callable
        ``kernel(x, cos, sin, out_dtype) -> Tensor``, no checks: ``x`` of shape (..., seq, dim),
        ``cos`` and ``sin`` of shape broadcastable to (..., seq, dim // 2) (``(seq, dim // 2)``
        when every head shares the positions), in the working dtype and on x's device, as made
        by ``_cos_sin``. Returns x's shape in ``out_dtype``.
    """

    name: str
    kernel: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.dtype], torch.Tensor]

    @property
    def pairs(self) -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
        """``pairs(dim) -> (a, b)``, taken from the numpy registry: the same pairs by construction."""
        return _np_rope.LAYOUTS[self.name].pairs


LAYOUTS: dict[str, TorchLayout] = {
    "interleaved": TorchLayout("interleaved", _rope_interleaved),
    "half": TorchLayout("half", _rope_half),
}


def _prepare(x: Any, positions: Any, base: Any, layout: Any, inv_freq: Any, angle_dtype: Any):
    """Validate every argument; return what a layout kernel needs."""
    x = _check_tensor(x, "x")
    layout = check_choice(layout, LAYOUTS, "layout")
    dim = check_dim(x.shape[-1], "x.shape[-1] (dim)")
    base = check_base(base)
    out_dtype = x.dtype if x.dtype.is_floating_point else torch.get_default_dtype()
    if angle_dtype is None:
        angle_dtype = torch.float64 if out_dtype == torch.float64 else torch.float32
    angle_dtype = check_float_dtype(angle_dtype, "angle_dtype", ANGLE_DTYPES)
    pos = check_positions_tensor(positions, tuple(x.shape[:-1])).to(device=x.device, dtype=angle_dtype)
    if inv_freq is None:
        freqs = _cached_frequencies(dim, base, x.device, angle_dtype)
    else:
        freqs = check_inv_freq_tensor(inv_freq, dim).to(device=x.device, dtype=angle_dtype)
    return x, pos, freqs, layout, out_dtype


def apply_rope(
    x: torch.Tensor,
    positions: Any,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    inv_freq: Any = None,
    angle_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Rotate the last axis of ``x`` by the RoPE angles of ``positions`` (eager PyTorch).

    Parameters
    ----------
    x : torch.Tensor, shape (..., seq, dim)
        Queries or keys, on any device; ``dim`` even; any leading axes (batch, heads). Floating
        input keeps its dtype (bfloat16, float16, float32, float64); integer input gives
        ``torch.get_default_dtype()``.
    positions : torch.Tensor or array_like, shape (seq,) or broadcastable to x.shape[:-1]
        Position of every token, integers or reals; moved to ``x.device``.
    base : float, default 10000.0
        Frequency base :math:`b`, used when ``inv_freq`` is not given.
    layout : {"interleaved", "half"}, default "interleaved"
        Which coordinates form a rotated pair; see :data:`LAYOUTS`.
    inv_freq : torch.Tensor or array_like, shape (dim // 2,), optional
        Frequencies to use instead of ``frequencies(dim, base)`` (scaled RoPE variants).
    angle_dtype : torch.float32 or torch.float64, optional
        Dtype of the angles :math:`m\\theta_i` and of their cos/sin. Default: float64 for float64
        ``x``, float32 otherwise. Half precision is refused (see :func:`rope_angles`).

    Returns
    -------
    torch.Tensor, shape x.shape, on x.device
        A new tensor; ``x`` is never modified. Differentiable with respect to ``x``.

    Examples
    --------
    >>> import math, torch
    >>> q = torch.tensor([[1.0, 0.0]])        # one token, dim 2, turned by 1 * pi/2
    >>> torch.allclose(apply_rope(q, [1], inv_freq=[math.pi / 2]), torch.tensor([[0.0, 1.0]]), atol=1e-7)
    True
    """
    x, pos, freqs, layout, out_dtype = _prepare(x, positions, base, layout, inv_freq, angle_dtype)
    if x.numel() == 0:
        return torch.empty(x.shape, dtype=out_dtype, device=x.device)
    return LAYOUTS[layout].kernel(x, *_cos_sin(pos, freqs, out_dtype), out_dtype)


#: ``torch.compile``d layout kernels, built on first use (compiling is deferred to the first call).
_COMPILED: dict[str, Callable[..., torch.Tensor]] = {}


def _compiled_kernel(layout: str) -> Callable[..., torch.Tensor]:
    fn = _COMPILED.get(layout)
    if fn is None:
        # dynamic=None (the default): the first shape is compiled exactly; a second shape
        # triggers one recompile with symbolic sizes, which later shapes reuse.
        fn = _COMPILED[layout] = torch.compile(LAYOUTS[layout].kernel)
    return fn


def apply_rope_compiled(
    x: torch.Tensor,
    positions: Any,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    inv_freq: Any = None,
    angle_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """:func:`apply_rope` through ``torch.compile``: the same arguments, checks and result.

    The checks run in Python as in :func:`apply_rope`, and so does the small cos/sin table, once
    per position (``(seq, dim // 2)``, broadcast over the heads); the rotation and the final
    rounding run as one compiled function, which the compiler fuses into a single pass over
    ``x`` (the eager version launches one kernel per operation). The first call per layout and
    dtype compiles (seconds on a CPU, cached on disk by TorchInductor), later calls reuse it.
    """
    x, pos, freqs, layout, out_dtype = _prepare(x, positions, base, layout, inv_freq, angle_dtype)
    if x.numel() == 0:
        return torch.empty(x.shape, dtype=out_dtype, device=x.device)
    return _compiled_kernel(layout)(x, *_cos_sin(pos, freqs, out_dtype), out_dtype)
