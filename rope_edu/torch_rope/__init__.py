"""The torch path: RoPE on any device PyTorch runs on (CUDA when present, CPU otherwise).

The same operations as the numpy core :mod:`rope_edu.rope`, with the same argument names,
checks and error messages, over ``torch.Tensor``::

    import torch
    from rope_edu import torch_rope

    device = "cuda" if torch.cuda.is_available() else "cpu"
    q = torch.randn(1, 32, 4096, 128, device=device, dtype=torch.bfloat16)
    q_rot = torch_rope.apply_rope(q, torch.arange(4096, device=device), layout="half")

This module is imported only on request (``import rope_edu`` never imports torch).

Precision policy, the point of chapter 8:

* **Angles** :math:`m\\theta_i` are computed in float32 at least, float64 when ``x`` is float64
  or when asked (``angle_dtype=torch.float64``), never in the input's bfloat16/float16: bfloat16
  holds consecutive integers only up to 256 and float16 only up to 2048, so positions and angles
  computed there collapse (see :func:`rope_angles`, which exists to show it).
* **Frequencies** are computed in float64 by :func:`rope_edu.frequencies` and rounded once.
* **The rotation** runs in ``promote(x.dtype, float32)`` (half-precision inputs are rotated in
  float32) and the result is rounded once to the input's dtype.
* Integer ``x`` gives a result in ``torch.get_default_dtype()`` (float32 unless changed), where
  the numpy core gives float64: torch's default floating type, not numpy's.

Two entry points share the checks, the cos/sin tables and the layout kernels of
:data:`LAYOUTS`. Both compute cos and sin once per position, a ``(seq, dim // 2)`` table that the
kernels broadcast over the heads. :func:`apply_rope` runs the kernels eagerly (one PyTorch
kernel per operation, arranged to make few passes over memory) and :func:`apply_rope_compiled`
runs them through ``torch.compile``, where they take the plain formula, which the compiler
fuses into one pass over ``x``. It compiles lazily, on the first call per layout, so importing
this module stays cheap.

One concern a module: :mod:`.rotation` (the checks, frequencies, angles and layout kernels, eager
and compiled), :mod:`.traffic` (the bytes each operation moves) and :mod:`.model` (a whole LLaMA
model on the book's weights); every name below is importable from ``rope_edu.torch_rope`` itself.
"""

from __future__ import annotations

from .model import TorchLlama
from .rotation import ANGLE_DTYPES, LAYOUTS, TorchLayout, apply_rope, apply_rope_compiled, frequencies, rope_angles
from .rotation import check_inv_freq_tensor as check_inv_freq_tensor  # read by widgets/precision.py, not in __all__
from .traffic import OpTraffic, memory_traffic

__all__ = [
    "ANGLE_DTYPES",
    "LAYOUTS",
    "TorchLayout",
    "frequencies",
    "rope_angles",
    "apply_rope",
    "apply_rope_compiled",
    "OpTraffic",
    "memory_traffic",
    "TorchLlama",
]
