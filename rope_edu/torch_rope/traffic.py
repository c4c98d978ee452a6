"""Memory traffic of eager torch code: the bytes each tensor operation reads and writes.

:func:`memory_traffic` runs a function once under a ``TorchDispatchMode`` and lists an
:class:`OpTraffic` per operation that moves data, the model of chapter 8 (a kernel touches each
element once); it measures :func:`~.rotation.apply_rope`'s passes over ``x`` or any other eager code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

from .._checks import check_int

__all__ = ["OpTraffic", "memory_traffic"]


@dataclass(frozen=True)
class OpTraffic:
    """The bytes one tensor operation reads and writes (an entry of :func:`memory_traffic`).

    Attributes
    ----------
    op : str
        The ATen operation, e.g. ``"aten.mul.Tensor"`` or ``"aten.addcmul_.default"``.
    read, written : int
        Bytes of the counted tensors it takes and of those it produces (or modifies in place).
    """

    op: str
    read: int
    written: int


def memory_traffic(fn: Callable[[], Any], *, min_numel: int = 1) -> list[OpTraffic]:
    """Run ``fn()`` once, eagerly, and list the memory traffic of every tensor operation in it.

    Each ATen operation that computes something is charged ``numel * element_size`` bytes for
    every tensor it takes (read) and every tensor it returns (written); an in-place operation
    reads and writes its target. That is the traffic of a kernel that touches each element once,
    the model of chapter 8: a cache that serves a second read for free is not modelled. Views,
    reshapes and other operations whose result shares memory with an argument move no data and
    are left out, as are allocations (``empty``).

    Parameters
    ----------
    fn : callable
        Called once with no arguments, e.g. ``lambda: apply_rope(x, pos)``. Eager code only: a
        ``torch.compile``'d function would be traced, not run as compiled.
    min_numel : int, default 1
        Tensors with fewer elements are not counted. ``x.numel() // 2`` counts the full-size
        passes over ``x`` (and its halves) and leaves out the small cos/sin tables, which are
        ``1 / heads`` of its size.

    Returns
    -------
    list of OpTraffic
        In the order the operations ran; those with no counted traffic are left out.

    Examples
    --------
    >>> x = torch.ones(4, 8)
    >>> memory_traffic(x.clone)
    [OpTraffic(op='aten.clone.default', read=128, written=128)]
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable taking no arguments, got {type(fn).__name__}")
    min_numel = check_int(min_numel, "min_numel", minimum=1)
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    def counted(tensors: list[torch.Tensor]) -> int:
        return sum(t.numel() * t.element_size() for t in tensors if t.numel() >= min_numel)

    log: list[OpTraffic] = []
    allocations = {torch.ops.aten.empty, torch.ops.aten.empty_like, torch.ops.aten.empty_strided}

    class _Count(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            out = func(*args, **(kwargs or {}))
            ins = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
            outs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
            storages = {t.untyped_storage().data_ptr() for t in ins}
            aliases = any(t.untyped_storage().data_ptr() in storages for t in outs)
            if func.overloadpacket in allocations or (aliases and not func._schema.is_mutable):
                return out  # a view or an allocation: no data moved
            read, written = counted(ins), counted(outs)
            if read or written:
                log.append(OpTraffic(str(func), read, written))
            return out

    with _Count():
        fn()
    return log
