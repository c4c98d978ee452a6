"""The spec: :func:`rope_spec` reads a configuration into a :class:`RopeSpec`, which applies it.

:func:`rope_spec` finds the family (through a multimodal wrapper's ``text_config`` where there is one),
runs its reader (:func:`~rope_edu.models.reader.read_family` or the family's own) and checks the
result; :class:`RopeSpec` computes the frequencies (its ``rope_type``'s entry of
:data:`~rope_edu.models.rope_types.ROPE_TYPES`), rotates queries and keys as the family's code
does, and describes itself.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np

from .._checks import as_real_array, check_choice, check_int, finite_float64, float_dtype, real_array
from ..attention import power_scale
from ..multidim import apply_mrope
from ..rope import LAYOUTS, apply_rope, layout_permutation
from .config import Default, ConfigReader, RopeBlock
from .family import QK_NORM
from .reader import read_family
from .registry import FLAT_WRAPPERS, WRAPPERS, FAMILIES, MODEL_TYPES, UNSUPPORTED
from .rope_types import ROPE_TYPES


# --- the spec ---------------------------------------------------------------------------------


def _reorder_interleaved_to_half(block: np.ndarray) -> np.ndarray:
    return block[..., layout_permutation(block.shape[-1])]


def _reorder_half_to_interleaved(block: np.ndarray) -> np.ndarray:
    return block[..., np.argsort(layout_permutation(block.shape[-1]))]


#: (layout read, layout written) -> how the rotated block is reordered when the two differ.
_REORDER: dict[tuple[str, str], Callable[[np.ndarray], np.ndarray]] = {
    ("interleaved", "half"): _reorder_interleaved_to_half,
    ("half", "interleaved"): _reorder_half_to_interleaved,
}


@dataclass(frozen=True)
class RopeSpec:
    """What one layer of a model does with RoPE, as its family's code does it.

    Attributes
    ----------
    family : str
        Key in :data:`FAMILIES`.
    model_type : str
        The configuration's ``model_type``.
    head_dim : int
        Size of a query/key head, the last axis of ``x`` in :meth:`apply` (DeepSeek-V3:
        ``qk_nope_head_dim + qk_rope_head_dim``).
    rotary_dim : int
        How many of those coordinates rotate (even). The frequencies are
        :math:`\\theta_i = b^{-2i/\\text{rotary\\_dim}}`.
    rotary_offset : int
        Index of the first rotated coordinate: 0 (the rotated block comes first, the rest passes
        through) except DeepSeek-V3, whose rotary part is the last ``qk_rope_head_dim`` coordinates.
    layout : {"half", "interleaved"}
        Which coordinates of the rotated block form pair :math:`i` (see :data:`rope_edu.LAYOUTS`).
    output_layout : {"half", "interleaved"}
        The order in which the code writes the rotated pairs back. Equal to ``layout`` except for
        DeepSeek-V3 with ``rope_interleave``: it reads interleaved pairs and writes them half-split
        (queries and keys alike, so every dot product is unchanged).
    base : float
        The RoPE base :math:`b` (``rope_theta``).
    rope_type : str
        How the frequencies are scaled, by transformers' name: a key of
        :data:`~rope_edu.models.rope_types.ROPE_TYPES` (``"default"``: not scaled). Its old name
        ``scaling`` still reads it, with a ``DeprecationWarning``.
    rope_params : mapping
        The ``rope_type``'s parameters (``seq_len`` excluded: :meth:`apply` computes it). Its old
        name ``scaling_params`` still reads it, with a ``DeprecationWarning``.
    attention_factor : float
        Multiplies cos and sin, so rotated queries and keys (logits of the rotated part times its square).
    softmax_scale_factor : float
        Multiplies the family's softmax scale (1 except DeepSeek-V3 with ``mscale_all_dim``, where
        YaRN's temperature is moved into the softmax scale: :math:`\\mathrm{mscale}^2`).
    uses_rope : bool
        False for NoPE layers (SmolLM3, Llama 4): queries and keys are not rotated.
    qk_norm : str
        Key in :data:`QK_NORM` (informational; :meth:`apply` does not normalise).
    layer_type, layer : str or None, int or None
        The layer selected (when the configuration has per-layer settings).
    temperature_tuning : tuple of float or None
        Llama 4 NoPE layers: ``(floor_scale, attn_scale)``; queries at position :math:`m` are
        multiplied by :math:`1 + \\text{attn\\_scale}\\,\\ln(1 + \\lfloor (m+1)/\\text{floor\\_scale}\\rfloor)`.
        ``transformers`` takes :math:`m` from the cache position (the token's index in its row plus
        the cached length), not from ``position_ids``; :meth:`apply` takes it from ``positions``,
        so pass the cache positions to reproduce it for padded or packed rows.
    max_positions : int or None
        GPT-J: its cos/sin table covers positions ``0 .. max_positions - 1`` only.
    defaults : tuple of str
        Fields the configuration left out, filled with the default ``transformers`` documents (and
        stated fields the family's code does not read), one line each: ``str`` of the records in
        ``default_records``.
    default_records : tuple of Default
        The same, as records (:class:`~rope_edu.models.config.Default`: ``field``, ``value``,
        ``source``, ``kind``, ``rule``): read these rather than parse the lines.
    mrope_section, mrope_assignment : tuple of 3 ints or None, str or None
        M-RoPE families (Qwen2-VL, Qwen2.5-VL, Qwen3-VL): pairs given to (time, height, width) and how
        (:data:`rope_edu.multidim.MROPE_ASSIGNMENTS`); :meth:`apply` then takes 3-D positions.
    rotating_pairs : int or None
        Proportional RoPE (Gemma 4's global layers): only the first ``rotating_pairs`` of the
        ``rotary_dim // 2`` pairs turn, at :math:`\\theta_i = b^{-2i/\\text{rotary\\_dim}}` (the whole
        head's denominator); the other pairs have frequency 0. None: every pair turns.
    query_scale : tuple of float or None
        Ministral 3, Mistral 4: ``(length, beta)``; after RoPE, queries at position :math:`m` are
        multiplied by :math:`1 + \\beta\\,\\ln(1 + \\lfloor m/\\text{length}\\rfloor)` (from ``position_ids``).
    query_power : tuple of float or None
        Beam's NoPE layers: ``(length, exponent)``; queries at position :math:`m` are multiplied by
        :math:`(1 + (m+1)/\\text{length})^{\\text{exponent}}` (its ``compute_attention_scaling``, a
        scalable-softmax temperature; :func:`rope_edu.attention.power_scale`).
    clockwise : bool
        True when the family's code turns pair :math:`i` by :math:`-m\\theta_i` (its ``rotate_half``
        has flipped signs, NanoChat): :meth:`apply` and :meth:`cos_sin` do the same.
    note : str
        What else the layer's attention does with positions that :meth:`apply` does not (DeepSeek-V4's
        compressed key entries).
    no_rope_reason : str
        Why a layer with ``uses_rope`` False has no RoPE (NoPE layer, global layer of a family that
        rotates sliding-window layers only, a layer without attention).
    """

    family: str
    model_type: str
    head_dim: int
    rotary_dim: int
    rotary_offset: int
    layout: str
    output_layout: str
    base: float
    rope_type: str
    rope_params: Mapping[str, Any] = field(hash=False)
    attention_factor: float
    softmax_scale_factor: float = 1.0
    uses_rope: bool = True
    qk_norm: str = "none"
    layer_type: str | None = None
    layer: int | None = None
    temperature_tuning: tuple[float, float] | None = None
    max_positions: int | None = None
    defaults: tuple[str, ...] = ()
    mrope_section: tuple[int, ...] | None = None
    mrope_assignment: str | None = None
    rotating_pairs: int | None = None
    no_rope_reason: str = ""
    clockwise: bool = False
    query_scale: tuple[float, float] | None = None
    query_power: tuple[float, float] | None = None
    note: str = ""
    default_records: tuple[Default, ...] = field(default=(), hash=False, compare=False)

    @property
    def scaling(self) -> str:
        """Deprecated: the old name of :attr:`rope_type`."""
        warnings.warn("RopeSpec.scaling is deprecated: read RopeSpec.rope_type (the same value, transformers' name)",
                      DeprecationWarning, stacklevel=2)
        return self.rope_type

    @property
    def scaling_params(self) -> Mapping[str, Any]:
        """Deprecated: the old name of :attr:`rope_params`."""
        warnings.warn("RopeSpec.scaling_params is deprecated: read RopeSpec.rope_params (the same mapping, "
                      "transformers' name)", DeprecationWarning, stacklevel=2)
        return self.rope_params

    # --- frequencies ---------------------------------------------------------------------------

    @property
    def rotary_fraction(self) -> float:
        """``rotary_dim / head_dim``."""
        return self.rotary_dim / self.head_dim

    @property
    def depends_on_length(self) -> bool:
        """True when the frequencies change with the sequence length (dynamic NTK, LongRoPE)."""
        return ROPE_TYPES[self.rope_type].depends_on_length

    @property
    def loaded_seq_len(self) -> str | None:
        """The parameter holding the length the frequencies are built for once loaded, when no
        ``seq_len`` is given (dynamic NTK: ``original_max_position_embeddings``; else None)."""
        return ROPE_TYPES[self.rope_type].loaded_seq_len

    def _frequencies(self, seq_len: int | None) -> tuple[np.ndarray, float]:
        if not self.uses_rope:
            raise ValueError(
                f"this layer uses no RoPE (uses_rope is False: a NoPE layer of {self.family!r}); "
                "it has no frequencies"
            )
        params = dict(self.rope_params)
        if self.depends_on_length:
            if seq_len is not None:
                seq_len = check_int(seq_len, "seq_len", 1)
            elif self.loaded_seq_len is not None:
                # what transformers holds after loading (dynamic NTK: its original length, no change)
                seq_len = params[self.loaded_seq_len]
            params["seq_len"] = seq_len
        elif seq_len is not None:
            check_int(seq_len, "seq_len", 1)
        return ROPE_TYPES[self.rope_type].frequencies(self.rotary_dim, self.base, params, self.rotating_pairs)

    def inv_freq(self, seq_len: int | None = None) -> np.ndarray:
        """Frequencies :math:`\\theta_i` of the ``rotary_dim // 2`` pairs, in radians per position.

        Parameters
        ----------
        seq_len : int, optional
            Sequence length (positions ``0 .. seq_len - 1``). Only dynamic NTK and LongRoPE depend on
            it; without it they return what ``transformers`` holds after loading (plain frequencies,
            LongRoPE's short factors).

        Returns
        -------
        numpy.ndarray, shape (rotary_dim // 2,), float64
        """
        return self._frequencies(seq_len)[0]

    def wavelengths(self, seq_len: int | None = None) -> np.ndarray:
        """:math:`2\\pi/\\theta_i` in positions, shape ``(rotary_dim // 2,)`` (inf for a pair that does
        not turn: proportional RoPE's unused pairs)."""
        with np.errstate(divide="ignore"):
            return 2.0 * np.pi / self.inv_freq(seq_len)

    def cos_sin(self, positions: Any, seq_len: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per-pair ``attention_factor * cos(m θ_i)`` and ``attention_factor * sin(m θ_i)``.

        Parameters
        ----------
        positions : array_like, shape (...)
            Token positions.
        seq_len : int, optional
            As in :meth:`inv_freq`; by default ``max(positions) + 1``, as ``transformers`` does.

        Returns
        -------
        cos, sin : numpy.ndarray, shape positions.shape + (rotary_dim // 2,), float64
            One value per pair (``transformers`` repeats them over the pair's two coordinates).
        """
        pos = finite_float64(real_array(positions, "positions"), "positions")
        inv_freq, factor = self._frequencies(self._length(pos, seq_len))
        angles = pos[..., None] * inv_freq
        if self.clockwise:
            angles = -angles
        return factor * np.cos(angles), factor * np.sin(angles)

    def _length(self, pos: np.ndarray, seq_len: int | None) -> int | None:
        if seq_len is not None or not self.depends_on_length or pos.size == 0:
            return seq_len
        return max(int(np.floor(np.max(pos))) + 1, 1)

    # --- applying it ---------------------------------------------------------------------------

    def apply(self, x: Any, positions: Any, *, seq_len: int | None = None, role: str = "query") -> np.ndarray:
        """What the family's code does to queries (or keys) ``x`` at ``positions``.

        The rotated block (``rotary_offset`` to ``rotary_offset + rotary_dim``) is rotated in
        ``layout`` pairs, written back in ``output_layout`` order and multiplied by
        ``attention_factor``; the other coordinates pass through unchanged. A NoPE layer returns
        ``x`` unchanged, except that Llama 4 multiplies queries by its temperature.

        Parameters
        ----------
        x : array_like, shape (batch, heads, seq, head_dim)
            Queries or keys after their projection (and QK-norm, where the family has one before RoPE).
        positions : array_like, shape (seq,) or (batch, seq)
            Position ids (a batch of 1 is broadcast). Reset them per document for packed sequences.
            Llama 4's NoPE temperature reads them as cache positions (see ``temperature_tuning``).
            M-RoPE families take (time, height, width) ids of shape ``(3, seq)`` or ``(3, batch, seq)``
            (:func:`rope_edu.multidim.mrope_position_ids`), or text ids of shape ``(seq,)`` or ``(batch, seq)``
            (the same id on the three axes, as transformers reads a 2-D ``position_ids``; ``(3, seq)`` with a
            batch of 3 is ambiguous and refused).
        seq_len : int, optional
            The length that selects dynamic-NTK or LongRoPE frequencies; by default
            ``max(positions) + 1``, as ``transformers`` computes it from ``position_ids`` (its
            dynamic module also keeps the largest length seen until a sequence shorter than
            ``max_position_embeddings`` comes; pass ``seq_len`` to reproduce that).
        role : {"query", "key"}, default "query"
            Keys skip Llama 4's NoPE temperature; everything else is the same for both.

        Returns
        -------
        numpy.ndarray, shape x.shape
            Float input keeps its dtype (angles in float64); integer input becomes float64.
        """
        role = check_choice(role, ("query", "key"), "role")
        x = as_real_array(x, "x")
        if x.ndim != 4:
            raise ValueError(f"x must have shape (batch, heads, seq, head_dim), got a {x.ndim}-d array of shape {x.shape}")
        if x.shape[-1] != self.head_dim:
            raise ValueError(
                f"x.shape[-1] must be head_dim = {self.head_dim} for this {self.family!r} spec, got {x.shape[-1]}"
            )
        if self.mrope_section is not None:
            if self.mrope_assignment is None:
                raise ValueError("an M-RoPE spec (mrope_section set) needs its mrope_assignment")
            positions = _mrope_text_rows(positions, x.shape[0], x.shape[2])
            inv_freq, factor = self._frequencies(seq_len)
            part = slice(self.rotary_offset, self.rotary_offset + self.rotary_dim)
            block = apply_mrope(x[..., part], positions, mrope_section=self.mrope_section, inv_freq=inv_freq,
                                assignment=self.mrope_assignment, layout=self.layout)
            out = x.astype(block.dtype, copy=True)
            out[..., part] = factor * block  # the rest of a partially rotated head passes (Qwen3.5)
            return out
        pos = _positions(positions, x.shape[0], x.shape[2])
        out = x.astype(float_dtype(x.dtype), copy=True)
        if self.uses_rope:
            if self.max_positions is not None and pos.size and (pos.min() < 0 or pos.max() >= self.max_positions):
                raise ValueError(
                    f"positions must lie in [0, {self.max_positions}): {self.family!r} looks cos and sin up in a "
                    f"table of n_positions = {self.max_positions} rows"
                )
            inv_freq, factor = self._frequencies(self._length(pos, seq_len))
            part = slice(self.rotary_offset, self.rotary_offset + self.rotary_dim)
            turns = -pos if self.clockwise else pos
            block = apply_rope(x[..., part], turns[:, None, :], inv_freq=inv_freq, layout=self.layout)
            if self.output_layout != self.layout:
                block = _REORDER[(self.layout, self.output_layout)](block)
            out[..., part] = factor * block
            if self.query_scale is not None and role == "query":
                length, beta = self.query_scale
                scale = 1.0 + beta * np.log1p(np.floor(pos / length))
                out = (out * scale[:, None, :, None]).astype(out.dtype, copy=False)
        elif self.temperature_tuning is not None and role == "query":
            floor_scale, attn_scale = self.temperature_tuning
            scale = np.log1p(np.floor((pos + 1.0) / floor_scale)) * attn_scale + 1.0
            out = (out * scale[:, None, :, None]).astype(out.dtype, copy=False)
        elif self.query_power is not None and role == "query":
            scale = power_scale(pos, *self.query_power)
            out = (out * scale[:, None, :, None]).astype(out.dtype, copy=False)
        return out

    # --- for people ------------------------------------------------------------------------------

    def describe(self) -> str:
        """A short readable summary (what to paste into a bug report)."""
        label = FAMILIES[self.family].label
        where = []
        if self.layer is not None:
            where.append(f"layer {self.layer}")
        if self.layer_type is not None:
            where.append(f"layer type {self.layer_type!r}")
        lines = [f"{label} (model_type {self.model_type!r})" + (", " + ", ".join(where) if where else "")]
        if not self.uses_rope:
            lines.append(f"  NoPE layer: queries and keys are not rotated (head_dim {self.head_dim})"
                         + (f": {self.no_rope_reason}" if self.no_rope_reason else ""))
            if self.temperature_tuning is not None:
                fs, s = self.temperature_tuning
                lines.append(f"  queries scaled by 1 + {s:g} * ln(1 + floor((m + 1) / {fs:g})) at position m")
            if self.query_power is not None:
                length, power = self.query_power
                lines.append(f"  queries scaled by (1 + (m + 1) / {length:g}) ** {power:g} at position m")
        else:
            start, r = self.rotary_offset, self.rotary_dim
            if self.layout == "half":
                pairs = f"half-split pairs ({start} + i, {start} + i + {r // 2})" if start else f"half-split pairs (i, i + {r // 2})"
            else:
                pairs = f"interleaved pairs ({start} + 2i, {start} + 2i + 1)" if start else "interleaved pairs (2i, 2i + 1)"
            lines.append(
                f"  head_dim {self.head_dim}: rotates {r} dims ({100 * self.rotary_fraction:.0f}%), "
                f"coordinates {start}..{start + r - 1}, in {pairs}"
            )
            if self.rotating_pairs is not None:
                lines.append(f"  proportional: only pairs 0..{self.rotating_pairs - 1} turn (frequencies over the whole "
                             f"head, b^(-2i/{self.rotary_dim})); pairs {self.rotating_pairs}..{r // 2 - 1} stay put")
            if self.mrope_section is not None:
                lines.append(f"  M-RoPE: pairs split {list(self.mrope_section)} among (time, height, width), "
                             f"{self.mrope_assignment}; positions of shape (3, seq) or (3, batch, seq)")
            if self.output_layout != self.layout:
                lines.append(f"  writes the rotated pairs back in {self.output_layout!r} order (queries and keys alike)")
            if r < self.head_dim:
                lines.append(f"  {self.head_dim - r} coordinates pass through without position")
            params = ", ".join(f"{k}={_short(v)}" for k, v in self.rope_params.items())
            lines.append(f"  base {self.base:,.0f}; scaling {self.rope_type!r}" + (f": {params}" if params else ""))
            wl = self.wavelengths()
            wl = wl[np.isfinite(wl)]
            lines.append(f"  wavelengths {wl.min():.3g} .. {wl.max():.3g} positions"
                         + (" (at loading; they change with the length)" if self.depends_on_length else ""))
            if self.attention_factor != 1.0:
                lines.append(f"  attention factor {self.attention_factor:.6g} on cos and sin "
                             f"(rotated logits x {self.attention_factor ** 2:.6g})")
        if self.note:
            lines.append(f"  note: {self.note}")
        if self.softmax_scale_factor != 1.0:
            lines.append(f"  softmax scale x {self.softmax_scale_factor:.6g} (YaRN's mscale squared)")
        if self.max_positions is not None:
            lines.append(f"  positions limited to 0..{self.max_positions - 1} (precomputed table)")
        lines.append(f"  QK-norm: {QK_NORM[self.qk_norm]}")
        for text in self.defaults:
            lines.append(f"  default used: {text}")
        return "\n".join(lines)


def _short(value: Any) -> str:
    if isinstance(value, tuple) and len(value) > 4:
        return f"[{len(value)} values: {value[0]:.4g} .. {value[-1]:.4g}]"
    return repr(value)


def _positions(positions: Any, batch: int, seq: int) -> np.ndarray:
    """Position ids of shape (seq,) or (batch, seq) as a float64 (batch or 1, seq) array."""
    pos = real_array(positions, "positions")
    if pos.ndim == 1 and pos.shape == (seq,):
        pos = pos[None, :]
    elif not (pos.ndim == 2 and pos.shape[1] == seq and pos.shape[0] in (1, batch)):
        raise ValueError(
            f"positions must have shape (seq,) = ({seq},) or (batch, seq) = ({batch}, {seq}) for x of "
            f"batch {batch} and seq {seq}, got shape {pos.shape}"
        )
    return finite_float64(pos, "positions")


def _mrope_text_rows(positions: Any, batch: int, seq: int) -> Any:
    """M-RoPE positions: text ids per batch row, shape (batch, seq), become the same ids on the three axes,
    as transformers reads a 2-D ``position_ids``; (3, seq) with a batch of 3 is refused (ambiguous)."""
    pos = np.asarray(positions)
    if pos.ndim != 2 or pos.shape[-1] != seq:
        return positions
    if pos.shape[0] == 3:
        if batch == 3:
            raise ValueError(
                f"positions of shape {pos.shape} with a batch of 3 is ambiguous: transformers reads a 2-D position_ids "
                "as (batch, seq) text ids, rope_spec's (3, seq) as (time, height, width) ids of one row; pass "
                "(3, batch, seq) ids, or text ids of shape (batch, seq) broadcast to (3, batch, seq)"
            )
        return positions
    if pos.shape[0] in (1, batch):
        return np.broadcast_to(pos, (3, *pos.shape))
    return positions


def unwrap(config: Any) -> dict[str, Any]:
    """The language model's config: a multimodal wrapper's sub-config (:data:`WRAPPERS`: Gemma 3's
    ``text_config``), with its inner ``model_type``; any other config as a dict of its own.

    Parameters
    ----------
    config : mapping or transformers config object
        A config as ``config.json`` states it.

    Returns
    -------
    dict
        A copy; a wrapper of :data:`FLAT_WRAPPERS` without its sub-config gives its own top-level
        fields (where hub configs keep them).

    Raises
    ------
    TypeError
        ``config`` (or the wrapper's sub-config) is neither a dict nor a config object.
    ValueError
        A wrapper lacks its language model's sub-config (the message names the field).
    """
    data = _as_dict(config)
    model_type = data.get("model_type")
    if not isinstance(model_type, str) or model_type not in WRAPPERS:
        return data
    key, inner = WRAPPERS[model_type]
    sub = data.get(key)
    if sub is None and model_type in FLAT_WRAPPERS:
        sub = {k: v for k, v in data.items() if k != "model_type"}
    if sub is None:
        raise ValueError(f"the {model_type!r} config is missing the field {key!r} (its language model)")
    data = _as_dict(sub)
    data.setdefault("model_type", inner)
    return data


def _as_dict(config: Any) -> dict[str, Any]:
    if isinstance(config, Mapping):
        return dict(config)
    if hasattr(config, "to_dict") and hasattr(config, "model_type"):  # a transformers config object
        data = config.to_dict()
        data.setdefault("model_type", config.model_type)
        # some config classes compute layer_types (an attribute_map alias such as Bamba's
        # layers_block_type) instead of storing them: take what the object says
        types = getattr(config, "layer_types", None)
        if data.get("layer_types") is None and isinstance(types, (list, tuple)) and all(isinstance(t, str) for t in types):
            data["layer_types"] = list(types)
        return data
    raise TypeError(
        "config must be a transformers configuration object or a dict of its fields (config.json), "
        f"got {type(config).__name__}"
    )


def rope_spec(config: Any, layer_type: str | None = None, *, layer: int | None = None) -> RopeSpec:
    """Read a model configuration and return what its RoPE does, as a :class:`RopeSpec`.

    Parameters
    ----------
    config : transformers config object or dict
        A configuration of a family in :data:`FAMILIES` (``MODEL_TYPES`` lists the ``model_type``
        values), or a plain dict of the same fields, e.g. a loaded ``config.json`` as transformers 4
        (``rope_theta``, ``rope_scaling``, ``rotary_pct``...) or 5 (``rope_parameters``, possibly
        nested by layer type) wrote it; a dict must state its ``model_type``. Multimodal configs
        (Gemma 3 and 4, Llama 4, Qwen2-VL to Qwen3.5, Kimi K2.5, ...) are read through their
        ``text_config``.
    layer_type : str, optional
        Selects the layers of one type (one of the config's ``layer_types``, e.g.
        ``"sliding_attention"`` / ``"full_attention"`` for Gemma 3 and 4, OLMo 3, Cohere 2;
        ``"chunked_attention"`` for Llama 4). Required, with ``layer``, where layer types differ.
    layer : int, optional
        A layer index: for families whose layers differ (local/global bases, NoPE layers, layers
        without attention, per-layer head sizes). A layer without RoPE gives a spec with
        ``uses_rope`` False and the reason in ``no_rope_reason``.

    Returns
    -------
    RopeSpec

    Raises
    ------
    TypeError
        ``config`` is neither a dict nor a config object; a field of the wrong type.
    ValueError
        Unknown ``model_type`` (or one in :data:`UNSUPPORTED`, with what is missing) or scaling
        ``rope_type``; a missing field (the message names it); two fields stating the same value
        differently (both values named); a rotated fraction that leaves an odd or zero number of
        dims; a per-layer family without ``layer_type``/``layer`` where its layers differ.
    """
    data = unwrap(config)
    model_type = data.get("model_type")
    if model_type is None:
        raise ValueError("the config is missing the field 'model_type' (which family it is, as in config.json)")
    if isinstance(model_type, str) and model_type in UNSUPPORTED:
        raise ValueError(f"model_type {model_type!r} is not supported by rope_spec: {UNSUPPORTED[model_type]}")
    if not isinstance(model_type, str) or model_type not in MODEL_TYPES:
        supported = ", ".join(repr(m) for m in MODEL_TYPES)
        raise ValueError(f"unknown model_type {model_type!r}: rope_spec has no data for this family "
                         f"(its layout, rotated dims and layer rules); supported: {supported}")
    family = FAMILIES[MODEL_TYPES[model_type]]
    cfg = ConfigReader(data, model_type, family)
    parts = family.read(cfg, layer_type, layer) if family.read else read_family(family, cfg, layer_type, layer)
    rope: RopeBlock = parts.pop("rope")
    head_dim, rotary_dim = parts["head_dim"], parts["rotary_dim"]
    offset = parts.setdefault("rotary_offset", 0)
    parts.setdefault("output_layout", parts["layout"])
    for name in ("layout", "output_layout"):
        check_choice(parts[name], LAYOUTS, name)
    if rotary_dim <= 0 or rotary_dim % 2 or offset + rotary_dim > head_dim:
        raise ValueError(f"rotated dims {rotary_dim} at offset {offset} do not fit a head of {head_dim}")
    spec_params = MappingProxyType(dict(rope.params))
    # the frequencies and attention factor as the model holds them after loading (checks every value;
    # dynamic NTK at its own original length is plain RoPE)
    loaded = ROPE_TYPES[rope.rope_type].loaded_seq_len
    extra = {"seq_len": rope.params[loaded]} if loaded is not None else {}
    _, attention_factor = ROPE_TYPES[rope.rope_type].frequencies(rotary_dim, rope.base, {**rope.params, **extra},
                                                               parts.get("rotating_pairs"))
    return RopeSpec(
        family=family.key,
        model_type=model_type,
        base=rope.base,
        rope_type=rope.rope_type,
        rope_params=spec_params,
        attention_factor=float(attention_factor),
        defaults=tuple(cfg.defaults),
        default_records=tuple(cfg.records),
        **parts,
    )
