"""Chapter 11 figure: the (time, height, width) ids M-RoPE gives a strip of text, an image and a video.

The sequence is: a text run (3 tokens, the last being the vision-start token), an image of
``rows x cols`` merged tokens, a text run (vision-end, two words, vision-start), a video of
``frames`` temporal patches of 2 x 2 merged tokens, and a closing text run (vision-end, two words).
For Qwen3-VL, whose processor writes a timestamp before each frame, every frame is its own block,
preceded by two timestamp tokens and a vision-start token. Every
id comes from :func:`rope_edu.multidim.mrope_position_ids` (computed here for every setting the
controls reach and sent to the browser, which only draws them).
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Any

import numpy as np

from .._checks import check_choice, check_int
from ..multidim import MRopePositions, mrope_position_ids
from ._core import Control, Figure

__all__ = ["FAMILIES", "SECONDS", "TOKENS_PER_SECOND", "MERGE", "layout", "positions", "readouts", "data",
           "CONTROLS", "DEMO"]

#: Label shown -> key of rope_edu.multidim.MROPE_FAMILIES.
FAMILIES: dict[str, str] = {"Qwen2-VL": "qwen2_vl", "Qwen2.5-VL": "qwen2_5_vl", "Qwen3-VL": "qwen3_vl"}
#: Seconds per temporal patch the video control offers (it matters to Qwen2.5-VL only).
SECONDS: tuple[str, ...] = ("0.5", "1", "2")
#: Qwen2.5-VL's vision_config.tokens_per_second in the figure (the released checkpoints use 2).
TOKENS_PER_SECOND = 2
#: The vision encoder merges MERGE x MERGE patches into one token.
MERGE = 2


def layout(family: str, rows: int, cols: int, frames: int, seconds: float = 1.0) -> list[tuple]:
    """The figure's token layout for :func:`rope_edu.multidim.mrope_position_ids` (grids in patches)."""
    family = check_choice(family, FAMILIES.values(), "family")
    rows, cols, frames = check_int(rows, "rows", 1), check_int(cols, "cols", 1), check_int(frames, "frames", 1)
    segs: list[tuple] = [("text", 3), ("image", (1, MERGE * rows, MERGE * cols))]
    if family == "qwen3_vl":
        # "<vision_end> w w <t> <t> <vision_start>", then per frame: frame tokens, and between frames
        # "<vision_end> <t> <t> <vision_start>" (a two-token timestamp in the text before each frame)
        segs.append(("text", 6))
        for f in range(frames):
            if f:
                segs.append(("text", 4))
            segs.append(("video", (1, 2 * MERGE, 2 * MERGE)))
    else:
        segs += [("text", 4), ("video", (frames, 2 * MERGE, 2 * MERGE), float(seconds))]
    segs.append(("text", 3))
    return segs


def positions(family: str, rows: int, cols: int, frames: int, seconds: float = 1.0) -> MRopePositions:
    """:func:`rope_edu.multidim.mrope_position_ids` of the figure's layout."""
    return mrope_position_ids(layout(family, rows, cols, frames, seconds), family=family,
                              spatial_merge_size=MERGE, tokens_per_second=TOKENS_PER_SECOND)


def _first_after(p: MRopePositions, kind: int) -> int:
    """Id of the first text token after the last token of modality ``kind``."""
    last = int(np.flatnonzero(p.token_type == kind)[-1])
    return int(p.position_ids[0, last + 1])


def readouts(family: str, rows: int, cols: int, frames: int, seconds: str) -> dict[str, float]:
    """The numbers the figure prints for a state of its controls."""
    key = FAMILIES[check_choice(family, FAMILIES, "family")]
    sec = float(check_choice(seconds, SECONDS, "seconds"))
    p = positions(key, rows, cols, frames, sec)
    video = p.token_type == 2
    return {
        "n_tokens": p.n_tokens,
        "max_id": int(p.position_ids.max()),
        "rope_delta": p.rope_delta,
        "after_image": _first_after(p, 1),
        "after_video": _first_after(p, 2),
        "video_time_span": int(p.position_ids[0, video].max() - p.position_ids[0, video].min()),
    }


def _key(family: str, rows: int, cols: int, frames: int, seconds: str) -> str:
    return f"{family}|{rows}|{cols}|{frames}|{seconds}"


@lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, Any]]:
    out = {}
    ranges = {c.name: range(int(c.bounds[0]), int(c.bounds[1]) + 1) for c in CONTROLS if c.kind == "range"}
    for label, key in FAMILIES.items():
        for rows, cols, frames in itertools.product(ranges["rows"], ranges["cols"], ranges["frames"]):
            # the seconds control changes nothing but Qwen2.5-VL's time ids: one entry serves the others
            for sec in (SECONDS if key == "qwen2_5_vl" else ("1",)):
                p = positions(key, rows, cols, frames, float(sec))
                out[_key(label, rows, cols, frames, sec)] = {"ids": p.position_ids, "type": p.token_type}
    return out


def data() -> dict[str, Any]:
    """Ids and modality of every token, for every state the controls reach."""
    return {"layouts": _table(), "seconds_matter": ["Qwen2.5-VL"]}


CONTROLS = [
    Control("family", "model family", "Qwen2-VL", kind="select", options=list(FAMILIES)),
    Control("rows", "image rows (tokens after merging)", 2, min=1, max=3, step=1),
    Control("cols", "image columns (tokens after merging)", 3, min=1, max=3, step=1),
    Control("frames", "video: temporal patches", 3, min=1, max=4, step=1),
    Control("seconds", "video: seconds per temporal patch", "1", kind="select", options=list(SECONDS)),
]

#: The chapter 11 figure: each token's (t, h, w) ids in a text + image + video sequence.
DEMO = Figure(
    "mrope_ids", CONTROLS, data=data, readouts=readouts,
    title="M-RoPE position ids: time, height and width ids of every token of a text, image and video sequence",
)
