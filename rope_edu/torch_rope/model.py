"""A whole LLaMA-architecture model in torch on rope_edu's numpy weights, RoPE by :func:`~.rotation.apply_rope`.

:class:`TorchLlama` copies a :class:`rope_edu.llama.LlamaWeights` to a device and dtype once and
runs :func:`rope_edu.llama.llama_forward`'s steps with ``scaled_dot_product_attention``: tokens of
shape ``(B, S)`` give logits ``(B, S, vocab)`` or hidden states ``(B, S, hidden)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .rotation import apply_rope, check_float_dtype, check_positions_tensor

__all__ = ["TorchLlama"]


class TorchLlama:
    """The forward pass of :func:`rope_edu.llama.llama_forward` in PyTorch, RoPE by :func:`apply_rope`.

    Built from a :class:`rope_edu.llama.LlamaWeights` (e.g. :func:`rope_edu.trained.load_llama`'s
    SmolLM2), whose arrays are copied once to ``device`` in ``dtype``; each call then runs the
    same steps as the numpy code (embedding, per layer RMSNorm, attention with RoPE on q and k
    and grouped-query heads, RMSNorm, SwiGLU MLP, final RMSNorm, output projection) with
    ``torch.nn.functional.scaled_dot_product_attention``. Every layer keeps its own layout and
    frequencies.

    Parameters
    ----------
    model : rope_edu.llama.LlamaWeights
    device : torch.device or str, optional
        Default: the CPU.
    dtype : torch floating dtype, default torch.float32
        Weights and activations. RoPE angles are computed in float32 at least
        (:func:`apply_rope`'s precision policy), float64 for float64.
    """

    def __init__(self, model: Any, *, device: Any = None, dtype: torch.dtype = torch.float32) -> None:
        from ..llama import LlamaWeights

        if not isinstance(model, LlamaWeights):
            raise TypeError(f"model must be rope_edu.llama.LlamaWeights, got {type(model).__name__}")
        self.dtype = check_float_dtype(dtype, "dtype")
        self.device = torch.device("cpu") if device is None else torch.device(device)

        def t(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.array(a)).to(device=self.device, dtype=self.dtype)  # np.array: a writable copy

        self.eps = model.eps
        self.vocab = model.vocab
        self.embed = t(model.embed_tokens)
        self.head = self.embed if model.lm_head is None else t(model.lm_head)
        self.norm = t(model.norm)
        self.layers = []
        for layer in model.layers:
            a = layer.attention
            self.layers.append(dict(
                q=t(a.q_proj), k=t(a.k_proj), v=t(a.v_proj), o=t(a.o_proj),
                n_heads=a.n_heads, n_kv_heads=a.n_kv_heads, head_dim=a.head_dim, layout=a.layout,
                scaling=a.attention_scaling,
                inv_freq=torch.from_numpy(np.array(a.frequencies, dtype=np.float64)),  # a writable copy
                gate=t(layer.mlp.gate_proj), up=t(layer.mlp.up_proj), down=t(layer.mlp.down_proj),
                norm1=t(layer.input_norm), norm2=t(layer.post_attention_norm),
            ))

    def with_frequencies(self, inv_freq: Any, attention_scaling: float = 1.0) -> "TorchLlama":
        """This model with other RoPE frequencies in every layer, its weight tensors shared, not copied.

        What :class:`TorchLlama` built from ``model.with_attention(inv_freq=..., attention_scaling=...)``
        computes, without copying the weights again (a scaled RoPE is only other frequencies, and
        YaRN's factor on cos and sin).

        Parameters
        ----------
        inv_freq : array_like, shape (head_dim // 2,)
            Finite frequencies in rad per token.
        attention_scaling : float, default 1.0
            Positive factor on the rotated queries and keys.

        Returns
        -------
        TorchLlama
        """
        import copy

        from .._checks import check_inv_freq, check_positive

        scaling = check_positive(attention_scaling, "attention_scaling")
        new = copy.copy(self)
        new.layers = [
            {**L, "inv_freq": torch.from_numpy(check_inv_freq(inv_freq, L["head_dim"]).copy()), "scaling": scaling}
            for L in self.layers
        ]
        return new

    def rms_norm(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """RMSNorm of hidden states ``x`` (..., hidden) with weight ``w`` (hidden,) and this model's eps
        (the scripts that run the layers one at a time call it)."""
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * w

    def __call__(self, tokens: Any, positions: Any = None) -> torch.Tensor:
        """Logits of every token.

        Parameters
        ----------
        tokens : torch.Tensor or array_like of int, shape (S,) or (B, S)
        positions : torch.Tensor or array_like, shape (S,), optional
            Default ``arange(S)``.

        Returns
        -------
        torch.Tensor, shape (B, S, vocab), on ``device`` in ``dtype``
        """
        return self.hidden_states(tokens, positions) @ self.head.T

    @torch.no_grad()
    def hidden_states(self, tokens: Any, positions: Any = None) -> torch.Tensor:
        """The final hidden states, after the last RMSNorm: ``logits = hidden_states @ head.T``.

        Same arguments as calling the model; returns shape (B, S, hidden). For long sequences,
        where the ``(S, vocab)`` logits would be large, take them a block of rows at a time.
        """
        ids = torch.as_tensor(np.asarray(tokens) if not isinstance(tokens, torch.Tensor) else tokens)
        if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
            raise TypeError(f"tokens must be integer token ids, got dtype {ids.dtype}")
        if ids.ndim == 1:
            ids = ids[None]
        if ids.ndim != 2 or ids.shape[1] == 0:
            raise ValueError(f"tokens must have shape (seq,) or (batch, seq) with seq >= 1, got {tuple(ids.shape)}")
        if int(ids.min()) < 0 or int(ids.max()) >= self.vocab:
            raise ValueError(f"tokens must be ids in 0 .. {self.vocab - 1} (the vocabulary)")
        b, s = ids.shape
        pos = torch.arange(s) if positions is None else check_positions_tensor(positions, (s,))
        h = self.embed[ids.to(self.device)]
        for L in self.layers:
            x = self.rms_norm(h, L["norm1"])
            q = (x @ L["q"].T).view(b, s, L["n_heads"], L["head_dim"]).transpose(1, 2)
            k = (x @ L["k"].T).view(b, s, L["n_kv_heads"], L["head_dim"]).transpose(1, 2)
            v = (x @ L["v"].T).view(b, s, L["n_kv_heads"], L["head_dim"]).transpose(1, 2)
            rope = dict(layout=L["layout"], inv_freq=L["inv_freq"])
            q, k = apply_rope(q, pos, **rope), apply_rope(k, pos, **rope)
            if L["scaling"] != 1.0:  # a scaled RoPE's attention factor (YaRN): on cos and sin
                q, k = q * L["scaling"], k * L["scaling"]
            rep = L["n_heads"] // L["n_kv_heads"]
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
            att = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            h = h + att.transpose(1, 2).reshape(b, s, -1) @ L["o"].T
            x = self.rms_norm(h, L["norm2"])
            h = h + (torch.nn.functional.silu(x @ L["gate"].T) * (x @ L["up"].T)) @ L["down"].T
        return self.rms_norm(h, self.norm)
