"""Chapter 10's family explorer (rope_edu.widgets.families): every family of the registry, each card
read off its row, the readouts against the registry, and the JavaScript twins under Node.js."""

from __future__ import annotations

from collections import Counter

import pytest

from rope_edu.models import FAMILIES, ROPE_TYPES
from rope_edu.models.layers import LAYER_RULES
from rope_edu.widgets import families as fig
from node_figure import call_js


def test_every_family_once_in_the_order_of_its_label():
    assert sorted(fig.KEYS) == sorted(FAMILIES)
    labels = [FAMILIES[k].label.casefold() for k in fig.KEYS]
    assert labels == sorted(labels)
    assert list(fig.CONTROLS[0].options) == fig.KEYS
    assert set(fig.ROTARY) == {f.rotary for f in FAMILIES.values()}
    assert set(fig.LAYOUTS) >= {f.layout for f in FAMILIES.values()}


@pytest.mark.parametrize("key", ["llama", "gemma3", "gpt_neox", "deepseek_v3", "qwen3_vl", "cohere2", "jetmoe"])
def test_card_is_the_registry_row(key):
    f, d = FAMILIES[key], fig.family_data(key)
    assert (d["label"], d["layout"], d["rotary"], d["qk_norm"], d["head"]) == (f.label, f.layout, f.rotary,
                                                                               f.qk_norm, f.head)
    assert d["model_types"] == list(f.model_types) and d["head_default"] == f.head_default
    assert d["base"] == f.theta_default(None) and d["fraction"] == f.default_fraction
    for layer_type, base in d["bases"].items():
        assert base == f.theta_default(layer_type)
    assert d["layers_differ"] == bool(f.layers or f.rotating_layer_types or f.local_theta)
    if f.layers:
        assert d["layers"].startswith(LAYER_RULES[f.layers[0]].summary)
    assert d["scalings"] == (list(f.allowed_rope_types) if f.allowed_rope_types else None)
    assert (d["mrope"] is None) == (f.mrope is None) and (d["interleave"] is None) == (f.interleave is None)


def test_gemma3_card_names_both_bases_and_its_layer_pattern():
    d = fig.family_data("gemma3")
    assert d["bases"] == {"sliding_attention": 10_000.0, "full_attention": 1_000_000.0}
    assert "sliding_window_pattern, 6" in d["layers"] and d["head_default"] == 256


def test_readouts_count_the_cell_of_the_grid():
    cells = Counter((f.layout, f.rotary) for f in FAMILIES.values())
    for key in ("llama", "gpt_neox", "deepseek_v3", "cohere2", "phi3"):
        f = FAMILIES[key]
        r = fig.readouts(key)
        assert r["same"] == cells[f.layout, f.rotary]
        assert r["base"] == f.theta_default(None)
        assert r["scalings"] == (len(f.allowed_rope_types) if f.allowed_rope_types else len(ROPE_TYPES))


def test_readouts_reject_an_unknown_family():
    with pytest.raises(ValueError, match="key"):
        fig.readouts("no_such_family")
    with pytest.raises(ValueError, match="key"):
        fig.family_data("no_such_family")


def test_javascript_numbers_and_cards_match_python():
    """The browser's readouts (familyNumbers) are readouts() for every family; every card has its
    lines, and names the scaling types a family limits itself to."""
    data = fig.data()
    states = [[{"family": k}] for k in fig.KEYS]
    got = call_js("families", "familyNumbers", states, extra=[data])
    for (state,), g in zip(states, got):
        assert g == pytest.approx(fig.readouts(**state)), state
    cards = call_js("families", "cardLines", [[data["families"][k]] for k in fig.KEYS], extra=[data])
    for key, lines in zip(fig.KEYS, cards):
        f = FAMILIES[key]
        assert lines[0] == "model_type: " + ", ".join(f.model_types)
        assert lines[-1] == f"code: {f.code}"
        if f.allowed_rope_types:
            assert f"scaling types: {', '.join(f.allowed_rope_types)}" in lines
