"""Chapter 10's figure (rope_edu.widgets.model_rope): its data and readouts against rope_edu.models,
and its JavaScript ``compute`` under Node.js (tests/node_figure.py)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from rope_edu import frequencies
from rope_edu.models import PUBLISHED
from rope_edu.widgets import Figure, JS_DIR
from rope_edu.widgets import model_rope as fig
from rope_edu.widgets._core import to_json
from node_figure import call_js


@pytest.mark.parametrize("name", fig.MODELS)
def test_model_data_matches_the_spec(name):
    d = fig.model_data(name)
    spec = PUBLISHED[name].spec()
    assert (d["head_dim"], d["rotary_dim"], d["offset"], d["layout"]) == (
        spec.head_dim, spec.rotary_dim, spec.rotary_offset, spec.layout)
    np.testing.assert_array_equal(d["wavelengths"], 2 * np.pi / spec.inv_freq())
    pair = d["pair"]
    assert pair.shape == (spec.head_dim,)
    rotated = np.flatnonzero(pair >= 0)
    # exactly the rotated block, each pair made of two coordinates
    np.testing.assert_array_equal(rotated, np.arange(spec.rotary_offset, spec.rotary_offset + spec.rotary_dim))
    assert np.array_equal(np.bincount(pair[rotated]), np.full(spec.rotary_dim // 2, 2))


def test_pairs_follow_the_layout():
    # GPT-J: interleaved (2i, 2i+1) in its first 64 of 256 coordinates; Llama: half-split (i, i+64)
    gptj, llama = fig.model_data("GPT-J 6B"), fig.model_data("Llama 2 7B")
    np.testing.assert_array_equal(gptj["pair"][:64], np.repeat(np.arange(32), 2))
    assert np.all(gptj["pair"][64:] == -1)
    np.testing.assert_array_equal(llama["pair"], np.tile(np.arange(64), 2))
    # DeepSeek-V3: only the last 64 of 192 coordinates rotate, in interleaved pairs
    ds = fig.model_data("DeepSeek-V3")
    assert np.all(ds["pair"][:128] == -1)
    np.testing.assert_array_equal(ds["pair"][128:], np.repeat(np.arange(32), 2))
    # Phi-3's LongRoPE switches to its long factors past 4096 tokens, and the figure with it
    phi3, spec = fig.model_data("Phi-3 mini 128K"), PUBLISHED["Phi-3 mini 128K"].spec()
    assert phi3["switch"] == 4096
    np.testing.assert_array_equal(fig.wavelengths_at(phi3, 4096), spec.wavelengths(seq_len=4096))
    np.testing.assert_array_equal(fig.wavelengths_at(phi3, 4097), spec.wavelengths(seq_len=4097))
    assert not np.array_equal(fig.wavelengths_at(phi3, 4096), fig.wavelengths_at(phi3, 4097))
    assert all(fig.model_data(n)["switch"] is None for n in fig.MODELS if n != "Phi-3 mini 128K")
    # partial rotary: frequencies over the rotated dims, not the head
    neox = fig.model_data("GPT-NeoX-20B")
    np.testing.assert_allclose(neox["wavelengths"], 2 * np.pi / frequencies(24, 10000.0))


@pytest.mark.parametrize("a, b, k", [("Llama 3.1 8B", "GPT-NeoX-20B", 13), ("Gemma 3 4B, local layers",
                                      "Gemma 3 4B, global layers", 10), ("DeepSeek-V3", "Phi-2", 24),
                                     ("MiniMind", "MiniMind", 8), ("Phi-3 mini 128K", "Llama 2 7B", 12),
                                     ("Phi-3 mini 128K", "Llama 2 7B", 13), ("Phi-3 mini 128K", "Llama 2 7B", 17)])
def test_readouts(a, b, k):
    r = fig.readouts(a, b, k)
    assert r["context"] == 2**k
    for suffix, name in (("a", a), ("b", b)):
        spec = PUBLISHED[name].spec()
        wl = spec.wavelengths(seq_len=2**k)  # what the model's code uses for 2^k tokens
        assert r[f"rot_{suffix}"] == spec.rotary_dim
        assert r[f"frac_{suffix}"] == pytest.approx(spec.rotary_dim / spec.head_dim)
        assert r[f"longest_{suffix}"] == pytest.approx(wl.max())
        assert r[f"slow_{suffix}"] == int(np.sum(wl > 2**k))


def test_readouts_at_the_defaults_and_bad_input():
    r = fig.readouts(**fig.DEMO.defaults)
    assert r["frac_b"] == 0.25 and r["rot_b"] == 24  # GPT-NeoX-20B rotates 24 of 96
    for kwargs, error, match in [
        (dict(model_a="GPT-5", model_b="Phi-2", k=10), ValueError, "name"),
        (dict(model_a="Phi-2", model_b="Phi-2", k=7), ValueError, "k"),
        (dict(model_a="Phi-2", model_b="Phi-2", k=25), ValueError, "k"),
        (dict(model_a="Phi-2", model_b="Phi-2", k=10.0), TypeError, "k"),
    ]:
        with pytest.raises(error, match=match):
            fig.readouts(**kwargs)


def test_figure_wiring():
    assert isinstance(fig.DEMO, Figure) and fig.DEMO.name == "model_rope"
    assert (JS_DIR / "model_rope.js").exists()
    assert {c.name for c in fig.CONTROLS} == {"model_a", "model_b", "k"}
    assert set(fig.CONTROLS[0].options) == set(PUBLISHED)
    payload = json.dumps(to_json(fig.data()), allow_nan=False)
    assert len(payload) < 200_000  # a page's own bytes stay small
    assert "model_rope" in fig.DEMO.html()


def test_js_compute_matches_python():
    states = [{"model_a": a, "model_b": b, "k": k} for (a, b), k in itertools.product(
        [("Llama 3.1 8B", "GPT-NeoX-20B"), ("DeepSeek-V3", "Gemma 3 4B, global layers"), ("GPT-J 6B", "Phi-3 mini 128K")],
        [8, 12, 16, 20, 24])]
    got = call_js("model_rope", "compute", [[s] for s in states], [fig.data()])
    for state, g in zip(states, got):
        want = fig.readouts(**state)
        assert set(g) == set(want)
        for key in want:
            np.testing.assert_allclose(g[key], want[key], rtol=1e-12, err_msg=f"{key} in {state}")
