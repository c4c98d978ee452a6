"""RoPE beyond one dimension: axial and mixed 2-D RoPE for image patches, and M-RoPE.

One idea covers every variant here. Give each rotated pair :math:`i` a *frequency vector*
:math:`\\boldsymbol\\theta_i \\in \\mathbb{R}^k` instead of a number, give each token a position
vector :math:`\\mathbf p \\in \\mathbb{R}^k` (``k = 2`` for an image patch's (row, column),
``k = 3`` for M-RoPE's (time, height, width)), and turn pair :math:`i` by the angle
:math:`\\boldsymbol\\theta_i \\cdot \\mathbf p`. The frequencies are stored as a matrix ``freqs`` of
shape ``(dim // 2, k)``, row ``i`` being :math:`\\boldsymbol\\theta_i`, and
:func:`apply_rope_nd` is the single kernel. The variants differ only in that matrix:

* **axial 2-D RoPE** (:func:`axial_frequencies`): every row has one non-zero entry; half of the
  pairs follow the row coordinate, half the column coordinate (Qwen2-VL's and Pixtral's vision
  encoders, Heo et al.'s RoPE-Axial);
* **mixed frequencies** (:func:`mixed_frequencies`, RoPE-Mixed of Heo et al. 2024): both entries
  non-zero, so a pair can turn along a diagonal direction; the vectors are learned per head;
* **M-RoPE** (:func:`mrope_frequencies`): three axes; ``mrope_section`` says how many pairs follow
  time, height and width, either in contiguous blocks (Qwen2-VL, Qwen2.5-VL) or interleaved
  (Qwen3-VL); :func:`apply_mrope` applies it with positions of shape ``(3, seq)`` or
  ``(3, batch, seq)`` as Hugging Face's code takes them, and :func:`mrope_position_ids` builds those
  positions for a layout of text runs, images and videos.

Conventions are the book's (``book/notation.md``): pair ``i`` is turned counter-clockwise by its
angle, and ``layout`` says which coordinates form pair ``i`` (``"interleaved"`` or ``"half"``).

One concern a module: :mod:`.kernel` (the frequency-vector kernel), :mod:`.axial` (2-D layouts
for image patches), :mod:`.mrope` (M-RoPE's frequencies and rotation) and
:mod:`.mrope_positions` (M-RoPE's position ids); every name is importable from
``rope_edu.multidim`` itself.
"""

from __future__ import annotations

from .kernel import apply_rope_nd, rope_nd_angles
from .axial import AXIAL_SCHEMES, AxialScheme, axial_frequencies, axial_rope, grid_positions, mixed_frequencies
from .mrope import MROPE_ASSIGNMENTS, apply_mrope, mrope_axes, mrope_frequencies
from .mrope_positions import MROPE_ADVANCES, MROPE_FAMILIES, MRopeFamily, MRopePositions, mrope_position_ids

__all__ = [
    "AXIAL_SCHEMES",
    "AxialScheme",
    "MROPE_ADVANCES",
    "MROPE_ASSIGNMENTS",
    "MROPE_FAMILIES",
    "MRopeFamily",
    "MRopePositions",
    "apply_mrope",
    "apply_rope_nd",
    "axial_frequencies",
    "axial_rope",
    "grid_positions",
    "mixed_frequencies",
    "mrope_axes",
    "mrope_frequencies",
    "mrope_position_ids",
    "rope_nd_angles",
]
