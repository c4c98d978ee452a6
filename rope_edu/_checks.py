"""Input validation shared by the numpy core and the torch path.

Every public function of :mod:`rope_edu` checks its arguments with these helpers, so that a
bad argument fails early with an error that names it and says what was expected.
``TypeError`` is raised for a value of the wrong kind (a float ``dim``, complex ``x``),
``ValueError`` for a value of the right kind but wrong size or range (an odd ``dim``).
"""

from __future__ import annotations

import numbers
from typing import Any, Iterable

import numpy as np


def check_dim(dim: Any, name: str = "dim") -> int:
    """Return ``dim`` as an ``int`` after checking it is a positive even integer."""
    if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{name} must be a positive even integer, got {dim!r} of type {type(dim).__name__}")
    dim = int(dim)
    if dim <= 0 or dim % 2:
        raise ValueError(f"{name} must be a positive even integer (RoPE rotates pairs of coordinates), got {dim}")
    return dim


def check_int(value: Any, name: str, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int`` after checking it is a (non-boolean) integer ``>= minimum``."""
    what = "an integer" if minimum is None else f"an integer >= {minimum}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be {what}, got {value!r} of type {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be {what}, got {value}")
    return value


def check_real(value: Any, name: str) -> float:
    """Return ``value`` as a ``float`` after checking it is one finite real number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a finite real number, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value}")
    return value


def check_positive(value: Any, name: str) -> float:
    """Return ``value`` as a ``float`` after checking it is one finite real number > 0."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive real number, got {value!r}")
    number = float(value)
    if not (np.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a positive real number, got {value!r}")
    return number


def check_base(base: Any, name: str = "base") -> float:
    """Return ``base`` as a ``float`` after checking it is a finite real number > 1."""
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, numbers.Real):
        raise TypeError(f"{name} must be a finite real number > 1, got {base!r} of type {type(base).__name__}")
    base = float(base)
    if not np.isfinite(base) or base <= 1.0:
        raise ValueError(f"{name} must be a finite real number > 1, got {base}")
    return base


def check_choice(value: Any, choices: Iterable[str], name: str) -> str:
    """Check that ``value`` is one of ``choices`` (e.g. a key of a registry dict)."""
    choices = list(choices)
    if not isinstance(value, str) or value not in choices:
        valid = ", ".join(repr(c) for c in choices)
        raise ValueError(f"unknown {name} {value!r}; expected one of {valid}")
    return value


def as_real_array(x: Any, name: str = "x", *, min_ndim: int = 1) -> np.ndarray:
    """Return ``x`` as a numpy array of real numbers with at least ``min_ndim`` axes.

    Integer arrays are returned as they are (callers decide the float dtype); boolean,
    complex, object and string arrays raise ``TypeError``.
    """
    arr = real_array(x, name, "a real-valued (integer or floating) array")
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} axis/axes, got a {arr.ndim}-d array")
    return arr


def real_array(value: Any, name: str, expected: str = "integers or real numbers") -> np.ndarray:
    """Return ``value`` as a numpy array of integers or floats; ``TypeError`` naming ``name`` otherwise."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":  # bool is kind "b", complex "c", object "O"
        raise TypeError(f"{name} must be {expected}, got dtype {arr.dtype}")
    return arr


def finite_float64(arr: np.ndarray, name: str) -> np.ndarray:
    """Return ``arr`` as float64 (no copy if it already is); ``ValueError`` naming ``name`` on NaN/inf."""
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    return arr


def float_dtype(dtype: np.dtype) -> np.dtype:
    """The floating dtype a result takes for input ``dtype``: floats are kept, integers become float64."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def check_positions(positions: Any, shape: tuple[int, ...], name: str = "positions") -> np.ndarray:
    """Return ``positions`` as a float64 array after checking it broadcasts to ``shape``.

    ``shape`` is the shape of the input without its last (feature) axis, ``x.shape[:-1]``.
    The returned array keeps the positions' own shape (broadcasting happens later, for free).
    """
    pos = real_array(positions, name)
    try:
        np.broadcast_shapes(pos.shape, shape)
        ok = np.broadcast_shapes(pos.shape, shape) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"{name} of shape {pos.shape} does not broadcast to x.shape[:-1] = {tuple(shape)}; "
            f"pass one position per token, e.g. shape ({shape[-1] if shape else 1},)"
        )
    return finite_float64(pos, name)


def check_inv_freq(inv_freq: Any, dim: int, name: str = "inv_freq") -> np.ndarray:
    """Return ``inv_freq`` as a float64 vector of length ``dim // 2`` of finite numbers."""
    arr = real_array(inv_freq, name, "a real-valued array")
    if arr.shape != (dim // 2,):
        raise ValueError(
            f"{name} must have shape (dim // 2,) = ({dim // 2},) for dim={dim}, got shape {arr.shape}"
        )
    return finite_float64(arr, name)
