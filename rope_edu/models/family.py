"""The :class:`Family` record: what one model family's RoPE code does, as data.

Every row of :data:`rope_edu.models.registry.FAMILIES` is a :class:`Family`. A new family is a new
row there; a field here only when no existing field (or layer rule of :mod:`.layers`, or
``rope_type`` entry of :mod:`.rope_types`) can say what its code does, and then the page's interpreter
(``_ext/model_check/``) needs the same rule.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .config import HF_THETA, ConfigReader

#: Where a family normalises queries and keys, relative to the rotation (informational).
QK_NORM: dict[str, str] = {
    "none": "no normalisation of queries and keys",
    "before_rope": "queries and keys are normalised, then rotated (the relative property survives)",
    "after_rope": "queries and keys are rotated, then divided by their root mean square, with no learned gain "
                  "(a rotation keeps norms, so the order does not matter)",
}


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated: read {new} (the same value)", DeprecationWarning, stacklevel=3)


@dataclass(frozen=True)
class Family:
    """One model family that :func:`rope_spec` reads, described by data.

    Most families differ only in data: where the rotated dims sit and how many, the pair layout,
    the default base, which layers rotate, how a per-layer-type config is keyed. The standard reader
    (:func:`read_family`) turns a configuration and these fields into a :class:`RopeSpec`; a family
    whose code needs more (GPT-J's fixed table, MiniMind outside transformers) names its own ``read``.

    Attributes
    ----------
    key, label : str
        Key in :data:`FAMILIES`; the models it covers.
    model_types : tuple of str
        The ``model_type`` values of their configurations.
    code : str
        Where the family's RoPE code lives (the reference the tests compare with).
    layout : {"half", "interleaved"}
        Which coordinates of the rotated block form a pair in the family's apply function.
    rotary : {"head", "fraction", "rotary_dim", "mla"}
        How many dims rotate: the whole head (a stated ``partial_rotary_factor`` other than 1 is an
        error: the family's code would ignore it or fail); the leading ``int(head_dim * fraction)``
        dims (``fraction_keys``, default ``default_fraction``); the leading ``rotary_dim`` dims; or
        multi-head latent attention: ``qk_rope_head_dim`` dims after ``qk_nope_head_dim`` pass-through dims.
    fraction_keys : tuple of str
        Fields naming the rotated fraction (v5 ``partial_rotary_factor``, GPT-NeoX's v4 ``rotary_pct``).
    rotary_dim_key : str or None
        A legacy field naming the rotated dims instead (MiniMax-M2's released ``rotary_dim``): its
        config class turns it into ``partial_rotary_factor = rotary_dim / head_dim``.
    default_fraction : float
        The config class's default fraction.
    theta_keys : tuple of str
        Top-level fields naming the base (v4 ``rope_theta``, GPT-NeoX's ``rotary_emb_base``).
    ignored_theta : tuple of str
        Top-level fields naming a base that the config class silently drops (GPTNeoXConfig,
        Gemma4TextConfig, Ministral3Config... ignore a ``rope_theta`` keyword and keep their default):
        rope_spec uses the default too and says so in :attr:`RopeSpec.defaults`; stated together with
        a different ``rope_parameters`` base, it is an error.
    ignored_scaling : tuple of str
        Top-level fields naming a RoPE scaling block that the config class keeps as a field of its own and never
        reads (Cohere2MoeConfig declares ``rope_scaling``, so transformers' setter never moves it into
        ``rope_parameters``: its code uses plain RoPE at ``rope_theta``). rope_spec does not read them either,
        and says so in :attr:`RopeSpec.defaults`.
    nested_only : bool
        The config class fills in ``rope_parameters`` nested by layer type when a config gives none
        (Gemma 4, LFM3...): a configuration without them is refused rather than guessed.
    default_theta : float or mapping
        The base transformers uses when a config states none, one value or one per layer type.
    head : str
        ``"head_dim"``: ``head_dim`` when stated, else ``head_default`` or, without one,
        ``hidden_size // num_attention_heads``; ``"split"``: always the latter; any other name: that
        field (JetMoE's ``kv_channels``).
    head_default : int or None
        The config class's own ``head_dim`` default, for a config that leaves ``head_dim`` out (Gemma 3:
        256, not ``hidden_size // num_attention_heads``; Qwen3: 128). A ``head_dim`` stated as null gets
        ``hidden_size // num_attention_heads`` (what the config classes that accept null compute).
    type_head : mapping or None
        Layer type -> ``(field, default)``: the config class builds a per-layer ``head_dim`` for the
        layers of that type from ``field`` (Gemma 4's ``global_head_dim``, default 512, for
        ``full_attention`` layers), unless the config gives its own ``per_layer_config``.
    qk_norm : str
        Key in :data:`QK_NORM`.
    rotating_layer_types : tuple of str or None
        Layer types (values of ``layer_types``, not RoPE types) whose attention rotates; other attention layers use no RoPE (Cohere 2 and
        EXAONE 4 rotate sliding-window layers only). None: every attention layer.
    layers : tuple or None
        The family's layer rule, one tagged value ``(tag, *arguments)`` of
        :data:`rope_edu.models.layers.LAYER_RULES`: how a config without ``layer_types`` names its
        layers, and which layers rotate (``("pattern", "sliding_window_pattern", 6)``: Gemma 3;
        ``("nope_flags", 4, "chunked_attention", "full_attention")``: Llama 4). None: the config's own
        ``layer_types``, and every attention layer rotates (up to ``rotating_layer_types``).
    rope_keys : mapping or None
        Layer type -> the key of its parameters in a nested ``rope_parameters``, where those keys are
        not the layer types (DeepSeek-V4: ``"main"`` for sliding-window layers, ``"compress"`` for
        the others; ``"*"`` is any other type). None: the layer type itself.
    rotary_at : {"start", "end"}
        Where a partially rotated head's rotated dims sit: leading (most families) or trailing
        (DeepSeek-V4).
    layer_notes : mapping or None
        Layer type -> what else its attention does with positions that the spec does not model.
    clockwise : bool
        The family's ``rotate_half`` has flipped signs: pairs turn by :math:`-m\\theta_i` (NanoChat).
    local_theta : tuple or None
        ``(field, layer type)``: a v4 config's separate base for that layer type (Gemma 3's
        ``rope_local_base_freq``), whose layers then use plain RoPE.
    flat_types : tuple of str or None
        Layer types a v4 (flat) ``rope_theta``/``rope_scaling`` reaches; the other types keep the
        config class's default base and plain RoPE (OLMo 3's config class does this).
    interleave : tuple or None
        ``(field, default)``: a flag that switches MLA families between interleaved pairs written
        back half-split (``True``) and half-split pairs (DeepSeek-V3's ``rope_interleave``).
    output_layout : str or None
        The order the code writes the rotated pairs back, when it differs from ``layout``.
    mrope : tuple or None
        ``(assignment, default mrope_section)`` for M-RoPE families.
    allowed_rope_types : tuple of str or None
        The ``rope_type`` values the family accepts (None: every one :func:`rope_spec` knows).
    allowed_rope_types_note : str
        Why the family refuses the ``rope_type`` values its code accepts but ``allowed_rope_types``
        leaves out (said in the error).
    rename : mapping
        ``rope_type`` aliases the config class rewrites (Phi-3: ``"su"`` -> ``"longrope"``).
    retype : mapping or None
        ``rope_type`` -> ``(field, other type)``: the family's code reads a block of that type that states
        ``field`` (truthy) as the other type (Hunyuan: ``"dynamic"`` with ``alpha`` is ``"ntk_alpha"``).
    scaling_layers : str or None
        A field listing the layers whose RoPE is scaled (Molmo 2's ``rope_scaling_layers``, which its config
        class fills with every layer); the other layers use the same base without scaling.
    default_block : mapping or None
        RoPE parameters the config class fills in when a config gives none (GPT-OSS's YaRN).
    top_level_original : bool
        A top-level ``original_max_position_embeddings`` wins over the RoPE dict's (Phi-3).
    class_defaults : mapping
        Defaults of the config class for fields beyond the RoPE block that ``extra`` or ``read`` reads (Llama 4's
        ``floor_scale`` 8192 and ``attn_scale`` 0.1, GPT-J's ``rotary_dim`` 64): used, and listed in
        :attr:`RopeSpec.defaults`, when a config leaves them out. ``tests/test_model_sweep.py`` compares them
        with the config classes.
    extra : callable or None
        ``extra(cfg, parts) -> dict`` for fields beyond RoPE itself that the family's attention
        applies (Llama 4's NoPE temperature, MLA's softmax scale).
    read : callable or None
        ``read(cfg, layer_type, layer) -> dict`` replacing the standard reader.
    """

    key: str
    label: str
    model_types: tuple[str, ...]
    code: str
    layout: str = "half"
    rotary: str = "head"
    fraction_keys: tuple[str, ...] = ("partial_rotary_factor",)
    rotary_dim_key: str | None = None
    default_fraction: float = 1.0
    theta_keys: tuple[str, ...] = ("rope_theta",)
    ignored_theta: tuple[str, ...] = ()
    ignored_scaling: tuple[str, ...] = ()
    nested_only: bool = False
    default_theta: float | Mapping[str, float] = HF_THETA
    head: str = "head_dim"
    head_default: int | None = None
    type_head: Mapping[str, tuple[str, int]] | None = field(default=None, repr=False)
    qk_norm: str = "none"
    rotating_layer_types: tuple[str, ...] | None = None
    layers: tuple[Any, ...] | None = None
    rope_keys: Mapping[str, str] | None = field(default=None, repr=False)
    rotary_at: str = "start"
    layer_notes: Mapping[str, str] | None = field(default=None, repr=False)
    clockwise: bool = False
    local_theta: tuple[str, str] | None = None
    flat_types: tuple[str, ...] | None = None
    interleave: tuple[str, bool] | None = None
    output_layout: str | None = None
    mrope: tuple[str, tuple[int, int, int]] | None = None
    allowed_rope_types: tuple[str, ...] | None = None
    allowed_rope_types_note: str = ""
    rename: Mapping[str, str] = field(default_factory=dict, repr=False)
    retype: Mapping[str, tuple[str, str]] | None = field(default=None, repr=False)
    scaling_layers: str | None = None
    default_block: Mapping[str, Any] | None = field(default=None, repr=False)
    top_level_original: bool = False
    class_defaults: Mapping[str, Any] = field(default_factory=dict, repr=False)
    extra: Callable[[ConfigReader, dict[str, Any]], dict[str, Any]] | None = field(default=None, repr=False)
    read: Callable[[ConfigReader, Any, Any], dict[str, Any]] | None = field(default=None, repr=False)

    # --- deprecated names (they said "RoPE types" of what are layer types, "scalings" of RoPE types)

    @property
    def rope_types(self) -> tuple[str, ...] | None:
        """Deprecated: the old name of :attr:`rotating_layer_types`."""
        _renamed("Family.rope_types", "Family.rotating_layer_types (layer types, not RoPE types)")
        return self.rotating_layer_types

    @property
    def scalings(self) -> tuple[str, ...] | None:
        """Deprecated: the old name of :attr:`allowed_rope_types`."""
        _renamed("Family.scalings", "Family.allowed_rope_types")
        return self.allowed_rope_types

    @property
    def scalings_note(self) -> str:
        """Deprecated: the old name of :attr:`allowed_rope_types_note`."""
        _renamed("Family.scalings_note", "Family.allowed_rope_types_note")
        return self.allowed_rope_types_note

    def theta_default(self, layer_type: str | None) -> float:
        if isinstance(self.default_theta, Mapping):
            if layer_type is not None and layer_type in self.default_theta:
                return float(self.default_theta[layer_type])
            return float(self.default_theta["*"])
        return float(self.default_theta)

