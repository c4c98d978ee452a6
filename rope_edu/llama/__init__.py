"""A LLaMA-style attention layer in numpy: RoPE on queries and keys, grouped-query heads, KV cache.

Written to be read next to Hugging Face's ``LlamaAttention`` (and checked against it in the
tests). One layer does, for the new tokens ``x`` at ``positions``::

    1. q = RoPE(split_heads(x @ q_proj.T))        per head, the same rotation for every head
       k = RoPE(split_heads(x @ k_proj.T))
       v = split_heads(x @ v_proj.T)              values: no RoPE
    2. keys, values = cache + (k, v)              keys are cached after rotation
    3. a = softmax(q @ repeat_kv(keys).T / sqrt(D) + mask)   causal mask aligned to the last keys
    4. out = merge_heads(a @ repeat_kv(values)) @ o_proj.T

Shapes, with ``B`` the batch, ``S`` the number of new tokens, ``L`` the number of keys (cached +
new), ``H`` query heads, ``G`` key/value heads (``H % G == 0``; grouped-query attention when
``G < H``, multi-query when ``G == 1``) and ``D`` the head dimension (even):

* hidden states ``x``: ``(B, S, hidden)``;
* weights as in Hugging Face's ``nn.Linear`` (``(out_features, in_features)``): ``q_proj``
  ``(H*D, hidden)``, ``k_proj`` and ``v_proj`` ``(G*D, hidden)``, ``o_proj`` ``(hidden, H*D)``;
* per-head queries ``(B, H, S, D)``, keys and values ``(B, G, L, D)``;
* positions ``(S,)`` (shared by the batch) or ``(B, S)`` (one row per sequence, e.g. with
  left padding).

The whole decoder around it (enough to run a trained LLaMA-architecture model, e.g. SmolLM2 read
by :mod:`rope_edu.trained`): :class:`MLPWeights` and :func:`swiglu_mlp` (``down(silu(gate x) *
up x)``), :class:`DecoderLayerWeights` and :func:`decoder_layer` (pre-norm attention and MLP with
RMSNorm gains), and :class:`LlamaWeights` and :func:`llama_forward` (token embeddings, the
layers, a final RMSNorm and the output projection, tied to the embeddings when ``lm_head`` is
``None``), the numpy twins of Hugging Face's ``LlamaMLP``, ``LlamaDecoderLayer`` and
``LlamaForCausalLM``; :func:`token_log_likelihoods` turns logits into a perplexity.

Everything is a plain function over numpy arrays; weights and caches are frozen dataclasses, so a
decoding step returns a *new* cache instead of changing the old one.

The package holds one concern a module: :mod:`.weights` (the frozen, validated parameters),
:mod:`.attention` (heads, positions, the KV cache and the attention layer) and :mod:`.forward`
(RMSNorm, the MLP, decoder layers and the whole model); every name below is importable from
``rope_edu.llama`` itself.
"""

from __future__ import annotations

from .attention import (
    KVCache,
    default_positions,
    llama_attention,
    llama_attention_weights,
    merge_heads,
    positions_from_padding,
    project_qkv,
    repeat_kv,
    split_heads,
)
from .forward import decoder_layer, llama_forward, llama_stack, log_softmax, rms_norm, silu, swiglu_mlp, token_log_likelihoods
from .weights import (
    AttentionWeights,
    DecoderLayerWeights,
    LlamaWeights,
    MLPWeights,
    init_attention_weights,
    init_stack_weights,
)

__all__ = [
    "AttentionWeights",
    "KVCache",
    "init_attention_weights",
    "init_stack_weights",
    "split_heads",
    "merge_heads",
    "repeat_kv",
    "default_positions",
    "positions_from_padding",
    "project_qkv",
    "llama_attention",
    "llama_attention_weights",
    "rms_norm",
    "llama_stack",
    "MLPWeights",
    "DecoderLayerWeights",
    "LlamaWeights",
    "silu",
    "swiglu_mlp",
    "decoder_layer",
    "llama_forward",
    "log_softmax",
    "token_log_likelihoods",
]
