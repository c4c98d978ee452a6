"""Longer contexts: rescaled RoPE frequencies (Position Interpolation, NTK-aware, dynamic NTK,
YaRN, Llama 3.1, LongRoPE).

A model trained on sequences of ``L`` tokens (``original_max_position_embeddings``) only ever
saw the angles :math:`m\\theta_i` with :math:`0 \\le m < L`. Each method here changes the
frequencies :math:`\\theta_i` (and, for YaRN, a scale on cos and sin) so that a longer context
``L' = factor * L`` maps into angles the model knows. Every method is one entry of the registry
:data:`METHODS`, and :func:`scaled_frequencies` is the single entry point::

    inv_freq, attention_factor = scaled_frequencies("yarn", 128, factor=4,
                                                    original_max_position_embeddings=4096)
    q_rot = attention_factor * apply_rope(q, positions, inv_freq=inv_freq)

``attention_factor`` multiplies cos and sin, i.e. both rotated queries and rotated keys, so the
attention logits are multiplied by ``attention_factor ** 2``. (:mod:`rope_edu.models` reads these
methods and their parameters from a model's configuration.)

Parameter names follow Hugging Face's ``rope_parameters`` so a model's ``config.json`` can be read
directly. Where :mod:`transformers.modeling_rope_utils` implements a method, the numbers agree with
it (the tests check this to 1e-6). For a model with ``partial_rotary_factor`` ``p`` pass
``dim = int(head_dim * p)``, the number of rotated coordinates.

Conventions (``book/notation.md``): :math:`\\theta_i = b^{-2i/d}` with pair index
:math:`i = 0, \\dots, d/2-1`; the wavelength of pair ``i`` is :math:`\\lambda_i = 2\\pi/\\theta_i`
positions, and :math:`r_i = L/\\lambda_i` is the number of full turns it makes over the original
context (:func:`rotations`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ._checks import check_base, check_choice, check_dim, check_int, check_inv_freq, check_real, real_array
from .rope import frequencies

__all__ = [
    "METHODS",
    "Method",
    "LLAMA_3_1",
    "scaled_frequencies",
    "frequency_ratio",
    "rotations",
    "beyond_trained_angles",
    "ntk_base",
    "dynamic_scale",
    "yarn_ramp",
    "yarn_correction_index",
    "yarn_ramp_paper",
    "yarn_attention_factor",
    "yarn_softmax_scale",
    "llama3_ramp",
    "longrope_attention_factor",
]

#: The published Llama 3.1 setting (Meta's reference code and the models' ``rope_scaling``), with
#: ``base = 500000`` and head dimension 128: ``scaled_frequencies("llama3", 128, 500000.0, **LLAMA_3_1)``.
LLAMA_3_1: dict[str, Any] = {
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}


# --- parameter checks ------------------------------------------------------------------------




def check_factor(value: Any, name: str = "factor") -> float:
    value = check_real(value, name)
    if value < 1.0:
        raise ValueError(
            f"{name} must be >= 1 (the new context is factor times the original one), got {value}"
        )
    return value


def _positive(value: Any, name: str) -> float:
    value = check_real(value, name)
    if value <= 0.0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def _positive_or_none(value: Any, name: str) -> float | None:
    return None if value is None else _positive(value, name)


def _length_or_none(value: Any, name: str) -> int | None:
    return None if value is None else check_length(value, name)


def _factor_list(value: Any, name: str) -> np.ndarray:
    # LongRoPE's per-pair rescale factors: a non-empty 1-d sequence of finite positive reals.
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TypeError(f"{name} must be a sequence of positive real numbers (one per rotated pair), got {value!r}")
    arr = real_array(value, name, "a sequence of positive real numbers (one per rotated pair)")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence (one factor per rotated pair), got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)) or not np.all(arr > 0):
        raise ValueError(f"{name} must contain finite positive numbers only")
    return arr


def check_length(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be a positive integer (a number of tokens), got {value!r} of type {type(value).__name__}"
        )
    if int(value) <= 0:
        raise ValueError(f"{name} must be a positive integer (a number of tokens), got {value}")
    return int(value)


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r} of type {type(value).__name__}")
    return bool(value)


#: How each parameter (Hugging Face ``rope_parameters`` names) is checked.
_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "factor": check_factor,
    "original_max_position_embeddings": check_length,
    "seq_len": _length_or_none,  # required by "dynamic" (checked there), optional for "longrope"
    "short_factor": _factor_list,
    "long_factor": _factor_list,
    "beta_fast": _positive,
    "beta_slow": _positive,
    "attention_factor": _positive_or_none,
    "mscale": _positive_or_none,
    "mscale_all_dim": _positive_or_none,
    "truncate": _flag,
    "low_freq_factor": _positive,
    "high_freq_factor": _positive,
}


def _check_ntk_dim(dim: int) -> None:
    if dim < 4:
        raise ValueError(
            f"dim must be >= 4 for an NTK-aware base change (the exponent is dim / (dim - 2)), got {dim}"
        )


def _check_yarn_betas(beta_fast: float, beta_slow: float, *, equal: bool = False) -> None:
    # equal: a zero-width ramp (a step), which yarn_ramp allows and the methods here refuse
    if beta_fast < beta_slow or (beta_fast == beta_slow and not equal):
        raise ValueError(
            f"beta_fast must be greater than {'or equal to ' if equal else ''}beta_slow (rotations over the "
            f"original context at which the ramp ends and starts), got beta_fast={beta_fast} and beta_slow={beta_slow}"
        )


def _check_llama3_factors(low_freq_factor: float, high_freq_factor: float) -> None:
    # Equal factors are allowed: Llama 4 publishes low_freq_factor = high_freq_factor = 1, a hard
    # step at wavelength L with no ramp.
    if low_freq_factor > high_freq_factor:
        raise ValueError(
            f"low_freq_factor must not exceed high_freq_factor, got low_freq_factor={low_freq_factor} "
            f"and high_freq_factor={high_freq_factor}"
        )


# --- building blocks (public: the chapter plots them) -----------------------------------------


def rotations(dim: int, base: float = 10000.0, original_max_position_embeddings: int = 4096) -> np.ndarray:
    """Full turns :math:`r_i = L/\\lambda_i = L\\theta_i/(2\\pi)` of each pair over the original context.

    Pairs with :math:`r_i < 1` never complete a turn during training: past ``L`` they reach angles
    the model has never seen. YaRN and Llama 3.1 decide how to rescale pair ``i`` from
    :math:`r_i`.

    Parameters
    ----------
    dim : int
        Even (rotated) dimension :math:`d`.
    base : float, default 10000.0
    original_max_position_embeddings : int, default 4096
        The trained context length :math:`L`.

    Returns
    -------
    numpy.ndarray, shape (dim // 2,), float64
        Decreasing from :math:`L/(2\\pi)` (pair 0).
    """
    length = check_length(original_max_position_embeddings, "original_max_position_embeddings")
    return length * frequencies(dim, base) / (2.0 * np.pi)


def beyond_trained_angles(
    inv_freq: Any, original_max_position_embeddings: int, seq_len: int, base: float = 10000.0
) -> np.ndarray:
    """Which pairs reach angles they never reached in training, over ``seq_len`` positions.

    In training, pair :math:`i` turned through angles up to :math:`L\\theta_i`. A pair that
    completed a full turn (:math:`L\\theta_i \\ge 2\\pi`) has met every point of its circle; one
    that did not has only met the arc :math:`[0, L\\theta_i)`, and it leaves that arc once the new
    largest angle :math:`\\ell\\,\\theta'_i` is larger than :math:`L\\theta_i`.

    Parameters
    ----------
    inv_freq : array_like, shape (dim // 2,)
        The frequencies :math:`\\theta'_i` used over the long context (from
        :func:`scaled_frequencies`, or plain :func:`rope_edu.frequencies`).
    original_max_position_embeddings : int
        Trained context :math:`L`.
    seq_len : int
        Length :math:`\\ell` of the long context.
    base : float, default 10000.0
        The base the model was trained with (gives the trained :math:`\\theta_i`).

    Returns
    -------
    numpy.ndarray of bool, shape (dim // 2,)
        True where :math:`L\\theta_i < 2\\pi` and :math:`\\ell\\theta'_i > L\\theta_i`
        (with a relative tolerance of 1e-9, so exact interpolation counts as inside).
    """
    arr = real_array(inv_freq, "inv_freq", "a real-valued array")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"inv_freq must have shape (dim // 2,), got shape {arr.shape}")
    new = check_inv_freq(arr, 2 * arr.size)
    if not np.all(new > 0):
        raise ValueError("inv_freq must be positive (radians per position)")
    length = check_length(original_max_position_embeddings, "original_max_position_embeddings")
    seq_len = check_length(seq_len, "seq_len")
    trained = length * frequencies(2 * arr.size, base)
    return (trained < 2.0 * np.pi) & (seq_len * new > trained * (1.0 + 1e-9))


def ntk_base(base: float, factor: float, dim: int) -> float:
    """NTK-aware base :math:`b' = b\\,s^{d/(d-2)}` (bloc97, 2023).

    The exponent is chosen so that the slowest pair, :math:`i = d/2 - 1`, turns exactly ``factor``
    times slower while pair 0 (:math:`\\theta_0 = 1`) is untouched:
    :math:`\\theta'_i = \\theta_i\\, s^{-2i/(d-2)}`.

    Parameters
    ----------
    base : float
        Original base :math:`b > 1`.
    factor : float
        Scale :math:`s \\ge 1`.
    dim : int
        Even dimension :math:`d \\ge 4`.

    Returns
    -------
    float
    """
    base = check_base(base)
    factor = check_factor(factor)
    dim = check_dim(dim)
    _check_ntk_dim(dim)
    return base * factor ** (dim / (dim - 2))


def dynamic_scale(factor: float, original_max_position_embeddings: int, seq_len: int) -> float:
    """The scale dynamic NTK uses for a sequence of ``seq_len`` tokens.

    :math:`s(\\ell) = f\\,\\max(\\ell, L)/L - (f - 1)`, the rule of the dynamic-NTK post (emozilla,
    2023) and of Hugging Face ``rope_type="dynamic"``: 1 (no change) up to the trained length
    :math:`L`, then growing linearly with slope :math:`f/L`. With ``factor = 1`` it is simply
    :math:`\\ell/L` past :math:`L`.

    Parameters
    ----------
    factor : float
        :math:`f \\ge 1`.
    original_max_position_embeddings : int
        Trained context :math:`L` (Hugging Face reads it from ``config.max_position_embeddings``).
    seq_len : int
        Current sequence length :math:`\\ell` (positions ``0 .. seq_len - 1``).

    Returns
    -------
    float
        The scale, >= 1.
    """
    factor = check_factor(factor)
    length = check_length(original_max_position_embeddings, "original_max_position_embeddings")
    seq_len = check_length(seq_len, "seq_len")
    return factor * max(seq_len, length) / length - (factor - 1.0)


def yarn_correction_index(turns: float, dim: int, base: float, length: int) -> float:
    """The (real-valued) pair index at which a pair makes exactly ``turns`` full turns over
    ``length`` tokens: where YaRN's ramp starts (``turns = beta_fast``) and ends (``beta_slow``).

    Parameters
    ----------
    turns : float
        Full turns, > 0.
    dim : int
        Rotated dims (even).
    base : float
        RoPE base, > 1.
    length : int
        The original context, >= 1.

    Returns
    -------
    float
        :math:`i` with :math:`2\\pi\\,\\mathrm{base}^{2i/d} = \\mathrm{length}/\\mathrm{turns}`:
        ``dim * log(length / (2 pi turns)) / (2 log(base))`` (not clipped: it may lie outside the pairs).
    """
    dim = check_dim(dim)
    base = check_base(base)
    length = check_int(length, "length", minimum=1)
    turns = check_real(turns, "turns")
    if turns <= 0:
        raise ValueError(f"turns must be > 0, got {turns}")
    return dim * math.log(length / (2.0 * math.pi * turns)) / (2.0 * math.log(base))


def yarn_ramp(
    dim: int,
    base: float = 10000.0,
    original_max_position_embeddings: int = 4096,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> np.ndarray:
    """YaRN's per-pair weight :math:`\\gamma_i`: 1 keeps :math:`\\theta_i`, 0 divides it by the factor.

    The new frequency is :math:`(1-\\gamma_i)\\,\\theta_i/s + \\gamma_i\\,\\theta_i`. Pairs that turn
    more than ``beta_fast`` times over the original context get :math:`\\gamma_i = 1`, pairs that
    turn fewer than ``beta_slow`` times get 0. In between, as in the reference implementation of
    Peng et al. (2023) and in Hugging Face transformers, :math:`\\gamma` falls *linearly in the pair
    index* between the two boundary indices (found from :func:`rotations`); with ``truncate`` the
    boundaries are first rounded outwards to whole pairs. The boundaries are clipped to
    ``[0, dim - 1]`` and a zero-width ramp is widened by 0.001, again as in that code (with
    ``beta_fast == beta_slow``, which transformers accepts and Kimi K2's released config states,
    the ramp is a step; :func:`scaled_frequencies` refuses equal betas). (One
    consequence, kept for agreement: if even pair 0 turns fewer than ``beta_slow`` times, the
    clipped boundaries cross and no pair is interpolated.) The paper's own formula is linear in
    :math:`r_i` instead: :func:`yarn_ramp_paper`.

    Parameters
    ----------
    dim : int
        Even dimension :math:`d`.
    base : float, default 10000.0
    original_max_position_embeddings : int, default 4096
        Trained context :math:`L`.
    beta_fast, beta_slow : float, default 32 and 1
        Turns over :math:`L` at which the ramp reaches 1 and 0 (``beta_fast >= beta_slow > 0``).
    truncate : bool, default True
        Round the boundary indices to integers (floor the start, ceil the end).

    Returns
    -------
    numpy.ndarray, shape (dim // 2,), float64
        Values in [0, 1], non-increasing in ``i``.
    """
    dim = check_dim(dim)
    base = check_base(base)
    length = check_length(original_max_position_embeddings, "original_max_position_embeddings")
    beta_fast = _positive(beta_fast, "beta_fast")
    beta_slow = _positive(beta_slow, "beta_slow")
    truncate = _flag(truncate, "truncate")
    _check_yarn_betas(beta_fast, beta_slow, equal=True)
    start = yarn_correction_index(beta_fast, dim, base, length)  # last pair kept as it is
    end = yarn_correction_index(beta_slow, dim, base, length)    # first pair fully interpolated
    if truncate:
        start, end = math.floor(start), math.ceil(end)
    start, end = max(start, 0), min(end, dim - 1)
    if start == end:
        end += 0.001
    i = np.arange(dim // 2, dtype=np.float64)
    return 1.0 - np.clip((i - start) / (end - start), 0.0, 1.0)


def yarn_ramp_paper(
    dim: int,
    base: float = 10000.0,
    original_max_position_embeddings: int = 4096,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
) -> np.ndarray:
    """The ramp as written in the YaRN paper: linear in the turns :math:`r_i`.

    :math:`\\gamma_i = \\mathrm{clip}((r_i - \\alpha)/(\\beta - \\alpha), 0, 1)` with
    :math:`\\alpha` = ``beta_slow`` and :math:`\\beta` = ``beta_fast``. It agrees with
    :func:`yarn_ramp` outside the ramp; inside it, released checkpoints use :func:`yarn_ramp`.

    Returns
    -------
    numpy.ndarray, shape (dim // 2,), float64
    """
    beta_fast = _positive(beta_fast, "beta_fast")
    beta_slow = _positive(beta_slow, "beta_slow")
    _check_yarn_betas(beta_fast, beta_slow)
    r = rotations(dim, base, original_max_position_embeddings)
    return np.clip((r - beta_slow) / (beta_fast - beta_slow), 0.0, 1.0)


def yarn_attention_factor(factor: float, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    """YaRN's scale on cos and sin, :math:`\\sqrt{1/t} = 0.1\\ln s + 1` (1 when :math:`s = 1`).

    Both rotated queries and keys are multiplied by it, so the logits are multiplied by its
    square :math:`1/t`. With ``mscale`` and ``mscale_all_dim`` (DeepSeek's configs) it is
    :math:`(0.1\\,m\\ln s + 1)/(0.1\\,m_{all}\\ln s + 1)`, which is 1 when the two are equal.

    A factor of 1 there does **not** remove YaRN's temperature. DeepSeek's attention (its
    reference code and ``transformers``' ``deepseek_v3``) also multiplies its softmax scale
    :math:`1/\\sqrt{d_{qk}}` by :math:`(0.1\\,m_{all}\\ln s + 1)^2` (:func:`yarn_softmax_scale`).
    Over the whole logit the rotated part is then multiplied by :math:`(0.1\\,m\\ln s + 1)^2` and
    the unrotated part by :math:`(0.1\\,m_{all}\\ln s + 1)^2`. DeepSeek-V3 (``factor=40``,
    ``mscale=mscale_all_dim=1``) has the factor 1 on cos and sin and multiplies every logit by
    :math:`(0.1\\ln 40 + 1)^2 \\approx 1.874`: YaRN's :math:`1/t`, moved into the softmax scale.

    Parameters
    ----------
    factor : float
        :math:`s \\ge 1`.
    mscale, mscale_all_dim : float, optional
        Give both or neither.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``factor < 1``; ``mscale`` or ``mscale_all_dim`` not positive, or only one of them given.
    TypeError
        A value that is not a real number.
    """
    factor = check_factor(factor)
    mscale = _positive_or_none(mscale, "mscale")
    mscale_all_dim = _positive_or_none(mscale_all_dim, "mscale_all_dim")
    if (mscale is None) != (mscale_all_dim is None):
        raise ValueError(
            "mscale and mscale_all_dim must be given together (their ratio sets the attention factor), "
            f"got mscale={mscale} and mscale_all_dim={mscale_all_dim}"
        )

    def temperature(weight: float) -> float:
        return 0.1 * weight * math.log(factor) + 1.0

    if mscale is None or mscale_all_dim is None:
        return temperature(1.0)
    return temperature(mscale) / temperature(mscale_all_dim)


def yarn_softmax_scale(factor: float, mscale_all_dim: float | None = None) -> float:
    """What DeepSeek-style YaRN multiplies the softmax scale :math:`1/\\sqrt{d_{qk}}` by.

    :math:`(0.1\\,m_{all}\\ln s + 1)^2` when ``mscale_all_dim`` :math:`m_{all}` is given, 1
    otherwise: the rule of DeepSeek's reference code and of ``transformers``' ``deepseek_v3``
    attention (``yarn_apply_mscale``). It multiplies every logit, the rotated and the unrotated
    coordinates of a head alike, on top of the factor :func:`yarn_attention_factor` puts on cos and
    sin. So the rotated part of a logit is multiplied by
    ``yarn_attention_factor(s, m, m_all) ** 2 * yarn_softmax_scale(s, m_all)``
    :math:`= (0.1\\,m\\ln s + 1)^2`, and with :math:`m = m_{all} = 1` (DeepSeek-V3, :math:`s = 40`)
    every logit is multiplied by :math:`(0.1\\ln 40 + 1)^2 \\approx 1.874`, YaRN's :math:`1/t`.

    Parameters
    ----------
    factor : float
        :math:`s \\ge 1` (``rope_parameters["factor"]``).
    mscale_all_dim : float, optional
        :math:`m_{all} > 0`; ``None`` (the default, and plain YaRN) leaves the softmax scale alone.

    Returns
    -------
    float
        :math:`\\ge 1`.

    Raises
    ------
    ValueError
        ``factor < 1`` or ``mscale_all_dim <= 0``.
    TypeError
        A value that is not a real number.
    """
    factor = check_factor(factor)
    mscale_all_dim = _positive_or_none(mscale_all_dim, "mscale_all_dim")
    if mscale_all_dim is None:
        return 1.0
    return (0.1 * mscale_all_dim * math.log(factor) + 1.0) ** 2


def llama3_ramp(
    dim: int,
    base: float = 500000.0,
    original_max_position_embeddings: int = 8192,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
) -> np.ndarray:
    """Llama 3.1's per-pair weight :math:`\\gamma_i`: 1 keeps :math:`\\theta_i`, 0 divides it by the factor.

    With :math:`r_i` the turns over the original context (:func:`rotations`):
    :math:`\\gamma_i = \\mathrm{clip}((r_i - \\text{low})/(\\text{high} - \\text{low}), 0, 1)`.
    Wavelengths shorter than :math:`L/\\text{high}` are kept, longer than
    :math:`L/\\text{low}` are divided by the factor, and in between :math:`\\gamma` is linear in
    :math:`r_i` (Meta's ``apply_scaling``; Hugging Face ``rope_type="llama3"``).

    With ``low_freq_factor == high_freq_factor`` (Llama 4) there is no ramp: pairs turning more
    than ``low`` times are kept, the others divided by the factor. (A pair turning exactly ``low``
    times would be 0/0 in Meta's and Hugging Face's code; it is divided here.)

    Returns
    -------
    numpy.ndarray, shape (dim // 2,), float64
        Values in [0, 1], non-increasing in ``i``.
    """
    low = _positive(low_freq_factor, "low_freq_factor")
    high = _positive(high_freq_factor, "high_freq_factor")
    _check_llama3_factors(low, high)
    r = rotations(dim, base, original_max_position_embeddings)
    if high == low:
        return (r > high).astype(np.float64)
    return np.clip((r - low) / (high - low), 0.0, 1.0)


def longrope_attention_factor(factor: float, original_max_position_embeddings: int) -> float:
    """LongRoPE's scale on cos and sin, :math:`\\sqrt{1 + \\ln s / \\ln L}` (1 when :math:`s = 1`).

    As in Ding et al. (2024) and Hugging Face ``rope_type="longrope"``: ``s`` is the extension
    factor (Phi-3 configs leave it out, and it is then ``max_position_embeddings / L``) and
    :math:`L` the original context. Both rotated queries and keys are multiplied by it, so the
    logits are multiplied by :math:`1 + \\ln s / \\ln L`.

    Parameters
    ----------
    factor : float
        :math:`s \\ge 1`.
    original_max_position_embeddings : int
        :math:`L \\ge 2` when :math:`s > 1`.

    Returns
    -------
    float
    """
    factor = check_factor(factor)
    length = check_length(original_max_position_embeddings, "original_max_position_embeddings")
    if factor == 1.0:
        return 1.0
    if length < 2:
        raise ValueError(
            "original_max_position_embeddings must be >= 2 for LongRoPE's attention factor "
            f"(it divides by ln L), got {length}"
        )
    return math.sqrt(1.0 + math.log(factor) / math.log(length))


def _blend(theta: np.ndarray, factor: float, keep: np.ndarray) -> np.ndarray:
    # (1 - gamma) * theta / s + gamma * theta: interpolate where gamma = 0, keep where gamma = 1.
    return (1.0 - keep) * theta / factor + keep * theta


# --- the methods -----------------------------------------------------------------------------


def _default(dim: int, base: float) -> tuple[np.ndarray, float]:
    return frequencies(dim, base), 1.0


def _linear(dim: int, base: float, factor: float) -> tuple[np.ndarray, float]:
    # Position Interpolation: position m -> m / s, the same angles as theta_i -> theta_i / s.
    return frequencies(dim, base) / factor, 1.0


def _ntk(dim: int, base: float, factor: float) -> tuple[np.ndarray, float]:
    return frequencies(dim, ntk_base(base, factor, dim)), 1.0


def _dynamic(
    dim: int, base: float, factor: float, original_max_position_embeddings: int, seq_len: int
) -> tuple[np.ndarray, float]:
    _check_ntk_dim(dim)
    scale = dynamic_scale(factor, original_max_position_embeddings, seq_len)
    return frequencies(dim, ntk_base(base, scale, dim)), 1.0


def _yarn(
    dim: int,
    base: float,
    factor: float,
    original_max_position_embeddings: int,
    beta_fast: float,
    beta_slow: float,
    attention_factor: float | None,
    mscale: float | None,
    mscale_all_dim: float | None,
    truncate: bool,
) -> tuple[np.ndarray, float]:
    _check_yarn_betas(beta_fast, beta_slow)
    keep = yarn_ramp(dim, base, original_max_position_embeddings, beta_fast, beta_slow, truncate)
    suggested = yarn_attention_factor(factor, mscale, mscale_all_dim)
    if attention_factor is None:  # an explicit attention_factor wins, as in transformers
        attention_factor = suggested
    return _blend(frequencies(dim, base), factor, keep), float(attention_factor)


def _llama3(
    dim: int,
    base: float,
    factor: float,
    low_freq_factor: float,
    high_freq_factor: float,
    original_max_position_embeddings: int,
) -> tuple[np.ndarray, float]:
    keep = llama3_ramp(dim, base, original_max_position_embeddings, low_freq_factor, high_freq_factor)
    return _blend(frequencies(dim, base), factor, keep), 1.0


def _longrope(
    dim: int,
    base: float,
    short_factor: np.ndarray,
    long_factor: np.ndarray,
    factor: float,
    original_max_position_embeddings: int,
    attention_factor: float | None,
    seq_len: int | None,
) -> tuple[np.ndarray, float]:
    # theta_i divided by a searched per-pair factor: the short set while the sequence fits in the
    # original context (or when no length is given: what a model holds after loading), the long set
    # once seq_len > L. The attention factor does not switch.
    for name, values in (("short_factor", short_factor), ("long_factor", long_factor)):
        if values.shape != (dim // 2,):
            raise ValueError(
                f"{name} must have one factor per rotated pair, dim // 2 = {dim // 2} values, got {values.size}"
            )
    long = seq_len is not None and seq_len > original_max_position_embeddings
    rescale = long_factor if long else short_factor
    if attention_factor is None:  # an explicit attention_factor wins, as in transformers
        attention_factor = longrope_attention_factor(factor, original_max_position_embeddings)
    return frequencies(dim, base) / rescale, float(attention_factor)


@dataclass(frozen=True)
class Method:
    """One way of rescaling RoPE for a longer context.

    Attributes
    ----------
    name : str
        Key in :data:`METHODS` (Hugging Face's ``rope_type`` where it has one).
    compute : callable
        ``compute(dim, base, **params) -> (inv_freq, attention_factor)``, parameters already checked.
    required : tuple of str
        Parameters that must be given.
    optional : mapping
        Parameters that may be given, with their defaults.
    summary : str
        What it does to the frequencies, in one line.
    source : str
        Bibliography key of the method's origin (``book/references.bib``).
    transformers : str or None
        The ``rope_type`` in Hugging Face transformers that computes the same numbers, if any.
    label : str
        Its name as the book writes it ("Position Interpolation" for ``"linear"``): figures' legends
        and drop-downs, and the keys of the cached experiments' results.
    """

    name: str
    compute: Callable[..., tuple[np.ndarray, float]]
    required: tuple[str, ...] = ()
    optional: Mapping[str, Any] = field(default_factory=dict)
    summary: str = ""
    source: str = ""
    transformers: str | None = None
    label: str = ""


#: The scaling methods the book teaches, by name. They are not the ``rope_type`` registry
#: (:data:`rope_edu.models.ROPE_TYPES`: what a config can name, and how it is read): each method
#: transformers implements has a ``rope_type`` of the same name (:attr:`Method.transformers`), whose
#: entry there takes its summary from here and its frequencies from :func:`scaled_frequencies`;
#: ``"ntk"`` (static NTK-aware, which no transformers ``rope_type`` computes) is here only, and the
#: family-specific types (``"proportional"``, ``"ntk_alpha"``) are there only.
METHODS: dict[str, Method] = {
    "default": Method(
        "default", _default, (), {},
        "plain RoPE: theta_i = base**(-2i/d)", "su2021roformer", "default", label="plain RoPE",
    ),
    "linear": Method(
        "linear", _linear, ("factor",), {},
        "Position Interpolation: every theta_i divided by factor (positions m -> m/factor)",
        "chen2023extending", "linear", label="Position Interpolation",
    ),
    "ntk": Method(
        "ntk", _ntk, ("factor",), {},
        "NTK-aware: base -> base * factor**(d/(d-2)); theta_0 kept, slowest pair divided by factor",
        "bloc97_2023ntk", None, label="NTK-aware",
    ),
    "dynamic": Method(
        "dynamic", _dynamic, ("factor", "original_max_position_embeddings", "seq_len"), {},
        "dynamic NTK: the NTK-aware base change with a scale computed from the current length seq_len",
        "emozilla2023dynamic", "dynamic", label="dynamic NTK",
    ),
    "yarn": Method(
        "yarn", _yarn, ("factor", "original_max_position_embeddings"),
        {"beta_fast": 32.0, "beta_slow": 1.0, "attention_factor": None, "mscale": None,
         "mscale_all_dim": None, "truncate": True},
        "YaRN: keep pairs turning > beta_fast times over L, divide those turning < beta_slow times "
        "by factor, ramp in between; scale cos and sin by 0.1 ln(factor) + 1",
        "peng2023yarn", "yarn", label="YaRN",
    ),
    "llama3": Method(
        "llama3", _llama3,
        ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"), {},
        "Llama 3.1: keep wavelengths < L/high_freq_factor, divide those > L/low_freq_factor by "
        "factor, ramp linear in turns in between; no attention scale",
        "meta2024llamamodels", "llama3", label="Llama 3.1",
    ),
    "longrope": Method(
        "longrope", _longrope,
        ("short_factor", "long_factor", "factor", "original_max_position_embeddings"),
        {"attention_factor": None, "seq_len": None},
        "LongRoPE: theta_i divided by a searched per-pair factor, short_factor while seq_len <= L and "
        "long_factor past it; scale cos and sin by sqrt(1 + ln(factor) / ln(L))",
        "ding2024longrope", "longrope", label="LongRoPE",
    ),
}


def _bind(spec: Method, params: Mapping[str, Any]) -> dict[str, Any]:
    """Check names (missing / unknown) and values of ``params`` for ``spec``; fill in defaults."""
    allowed = (*spec.required, *spec.optional)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        expected = ", ".join(allowed) or "no parameters"
        raise TypeError(
            f"unknown parameter(s) {', '.join(unknown)} for method {spec.name!r}; it takes {expected}"
        )
    missing = [name for name in spec.required if name not in params]
    if missing:
        raise TypeError(f"method {spec.name!r} requires parameter(s) {', '.join(missing)}")
    values = {**spec.optional, **params}
    return {name: _CHECKS[name](value, name) for name, value in values.items()}


def scaled_frequencies(method: str, dim: int, base: float = 10000.0, **params: Any) -> tuple[np.ndarray, float]:
    """Frequencies and attention factor of a context-extension method.

    Parameters
    ----------
    method : {"default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope"}
        A key of :data:`METHODS`.
    dim : int
        Even number of rotated coordinates :math:`d` (``int(head_dim * partial_rotary_factor)``).
    base : float, default 10000.0
        RoPE base :math:`b` (``rope_theta``).
    **params
        The method's parameters, named as in Hugging Face's ``rope_parameters``:

        * ``"linear"``, ``"ntk"``: ``factor``;
        * ``"dynamic"``: ``factor``, ``original_max_position_embeddings``, ``seq_len``;
        * ``"yarn"``: ``factor``, ``original_max_position_embeddings``; optional ``beta_fast=32``,
          ``beta_slow=1``, ``attention_factor``, ``mscale``, ``mscale_all_dim``, ``truncate=True``;
        * ``"llama3"``: ``factor``, ``low_freq_factor``, ``high_freq_factor``,
          ``original_max_position_embeddings``;
        * ``"longrope"``: ``short_factor``, ``long_factor`` (``dim // 2`` values each), ``factor``,
          ``original_max_position_embeddings``; optional ``attention_factor`` and ``seq_len`` (the
          long factors are used when ``seq_len > original_max_position_embeddings``).

    Returns
    -------
    inv_freq : numpy.ndarray, shape (dim // 2,), float64
        New frequencies, to pass as ``apply_rope(..., inv_freq=inv_freq)``.
    attention_factor : float
        Multiplies cos and sin (both rotated q and k), so logits scale by its square.

    Raises
    ------
    ValueError
        Unknown method (the message lists the valid ones); a value out of range (``factor < 1``,
        ``beta_fast <= beta_slow``, ``low_freq_factor > high_freq_factor``, a non-positive length,
        LongRoPE factor lists of the wrong length...).
    TypeError
        A missing or unknown parameter, or one of the wrong type.
    """
    method = check_choice(method, METHODS, "method")
    dim = check_dim(dim)
    base = check_base(base)
    spec = METHODS[method]
    values = _bind(spec, params)
    inv_freq, attention_factor = spec.compute(dim, base, **values)
    return inv_freq, float(attention_factor)


def frequency_ratio(method: str, dim: int, base: float = 10000.0, **params: Any) -> np.ndarray:
    """New over old frequency, :math:`\\theta'_i/\\theta_i`, for each pair.

    1 means the pair is untouched, ``1 / factor`` that it is fully interpolated. Same arguments as
    :func:`scaled_frequencies`.

    Returns
    -------
    numpy.ndarray, shape (dim // 2,), float64
    """
    inv_freq, _ = scaled_frequencies(method, dim, base, **params)
    return inv_freq / frequencies(dim, base)
