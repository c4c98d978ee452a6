"""A GGUF file's RoPE metadata read as the config.json it stands for, so that :func:`rope_edu.rope_spec` reads it.

llama.cpp keeps a model's RoPE settings in the file's metadata, one key each (key names as in
``gguf.constants.Keys``; ``{arch}`` is the file's ``general.architecture``):

================================================  ==========================================
GGUF key                                          config.json field
================================================  ==========================================
``{arch}.rope.freq_base``                         ``rope_theta`` (llama.cpp: 10,000 if absent)
``{arch}.rope.scaling.type``                      ``rope_scaling.rope_type`` (absent: linear)
``{arch}.rope.scaling.factor``                    ``rope_scaling.factor`` (absent or 0: 1)
``{arch}.rope.scaling.original_context_length``   ``rope_scaling.original_max_position_embeddings``
``{arch}.rope.scaling.yarn_beta_fast`` / ``_slow``  ``rope_scaling.beta_fast`` / ``beta_slow``
``{arch}.rope.dimension_count``                   rotated dims (``partial_rotary_factor``)
``{arch}.context_length``                         ``max_position_embeddings``
``{arch}.embedding_length``                       ``hidden_size``
``{arch}.attention.head_count`` (``_kv``)         ``num_attention_heads`` (``num_key_value_heads``)
``{arch}.attention.key_length``                   ``head_dim`` (absent: embedding_length / head_count)
``{arch}.block_count``                            ``num_hidden_layers``
================================================  ==========================================

A setting the file leaves out is read as llama.cpp reads it (its default), and said so in the
:attr:`GGUFRead.notes`; what llama.cpp then does that the config would not (a YaRN type with no
factor scales by 1: nothing) is in :attr:`GGUFRead.warnings`. Only the metadata and the tensors'
names are read, never their data, by a scan of the file's header (``gguf``'s value types and key
names; ``gguf.GGUFReader`` would build every element of the tokenizer's arrays first). ``gguf`` is imported when a
file is read (``pip install "rope_edu[model]"``).

llama.cpp stores the query and key rows of a half-split family (LLaMA, ...) permuted so that its
interleaved rotation computes the same scores; the config stands for the model, so its layout is the
family's, as in config.json.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .gguf_file import GGUF_MAGIC, scan
from .models import FAMILIES, MODEL_TYPES, ROPE_TYPES

__all__ = ["ARCHITECTURES", "GGUF_MAGIC", "GGUFRead", "is_gguf", "read_gguf_config"]

#: GGUF ``general.architecture`` -> the transformers ``model_type`` whose config.json its metadata stands
#: for: families whose RoPE the metadata states in full (whole-head or partial rotation, one base, the
#: scaling keys above). Others (local/global bases, M-RoPE, MLA, per-layer rules) are refused by name.
ARCHITECTURES: dict[str, str] = {
    "llama": "llama",
    "qwen2": "qwen2",
    "qwen2moe": "qwen2_moe",
    "qwen3": "qwen3",
    "qwen3moe": "qwen3_moe",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "phi2": "phi",
    "phi3": "phi3",
    "gptneox": "gpt_neox",
    "stablelm": "stablelm",
    "olmo": "olmo",
    "olmo2": "olmo2",
    "olmoe": "olmoe",
    "granite": "granite",
    "starcoder2": "starcoder2",
    "command-r": "cohere",
    "seed_oss": "seed_oss",
    "ernie4_5": "ernie4_5",
    "nemotron": "nemotron",
}

#: llama.cpp's scaling types (``gguf.RopeScalingType``) -> the rope_type a config.json states (each
#: rope_type's ``llama_cpp_name`` in :data:`rope_edu.models.ROPE_TYPES`).
_SCALING_TYPES = {t.llama_cpp_name: name for name, t in ROPE_TYPES.items() if t.llama_cpp_name}

#: Metadata keys about RoPE that the config has no field for: read, not mapped, and said so.
_UNMAPPED = ("SCALING_ATTN_FACTOR", "SCALING_YARN_LOG_MUL", "SCALING_YARN_EXT_FACTOR", "SCALING_YARN_ATTN_FACTOR",
             "SCALING_ALPHA", "FREQ_BASE_SWA", "DIMENSION_SECTIONS")

#: The factor's key before ``{arch}.rope.scaling.factor`` (llama.cpp reads it when the new one is absent).
_OLD_FACTOR_KEY = "{arch}.rope.scale_linear"

#: Tensors that change the frequencies beyond what the metadata says.
_FACTOR_TENSORS = {
    "rope_freqs.weight": "per-pair factors llama.cpp divides the frequencies by (how convert_hf_to_gguf.py stores "
                         "Llama 3.1's 'llama3' rule)",
}


@dataclass(frozen=True)
class GGUFRead:
    """What :func:`read_gguf_config` made of a GGUF file.

    Attributes
    ----------
    path : str
        The file.
    architecture : str
        Its ``general.architecture``.
    config : dict
        The config.json it stands for (transformers 4's fields: ``rope_theta``, ``rope_scaling``),
        which :func:`rope_edu.rope_spec` reads.
    keys : dict
        Every metadata key read, with its value.
    notes : tuple of str
        Settings the file leaves out, read as llama.cpp reads them.
    warnings : tuple of dict
        ``{"id", "title", "text"}``: what llama.cpp does with this metadata that the config's
        author probably did not mean, and what the config cannot say.
    """

    path: str
    architecture: str
    config: dict
    keys: dict
    notes: tuple[str, ...] = ()
    warnings: tuple[dict, ...] = ()


def is_gguf(path: Any) -> bool:
    """True when the file at ``path`` starts with the GGUF magic bytes."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == GGUF_MAGIC
    except OSError:
        return False


class _Meta:
    """The file's metadata, read key by key: every key read is recorded with its value."""

    def __init__(self, path: Path, fields: dict[str, Any], arch: str) -> None:
        self.path, self.fields, self.arch = path, fields, arch
        self.read: dict[str, Any] = {}

    def get(self, template: str, kind: type | tuple[type, ...] = (int, float), required: bool = False) -> Any:
        key = template.format(arch=self.arch)
        if key not in self.fields:
            if required:
                raise ValueError(f"{self.path}: the GGUF metadata has no key {key!r}")
            return None
        value = self.fields[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            expected = "a string" if kind is str else "a number" if kind in (int, float, (int, float)) else "a value"
            raise ValueError(f"{self.path}: the GGUF key {key!r} holds {value!r}; expected {expected}")
        self.read[key] = value
        return value

    def key(self, template: str) -> str:
        return template.format(arch=self.arch)


def read_gguf_config(path: Any) -> GGUFRead:
    """Read a GGUF file's metadata as the config.json it stands for.

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.gguf`` file of an architecture in :data:`ARCHITECTURES`.

    Returns
    -------
    GGUFRead
        ``config`` is a dict :func:`rope_edu.rope_spec` reads; ``notes`` and ``warnings`` say what the
        file leaves out and what llama.cpp makes of it.

    Raises
    ------
    TypeError
        ``path`` is not a str or Path.
    ValueError
        Not a GGUF file, an architecture this reader does not map, a missing required key or a value
        of the wrong kind (the message names the file and the key).
    FileNotFoundError
        No such file.
    ModuleNotFoundError
        ``gguf`` is not installed (the message says how to install it).
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path to a .gguf file, got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    from .trained.loading import gguf_module

    keys = gguf_module().constants.Keys
    layout = scan(path)
    fields, tensor_names = layout.fields, [t.name for t in layout.tensors]
    arch = fields.get(keys.General.ARCHITECTURE)
    if not isinstance(arch, str):
        raise ValueError(f"{path}: the GGUF metadata has no string key {keys.General.ARCHITECTURE!r}")
    if arch not in ARCHITECTURES:
        raise ValueError(f"{path}: {keys.General.ARCHITECTURE} = {arch!r} is not an architecture this reader maps to a "
                         f"config (it reads {', '.join(sorted(ARCHITECTURES))})")
    model_type = ARCHITECTURES[arch]
    family = FAMILIES[MODEL_TYPES[model_type]]
    meta = _Meta(path, fields, arch)
    meta.read[keys.General.ARCHITECTURE] = arch
    notes: list[str] = []
    found: list[dict] = []

    hidden = meta.get(keys.LLM.EMBEDDING_LENGTH, int, required=True)
    heads = meta.get(keys.Attention.HEAD_COUNT, int, required=True)
    layers = meta.get(keys.LLM.BLOCK_COUNT, int, required=True)
    context = meta.get(keys.LLM.CONTEXT_LENGTH, int, required=True)
    for name, value in ((keys.LLM.EMBEDDING_LENGTH, hidden), (keys.Attention.HEAD_COUNT, heads),
                        (keys.LLM.BLOCK_COUNT, layers), (keys.LLM.CONTEXT_LENGTH, context)):
        if value <= 0:
            raise ValueError(f"{path}: the GGUF key {meta.key(name)!r} is {value}; expected a positive integer")
    config: dict[str, Any] = {"model_type": model_type, "hidden_size": hidden, "num_attention_heads": heads,
                              "num_hidden_layers": layers, "max_position_embeddings": context}
    kv_heads = meta.get(keys.Attention.HEAD_COUNT_KV, int)
    if kv_heads is not None:
        config["num_key_value_heads"] = kv_heads

    key_length = meta.get(keys.Attention.KEY_LENGTH, int)
    head_dim = key_length if key_length is not None else hidden // heads
    if key_length is None:
        notes.append(f"no {meta.key(keys.Attention.KEY_LENGTH)}: heads of {hidden} / {heads} = {head_dim} dims, "
                     "as llama.cpp computes them")
    if family.head == "split":
        if head_dim != hidden // heads:
            raise ValueError(f"{path}: {meta.key(keys.Attention.KEY_LENGTH)} = {key_length}, but {family.label}'s code "
                             f"computes heads of {meta.key(keys.LLM.EMBEDDING_LENGTH)} / "
                             f"{meta.key(keys.Attention.HEAD_COUNT)} = {hidden // heads} dims")
    elif key_length is not None or family.head_default is not None:
        # stated, or the config class would fill in its own default where llama.cpp divides
        config["head_dim"] = head_dim

    rotated = meta.get(keys.Rope.DIMENSION_COUNT, int)
    if rotated is None:
        rotated = head_dim
        notes.append(f"no {meta.key(keys.Rope.DIMENSION_COUNT)}: every dim of the head rotates, as llama.cpp reads it")
    if family.rotary == "fraction":
        config["partial_rotary_factor"] = rotated / head_dim
    elif rotated != head_dim:
        raise ValueError(f"{path}: {meta.key(keys.Rope.DIMENSION_COUNT)} = {rotated}, but {family.label} rotates the "
                         f"whole head of {head_dim} dims")

    base = meta.get(keys.Rope.FREQ_BASE)
    if base is None:
        base = 10000.0
        notes.append(f"no {meta.key(keys.Rope.FREQ_BASE)}: base 10,000, llama.cpp's default")
    if not (math.isfinite(base) and base > 1):
        raise ValueError(f"{path}: the GGUF key {meta.key(keys.Rope.FREQ_BASE)!r} is {base}; expected a base > 1")
    config["rope_theta"] = float(base)

    config.update(_scaling(meta, keys, context, notes, found))
    for template in filter(None, (getattr(keys.Rope, name, None) for name in _UNMAPPED)):
        value = meta.get(template, (int, float, list, str))
        if value is not None:
            found.append({"id": "gguf_unmapped", "title": "A RoPE key this reader does not map",
                          "text": f"{meta.key(template)} = {value!r}: a config.json has no field for "
                                  "it, so the spec above leaves it out; llama.cpp uses it."})
    names = set(tensor_names)
    for name, what in _FACTOR_TENSORS.items():
        if name in names:
            found.append({"id": "gguf_factors", "title": "Frequency factors stored as a tensor",
                          "text": f"The file holds the tensor {name}, {what}. The metadata alone reads as the spec "
                                  "above, without them: llama.cpp's frequencies differ where the factors are not 1."})
    return GGUFRead(path=str(path), architecture=arch, config=config, keys=dict(meta.read), notes=tuple(notes),
                    warnings=tuple(found))


def _scaling(meta: _Meta, keys: Any, context: int, notes: list[str], found: list[dict]) -> dict[str, Any]:
    """The ``rope_scaling`` block llama.cpp's scaling keys stand for ({} for none)."""
    type_key, factor_key = meta.key(keys.Rope.SCALING_TYPE), meta.key(keys.Rope.SCALING_FACTOR)
    kind = meta.get(keys.Rope.SCALING_TYPE, str)
    factor = meta.get(keys.Rope.SCALING_FACTOR)
    if factor is None:
        # llama.cpp still reads the factor's older key, which gguf's Keys no longer names
        factor = meta.get(_OLD_FACTOR_KEY)
    if kind is None:
        kind = "linear"
        if factor not in (None, 0, 1):
            notes.append(f"no {type_key}: linear, llama.cpp's default")
    if kind == "none":
        return {}
    if kind not in _SCALING_TYPES:
        if kind == "longrope":
            raise ValueError(f"{meta.path}: {type_key} = 'longrope': its per-pair factors are tensors "
                             "(rope_factors_long.weight, rope_factors_short.weight), which this reader does not load")
        raise ValueError(f"{meta.path}: {type_key} = {kind!r} is not a scaling type llama.cpp writes "
                         f"(none, linear, yarn, longrope)")
    if factor is not None and factor < 0:
        raise ValueError(f"{meta.path}: {factor_key} = {factor}; expected a number >= 1 (or 0: none)")
    if kind == "linear" and factor in (None, 0, 1):
        return {}
    if factor in (None, 0):
        factor = 1.0
        found.append({"id": "gguf_no_factor", "title": f"{kind} scaling with no factor",
                      "text": f"{type_key} = {kind!r}, but the file states no {factor_key}: llama.cpp then scales by "
                              f"1, so {kind} changes no frequency and no attention factor. Pass --rope-scale N, or write "
                              "the factor into the file."})
    block: dict[str, Any] = {"rope_type": _SCALING_TYPES[kind], "factor": float(factor)}
    if kind == "yarn":
        original = meta.get(keys.Rope.SCALING_ORIG_CTX_LEN, int)
        if original is None:
            original = context
            notes.append(f"no {meta.key(keys.Rope.SCALING_ORIG_CTX_LEN)}: YaRN's original length is "
                         f"{meta.key(keys.LLM.CONTEXT_LENGTH)} = {context}, as llama.cpp reads it")
        block["original_max_position_embeddings"] = original
        for name, field in (("SCALING_YARN_BETA_FAST", "beta_fast"), ("SCALING_YARN_BETA_SLOW", "beta_slow")):
            value = meta.get(getattr(keys.Rope, name)) if hasattr(keys.Rope, name) else None
            if value is not None:
                block[field] = float(value)
    return {"rope_scaling": block}
