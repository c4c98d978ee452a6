"""M-RoPE position ids for a layout of text runs, images and videos, family by family.

:func:`mrope_position_ids` gives every token of a layout its (time, height, width) ids, as each
family's ``get_rope_index`` does, in an :class:`MRopePositions` (``position_ids`` of shape
``(3, n_tokens)``, each token's kind, the ``rope_delta`` of the tokens generated after it).
:data:`MROPE_FAMILIES` says how a family counts a video's time (:class:`MRopeFamily`) and
:data:`MROPE_ADVANCES` where the text after an image or a video starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._checks import check_choice, check_int, check_real

__all__ = [
    "MROPE_ADVANCES",
    "MROPE_FAMILIES",
    "MRopeFamily",
    "MRopePositions",
    "mrope_position_ids",
]


# --- M-RoPE position ids for a layout of text, images and videos ------------------------------


def _time_index(t: int, seconds: float, tokens_per_second: float | None) -> np.ndarray:
    return np.arange(t, dtype=np.int64)


def _time_absolute(t: int, seconds: float, tokens_per_second: float | None) -> np.ndarray:
    # Qwen2.5-VL: temporal patch k sits at k * second_per_grid_t seconds; its id is that time in
    # units of 1 / tokens_per_second, truncated to an integer as the reference code does (.long()).
    # transformers holds second_per_grid_t as a float32 tensor and multiplies in float32
    # (arange(t) * (tokens_per_second * second_per_grid_t)); where k * interval is an integer in exact
    # arithmetic, float32 and float64 can truncate to different ids (e.g. 2 s per patch at 1.5 fps),
    # so the product is formed in float32 here too.
    interval = np.float32(np.float32(tokens_per_second) * np.float32(seconds))
    return np.trunc(np.arange(t, dtype=np.float32) * interval).astype(np.int64)


@dataclass(frozen=True)
class MRopeFamily:
    """How one model family builds and applies M-RoPE.

    Attributes
    ----------
    name : str
        Key in :data:`MROPE_FAMILIES` (Hugging Face's ``model_type``).
    time_ids : callable
        ``time_ids(t, second_per_grid_t, tokens_per_second) -> ids`` of the ``t`` temporal patches
        of a video, before the running offset is added.
    split_frames : bool
        Whether a video is laid out as ``t`` separate one-frame blocks (Qwen3-VL, whose processor
        puts a timestamp in the text before each frame) instead of one ``t x h x w`` block.
    assignment : str
        Key of :data:`MROPE_ASSIGNMENTS` used by the family's language model.
    needs_tokens_per_second : bool
    used_by : str
    """

    name: str
    time_ids: Callable[[int, float, float | None], np.ndarray]
    split_frames: bool
    assignment: str
    needs_tokens_per_second: bool
    used_by: str


MROPE_FAMILIES: dict[str, MRopeFamily] = {
    "qwen2_vl": MRopeFamily(
        "qwen2_vl", _time_index, False, "contiguous", False,
        "Qwen2-VL: time id = index of the temporal patch",
    ),
    "qwen2_5_vl": MRopeFamily(
        "qwen2_5_vl", _time_absolute, False, "contiguous", True,
        "Qwen2.5-VL: time id = absolute time x tokens_per_second (vision_config.tokens_per_second)",
    ),
    "qwen3_vl": MRopeFamily(
        "qwen3_vl", _time_index, True, "interleaved", False,
        "Qwen3-VL: one block per frame (time given by timestamp text), interleaved frequencies",
    ),
}


def _advance_max(start: int, ids: np.ndarray, llm_h: int, llm_w: int) -> int:
    return int(ids.max()) + 1


def _advance_spatial(start: int, ids: np.ndarray, llm_h: int, llm_w: int) -> int:
    return start + max(llm_h, llm_w)


#: Where the text after a visual block starts. ``"max"``: one past the largest id in the block,
#: over all three axes (the Qwen2-VL paper, Qwen's reference code and transformers 4.x).
#: ``"spatial"``: the block's start plus ``max(h, w)`` after merging, ignoring the time ids
#: (transformers 5.x ``get_rope_index``). They agree for images and for Qwen3-VL frames; they differ
#: for a Qwen2-VL video with more temporal patches than rows and columns, and for most Qwen2.5-VL
#: videos (whose time ids grow by ``tokens_per_second * second_per_grid_t`` per patch).
MROPE_ADVANCES: dict[str, Callable[[int, np.ndarray, int, int], int]] = {
    "max": _advance_max,
    "spatial": _advance_spatial,
}


@dataclass(frozen=True)
class MRopePositions:
    """Position ids of a multimodal sequence.

    Attributes
    ----------
    position_ids : numpy.ndarray, shape (3, n_tokens), int64
        (time, height, width) id of every token; for a text token all three are equal.
    token_type : numpy.ndarray, shape (n_tokens,), int8
        0 text, 1 image, 2 video (Hugging Face's ``mm_token_type_ids``).
    rope_delta : int
        ``position_ids.max() + 1 - n_tokens``: a token generated after the prompt, at sequence
        index ``s``, gets id ``s + rope_delta`` on all three axes.
    """

    position_ids: np.ndarray
    token_type: np.ndarray
    rope_delta: int

    @property
    def n_tokens(self) -> int:
        return int(self.token_type.size)


_KINDS = {"text": 0, "image": 1, "video": 2}


def _check_grid(grid: Any, merge: int, name: str) -> tuple[int, int, int]:
    if isinstance(grid, (str, bytes)) or not isinstance(grid, (Sequence, np.ndarray)) or len(grid) != 3:
        raise ValueError(f"{name} must be a grid (t, h, w) of 3 positive integers (patches), got {grid!r}")
    t, h, w = (check_int(v, f"{name}[{i}]", 1) for i, v in enumerate(grid))
    if h % merge or w % merge:
        raise ValueError(
            f"{name} = {(t, h, w)}: h and w must be multiples of spatial_merge_size={merge} "
            f"(the vision encoder merges {merge}x{merge} patches into one token)"
        )
    return t, h, w


def mrope_position_ids(
    layout: Sequence[tuple],
    *,
    family: str = "qwen2_vl",
    spatial_merge_size: int = 2,
    tokens_per_second: float | None = None,
    advance: str = "max",
) -> MRopePositions:
    """Build M-RoPE (time, height, width) ids for a sequence of text runs, images and videos.

    Rules (Qwen2-VL, Wang et al. 2024):

    * a run of ``n`` text tokens gets ids ``s, s+1, ..., s+n-1`` on all three axes, where ``s`` is
      the running offset; the offset then moves to ``s + n``;
    * an image or video of ``(t, h, w)`` patches becomes ``t * (h/m) * (w/m)`` tokens
      (``m = spatial_merge_size``: the encoder merges ``m x m`` patches into one token), in
      (time, row, column) order; the token at (k, r, c) gets ids ``(s + time_k, s + r, s + c)``;
    * after a visual block the offset moves on as ``advance`` says (:data:`MROPE_ADVANCES`).

    Family differences (:data:`MROPE_FAMILIES`): Qwen2-VL's ``time_k = k``; Qwen2.5-VL's
    ``time_k = int(k * second_per_grid_t * tokens_per_second)`` (the product in float32, as
    transformers forms it), so ids follow absolute time;
    Qwen3-VL lays each frame of a video out as its own block (its processor writes a timestamp as
    text before each frame: add those text runs to ``layout`` as separate segments, with each frame
    as a ``("video", (1, h, w))`` segment, to reproduce the model's input exactly).

    Parameters
    ----------
    layout : sequence of tuples
        Segments in order: ``("text", n)``, ``("image", (t, h, w))``, ``("video", (t, h, w))`` or
        ``("video", (t, h, w), second_per_grid_t)``. Grids count patches *before* merging, as
        Hugging Face's ``image_grid_thw`` / ``video_grid_thw`` do. ``second_per_grid_t`` (seconds
        per temporal patch, Qwen2.5-VL only) defaults to 1.0 as in Hugging Face's code.
    family : {"qwen2_vl", "qwen2_5_vl", "qwen3_vl"}, default "qwen2_vl"
    spatial_merge_size : int, default 2
    tokens_per_second : float, optional
        Qwen2.5-VL's ``vision_config.tokens_per_second``; required for that family.
    advance : {"max", "spatial"}, default "max"
        Where text after a visual block starts; see :data:`MROPE_ADVANCES`. Use ``"spatial"`` to
        reproduce transformers 5.x.

    Returns
    -------
    MRopePositions
        ``position_ids`` of shape ``(3, n_tokens)``, ``token_type``, ``rope_delta``.
    """
    family = check_choice(family, MROPE_FAMILIES, "family")
    fam = MROPE_FAMILIES[family]
    advance = check_choice(advance, MROPE_ADVANCES, "advance")
    merge = check_int(spatial_merge_size, "spatial_merge_size", 1)
    if fam.needs_tokens_per_second:
        if tokens_per_second is None:
            raise ValueError(f"tokens_per_second is required for family {family!r} (vision_config.tokens_per_second)")
        tokens_per_second = check_real(tokens_per_second, "tokens_per_second")
        if tokens_per_second <= 0:
            raise ValueError(f"tokens_per_second must be > 0, got {tokens_per_second}")
    if isinstance(layout, (str, bytes)) or not isinstance(layout, Sequence) or len(layout) == 0:
        raise ValueError(f"layout must be a non-empty sequence of segments such as ('text', 5), got {layout!r}")

    ids: list[np.ndarray] = []
    types: list[np.ndarray] = []
    pos = 0
    for i, seg in enumerate(layout):
        name = f"layout[{i}]"
        if not isinstance(seg, tuple) or len(seg) < 2:
            raise ValueError(f"{name} must be a tuple like ('text', n) or ('image', (t, h, w)), got {seg!r}")
        kind = check_choice(seg[0], _KINDS, f"{name} kind")
        if kind == "text":
            if len(seg) != 2:
                raise ValueError(f"{name} must be ('text', n), got {seg!r}")
            n = check_int(seg[1], f"{name} length", 1)
            ids.append(np.broadcast_to(np.arange(pos, pos + n), (3, n)))
            types.append(np.zeros(n, dtype=np.int8))
            pos += n
            continue
        if len(seg) not in (2, 3) or (kind == "image" and len(seg) != 2):
            raise ValueError(f"{name} must be ('image', (t, h, w)) or ('video', (t, h, w)[, second_per_grid_t]), got {seg!r}")
        t, h, w = _check_grid(seg[1], merge, f"{name} grid")
        seconds = check_real(seg[2], f"{name} second_per_grid_t") if len(seg) == 3 else 1.0
        if seconds < 0:
            raise ValueError(f"{name} second_per_grid_t must be >= 0, got {seconds}")
        lh, lw = h // merge, w // merge
        blocks = [1] * t if (kind == "video" and fam.split_frames) else [t]
        for tb in blocks:
            if kind == "video":
                time = fam.time_ids(tb, seconds, tokens_per_second)
            else:  # still images are never spaced out in time (transformers issue 45325)
                time = np.arange(tb, dtype=np.int64)
            tt, hh, ww = np.meshgrid(time, np.arange(lh), np.arange(lw), indexing="ij")
            block = np.stack([tt.ravel(), hh.ravel(), ww.ravel()]) + pos
            ids.append(block)
            types.append(np.full(block.shape[1], _KINDS[kind], dtype=np.int8))
            pos = MROPE_ADVANCES[advance](pos, block, lh, lw)
    position_ids = np.concatenate(ids, axis=1).astype(np.int64)
    token_type = np.concatenate(types)
    delta = int(position_ids.max()) + 1 - position_ids.shape[1]
    return MRopePositions(position_ids, token_type, delta)
