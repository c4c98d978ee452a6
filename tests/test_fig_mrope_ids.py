"""Chapter 11's M-RoPE id figure (rope_edu.widgets.mrope_ids): data and readouts against
rope_edu.multidim.mrope_position_ids, and its JavaScript ``compute`` under Node.js."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rope_edu.multidim import mrope_position_ids
from rope_edu.widgets import JS_DIR, Figure
from rope_edu.widgets import mrope_ids as fig
from node_figure import call_js

STATES = [dict(family=f, rows=r, cols=c, frames=t, seconds=s)
          for f, r, c, t, s in itertools.product(fig.FAMILIES, (1, 2, 3), (1, 3), (1, 4), fig.SECONDS)]


def test_data_is_the_package_ids():
    layouts = fig.data()["layouts"]
    for label, key in fig.FAMILIES.items():
        entry = layouts[f"{label}|2|3|2|1"]
        p = mrope_position_ids(fig.layout(key, 2, 3, 2, 1.0), family=key, tokens_per_second=fig.TOKENS_PER_SECOND)
        np.testing.assert_array_equal(entry["ids"], p.position_ids)
        np.testing.assert_array_equal(entry["type"], p.token_type)
    assert "Qwen2.5-VL|1|1|1|0.5" in layouts and "Qwen2-VL|1|1|1|0.5" not in layouts


@pytest.mark.parametrize("state", STATES[::5])
def test_readouts_follow_the_rules(state):
    r = fig.readouts(**state)
    key = fig.FAMILIES[state["family"]]
    p = fig.positions(key, state["rows"], state["cols"], state["frames"], float(state["seconds"]))
    assert r["n_tokens"] == p.n_tokens and r["rope_delta"] == r["max_id"] + 1 - r["n_tokens"]
    image = p.position_ids[:, p.token_type == 1]
    # text after the image starts one past the image's largest id
    assert r["after_image"] == image.max() + 1
    # an image of rows x cols tokens advances the position by max(rows, cols), not rows * cols
    first_image = np.flatnonzero(p.token_type == 1)[0]
    assert r["after_image"] - p.position_ids[0, first_image] == max(state["rows"], state["cols"])
    video = p.token_type == 2
    if key == "qwen2_5_vl":
        step = float(state["seconds"]) * fig.TOKENS_PER_SECOND
        assert r["video_time_span"] == int((state["frames"] - 1) * step)
    elif key == "qwen2_vl":
        assert r["video_time_span"] == state["frames"] - 1
    else:  # Qwen3-VL: time lives in the timestamp text; each frame's time id is its start
        assert r["video_time_span"] == p.position_ids[0, video].max() - p.position_ids[0, video].min()
        assert r["after_video"] == p.position_ids[:, video].max() + 1


def test_seconds_only_move_qwen2_5_time_ids():
    a = fig.readouts("Qwen2.5-VL", 2, 2, 4, "0.5")
    b = fig.readouts("Qwen2.5-VL", 2, 2, 4, "2")
    assert b["video_time_span"] == 4 * a["video_time_span"]
    assert fig.readouts("Qwen2-VL", 2, 2, 4, "0.5") == fig.readouts("Qwen2-VL", 2, 2, 4, "2")


def test_javascript_compute_agrees_with_readouts():
    out = call_js("mrope_ids", "compute", [[s] for s in STATES], extra=[fig.data()])
    for s, got in zip(STATES, out):
        want = fig.readouts(**s)
        for key, value in want.items():
            assert got[key] == value, (s, key)


@pytest.mark.parametrize("call, error, match", [
    (lambda: fig.readouts("Qwen4-VL", 1, 1, 1, "1"), ValueError, "family"),
    (lambda: fig.readouts("Qwen2-VL", 1, 1, 1, "3"), ValueError, "seconds"),
    (lambda: fig.readouts("Qwen2-VL", 0, 1, 1, "1"), ValueError, "rows"),
    (lambda: fig.layout("qwen2_vl", 1, 1.5, 1), TypeError, "cols"),
    (lambda: fig.DEMO.state(frames=9), ValueError, "frames"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_figure_wiring_and_live_widget():
    assert isinstance(fig.DEMO, Figure) and fig.DEMO.name == "mrope_ids"
    assert (JS_DIR / "mrope_ids.js").is_file()
    w = fig.DEMO.widget(family="Qwen3-VL")
    assert (w.family, w.rows, w.frames) == ("Qwen3-VL", 2, 3)
