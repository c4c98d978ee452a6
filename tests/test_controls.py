"""Controls that fit the question (issue 29 item 7): a slider over listed stops and a drop-down
with plain names, in rope_edu.widgets.Control and the figures that use them."""

from __future__ import annotations

import pytest

from rope_edu.widgets import Control, clock, context_extension


def test_a_slider_over_listed_values():
    c = Control("m", "position m", 3, values=(0, 1, 2, 3, 10, 100))
    assert (c.min, c.max, c.step, c.integer) == (0, 100, 1, True)
    assert c.spec()["values"] == [0, 1, 2, 3, 10, 100]
    assert c.coerce(100) == 100


@pytest.mark.parametrize("kwargs, match", [
    (dict(values=(0, 2, 1)), "increasing"),
    (dict(values=(0, 1, 2), kind="select", options=("a",)), "values must be"),
    (dict(values=(0, 1, 2, 4)), "not one of its values"),
])
def test_bad_values_are_refused(kwargs, match):
    value = kwargs.pop("value", 3)
    with pytest.raises(ValueError, match=match):
        Control("m", "position m", value, **kwargs)


def test_drop_down_labels():
    c = Control("method", "method", "yarn", kind="select", options=("ntk", "yarn"), labels=("NTK-aware", "YaRN"))
    assert c.spec()["labels"] == ["NTK-aware", "YaRN"] and c.value == "yarn"
    with pytest.raises(ValueError, match="labels"):
        Control("method", "method", "yarn", kind="select", options=("ntk", "yarn"), labels=("YaRN",))
    with pytest.raises(ValueError, match="labels"):
        Control("m", "m", 1, min=0, max=2, step=1, labels=("one",))


def test_the_clock_reaches_every_position_to_64_then_doubles_in_four_stops():
    stops = clock.CONTROLS[0].spec()["values"]
    assert stops[:65] == list(range(65))
    assert stops[-1] == clock.POSITION_MAX and 1024 in stops and 4096 in stops
    ratios = [b / a for a, b in zip(stops[64:], stops[65:])]
    assert all(1.15 < r < 1.22 for r in ratios), ratios   # 2 ** (1/4) = 1.19, rounded to integers


def test_the_context_menu_shows_plain_names():
    spec = context_extension.CONTROLS[0].spec()
    shown = dict(zip(spec["options"], spec["labels"]))
    assert shown["yarn"] == "YaRN" and shown["ntk"] == "NTK-aware" and shown["llama3"] == "Llama 3.1"
    assert all(label != option for option, label in shown.items())


# --- what Control and Figure refuse (review of issue 43, item 11) -----------------------------


def test_a_slider_over_listed_values_refuses_a_value_between_stops():
    c = Control("m", "m", 1, values=[1, 2, 4, 8])
    assert c.coerce(4) == 4 and c.coerce(4.0) == 4
    with pytest.raises(ValueError, match=r"m must be one of the slider's stops \[1, 2, 4, 8\], got 3"):
        c.coerce(3)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(label=3), TypeError, "label must be a string"),
    (dict(digits=-1), ValueError, "digits must be an integer >= 0"),
    (dict(digits=1.5), ValueError, "digits must be an integer >= 0"),
    (dict(digits=True), ValueError, "digits must be an integer >= 0"),
    (dict(value="3"), TypeError, "a slider's value must be a real number, got '3'"),
    (dict(value=True), TypeError, "a slider's value must be a real number"),
    (dict(min="0"), ValueError, "a range needs a numeric min"),
    (dict(shows="2**"), ValueError, "shows must be one of"),
    (dict(shows="2^", kind="checkbox", value=True), ValueError, "shows must be one of"),
])
def test_control_refuses_bad_arguments_naming_them(kwargs, error, match):
    args = dict(name="m", label="position m", value=3, min=0, max=10, step=1) | kwargs
    with pytest.raises(error, match=match):
        Control(**args)


@pytest.mark.parametrize("args, error, match", [
    ((3, []), ValueError, "Figure name must be the name of a module js/<name>.js"),
    (("nope", []), ValueError, "no figure module nope.js"),
    (("clock", ["x"]), TypeError, r"controls must be Control objects, got \['x'\]"),
    (("clock", "m"), TypeError, "controls must be a sequence of Control"),
    (("clock", [], 3), TypeError, "data must be a function or None"),
])
def test_figure_refuses_bad_arguments_naming_them(args, error, match):
    from rope_edu.widgets import Figure

    with pytest.raises(error, match=match):
        Figure(*args)
    with pytest.raises(TypeError, match="title must be a string"):
        Figure("clock", [], title=None)


def test_the_payload_sends_the_widget_traits_named_once():
    """The live widget's traits are written once (TRAITS, review item 12): the payload sends each
    of them but the catalog, plus one value per control; the widget class has each."""
    from rope_edu.widgets._core import TRAITS

    payload = clock.DEMO._payload()
    assert set(payload) == (set(TRAITS) - {"_messages"}) | {c.name for c in clock.DEMO.controls}
    pytest.importorskip("anywidget")
    w = clock.DEMO.widget()
    assert all(w.has_trait(t) for t in TRAITS) and w._name == "clock"


def test_a_slider_over_an_exponent_shows_the_number():
    """Issue 45: the context and base sliders showed their exponents (log₂ L 12); beside the slider
    the reader now reads the number itself (4,096), while the state keeps the exponent."""
    from node_figure import call_js

    from rope_edu.widgets import base_bound, model_rope

    shows = {c.name: c.spec()["shows"] for c in (*base_bound.CONTROLS, *model_rope.CONTROLS) if c.shows}
    assert shows == {"log10_base": "10^", "log2_context": "2^", "k": "2^"}
    assert "log" not in " ".join(c.label for c in base_bound.CONTROLS)
    plain = Control("m", "m", 3, min=0, max=10, step=0.5, digits=1).spec()
    cases = [[base_bound.CONTROLS[2].spec(), 12], [base_bound.CONTROLS[2].spec(), 24],
             [base_bound.CONTROLS[1].spec(), 4.3], [base_bound.CONTROLS[1].spec(), 8.0], [plain, 2.5]]
    got = call_js("base_bound", "sliderText", cases)
    assert got == ["4,096", "16,777,216", f"{round(10 ** 4.3):,}", "100,000,000", "2.5"]
