"""One-line verdicts for the book's checks: what was verified, and how closely.

Every claim in a chapter is followed by code that checks it. Most of those checks are not the
lesson, so the book folds their source and shows only the verdict they print::

    with verify("R_mᵀR_n = R_(n−m), 300 random position pairs, both layouts") as v:
        for a, b in pairs:
            v.close(Ra.T @ Rb, rotation_matrix(b - a, d), atol=1e-12)

prints ``checked: R_mᵀR_n = R_(n−m), 300 random position pairs, both layouts; max error
4e-16 (allowed 1e-12)`` when every comparison held, and raises :class:`AssertionError` naming the
claim and the failing comparison the moment one does not (so the book's build fails). A check
that compared nothing is an error too: a verdict must stand on something.

The line is wrapped to :data:`WIDTH` characters so that it fits the book's column.
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

__all__ = ["Verification", "verify", "WIDTH", "PREFIX"]

#: Longest line a verdict prints (the book's code column holds 75 monospace characters at 1280 px).
WIDTH = 74
PREFIX = "checked: "


def _fmt(x: float) -> str:
    return "0" if x == 0 else f"{x:.2g}"


class Verification:
    """Collects the comparisons of one claim; see :func:`verify`.

    Each method raises :class:`AssertionError` at once when its comparison fails, with the claim
    and what failed; otherwise it records how closely the comparison held.
    """

    def __init__(self, claim: str) -> None:
        if not isinstance(claim, str) or not claim.strip():
            raise ValueError(f"claim must be a non-empty string saying what is checked, got {claim!r}")
        self.claim = " ".join(claim.split())
        self.count = 0
        self.abs_error = 0.0
        self.rel_error = 0.0
        self.atol = 0.0
        self.rtol = 0.0
        self._kinds: set[str] = set()

    def _fail(self, what: str) -> None:
        raise AssertionError(f"check failed: {self.claim}: {what}")

    def close(self, actual: Any, desired: Any, *, atol: float = 0.0, rtol: float = 0.0) -> float:
        """Require ``|actual - desired| <= atol + rtol * |desired|`` elementwise (numpy broadcasting).

        Parameters
        ----------
        actual : array_like, shape (...)
            The computed values, real or complex.
        desired : array_like
            The values they must match: the same shape, or one that broadcasts to it (a scalar).
        atol, rtol : float
            Absolute and relative tolerances, both >= 0 (both 0: exact agreement).

        Returns
        -------
        float
            The largest absolute difference.
        """
        if atol < 0 or rtol < 0:
            raise ValueError(f"atol and rtol must be >= 0, got atol={atol!r}, rtol={rtol!r}")
        a = np.asarray(actual)
        d = np.asarray(desired)
        try:
            shape = np.broadcast_shapes(a.shape, d.shape)
        except ValueError:
            self._fail(f"actual has shape {a.shape}, desired {d.shape}")
        if a.shape != shape:  # desired may broadcast to actual (a scalar), never the other way
            self._fail(f"actual has shape {a.shape}, desired {d.shape}")
        a = a.astype(np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(d) else np.float64)
        d = d.astype(a.dtype)
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(d))):
            both_inf = np.isinf(a) & np.isinf(d) & (a == d)
            if not np.all(np.isfinite(a) | both_inf) or not np.all(np.isfinite(d) | both_inf):
                self._fail("non-finite values")
            a, d = np.where(both_inf, 0, a), np.where(both_inf, 0, d)
        diff = np.abs(a - d)
        scale = np.abs(d)
        bad = diff > atol + rtol * scale
        err = float(diff.max()) if diff.size else 0.0
        if np.any(bad):
            i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
            self._fail(
                f"{int(bad.sum())} of {bad.size} values differ by more than atol={atol:g} + rtol={rtol:g}·|desired|;"
                f" largest difference {err:.3g}; first at index {tuple(int(j) for j in i)}:"
                f" {a[i].item()!r} vs {d[i].item()!r}"
            )
        self.count += 1
        self._kinds.add("close")
        self.abs_error = max(self.abs_error, err)
        if rtol and not atol:
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.where(scale > 0, diff / np.where(scale > 0, scale, 1), 0.0)
            self.rel_error = max(self.rel_error, float(rel.max()) if rel.size else 0.0)
            self.rtol = max(self.rtol, rtol)
            self._kinds.add("rel")
        else:
            self.atol = max(self.atol, atol + rtol * (float(scale.max()) if scale.size else 0.0))
            self._kinds.add("abs")
        return err

    def equal(self, actual: Any, desired: Any) -> None:
        """Require equal shapes and exactly equal values."""
        a, d = np.asarray(actual), np.asarray(desired)
        if a.shape != d.shape:
            self._fail(f"actual has shape {a.shape}, desired {d.shape}")
        if not np.array_equal(a, d):
            n = int(np.sum(a != d))
            self._fail(f"{n} of {a.size} values differ")
        self.count += 1
        self._kinds.add("equal")

    def true(self, condition: Any, what: str = "") -> None:
        """Require ``condition`` (a bool or an array of bools, all true); ``what`` says what failed."""
        cond = np.asarray(condition)
        if cond.dtype != bool:
            raise TypeError(f"condition must be a bool or a boolean array, got dtype {cond.dtype}")
        if not np.all(cond):
            detail = what or "condition is false"
            if cond.ndim:
                detail += f" ({int((~cond).sum())} of {cond.size} false)"
            self._fail(detail)
        self.count += 1
        self._kinds.add("true")

    def line(self) -> str:
        """The verdict: the claim and how closely it held, wrapped to :data:`WIDTH`."""
        parts = []
        if "abs" in self._kinds:
            parts.append(f"max error {_fmt(self.abs_error)}" + (f" (allowed {_fmt(self.atol)})" if self.atol else ""))
        if "rel" in self._kinds:
            parts.append(f"max relative error {_fmt(self.rel_error)} (allowed {_fmt(self.rtol)})")
        if self._kinds & {"equal"} and not parts:
            parts.append("exact")
        text = PREFIX + self.claim + ("; " + ", ".join(parts) if parts else "")
        return "\n".join(textwrap.wrap(text, WIDTH, subsequent_indent=" " * 4, break_on_hyphens=False))

    def __enter__(self) -> "Verification":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            if self.count == 0:
                raise AssertionError(f"check compared nothing: {self.claim}")
            print(self.line())


def verify(claim: str) -> Verification:
    """Check a claim and print one line saying what was verified and how closely.

    Parameters
    ----------
    claim : str
        What the comparisons inside the ``with`` block establish, with their scope (how many cases,
        which sizes), e.g. ``"softmax rows sum to 1, 16 x 16 scores"``.

    Returns
    -------
    Verification
        A context manager; inside it call :meth:`Verification.close`, :meth:`Verification.equal`
        and :meth:`Verification.true`. On leaving the block the verdict line is printed; a failed
        comparison raises :class:`AssertionError` and prints nothing.

    Examples
    --------
    >>> import numpy as np
    >>> with verify("x + x = 2x on 5 values") as v:
    ...     x = np.linspace(0, 3, 5)
    ...     _ = v.close(x + x, 2 * x, atol=1e-15)
    ...     v.true(x.min() == 0, "the first value is 0")
    checked: x + x = 2x on 5 values; max error 0 (allowed 1e-15)
    """
    return Verification(claim)
