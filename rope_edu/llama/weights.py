"""The parameters of a LLaMA-architecture model, each a frozen dataclass validated when constructed.

:class:`AttentionWeights` (one attention layer: projections, heads, RoPE base and layout),
:class:`MLPWeights` (a SwiGLU feed-forward block), :class:`DecoderLayerWeights` (both, with their
RMSNorm gains) and :class:`LlamaWeights` (embeddings, the layers, the final norm and the head);
:func:`init_attention_weights` and :func:`init_stack_weights` draw random ones. Matrices are laid
out like ``torch.nn.Linear.weight`` (``(out_features, in_features)``) and kept as read-only copies.
The computations that use them are in :mod:`.attention` and :mod:`.forward`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .._checks import as_real_array, check_base, check_choice, check_dim, check_int, check_inv_freq, check_positive, float_dtype
from ..rope import LAYOUTS, frequencies

__all__ = [
    "AttentionWeights",
    "init_attention_weights",
    "init_stack_weights",
    "MLPWeights",
    "DecoderLayerWeights",
    "LlamaWeights",
]


# --- read-only copies of the weights, and the RMSNorm epsilon --------------------------------


def _readonly_matrix(w: Any, name: str, shape: tuple[int, int], what: str) -> np.ndarray:
    arr = as_real_array(w, name, min_ndim=2)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {what} = {shape}, got {arr.shape}")
    arr = np.array(arr, dtype=float_dtype(arr.dtype))  # a private copy...
    arr.flags.writeable = False  # ...that nobody can change behind the frozen dataclass's back
    return arr


def _readonly_vector(w: Any, name: str, size: int) -> np.ndarray:
    arr = as_real_array(w, name)
    if arr.shape != (size,):
        raise ValueError(f"{name} must have shape (hidden,) = ({size},), got {arr.shape}")
    arr = np.array(arr, dtype=float_dtype(arr.dtype))
    arr.flags.writeable = False
    return arr


def check_eps(eps: Any) -> float:
    """``eps`` as a float, which must be a real number >= 0 (an RMSNorm epsilon; read by :mod:`.forward` too)."""
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be a real number >= 0, got {eps!r} of type {type(eps).__name__}")
    if not float(eps) >= 0:
        raise ValueError(f"eps must be a real number >= 0, got {eps!r}")
    return float(eps)


# --- weights ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class AttentionWeights:
    """The parameters of one LLaMA-style attention layer (validated when constructed).

    Parameters
    ----------
    q_proj : array_like, shape (n_heads * head_dim, hidden)
    k_proj : array_like, shape (n_kv_heads * head_dim, hidden)
    v_proj : array_like, shape (n_kv_heads * head_dim, hidden)
    o_proj : array_like, shape (hidden, n_heads * head_dim)
        Projection matrices laid out like ``torch.nn.Linear.weight`` (``y = x @ W.T``), so
        Hugging Face's ``q_proj.weight`` etc. can be used as they are.
    n_heads : int
        Number of query heads ``H``.
    n_kv_heads : int
        Number of key/value heads ``G``; must divide ``n_heads``. ``G < H`` is grouped-query
        attention: query head ``h`` reads key/value head ``h // (H // G)``.
    head_dim : int
        Even head dimension ``D``, the ``dim`` RoPE rotates.
    base : float, default 10000.0
        RoPE frequency base (Hugging Face's ``rope_theta``).
    layout : {"half", "interleaved"}, default "half"
        RoPE pairing; ``"half"`` (pairs ``(i, i + D/2)``) is what Hugging Face's LLaMA uses.
    inv_freq : array_like, shape (head_dim // 2,), optional
        Frequencies to use instead of ``frequencies(head_dim, base)`` (scaled RoPE variants).
    layer_idx : int, default 0
        Index of this layer in its stack; a :class:`KVCache` belongs to one layer.
    attention_scaling : float, default 1.0
        Multiplies the rotated queries and keys (so the attention logits by its square), as
        Hugging Face multiplies cos and sin by a scaled RoPE's ``attention_factor`` (YaRN's
        :func:`rope_edu.scaling.yarn_attention_factor`); the second value
        :func:`rope_edu.scaling.scaled_frequencies` returns.
    """

    q_proj: np.ndarray
    k_proj: np.ndarray
    v_proj: np.ndarray
    o_proj: np.ndarray
    n_heads: int
    n_kv_heads: int
    head_dim: int
    base: float = 10000.0
    layout: str = "half"
    inv_freq: np.ndarray | None = None
    layer_idx: int = 0
    attention_scaling: float = 1.0

    def __post_init__(self) -> None:
        n_heads = check_int(self.n_heads, "n_heads", minimum=1)
        n_kv_heads = check_int(self.n_kv_heads, "n_kv_heads", minimum=1)
        if n_heads % n_kv_heads:
            raise ValueError(
                f"n_heads ({n_heads}) must be a multiple of n_kv_heads ({n_kv_heads}): each key/value "
                f"head serves n_heads // n_kv_heads query heads"
            )
        head_dim = check_dim(self.head_dim, "head_dim")
        q = as_real_array(self.q_proj, "q_proj", min_ndim=2)
        if q.ndim != 2:
            raise ValueError(f"q_proj must be a 2-d (out_features, in_features) matrix, got shape {q.shape}")
        hidden = q.shape[1]
        set_ = object.__setattr__  # frozen dataclass: normalise fields once, here
        set_(self, "n_heads", n_heads)
        set_(self, "n_kv_heads", n_kv_heads)
        set_(self, "head_dim", head_dim)
        set_(self, "q_proj", _readonly_matrix(q, "q_proj", (n_heads * head_dim, hidden), "(n_heads * head_dim, hidden)"))
        kv_shape = (n_kv_heads * head_dim, hidden)
        set_(self, "k_proj", _readonly_matrix(self.k_proj, "k_proj", kv_shape, "(n_kv_heads * head_dim, hidden)"))
        set_(self, "v_proj", _readonly_matrix(self.v_proj, "v_proj", kv_shape, "(n_kv_heads * head_dim, hidden)"))
        set_(self, "o_proj", _readonly_matrix(self.o_proj, "o_proj", (hidden, n_heads * head_dim), "(hidden, n_heads * head_dim)"))
        set_(self, "base", check_base(self.base))
        set_(self, "layout", check_choice(self.layout, LAYOUTS, "layout"))
        if self.inv_freq is not None:
            freqs = check_inv_freq(self.inv_freq, head_dim).copy()
            freqs.flags.writeable = False
            set_(self, "inv_freq", freqs)
        set_(self, "layer_idx", check_int(self.layer_idx, "layer_idx", minimum=0))
        set_(self, "attention_scaling", check_positive(self.attention_scaling, "attention_scaling"))

    @property
    def hidden(self) -> int:
        """Width of the hidden states (``in_features`` of the projections)."""
        return self.q_proj.shape[1]

    @property
    def n_rep(self) -> int:
        """Query heads per key/value head, ``n_heads // n_kv_heads``."""
        return self.n_heads // self.n_kv_heads

    @property
    def frequencies(self) -> np.ndarray:
        """The RoPE frequencies this layer uses, shape ``(head_dim // 2,)``."""
        return frequencies(self.head_dim, self.base) if self.inv_freq is None else self.inv_freq


def init_attention_weights(
    rng: np.random.Generator,
    hidden: int,
    n_heads: int,
    n_kv_heads: int,
    head_dim: int,
    *,
    base: float = 10000.0,
    layout: str = "half",
    layer_idx: int = 0,
) -> AttentionWeights:
    """Random weights for one layer, drawn from ``N(0, 1/in_features)`` (unit-scale outputs).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (pass ``np.random.default_rng(seed)`` for reproducible weights).
    hidden, n_heads, n_kv_heads, head_dim, base, layout, layer_idx
        As in :class:`AttentionWeights`.

    Returns
    -------
    AttentionWeights
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    hidden = check_int(hidden, "hidden", minimum=1)
    n_heads = check_int(n_heads, "n_heads", minimum=1)
    n_kv_heads = check_int(n_kv_heads, "n_kv_heads", minimum=1)
    head_dim = check_dim(head_dim, "head_dim")

    def linear(out_features: int, in_features: int) -> np.ndarray:
        return rng.normal(0.0, in_features**-0.5, size=(out_features, in_features))

    return AttentionWeights(
        q_proj=linear(n_heads * head_dim, hidden),
        k_proj=linear(n_kv_heads * head_dim, hidden),
        v_proj=linear(n_kv_heads * head_dim, hidden),
        o_proj=linear(hidden, n_heads * head_dim),
        n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=head_dim,
        base=base, layout=layout, layer_idx=layer_idx,
    )


def init_stack_weights(
    rng: np.random.Generator,
    n_layers: int,
    hidden: int,
    n_heads: int,
    n_kv_heads: int,
    head_dim: int,
    *,
    base: float = 10000.0,
    layout: str = "half",
) -> tuple[AttentionWeights, ...]:
    """Random weights for ``n_layers`` layers, with ``layer_idx`` 0, 1, ..., ``n_layers - 1``."""
    n_layers = check_int(n_layers, "n_layers", minimum=1)
    return tuple(
        init_attention_weights(rng, hidden, n_heads, n_kv_heads, head_dim, base=base, layout=layout, layer_idx=i)
        for i in range(n_layers)
    )


# --- the decoder around the attention -------------------------------------------------------


@dataclass(frozen=True, eq=False)
class MLPWeights:
    """The parameters of a LLaMA feed-forward block (SwiGLU), validated when constructed.

    Parameters
    ----------
    gate_proj : array_like, shape (intermediate, hidden)
    up_proj : array_like, shape (intermediate, hidden)
    down_proj : array_like, shape (hidden, intermediate)
        Laid out like ``torch.nn.Linear.weight`` (Hugging Face's ``LlamaMLP``).
    """

    gate_proj: np.ndarray
    up_proj: np.ndarray
    down_proj: np.ndarray

    def __post_init__(self) -> None:
        gate = as_real_array(self.gate_proj, "gate_proj", min_ndim=2)
        if gate.ndim != 2:
            raise ValueError(f"gate_proj must be a 2-d (intermediate, hidden) matrix, got shape {gate.shape}")
        inter, hidden = gate.shape
        set_ = object.__setattr__
        set_(self, "gate_proj", _readonly_matrix(gate, "gate_proj", (inter, hidden), "(intermediate, hidden)"))
        set_(self, "up_proj", _readonly_matrix(self.up_proj, "up_proj", (inter, hidden), "(intermediate, hidden)"))
        set_(self, "down_proj", _readonly_matrix(self.down_proj, "down_proj", (hidden, inter), "(hidden, intermediate)"))

    @property
    def hidden(self) -> int:
        return self.gate_proj.shape[1]

    @property
    def intermediate(self) -> int:
        return self.gate_proj.shape[0]


@dataclass(frozen=True, eq=False)
class DecoderLayerWeights:
    """One LLaMA decoder layer: attention and MLP, each after its own RMSNorm (pre-norm).

    Parameters
    ----------
    attention : AttentionWeights
    mlp : MLPWeights
        Its ``hidden`` must be the attention's.
    input_norm : array_like, shape (hidden,)
        RMSNorm gain before attention (Hugging Face's ``input_layernorm.weight``).
    post_attention_norm : array_like, shape (hidden,)
        RMSNorm gain before the MLP (``post_attention_layernorm.weight``).
    """

    attention: AttentionWeights
    mlp: MLPWeights
    input_norm: np.ndarray
    post_attention_norm: np.ndarray

    def __post_init__(self) -> None:
        if not isinstance(self.attention, AttentionWeights):
            raise TypeError(f"attention must be AttentionWeights, got {type(self.attention).__name__}")
        if not isinstance(self.mlp, MLPWeights):
            raise TypeError(f"mlp must be MLPWeights, got {type(self.mlp).__name__}")
        hidden = self.attention.hidden
        if self.mlp.hidden != hidden:
            raise ValueError(f"mlp has hidden={self.mlp.hidden} but attention has hidden={hidden}")
        set_ = object.__setattr__
        set_(self, "input_norm", _readonly_vector(self.input_norm, "input_norm", hidden))
        set_(self, "post_attention_norm", _readonly_vector(self.post_attention_norm, "post_attention_norm", hidden))

    @property
    def layer_idx(self) -> int:
        return self.attention.layer_idx


@dataclass(frozen=True, eq=False)
class LlamaWeights:
    """A whole LLaMA-architecture language model (validated when constructed).

    Parameters
    ----------
    embed_tokens : array_like, shape (vocab, hidden)
        Token embeddings (row ``t`` is token ``t``'s input vector).
    layers : sequence of DecoderLayerWeights
        ``layers[i].layer_idx`` must be ``i``.
    norm : array_like, shape (hidden,)
        Gain of the final RMSNorm.
    lm_head : array_like, shape (vocab, hidden), optional
        Output projection; ``None`` ties it to ``embed_tokens`` (SmolLM2 does).
    eps : float, default 1e-6
        RMSNorm epsilon of every norm (``rms_norm_eps``).
    """

    embed_tokens: np.ndarray
    layers: tuple
    norm: np.ndarray
    lm_head: np.ndarray | None = None
    eps: float = 1e-6

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if isinstance(self.layers, DecoderLayerWeights) or not isinstance(self.layers, Sequence) or not self.layers:
            raise TypeError("layers must be a non-empty sequence (list or tuple) of DecoderLayerWeights")
        for i, layer in enumerate(self.layers):
            if not isinstance(layer, DecoderLayerWeights):
                raise TypeError(f"layers[{i}] must be DecoderLayerWeights, got {type(layer).__name__}")
            if layer.layer_idx != i:
                raise ValueError(f"layers[{i}] has layer_idx {layer.layer_idx}; layers must be given in order 0, 1, ...")
        hidden = self.layers[0].attention.hidden
        emb = as_real_array(self.embed_tokens, "embed_tokens", min_ndim=2)
        if emb.ndim != 2 or emb.shape[1] != hidden:
            raise ValueError(f"embed_tokens must have shape (vocab, hidden) with hidden={hidden}, got {emb.shape}")
        set_(self, "layers", tuple(self.layers))
        set_(self, "embed_tokens", _readonly_matrix(emb, "embed_tokens", emb.shape, "(vocab, hidden)"))
        set_(self, "norm", _readonly_vector(self.norm, "norm", hidden))
        if self.lm_head is not None:
            set_(self, "lm_head", _readonly_matrix(self.lm_head, "lm_head", emb.shape, "(vocab, hidden)"))
        set_(self, "eps", check_eps(self.eps))

    @property
    def vocab(self) -> int:
        return self.embed_tokens.shape[0]

    @property
    def hidden(self) -> int:
        return self.embed_tokens.shape[1]

    @property
    def tied(self) -> bool:
        """Whether the output projection is the embedding matrix (``lm_head is None``)."""
        return self.lm_head is None

    @property
    def attention_layers(self) -> tuple[AttentionWeights, ...]:
        return tuple(layer.attention for layer in self.layers)

    def with_attention(self, **changes: Any) -> "LlamaWeights":
        """A copy whose every attention layer has ``changes`` applied (e.g. ``layout="interleaved"``,
        ``inv_freq=...`` or new ``q_proj``/``k_proj`` via a callable), the rest shared.

        Each value may be a callable ``f(attention_weights) -> value``, called per layer.
        """
        from dataclasses import replace

        layers = []
        for layer in self.layers:
            att = layer.attention
            new = {k: (v(att) if callable(v) else v) for k, v in changes.items()}
            layers.append(replace(layer, attention=replace(att, **new)))
        return replace(self, layers=tuple(layers))
