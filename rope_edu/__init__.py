"""rope_edu: the numpy package behind the book *Rotary Position Embedding, from first principles*.

Plain functions over numpy arrays. The torch path lives in :mod:`rope_edu.torch_rope` and is
imported only on request, so ``import rope_edu`` never imports torch.
"""

from . import plots
from .attention import attention, attention_scores, causal_mask, softmax
from .rope import LAYOUTS, apply_rope, frequencies, layout_permutation, rope_angles, rotation_matrix

__version__ = "0.1.0"

__all__ = [
    "LAYOUTS",
    "plots",
    "apply_rope",
    "attention",
    "attention_scores",
    "causal_mask",
    "softmax",
    "frequencies",
    "layout_permutation",
    "rope_angles",
    "rotation_matrix",
]
