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
