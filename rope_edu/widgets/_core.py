"""One engine for every interactive figure in the book.

A :class:`Figure` is a set of controls (sliders, drop-downs, check boxes), some data computed
by ``rope_edu`` in Python, and one small ES module (``js/<name>.js``) that draws the figure as
SVG in the reader's browser and writes its readouts as text. The same module runs

* live in a notebook (JupyterLab 4, Notebook 7, VS Code, Colab) as an `anywidget
  <https://anywidget.dev>`_ widget: the browser redraws on every control change, and the
  control values are synced back to the kernel (``fig.widget().m`` reads the slider);
* in the static book, with no kernel: :meth:`Figure.html` writes a placeholder element that the
  site's loader (``js/loader.js``, served from ``_static/rope_figures/`` by ``_ext/rope_figures.py``)
  mounts with a small stand-in for the widget model.

Both start from the same default state and show the same controls and readouts.
:meth:`Figure.show` picks the live widget in a kernel and the static markup while ``make book``
builds the site (``ROPE_EDU_STATIC=1``). :meth:`Figure.readouts` computes, in Python, the numbers
the figure prints; the browser tests compare the page's readouts with it.
"""

from __future__ import annotations

import html as _html
import json
import math
import numbers
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..i18n import catalog, language
from ..plots import COLORS, CYCLE

__all__ = [
    "STATIC_ENV", "JS_DIR", "COLORMAPS", "static_mode", "snap_zero", "Control", "Figure", "bundle", "static_modules",
    "core_names", "to_json", "Placeholder", "placeholders", "replace_placeholders",
]

#: What a figure's placeholder says where JavaScript does not run.
NOSCRIPT = "Interactive figure: it needs JavaScript."

#: Set to ``"1"`` by ``make book``: :meth:`Figure.show` then writes static markup, not a widget.
STATIC_ENV = "ROPE_EDU_STATIC"

#: Folder of the figures' ES modules, the shared ``core.js``, ``loader.js`` and ``figures.css``.
# A real path, not an importlib.resources Traversable: the book's build serves these files and
# globs the folder, and the package is installed as files (never zipped).
JS_DIR = Path(__file__).with_name("js")


def static_mode() -> bool:
    """True while the static book is being built (``ROPE_EDU_STATIC=1``)."""
    return os.environ.get(STATIC_ENV, "") == "1"


def _colour_stops(name: str, n: int = 11) -> list[str]:
    """``n`` evenly spaced colours of matplotlib's colour map ``name``, as ``#rrggbb`` strings."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps[name]
    return [to_hex(cmap(i / (n - 1))) for i in range(n)]


#: The figures' colour maps, both colour-blind safe, as 11 evenly spaced stops of matplotlib's maps
#: (``core.js`` interpolates linearly between them: ``cmapColor``, ``cmapBar``, ``cmapGrid``):
#: ``"cividis"``, sequential (dark blue to yellow, lightness rising steadily), and ``"PuOr"``,
#: diverging (orange below the middle, near-white at it, purple above: for signed values, with a
#: range symmetric about 0).
COLORMAPS: dict[str, list[str]] = {name: _colour_stops(name) for name in ("cividis", "PuOr")}


def snap_zero(value: Any, zero: float) -> Any:
    """What a readout shows for ``value``: ``0.0`` where ``|value| < zero``, ``value`` otherwise.

    A quantity that is 0 in exact arithmetic often comes out of floating point as 1e-16; printed,
    that noise reads as a (tiny) real effect. A figure that knows the scale of its rounding prints
    such values as 0: ``fig.readout(name, label, value, digits, unit, {zero})`` in ``core.js``
    applies this same rule (``snapZero``), and the figure's ``readouts()`` must apply it too, so
    that the browser tests compare like with like. NaN and ``None`` pass through unchanged.

    Parameters
    ----------
    value : float, int or None
        The number the figure computes.
    zero : float
        Threshold, ``>= 0``: magnitudes strictly below it are rounding noise (``0`` snaps nothing).

    Returns
    -------
    float, int or None
        ``0.0`` or ``value``.
    """
    if isinstance(zero, (bool, np.bool_)) or not isinstance(zero, numbers.Real) or not (0 <= zero < math.inf):
        raise ValueError(f"zero must be a finite real number >= 0, got {zero!r}")
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"value must be a real number or None, got {value!r} of type {type(value).__name__}")
    return 0.0 if abs(value) < zero else value


def _number_option(options: Sequence[str], value: Any) -> str | None:
    """The option of a drop-down that reads as the number ``value`` (``500000.0`` -> ``"500000"``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    for option in options:
        try:
            if float(option) == float(value):
                return option
        except ValueError:
            continue
    return None


_KINDS = ("range", "select", "checkbox")
#: what a slider may show beside it (Control.shows): its value, or 2 or 10 to the power of it
_SHOWS = ("", "2^", "10^")


def _stops(values: Sequence[float]) -> str:
    """A slider's stops, shortened for an error message."""
    shown = [str(v) for v in values]
    return "[" + ", ".join(shown if len(shown) <= 12 else shown[:6] + ["..."] + shown[-3:]) + "]"


@dataclass(frozen=True)
class Control:
    """One control of a figure; the browser builds it from :meth:`spec`.

    Parameters
    ----------
    name : str
        The parameter it sets (a key of the figure's state, a trait of the live widget).
    label : str
        Text of its ``<label>`` (what a screen reader announces).
    value : int, float, str or bool
        Default value, the same in the live widget and in the static book.
    kind : {"range", "select", "checkbox"}
        Slider, drop-down or check box.
    min, max, step : float, optional
        Range of a slider (all three required for ``kind="range"``). A slider whose ``value``,
        ``min`` and ``step`` are all integers holds integers.
    options : sequence of str, optional
        Choices of a drop-down (stored as a tuple). A drop-down whose options read as numbers
        (``"10"``, ``"500000"``) also takes a number equal to one of them, as ``value`` or in
        :meth:`coerce` (``500000.0`` -> ``"500000"``).
    digits : int
        Decimals shown next to a slider.
    labels : sequence of str, optional
        What a drop-down shows for each of its ``options`` (plain names such as "YaRN" for the
        option "yarn"); the state and the live widget's trait keep the option itself.
    values : sequence of numbers, optional
        The positions of a slider that stops at these values only, in increasing order (for
        example every integer to 64, then a log-spaced grid): the slider moves through them one
        step at a time. ``min`` and ``max`` are their first and last; ``step`` is the finest
        step between two of them (what the live widget's trait holds).
    shows : {"", "2^", "10^"}
        What the slider shows beside it: its value (``""``), or, for a slider over an exponent,
        the number itself, rounded to a whole number and grouped in thousands (``"2^"``: 12 shows
        "4,096"; ``"10^"``: 4.3 shows "19,953"); the state keeps the exponent.
    """

    name: str
    label: str
    value: Any
    kind: str = "range"
    min: float | None = None
    max: float | None = None
    step: float | None = None
    options: Sequence[str] = ()
    digits: int = 0
    labels: Sequence[str] = ()
    values: Sequence[float] = ()
    shows: str = ""

    def __post_init__(self) -> None:
        if self.shows not in _SHOWS or (self.shows and self.kind != "range"):
            raise ValueError(f"Control {self.name!r}: shows must be one of {list(_SHOWS)} (a slider's exponent "
                             f"shown as its number), got {self.shows!r} for a {self.kind!r}")
        if not isinstance(self.label, str):
            raise TypeError(f"Control {self.name!r}: label must be a string (its <label>), got {self.label!r}")
        if isinstance(self.digits, bool) or not isinstance(self.digits, numbers.Integral) or self.digits < 0:
            raise ValueError(f"Control {self.name!r}: digits must be an integer >= 0 (decimals shown), "
                             f"got {self.digits!r}")
        if isinstance(self.labels, str):
            raise TypeError(f"Control {self.name!r}: labels must be a sequence of strings, got the string {self.labels!r}")
        object.__setattr__(self, "labels", tuple(self.labels))
        if self.labels and (self.kind != "select" or len(self.labels) != len(tuple(self.options))
                            or not all(isinstance(x, str) for x in self.labels)):
            raise ValueError(f"Control {self.name!r}: labels must be one string per option of a drop-down, "
                             f"got {list(self.labels)} for options {list(self.options)}")
        if self.values:
            vals = tuple(self.values)
            if self.kind != "range" or not all(isinstance(v, numbers.Real) for v in vals) or any(
                    b <= a for a, b in zip(vals, vals[1:])):
                raise ValueError(f"Control {self.name!r}: values must be increasing numbers of a slider, got {list(vals)}")
            if self.value not in vals:
                raise ValueError(f"Control {self.name!r}: value {self.value!r} is not one of its values")
            gaps = [b - a for a, b in zip(vals, vals[1:])] or [1]
            object.__setattr__(self, "values", vals)
            object.__setattr__(self, "min", vals[0])
            object.__setattr__(self, "max", vals[-1])
            object.__setattr__(self, "step", min(gaps) if self.step is None else self.step)
        if not isinstance(self.name, str) or not self.name.isidentifier() or self.name.startswith("_"):
            raise ValueError(f"Control name must be a public Python identifier, got {self.name!r}")
        if self.kind not in _KINDS:
            raise ValueError(f"Control {self.name!r}: kind must be one of {_KINDS}, got {self.kind!r}")
        if isinstance(self.options, str):
            raise TypeError(f"Control {self.name!r}: options must be a sequence of strings, got the string {self.options!r}")
        # a tuple, so that the control is hashable (the live widget's class is cached by its controls)
        object.__setattr__(self, "options", tuple(self.options))
        if not all(isinstance(o, str) for o in self.options):
            raise TypeError(f"Control {self.name!r}: options must be strings (a <select> holds strings), got {list(self.options)}")
        if self.kind == "range":
            for attr in ("min", "max", "step"):
                if isinstance(getattr(self, attr), bool) or not isinstance(getattr(self, attr), numbers.Real):
                    raise ValueError(f"Control {self.name!r}: a range needs a numeric {attr}")
            if isinstance(self.value, (bool, np.bool_)) or not isinstance(self.value, numbers.Real):
                raise TypeError(f"Control {self.name!r}: a slider's value must be a real number, "
                                f"got {self.value!r} of type {type(self.value).__name__}")
            lo, hi, step = self.bounds
            if not (lo <= self.value <= hi) or step <= 0:
                raise ValueError(
                    f"Control {self.name!r}: need min <= value <= max and step > 0, got "
                    f"min={self.min}, value={self.value}, max={self.max}, step={self.step}"
                )
        elif self.kind == "select":
            value = self.value if isinstance(self.value, str) else _number_option(self.options, self.value)
            if value not in self.options:
                raise ValueError(f"Control {self.name!r}: value {self.value!r} is not one of options {list(self.options)}")
            object.__setattr__(self, "value", value)
        elif not isinstance(self.value, bool):
            raise ValueError(f"Control {self.name!r}: a checkbox value must be True or False")

    @property
    def bounds(self) -> tuple[float, float, float]:
        """A slider's ``(min, max, step)`` (numbers, checked when the control is made)."""
        if self.min is None or self.max is None or self.step is None:
            raise ValueError(f"Control {self.name!r}: a range needs a numeric min, max and step")
        return self.min, self.max, self.step

    @property
    def integer(self) -> bool:
        """A slider over integers (value, min and step all integral)."""
        return self.kind == "range" and all(float(v).is_integer() for v in (self.value, *self.bounds[::2]))

    def coerce(self, value: Any) -> Any:
        """``value`` checked against this control (type, range, options) and converted."""
        if self.kind == "checkbox":
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{self.name} must be True or False, got {value!r}")
            return bool(value)
        if self.kind == "select":
            option = value if isinstance(value, str) else _number_option(self.options, value)
            if option not in self.options:
                raise ValueError(f"{self.name} must be one of {list(self.options)}, got {value!r}")
            return option
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{self.name} must be a real number, got {value!r} of type {type(value).__name__}")
        lo, hi, _ = self.bounds
        if not (lo <= float(value) <= hi):
            raise ValueError(f"{self.name} must lie in [{self.min}, {self.max}] (the slider's range), got {value}")
        if self.values and float(value) not in self.values:
            raise ValueError(f"{self.name} must be one of the slider's stops {_stops(self.values)}, got {value}")
        return int(float(value)) if self.integer else float(value)

    def spec(self) -> dict[str, Any]:
        """JSON description the browser builds the control from."""
        out: dict[str, Any] = {"name": self.name, "label": self.label, "kind": self.kind, "value": self.value}
        if self.kind == "range":
            out.update(min=self.min, max=self.max, step=self.step, digits=self.digits, integer=self.integer)
            if self.values:
                out["values"] = list(self.values)
            if self.shows:
                out["shows"] = self.shows
        elif self.kind == "select":
            out["options"] = list(self.options)
            if self.labels:
                out["labels"] = list(self.labels)
        return out


def to_json(value: Any) -> Any:
    """``value`` with numpy arrays and scalars turned into lists and Python numbers (NaN -> None)."""
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_json(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


#: What the shared code defines before ``core.js``: the book's colours, from Python.
_COLOUR_NAMES = ("COLORS", "COLOR_CYCLE", "COLORMAPS")


def _colours() -> str:
    return (
        f"const COLORS = {json.dumps(COLORS)};\n"
        f"const COLOR_CYCLE = {json.dumps(CYCLE)};\n"
        f"const COLORMAPS = {json.dumps(COLORMAPS)};\n"
        f"export {{ {', '.join(_COLOUR_NAMES)} }};\n"
    )


def _figure_source(name: str) -> str:
    path = JS_DIR / f"{name}.js"
    if not path.is_file():
        raise ValueError(f"no figure module {path.name} in {JS_DIR}")
    return path.read_text(encoding="utf-8")


def _shared() -> str:
    """The code every figure shares: the colours, then ``core.js``."""
    return _colours() + (JS_DIR / "core.js").read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def bundle(name: str) -> str:
    """The ES module of figure ``name``: the book's colours, ``core.js``, then ``<name>.js``.

    The colours come first as ``COLORS`` (:data:`rope_edu.plots.COLORS`), ``COLOR_CYCLE``
    (:data:`rope_edu.plots.CYCLE`) and ``COLORMAPS`` (:data:`COLORMAPS`).

    One self-contained module (no imports), so anywidget can load it from a string in a live
    notebook. The static book serves the same code split in two (:func:`static_modules`), so that a
    page with several figures loads ``core.js`` once.
    """
    return _shared() + "\n" + _figure_source(name)


#: ``core.js``'s one export statement, ``export { a, b, ... };`` on lines of its own.
_EXPORT = re.compile(r"^export \{([^}]*)\};[ \t]*$", re.M)


def core_names() -> list[str]:
    """The names the shared code exports, in order: the colours, then the names ``core.js`` lists in
    its export statement (its public engine; its other top-level names are its own)."""
    found = _EXPORT.findall((JS_DIR / "core.js").read_text(encoding="utf-8"))
    if len(found) != 1:
        raise ValueError(f"core.js must end its engine with one `export {{ ... }};` statement, found {len(found)}")
    return [*_COLOUR_NAMES, *(n.strip() for n in found[0].split(",") if n.strip())]


@lru_cache(maxsize=None)
def static_modules(names: tuple[str, ...] | None = None) -> dict[str, str]:
    """The static book's ES modules, by file name: ``core.js`` (the colours and the engine, which
    export what :func:`core_names` lists) and one ``<name>.js`` per figure that imports those names
    from ``./core.js`` and is then exactly the figure's own file. A page with n figures loads the
    engine once, not n times. Figures: ``names``, or every ``js/*.js`` but core and loader.

    The code is :func:`bundle`'s, split: the same statements run in the same order.
    """
    if names is None:
        names = tuple(sorted(p.stem for p in JS_DIR.glob("*.js") if p.stem not in ("core", "loader")))
    out = {"core.js": _shared()}
    head = f'import {{ {", ".join(core_names())} }} from "./core.js";\n'
    for name in names:
        out[f"{name}.js"] = head + _figure_source(name)
    return out


@lru_cache(maxsize=None)
def _css() -> str:
    return (JS_DIR / "figures.css").read_text(encoding="utf-8")


#: The live widget's synced traits besides its controls, and their kinds: what
#: :meth:`Figure._payload` sends (all but ``_messages``, the page's catalog) and ``loader.js``
#: hands to a figure's ``render`` under the same names.
TRAITS: dict[str, str] = {"_name": "unicode", "_title": "unicode", "_controls": "list", "_data": "dict",
                          "_defaults": "dict", "_messages": "dict"}


@lru_cache(maxsize=None)
def _widget_class(name: str, controls: tuple[Control, ...]) -> type:
    """An anywidget class for figure ``name``: one synced trait per control."""
    import anywidget
    import traitlets

    traits: dict[str, Any] = {}
    for c in controls:
        if c.kind == "checkbox":
            traits[c.name] = traitlets.Bool(c.value).tag(sync=True)
        elif c.kind == "select":
            traits[c.name] = traitlets.Unicode(c.value).tag(sync=True)
        elif c.integer:
            traits[c.name] = traitlets.Int(int(c.value)).tag(sync=True)
        else:
            traits[c.name] = traitlets.Float(float(c.value)).tag(sync=True)
    kinds = {"unicode": traitlets.Unicode, "list": traitlets.List, "dict": traitlets.Dict}
    traits.update({trait: kinds[kind]().tag(sync=True) for trait, kind in TRAITS.items()})
    traits.update(_esm=bundle(name), _css=_css())
    return type(f"{name.title().replace('_', '')}Figure", (anywidget.AnyWidget,), traits)


@dataclass(frozen=True)
class Figure:
    """An interactive figure drawn in the browser by ``js/<name>.js``.

    Parameters
    ----------
    name : str
        Name of the ES module in :data:`JS_DIR` (without ``.js``).
    controls : sequence of Control
        The figure's controls, in the order they are shown.
    data : callable, optional
        ``data() -> dict``: everything the drawing needs that ``rope_edu`` computes (tables,
        frequencies, vectors), sent to the browser once as JSON. Called on each display.
    readouts : callable, optional
        ``readouts(**state) -> dict[str, float]``: the numbers the figure prints, by readout name,
        computed in Python for a state (a value for every control). The browser tests compare
        them with the page. A readout the browser prints with ``{zero}`` (rounding noise shown as
        0) goes through :func:`snap_zero` with the same threshold here.
    title : str
        Accessible name of the figure (``aria-label``).
    """

    name: str
    controls: Sequence[Control]
    data: Callable[[], Mapping[str, Any]] | None = None
    readouts: Callable[..., Mapping[str, float]] | None = None
    title: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"Figure name must be the name of a module js/<name>.js (an identifier), "
                             f"got {self.name!r}")
        if not (JS_DIR / f"{self.name}.js").is_file():
            raise ValueError(f"Figure name {self.name!r}: no figure module {self.name}.js in {JS_DIR}")
        if isinstance(self.controls, (str, Control)) or not isinstance(self.controls, Iterable):
            raise TypeError(f"figure {self.name!r}: controls must be a sequence of Control, got {self.controls!r}")
        bad = [c for c in self.controls if not isinstance(c, Control)]
        if bad:
            raise TypeError(f"figure {self.name!r}: controls must be Control objects, got {bad!r}")
        for attr in ("data", "readouts"):
            if getattr(self, attr) is not None and not callable(getattr(self, attr)):
                raise TypeError(f"figure {self.name!r}: {attr} must be a function or None, got {getattr(self, attr)!r}")
        if not isinstance(self.title, str):
            raise TypeError(f"figure {self.name!r}: title must be a string (its aria-label), got {self.title!r}")
        names = [c.name for c in self.controls]
        if len(set(names)) != len(names):
            raise ValueError(f"figure {self.name!r}: control names must be unique, got {names}")
        object.__setattr__(self, "controls", tuple(self.controls))

    @property
    def defaults(self) -> dict[str, Any]:
        """The default state: each control's default value."""
        return {c.name: c.value for c in self.controls}

    def state(self, **overrides: Any) -> dict[str, Any]:
        """The default state with ``overrides`` applied (each checked and converted by its
        control's :meth:`Control.coerce`: e.g. a number for a drop-down of numbers becomes its option)."""
        by_name = {c.name: c for c in self.controls}
        unknown = set(overrides) - set(by_name)
        if unknown:
            raise ValueError(f"figure {self.name!r} has no control named {sorted(unknown)}; controls: {list(by_name)}")
        state = self.defaults
        state.update({k: by_name[k].coerce(v) for k, v in overrides.items()})
        return state

    def _payload(self, **overrides: Any) -> dict[str, Any]:
        """The live widget's traits, by trait name (:func:`_widget_class`), but ``_messages``: the
        control values of the state (``overrides`` applied), ``_name``, ``_title``, ``_controls``,
        ``_data`` and ``_defaults``. The static book's loader hands them to the figure's ``render``
        as they are, with the page's catalog as ``_messages``."""
        return {
            "_name": self.name,
            "_title": self.title,
            "_controls": [c.spec() for c in self.controls],
            "_defaults": self.defaults,
            "_data": to_json(self.data() if self.data else {}),
            **self.state(**overrides),
        }

    def widget(self, **overrides: Any):
        """The live widget (anywidget): the same drawing code as the static book, redrawn in the
        browser; control values are synced to the returned object's traits. Its words are in
        :func:`rope_edu.i18n.language` (``rope_edu.i18n.set_language("zh_CN")``)."""
        cls = _widget_class(self.name, self.controls)
        return cls(**self._payload(**overrides), _messages=catalog(language()))

    def html(self, **overrides: Any) -> str:
        """Static markup: a placeholder the site's loader mounts (no kernel, no other host)."""
        payload = json.dumps(self._payload(**overrides), separators=(",", ":"), allow_nan=False)
        return Placeholder(self.name, self.title or self.name, payload).html()

    def show(self, **overrides: Any):
        """The live widget in a kernel; static markup while the book is built."""
        if static_mode():
            from IPython.display import HTML

            return HTML(self.html(**overrides))
        return self.widget(**overrides)


@dataclass(frozen=True)
class Placeholder:
    """A figure's static markup, as :meth:`Figure.html` writes it and the site's loader mounts it.

    The build reads and rewrites placeholders in executed outputs and built pages (the reader
    notebooks' pictures, the Chinese edition's labels) through :func:`placeholders` and
    :func:`replace_placeholders`: this class is the one place that knows the markup.

    Parameters
    ----------
    name : str
        The figure (``data-figure``: its module under ``rope_edu/widgets``).
    label : str
        Its accessible name (``aria-label``).
    payload : str
        JSON of the live widget's traits (:meth:`Figure._payload`), which the loader hands to the
        figure's ``render`` (``data-payload``).
    noscript : str
        What the page shows where JavaScript does not run.
    """

    name: str
    label: str
    payload: str
    noscript: str = NOSCRIPT

    def html(self) -> str:
        """The markup (attribute values escaped)."""
        e = _html.escape
        return (f'<div class="rope-fig rope-fig-static" data-figure="{e(self.name)}" role="figure" '
                f'aria-label="{e(self.label)}" data-payload="{e(self.payload)}">'
                f'<p class="rope-fig-noscript">{e(self.noscript, quote=False)}</p></div>')

    @property
    def traits(self) -> dict[str, Any]:
        """The payload read: the widget's traits by name (the control values among them)."""
        return json.loads(self.payload)


#: :meth:`Placeholder.html`'s markup, read back.
_PLACEHOLDER = re.compile(
    r'<div class="rope-fig rope-fig-static" data-figure="(?P<name>[^"]*)" role="figure" '
    r'aria-label="(?P<label>[^"]*)" data-payload="(?P<payload>[^"]*)">'
    r'<p class="rope-fig-noscript">(?P<noscript>[^<]*)</p></div>')


def _read(match: re.Match) -> Placeholder:
    return Placeholder(*(_html.unescape(match[k]) for k in ("name", "label", "payload", "noscript")))


def placeholders(markup: str) -> list[Placeholder]:
    """Every figure placeholder in ``markup`` (a page, a cell's HTML output), in order."""
    if not isinstance(markup, str):
        raise TypeError(f"markup must be a string of HTML, got {type(markup).__name__}")
    return [_read(m) for m in _PLACEHOLDER.finditer(markup)]


def replace_placeholders(markup: str, change: Callable[[Placeholder], Placeholder]) -> str:
    """``markup`` with each figure placeholder ``p`` written as ``change(p)`` (the rest unchanged)."""
    if not isinstance(markup, str):
        raise TypeError(f"markup must be a string of HTML, got {type(markup).__name__}")
    if not callable(change):
        raise TypeError(f"change must be a function from Placeholder to Placeholder, got {change!r}")
    return _PLACEHOLDER.sub(lambda m: change(_read(m)).html(), markup)
