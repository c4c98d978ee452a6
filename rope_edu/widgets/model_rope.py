"""Chapter 10 figure: where position lives in the heads of released models.

Two drop-downs pick two released models (:data:`rope_edu.models.PUBLISHED`) and a slider sets a
context length :math:`2^k` tokens. The figure (``js/model_rope.js``) draws, for each model, one
strip of cells for the coordinates of a query head, coloured by the wavelength of the pair the
coordinate belongs to (grey: the coordinate passes through without position, as under partial
rotary or beside DeepSeek's decoupled rotary part), and below the wavelengths
:math:`\\lambda_i = 2\\pi/\\theta_i` of the rotated pairs of both models against the context.

Every number comes from :func:`rope_edu.models.rope_spec` (:func:`data`); the readouts are
:func:`readouts`, which the browser tests compare with the page.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import check_choice, check_int
from ..models import PUBLISHED
from ._core import Control, Figure

__all__ = ["MODELS", "K_MIN", "K_MAX", "model_data", "wavelengths_at", "data", "readouts", "CONTROLS", "DEMO"]

#: The models the drop-downs offer, in the order of :data:`rope_edu.models.PUBLISHED`.
MODELS: list[str] = list(PUBLISHED)

#: The context slider: :math:`2^k` tokens for ``K_MIN <= k <= K_MAX`` (256 tokens to 16M).
K_MIN, K_MAX = 8, 24


def model_data(name: str) -> dict[str, Any]:
    """What the figure needs about one released model.

    Parameters
    ----------
    name : str
        A key of :data:`rope_edu.models.PUBLISHED`.

    Returns
    -------
    dict
        ``head_dim``, ``rotary_dim``, ``offset`` (first rotated coordinate), ``layout`` (how the
        head's coordinates pair up, as the checkpoint stores them), ``pair``: for each coordinate
        the index of its rotated pair or -1 when it passes through (length ``head_dim``),
        ``wavelengths`` (positions, per pair, at loading), ``base``, ``rope_type``, ``trained`` and
        ``extended`` (tokens, or None). LongRoPE models switch factors with the sequence length:
        ``switch`` is the length past which the code uses ``wavelengths_long`` (both None for
        every other model, whose wavelengths do not depend on the length).
    """
    name = check_choice(name, PUBLISHED, "name")
    pub = PUBLISHED[name]
    spec = pub.spec()
    r, off = spec.rotary_dim, spec.rotary_offset
    pair = np.full(spec.head_dim, -1, dtype=np.int64)
    j = np.arange(r)
    pair[off:off + r] = j // 2 if spec.layout == "interleaved" else j % (r // 2)
    switch = long = None
    if spec.depends_on_length:
        if spec.rope_type != "longrope":  # dynamic NTK changes continuously: not a two-list switch
            raise ValueError(f"{name}: the figure draws LongRoPE's two factor lists only, not {spec.rope_type!r}")
        switch = int(spec.rope_params["original_max_position_embeddings"])
        long = spec.wavelengths(seq_len=switch + 1)
    return {
        "head_dim": spec.head_dim,
        "rotary_dim": r,
        "offset": off,
        "layout": spec.layout,
        "pair": pair,
        "wavelengths": spec.wavelengths(),
        "base": spec.base,
        "rope_type": spec.rope_type,
        "trained": pub.trained,
        "extended": pub.extended,
        "switch": switch,
        "wavelengths_long": long,
    }


def wavelengths_at(d: dict[str, Any], context: float) -> np.ndarray:
    """The wavelengths a model's code uses for a sequence of ``context`` tokens (:func:`model_data` ``d``)."""
    if d["switch"] is not None and context > d["switch"]:
        return d["wavelengths_long"]
    return d["wavelengths"]


def data() -> dict[str, Any]:
    """Every model of :data:`MODELS` (see :func:`model_data`) and the colour stops of the strips."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps["cividis"]
    return {
        "models": {name: model_data(name) for name in MODELS},
        "cmap": [to_hex(cmap(i / 8)) for i in range(9)],
        "log_range": [0.5, 8.0],  # log10 of the wavelengths the colour scale spans (2π ≈ 10^0.8 ... 10^8)
    }


def readouts(model_a: str, model_b: str, k: int) -> dict[str, float]:
    """The numbers the figure prints for its controls.

    ``context`` = :math:`2^k`; for each model (suffix ``_a``, ``_b``): ``rot`` (rotated
    coordinates), ``frac`` (their fraction of the head), ``longest`` (longest wavelength, in
    positions) and ``slow`` (rotated pairs whose wavelength exceeds the context: they never complete
    a turn within it). Wavelengths are those the model's code uses for a sequence of the context's
    length (:func:`wavelengths_at`: LongRoPE's long factors past its original length).
    """
    k = check_int(k, "k", K_MIN)
    if k > K_MAX:
        raise ValueError(f"k must be an integer in [{K_MIN}, {K_MAX}], got {k}")
    context = 2.0**k
    out: dict[str, float] = {"context": context}
    for suffix, name in (("a", model_a), ("b", model_b)):
        d = model_data(name)
        wl = wavelengths_at(d, context)
        out[f"rot_{suffix}"] = d["rotary_dim"]
        out[f"frac_{suffix}"] = d["rotary_dim"] / d["head_dim"]
        out[f"longest_{suffix}"] = float(wl.max())
        out[f"slow_{suffix}"] = int(np.sum(wl > context))
    return out


CONTROLS = [
    Control("model_a", "model A", "Llama 3.1 8B", kind="select", options=MODELS),
    Control("model_b", "model B", "GPT-NeoX-20B", kind="select", options=MODELS),
    Control("k", "context length (tokens)", 13, min=K_MIN, max=K_MAX, step=1, shows="2^"),
]

#: The chapter 10 figure: which coordinates of two released models' heads carry position, at which
#: wavelengths, against a context length.
DEMO = Figure(
    "model_rope", CONTROLS, data=data, readouts=readouts,
    title="Which coordinates of a head rotate, and at which wavelengths, in two released models",
)
