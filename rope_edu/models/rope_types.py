"""One entry per ``rope_type``: how a configuration's RoPE block is read, and the frequencies it gives.

:data:`ROPE_TYPES` maps every ``rope_type`` :func:`~rope_edu.models.rope_spec` reads to a
:class:`RopeType`: its parameter reader (the RoPE block of a config -> the parameters, with the
defaults transformers documents recorded), its frequency function (those parameters -> the
frequencies and the factor on cos and sin) and whether a config may state it. It plays the part of
transformers' ``ROPE_INIT_FUNCTIONS``.

:data:`rope_edu.scaling.METHODS` is the other registry: the scaling methods the book teaches. A
method transformers implements (:attr:`~rope_edu.scaling.Method.transformers`) is the
``rope_type`` of the same name here, with that method's summary, and its frequency function calls
the method (:func:`~rope_edu.scaling.scaled_frequencies`; YaRN with equal betas is handled here);
``"ntk"`` (static NTK-aware) is a method with no ``rope_type``, and ``"proportional"`` (Gemma 4) and
``"ntk_alpha"`` (Hunyuan) are types with no method. ``tests/test_models.py`` checks that relation.

**A new rope_type** is one entry here, a parameter reader and a frequency function (in
:mod:`rope_edu.scaling` when it is a method the book teaches), and their JavaScript twins under the
same names: ``PARAMS`` in ``_ext/model_check/config.js`` and ``FREQUENCIES`` in
``_ext/model_check/scaling.js`` (``tests/test_model_check.py`` checks that each entry has both).
:func:`read_rope` reads a layer's RoPE block with the entry of its type.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..rope import frequencies
from ..scaling import METHODS, scaled_frequencies, yarn_ramp
from .config import HF_THETA, ConfigReader, RopeBlock, original_length, positive_int, read_theta, required_param, rope_block

__all__ = ["ROPE_TYPES", "RopeType"]


# --- parameter readers: (config, RoPE block, its name) -> the parameters of the frequency function ----------

def _default_params(cfg: ConfigReader, block: dict, where: str, **_: Any) -> dict[str, Any]:
    return {}


def _linear_params(cfg: ConfigReader, block: dict, where: str, **_: Any) -> dict[str, Any]:
    return {"factor": required_param(block, "factor", where)}


def _dynamic_params(cfg: ConfigReader, block: dict, where: str, **_: Any) -> dict[str, Any]:
    # transformers' dynamic NTK measures lengths against config.max_position_embeddings (not
    # original_max_position_embeddings): scale = factor * seq_len / max_position_embeddings - (factor - 1).
    return {
        "factor": required_param(block, "factor", where),
        "original_max_position_embeddings": cfg.require(
            "max_position_embeddings", " (dynamic NTK rescales past max_position_embeddings)"
        ),
    }


def _yarn_params(cfg: ConfigReader, block: dict, where: str, *, nested: bool = False, **_: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "factor": required_param(block, "factor", where),
        "original_max_position_embeddings": original_length(cfg, block, where),
    }
    # transformers: `rope_parameters.get("beta_fast") or 32`, `... or 1`, truncate defaults to True
    for name, default in (("beta_fast", 32.0), ("beta_slow", 1.0)):
        if block.get(name):
            params[name] = block[name]
        else:
            cfg.record(f"{where}.{name}", default, "transformers' YaRN default")
    if nested:
        # transformers' YaRN reads `config.rope_parameters.get("truncate", True)`: with parameters nested
        # by layer type that is the outer dict, so a per-layer-type truncate is never read (nor a flat
        # v4 rope_scaling's, once the config class has nested it: OLMo 3)
        outer = cfg.data.get("rope_parameters")
        truncate = outer.get("truncate", True) if isinstance(outer, Mapping) and block is not outer else True
        if block.get("truncate") is not None and block["truncate"] != truncate:
            cfg.record(f"{where}.truncate", block["truncate"], "is not read: transformers' YaRN reads truncate from "
                       f"the top level of rope_parameters ({truncate!r})", kind="unread")
        params["truncate"] = truncate
    elif block.get("truncate") is not None:
        params["truncate"] = block["truncate"]
    else:
        cfg.record(f"{where}.truncate", True, "transformers' YaRN default")
    if block.get("attention_factor") is not None:
        params["attention_factor"] = block["attention_factor"]
    # transformers uses mscale / mscale_all_dim only when both are set and non-zero
    if block.get("mscale") and block.get("mscale_all_dim"):
        params["mscale"], params["mscale_all_dim"] = block["mscale"], block["mscale_all_dim"]
    return params


def _llama3_params(cfg: ConfigReader, block: dict, where: str, **_: Any) -> dict[str, Any]:
    return {
        "factor": required_param(block, "factor", where),
        "low_freq_factor": required_param(block, "low_freq_factor", where),
        "high_freq_factor": required_param(block, "high_freq_factor", where),
        "original_max_position_embeddings": original_length(cfg, block, where),
    }


def _longrope_params(cfg: ConfigReader, block: dict, where: str, *, top_level_original: bool = False, **_: Any) -> dict[str, Any]:
    original = original_length(cfg, block, where, top_level_original=top_level_original)
    params: dict[str, Any] = {
        "short_factor": tuple(required_param(block, "short_factor", where)),
        "long_factor": tuple(required_param(block, "long_factor", where)),
        "original_max_position_embeddings": original,
    }
    if block.get("factor") is not None:
        params["factor"] = block["factor"]
    else:
        # transformers (_compute_longrope_parameters): factor = max_position_embeddings / original
        mpe = cfg.require("max_position_embeddings", f" (LongRoPE's factor is max_position_embeddings / "
                                                     f"original_max_position_embeddings when {where} has no factor)")
        params["factor"] = positive_int(mpe, "max_position_embeddings") / positive_int(
            original, "original_max_position_embeddings")
        cfg.record(f"{where}.factor", params["factor"], "transformers' LongRoPE rule",
                   rule="max_position_embeddings / original_max_position_embeddings")
    if block.get("attention_factor") is not None:
        params["attention_factor"] = block["attention_factor"]
    return params


def _proportional_params(cfg: ConfigReader, block: dict, where: str, **_: Any) -> dict[str, Any]:
    # transformers: `rope_parameters.get("factor", 1.0)` divides every frequency
    if block.get("factor") is None:
        return {}
    return {"factor": block["factor"]}


def _ntk_alpha_params(cfg: ConfigReader, block: dict, where: str, **_: Any) -> dict[str, Any]:
    # Hunyuan: a "dynamic" block with a truthy alpha stretches the base to rope_theta * alpha**(d / (d - 2)),
    # d = config.head_dim, the same at every length. transformers' validation of "dynamic" still requires
    # factor, which this type never uses; without head_dim the code fails.
    factor = required_param(block, "factor", where)
    cfg.require("head_dim", " (the NTK-alpha base rope_theta * alpha**(d / (d - 2)) reads d = head_dim; "
                            "without it transformers fails)")
    cfg.record(f"{where}.factor", factor, f"is not used: with alpha = {block['alpha']!r} the code stretches the base "
               "(NTK-alpha) instead of dynamic NTK", kind="unread")
    return {"alpha": required_param(block, "alpha", where)}


# --- frequency functions: (dim, base, parameters, rotating pairs) -> (inv_freq, attention_factor) ----------
# ``dim`` is the rotated dims, ``rotating_pairs`` the pairs that turn (proportional RoPE; None: all).


def _default_frequencies(dim: int, base: float, params: Mapping[str, Any],
                         rotating_pairs: int | None = None) -> tuple[np.ndarray, float]:
    """Plain RoPE (:func:`rope_edu.scaling.scaled_frequencies`, ``"default"``)."""
    return scaled_frequencies("default", dim, base, **params)


def _linear_frequencies(dim: int, base: float, params: Mapping[str, Any],
                        rotating_pairs: int | None = None) -> tuple[np.ndarray, float]:
    """Position Interpolation (``"linear"``)."""
    return scaled_frequencies("linear", dim, base, **params)


def _dynamic_frequencies(dim: int, base: float, params: Mapping[str, Any],
                         rotating_pairs: int | None = None) -> tuple[np.ndarray, float]:
    """Dynamic NTK at the length ``params["seq_len"]`` (``"dynamic"``)."""
    return scaled_frequencies("dynamic", dim, base, **params)


def _llama3_frequencies(dim: int, base: float, params: Mapping[str, Any],
                        rotating_pairs: int | None = None) -> tuple[np.ndarray, float]:
    """Llama 3.1's rule (``"llama3"``)."""
    return scaled_frequencies("llama3", dim, base, **params)


def _longrope_frequencies(dim: int, base: float, params: Mapping[str, Any],
                          rotating_pairs: int | None = None) -> tuple[np.ndarray, float]:
    """LongRoPE, short or long factors by ``params.get("seq_len")`` (``"longrope"``)."""
    return scaled_frequencies("longrope", dim, base, **params)


def _yarn_frequencies(dim: int, base: float, params: Mapping[str, Any],
                      rotating_pairs: int | None = None) -> tuple[np.ndarray, float]:
    """YaRN (``"yarn"``), also with ``beta_fast == beta_slow`` (Kimi K2's released config: both 1),
    which transformers accepts and :func:`~rope_edu.scaling.scaled_frequencies` refuses: the ramp
    (:func:`~rope_edu.scaling.yarn_ramp`) is then a step, pairs below the boundary keep their
    frequency and the others are divided by the factor."""
    if params.get("beta_fast") is None or params.get("beta_fast") != params.get("beta_slow"):
        return scaled_frequencies("yarn", dim, base, **params)
    factor = float(params["factor"])
    keep = yarn_ramp(dim, base, positive_int(params["original_max_position_embeddings"], "original_max_position_embeddings"),
                     params["beta_fast"], params["beta_slow"], params.get("truncate", True))
    theta = frequencies(dim, base)
    # the attention factor does not depend on the betas: take it from the standard method
    _, attention_factor = scaled_frequencies("yarn", dim, base, **{**params, "beta_fast": float(params["beta_slow"]) + 1.0})
    return theta / factor * (1.0 - keep) + theta * keep, attention_factor


def _proportional_frequencies(dim: int, base: float, params: Mapping[str, Any],
                              rotating_pairs: int | None = None) -> tuple[np.ndarray, float]:
    """Proportional RoPE: pairs ``0..rotating_pairs-1`` at ``base**(-2i/dim)``, the others 0; all
    divided by ``params.get("factor", 1)``."""
    pairs = dim // 2 if rotating_pairs is None else rotating_pairs
    factor = float(params.get("factor", 1.0))
    if not math.isfinite(factor) or factor <= 0:
        raise ValueError(f"factor must be a finite real number > 0 for proportional RoPE, got {factor}")
    inv = np.zeros(dim // 2)
    inv[:pairs] = base ** (-2.0 * np.arange(pairs) / dim)
    return inv / factor, 1.0


def _ntk_alpha_frequencies(dim: int, base: float, params: Mapping[str, Any],
                           rotating_pairs: int | None = None) -> tuple[np.ndarray, float]:
    """Hunyuan's NTK-alpha: plain RoPE at base ``base * alpha**(dim / (dim - 2))``, at every length."""
    alpha = params["alpha"]
    if (isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, numbers.Real) or not math.isfinite(alpha)
            or alpha <= 0):
        raise ValueError(f"alpha must be a finite real number > 0 (NTK-alpha stretches the base by "
                         f"alpha**(d / (d - 2))), got {alpha!r}")
    if dim <= 2:
        raise ValueError(f"NTK-alpha divides by d - 2: it needs more than 2 rotated dims, got {dim}")
    return frequencies(dim, base * float(alpha) ** (dim / (dim - 2))), 1.0


# --- the registry ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RopeType:
    """One ``rope_type``: how its parameters are read and what frequencies they give.

    Attributes
    ----------
    name : str
        The ``rope_type`` (key in :data:`ROPE_TYPES`; :attr:`RopeSpec.rope_type`).
    read : callable
        ``read(cfg, block, where, *, top_level_original=False, nested=False) -> params``: the
        parameters of ``frequencies`` from a config's RoPE ``block`` (named ``where`` in messages).
    frequencies : callable
        ``frequencies(dim, base, params, rotating_pairs=None) -> (inv_freq, attention_factor)``,
        ``inv_freq`` of shape ``(dim // 2,)``; a length-dependent type reads ``params["seq_len"]``.
    summary : str
        What it does, in one line.
    depends_on_length : bool
        The frequencies change with the sequence length (``seq_len``).
    retyped_only : bool
        A config never states it: a family's ``retype`` reaches it (Hunyuan's ``"dynamic"`` with
        ``alpha``), and a config that names it is refused, as transformers' validation refuses it.
    loaded_seq_len : str or None
        For a length-dependent type, the parameter holding the length its frequencies are built
        for once the model is loaded (dynamic NTK: ``original_max_position_embeddings``, filled
        from ``max_position_embeddings``, where it is plain RoPE): the spec's frequencies when no
        ``seq_len`` is given. That parameter then says nothing of the trained context.
    older_transformers : str
        What a transformers 4 release from before the type existed does with a config that
        states it ("" where every release reads it).
    llama_cpp_name : str or None
        The name llama.cpp writes in a GGUF's ``{arch}.rope.scaling.type`` for this type (None:
        llama.cpp writes no such type or this reader does not map it).
    """

    name: str
    read: Callable[..., dict[str, Any]]
    frequencies: Callable[..., tuple[np.ndarray, float]]
    summary: str
    depends_on_length: bool = False
    retyped_only: bool = False
    loaded_seq_len: str | None = None
    older_transformers: str = ""
    llama_cpp_name: str | None = None


#: Every ``rope_type`` :func:`~rope_edu.models.rope_spec` reads: ``default``, the six of
#: transformers' ``ROPE_INIT_FUNCTIONS`` (in the order the book meets them: ``llama3`` before
#: ``longrope``, unlike transformers 5), then ``ntk_alpha``, which only a family's ``retype`` reaches.
ROPE_TYPES: dict[str, RopeType] = {t.name: t for t in (
    RopeType("default", _default_params, _default_frequencies, METHODS["default"].summary),
    RopeType("linear", _linear_params, _linear_frequencies, METHODS["linear"].summary, llama_cpp_name="linear"),
    RopeType("dynamic", _dynamic_params, _dynamic_frequencies, METHODS["dynamic"].summary, depends_on_length=True,
             loaded_seq_len="original_max_position_embeddings"),
    RopeType("yarn", _yarn_params, _yarn_frequencies, METHODS["yarn"].summary, llama_cpp_name="yarn"),
    RopeType("llama3", _llama3_params, _llama3_frequencies, METHODS["llama3"].summary,
             older_transformers="transformers before 4.43 refuses to load this config (\"rope_scaling must be a "
                                "dictionary with two fields, type and factor\"): upgrade it"),
    RopeType("longrope", _longrope_params, _longrope_frequencies, METHODS["longrope"].summary, depends_on_length=True),
    RopeType("proportional", _proportional_params, _proportional_frequencies,
             "Gemma 4's global layers: the first partial_rotary_factor of the pairs turn at frequencies over "
             "the whole head, the rest not at all; every frequency divided by factor (default 1)"),
    RopeType("ntk_alpha", _ntk_alpha_params, _ntk_alpha_frequencies,
             "Hunyuan's rope_type 'dynamic' with alpha: plain RoPE at base rope_theta * alpha**(d / (d - 2)), "
             "d = head_dim, the same at every length", retyped_only=True),
)}


# --- reading a layer's RoPE block -------------------------------------------------------------------


def read_rope(cfg: ConfigReader, *, theta_keys: Sequence[str] = ("rope_theta",), default_theta: float | None = HF_THETA,
               theta_source: str = "transformers' default_theta", block: dict | None = None, where: str | None = None,
               rename: Mapping[str, str] | None = None, allowed: Sequence[str] | None = None,
               top_level_original: bool = False, nested: bool = False,
               retype: Mapping[str, tuple[str, str]] | None = None, note: str = "") -> RopeBlock:
    """The base, ``rope_type`` and parameters of one layer type's RoPE ``block`` (default: the config's
    ``rope_parameters`` or ``rope_scaling``, :func:`~.config.rope_block`), read by its type's entry
    of :data:`ROPE_TYPES`. ``rename``, ``retype``, ``allowed`` and ``note`` are the family's
    (:class:`~.family.Family`); a type outside ``allowed`` (default: every type a config may state)
    is refused, naming the valid ones."""
    if block is None:
        block, where = rope_block(cfg)
    assert where is not None
    base = read_theta(cfg, block, where, theta_keys, default_theta, theta_source)
    if block.get("rope_type") is None:
        rope_type = "default"
        if block:  # transformers: rope_type defaults to "default"
            cfg.record(f"{where}.rope_type", "default", "transformers' default")
    else:
        rope_type = block["rope_type"]
    if isinstance(rope_type, str) and rename and rope_type in rename:
        rope_type = rename[rope_type]
    reached = set()
    for stated, (name, new) in (retype or {}).items():
        reached.add(new)
        if rope_type == stated and block.get(name):  # the code tests `rope_parameters.get(name)`
            rope_type = new
    valid = (list(allowed) if allowed is not None
             else [t for t, entry in ROPE_TYPES.items() if not entry.retyped_only or t in reached])
    if not isinstance(rope_type, str) or rope_type not in valid:
        raise ValueError(
            f"unknown {where}.rope_type {rope_type!r} for model_type {cfg.model_type!r}; "
            f"expected one of {', '.join(repr(v) for v in valid)}" + (f" ({note})" if note else "")
        )
    params = ROPE_TYPES[rope_type].read(cfg, block, where, top_level_original=top_level_original, nested=nested)
    return RopeBlock(base, rope_type, params, where, dict(block))


