"""Chapter 5's base_bound figure: data() and readouts() against rope_edu (no browser)."""

from __future__ import annotations

import numpy as np
import pytest

from rope_edu import max_context, wavelengths
from rope_edu.models import PUBLISHED
from rope_edu.widgets import base_bound as B


def test_reaches_are_max_context():
    data = B.data()
    assert len(data["bases"]) == 51 and data["bases"][0] == 1e3 and data["bases"][-1] == 1e8
    for d in ("64", "128"):
        for k in (0, 10, 27, 50):
            assert data["reach"][d][k] == max_context(int(d), float(B.BASE_GRID[k]))


@pytest.mark.parametrize("state", [("128", 4.0, 12), ("64", 5.2, 12), ("256", 7.9, 20), ("96", 3.0, 8)])
def test_readouts(state):
    d, lb, l2 = state
    r = B.readouts(*state)
    b = 10.0 ** lb
    assert r["base"] == pytest.approx(b, rel=1e-12) and r["context"] == 2**l2
    assert r["turning"] == int(np.sum(wavelengths(int(d), b) <= 2**l2)) and r["critical"] == 2 * r["turning"]
    assert r["reach"] == max_context(int(d), b) and r["ratio"] == r["reach"] / 2**l2


def test_llama2_default_state():
    r = B.readouts("128", 4.0, 12)
    assert (r["reach"], r["turning"]) == (1707, 46)


def test_models_rotate_whole_heads():
    names = {m["name"] for m in B.models()}
    assert {"Llama 2 7B", "Qwen3 8B", "GPT-OSS 20B", "Gemma 3 4B, local layers"} <= names
    assert not names & {"GPT-NeoX-20B", "GPT-J 6B", "DeepSeek-V3", "Phi-2"}
    gemma = next(m for m in B.models() if m["name"] == "Gemma 3 4B, local layers")
    assert gemma["trained"] == PUBLISHED["Gemma 3 4B, local layers"].config["sliding_window"]


@pytest.mark.parametrize("args, exc, match", [
    (("100", 4.0, 12), ValueError, "head_dim"),
    (("128", 9.0, 12), ValueError, "log10_base"),
    (("128", 4.0, 12.5), ValueError, "log2_context"),
    (("128", "x", 12), TypeError, "log10_base"),
])
def test_bad_input(args, exc, match):
    with pytest.raises(exc, match=match):
        B.readouts(*args)


def test_drawing_fits_the_desktop_column():
    # core.js shows a layout only where its text stays >= 10 px: at width * 10 / 11 px or more. The
    # book's code column is 688 px at 1280 px, so a wider first (wide) layout would give way to the
    # narrow one on a desktop (tests/test_fig_fit.py checks every figure in the built book)
    import math
    import re
    from pathlib import Path

    js = (Path(B.__file__).parent / "js" / "base_bound.js").read_text()
    width = int(re.search(r"figure\(draw, \{ layouts: \[\s*\{ width: (\d+)", js).group(1))
    assert math.ceil(width * 10 / 11) <= 688


def test_models_sit_at_their_own_base_and_context():
    for m in B.models():
        spec = PUBLISHED[m["name"]].spec()
        assert m["base"] == spec.base and m["head_dim"] == spec.head_dim
        assert m["released"] is None or m["released"] > m["trained"]


def test_attended_span_windows_and_chunks():
    from transformers import Llama4TextConfig

    assert B.LLAMA4_CHUNK == Llama4TextConfig().attention_chunk_size
    assert B.attended_span(PUBLISHED["Llama 4 Scout"]) == B.LLAMA4_CHUNK
    assert B.attended_span(PUBLISHED["Gemma 3 4B, local layers"]) == 1024
    assert B.attended_span(PUBLISHED["Gemma 3 4B, global layers"]) is None
    assert B.attended_span(PUBLISHED["Llama 2 7B"]) is None
    scout = next(m for m in B.models() if m["name"] == "Llama 4 Scout")
    assert (scout["trained"], scout["released"]) == (B.LLAMA4_CHUNK, None)
