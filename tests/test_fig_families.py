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


def _serve_preview(folder):
    """The families figure alone on a page (scripts/figure_preview.py) in ``folder``, served on
    127.0.0.1 at a free port: the server (shut it down when done)."""
    import functools
    import http.server
    import importlib.util
    import threading

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("figure_preview", ROOT / "scripts" / "figure_preview.py")
    preview = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(preview)
    preview.write_page(["families"], folder)
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(preview._QuietHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_dot_picks_its_family_by_tap_click_and_keyboard(browser, tmp_path):
    """Each dot of the grid is an option named by its family: a tap (on a phone) or a click picks
    that family, and the card, the drop-down and the readouts follow; by keyboard the picked dot
    is the grid's one Tab stop, arrows move to the next dot, Enter and Space pick it."""
    import json

    import figure_driver

    server = _serve_preview(tmp_path)

    def shown(host) -> tuple[dict, str, str]:
        state = json.loads(host.get_attribute("data-state"))
        words = " ".join(host.locator("svg.rope-fig-svg").evaluate(
            "s => [...s.querySelectorAll('text')].map(t => t.textContent).join(' ')").split())
        return state, words, host.locator("select[data-control=family]").input_value()

    def card_shows(words: str, key: str) -> bool:
        f = FAMILIES[key]
        return " ".join(f.label.split()) in words and "model_type: " + ", ".join(f.model_types) in words

    try:
        for width, touch in ((390, True), (1280, False)):
            context = browser.new_context(viewport={"width": width, "height": 844}, has_touch=touch)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
            host = page.locator(figure_driver.FIGURE_SELECTOR).first
            host.wait_for()
            assert shown(host)[0] == {"family": "llama"}
            dots = host.locator("[role=listbox] [role=option]")
            assert dots.count() == len(FAMILIES)
            assert host.locator("[role=option][tabindex='0']").get_attribute("data-family") == "llama"
            dot = host.locator("[role=option][data-family=gemma3]")
            assert dot.get_attribute("aria-label") == FAMILIES["gemma3"].label
            if touch:
                dot.tap()
            else:
                dot.click()
            state, words, select = shown(host)
            assert state == {"family": "gemma3"} and select == "gemma3", (width, state, select)
            assert card_shows(words, "gemma3") and not card_shows(words, "llama"), words
            assert host.locator("[role=option][aria-selected=true]").get_attribute("data-family") == "gemma3"
            assert not figure_driver.compare_readouts("families", state, host.evaluate(figure_driver._READOUTS_JS))
            # the keyboard: the picked dot has the focus; an arrow moves it, Enter picks
            focused = "() => document.activeElement.dataset.family || null"
            assert page.evaluate(focused) == "gemma3"
            page.keyboard.press("ArrowRight")
            nxt = page.evaluate(focused)
            assert nxt not in (None, "gemma3") and shown(host)[0] == {"family": "gemma3"}
            page.keyboard.press("Enter")
            state, words, select = shown(host)
            assert state == {"family": nxt} and select == nxt and card_shows(words, nxt), (state, select)
            assert page.evaluate(focused) == nxt
            page.keyboard.press("ArrowLeft")
            page.keyboard.press(" ")
            assert shown(host)[0] == {"family": "gemma3"} and page.evaluate(focused) == "gemma3"
            assert not errors, errors
            context.close()
    finally:
        server.shutdown()


def test_a_finger_gets_a_24px_target_on_a_phone(browser, tmp_path):
    """On a phone (390x844, touch) the cells that hold a few families spread their dots at least
    24 px apart, and a finger that lands near a dot, not on it, picks that dot (issue 45: the dots
    were 6 px targets). At 1280 px the wide layout keeps its dots 9 units apart."""
    import json

    import figure_driver

    server = _serve_preview(tmp_path)
    cells = Counter((f.layout, f.rotary) for f in FAMILIES.values())
    sparse = [k for k, f in FAMILIES.items() if cells[f.layout, f.rotary] <= 8]
    assert len(sparse) >= 8 and "deepseek_v3" in sparse
    centres_js = """host => Object.fromEntries([...host.querySelectorAll('[role=option]')].map(d => {
        const b = d.getBoundingClientRect();
        return [d.dataset.family, [b.x + b.width / 2, b.y + b.height / 2]]; }))"""
    try:
        # (the preview page has no viewport meta tag: is_mobile would lay it out 980 px wide)
        phone = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, device_scale_factor=2)
        page = phone.new_page()
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        host = page.locator(figure_driver.FIGURE_SELECTOR).first
        host.wait_for()
        assert json.loads(host.get_attribute("data-state")) == {"family": "llama"}
        host.locator("[role=option][data-family=deepseek_v3]").scroll_into_view_if_needed()
        centres = host.evaluate(centres_js)
        for k in sparse:
            x, y = centres[k]
            nearest = min(((x - a) ** 2 + (y - b) ** 2) ** 0.5 for j, (a, b) in centres.items() if j != k)
            assert nearest >= 24, (k, nearest)
        # a finger 10 px off the dot, towards no other dot, picks it
        for k in ("deepseek_v3", sparse[-1]):
            x, y = host.evaluate(centres_js)[k]
            page.touchscreen.tap(x, y + 10)
            assert json.loads(host.get_attribute("data-state")) == {"family": k}, k
            assert host.locator("[role=option][aria-selected=true]").get_attribute("data-family") == k
        phone.close()
        desk = browser.new_context(viewport={"width": 1280, "height": 800})
        page = desk.new_page()
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        host = page.locator(figure_driver.FIGURE_SELECTOR).first
        host.wait_for()
        xs = host.evaluate("h => [...h.querySelectorAll('[role=option]')].slice(0, 2).map(d => +d.getAttribute('cx'))")
        assert xs[1] - xs[0] == 9, xs
        desk.close()
    finally:
        server.shutdown()
