"""Every figure of the engine (``rope_edu.widgets.Figure``), and the engine's shared code, without a browser.

The figures are discovered when the tests run: every module of ``rope_edu/widgets`` whose ``DEMO``
is a :class:`~rope_edu.widgets.Figure`, and every ES module in ``rope_edu/widgets/js`` (except
``core.js`` and ``loader.js``), so a new figure is covered by adding its two files. The browser
tests (``tests/test_figures_*.py``) draw them; these check what can be checked in Python and Node.
"""

from __future__ import annotations

import importlib
import json
import math
import numbers
import pkgutil
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import rope_edu.widgets as widgets
from rope_edu.widgets import COLORMAPS, JS_DIR, STATIC_ENV, Control, Figure, bundle, snap_zero
from node_figure import require_node

#: Largest static markup of one figure (its payload: controls, state and data as JSON).
MAX_HTML_BYTES = 150_000

MODULES = sorted(m.name for m in pkgutil.iter_modules(widgets.__path__) if not m.name.startswith("_"))
JS_FIGURES = sorted(p.stem for p in JS_DIR.glob("*.js") if p.stem not in ("core", "loader"))


def _figure(name: str) -> Figure:
    """The ``DEMO`` of module ``name``; skips the test when it is not an engine figure."""
    module = importlib.import_module(f"rope_edu.widgets.{name}")
    demo = getattr(module, "DEMO", None)
    if not isinstance(demo, Figure):
        pytest.skip(f"rope_edu.widgets.{name} has no DEMO that is a Figure")
    return demo


def _payload(markup: str) -> dict:
    found = widgets.placeholders(markup)
    assert len(found) == 1, "the markup is one placeholder, which carries its payload in data-payload"
    return found[0].traits


@pytest.fixture
def node() -> str:
    """Path of ``node``: skips without it, or fails under CI (:func:`node_figure.require_node`)."""
    return require_node()


def _node(node: str, script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    path = tmp_path / "run.mjs"
    path.write_text(script, encoding="utf-8")
    return subprocess.run([node, str(path)], capture_output=True, text=True, timeout=60)


# --- every figure ----------------------------------------------------------------------------


def test_figures_are_discovered():
    assert {"rotation2d", "clock", "layouts"} <= set(MODULES) & set(JS_FIGURES)


@pytest.mark.parametrize("name", MODULES)
def test_name_is_the_module_and_its_js_file_exists(name):
    demo = _figure(name)
    assert demo.name == name, f"rope_edu.widgets.{name}.DEMO is named {demo.name!r}"
    assert (JS_DIR / f"{name}.js").is_file(), f"figure {name} has no js/{name}.js"


@pytest.mark.parametrize("name", JS_FIGURES)
def test_every_js_file_has_a_figure_module(name):
    assert (JS_DIR.parent / f"{name}.py").is_file(), f"js/{name}.js has no module rope_edu/widgets/{name}.py"
    demo = importlib.import_module(f"rope_edu.widgets.{name}").DEMO
    assert isinstance(demo, Figure) and demo.name == name


@pytest.mark.parametrize("name", MODULES)
def test_static_markup_is_a_placeholder_with_a_json_payload(name):
    demo = _figure(name)
    markup = demo.html()
    print(f"{name}: html() is {len(markup):,} characters")
    assert markup.startswith('<div class="rope-fig rope-fig-static"') and markup.endswith("</div>")
    assert f'data-figure="{name}"' in markup
    payload = _payload(markup)
    assert payload["_name"] == name
    assert {k: payload[k] for k in demo.defaults} == payload["_defaults"] == demo.defaults
    assert [c["name"] for c in payload["_controls"]] == [c.name for c in demo.controls]
    assert isinstance(payload["_data"], dict)
    assert len(markup) < MAX_HTML_BYTES, f"{name}: {len(markup):,} characters of markup; keep data() small"


def test_placeholders_are_read_back_and_rewritten_by_one_parser():
    """The build finds figures in outputs and pages, and relabels them, through
    ``widgets.placeholders`` and ``replace_placeholders``: what ``Figure.html`` writes reads back whole."""
    from dataclasses import replace

    from rope_edu.widgets import clock

    one, two = clock.DEMO.html(m=3), clock.DEMO.html()
    page = f"<p>before</p>{one}<p>between &amp; \"x\"</p>{two}"
    found = widgets.placeholders(page)
    assert [p.html() for p in found] == [one, two]
    assert found[0].name == "clock" and found[0].label == clock.DEMO.title and found[0].traits["m"] == 3
    relabelled = widgets.replace_placeholders(page, lambda p: replace(p, label="a <\"b\">", noscript="n & o"))
    assert [(p.label, p.noscript, p.payload) for p in widgets.placeholders(relabelled)] == \
        [('a <"b">', "n & o", p.payload) for p in found]
    assert relabelled.startswith("<p>before</p>") and "<p>between &amp; \"x\"</p>" in relabelled
    with pytest.raises(TypeError, match="markup"):
        widgets.placeholders(None)
    with pytest.raises(TypeError, match="change"):
        widgets.replace_placeholders(page, "label")


@pytest.mark.parametrize("name", MODULES)
def test_readouts_at_the_defaults_are_numbers(name):
    demo = _figure(name)
    assert callable(demo.readouts), f"{name}: every number a figure prints needs a Python readout"
    values = demo.readouts(**demo.defaults)
    assert values and all(isinstance(k, str) for k in values)
    for key, value in values.items():
        if value is None:  # a readout with nothing to show (n/a) by design
            continue
        assert isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)), \
            f"{name}: readout {key} = {value!r} is not a number"
        assert math.isfinite(value) or math.isnan(value), f"{name}: readout {key} = {value!r}"


@pytest.mark.parametrize("name", MODULES)
def test_live_widget_has_one_trait_per_control_at_its_default(name):
    anywidget = pytest.importorskip("anywidget")
    demo = _figure(name)
    w = demo.widget()
    own = {t for t in type(w).class_trait_names(sync=True) if not t.startswith("_")}
    own -= set(anywidget.AnyWidget.class_trait_names())
    assert own == {c.name for c in demo.controls}
    for c in demo.controls:
        value = getattr(w, c.name)
        assert value == c.value and type(value) is type(c.coerce(c.value)), (c.name, value, c.value)
    assert w._name == name and w._defaults == demo.defaults
    # the static book's payload is these traits, by the same names (loader.js renames nothing)
    payload = demo._payload()
    engine = {"_esm", "_css", "_anywidget_id", "_messages"}  # the code, and the language's catalog
    assert set(payload) == set(type(w).class_trait_names(sync=True)) - set(anywidget.AnyWidget.class_trait_names()) - engine
    assert all(getattr(w, k) == v for k, v in payload.items())


@pytest.mark.parametrize("name", JS_FIGURES)
def test_bundle_is_a_valid_es_module(name, tmp_path, node):
    """``node --check`` parses the bundle as a module: a figure that declares a name core.js
    declares too (or twice itself) is a SyntaxError here, and a blank figure in the browser."""
    path = tmp_path / f"{name}.mjs"
    path.write_text(bundle(name), encoding="utf-8")
    result = subprocess.run([node, "--check", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"{name}.js does not parse with core.js:\n{result.stderr}"


def test_node_check_catches_a_name_clash_with_core(tmp_path, node):
    path = tmp_path / "clash.mjs"
    path.write_text(bundle("rotation2d") + "\nfunction cmapColor() {}\n", encoding="utf-8")
    result = subprocess.run([node, "--check", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "already been declared" in result.stderr


# --- the engine: controls --------------------------------------------------------------------


def test_control_options_given_as_a_list_are_a_tuple_and_the_widget_builds():
    pytest.importorskip("anywidget")
    from rope_edu.widgets import clock

    base = Control("base", "base b", "10000", kind="select", options=list(clock.BASE_OPTIONS))
    assert base.options == clock.BASE_OPTIONS and hash(base) == hash(clock.CONTROLS[1])
    fig = Figure("clock", [Control("m", "position m", 3, min=0, max=clock.POSITION_MAX, step=1), base])
    w = fig.widget(base="100")
    assert (w.m, w.base) == (3, "100")


@pytest.mark.parametrize("bad", ["ab", [1, 2], ("10", 20)])
def test_control_options_must_be_strings(bad):
    with pytest.raises(TypeError, match="options"):
        Control("c", "c", "ab", kind="select", options=bad)


def test_select_of_numbers_takes_a_number_equal_to_an_option():
    c = Control("base", "base", 500000.0, kind="select", options=("10", "10000", "500000"))
    assert c.value == "500000"
    assert c.coerce(500000.0) == c.coerce(500000) == c.coerce(np.float64(5e5)) == c.coerce("500000") == "500000"
    assert c.coerce(10) == "10"
    for bad in (20000.0, True, "500000.0", None, math.nan):
        with pytest.raises(ValueError, match="base must be one of"):
            c.coerce(bad)
    words = Control("layout", "layout", "half", kind="select", options=("half", "interleaved"))
    with pytest.raises(ValueError, match="layout must be one of"):
        words.coerce(1.0)


def test_clock_show_takes_a_numeric_base(monkeypatch):
    """Chapter 5 calls ``clock.DEMO.show(m=1024, base=500000.0)``: live and in the static book."""
    from rope_edu.widgets import clock

    assert clock.DEMO.state(m=1024, base=500000.0) == {"m": 1024, "base": "500000"}
    monkeypatch.setenv(STATIC_ENV, "1")
    shown = clock.DEMO.show(m=1024, base=500000.0)
    traits = _payload(shown.data)
    assert {k: traits[k] for k in ("m", "base")} == {"m": 1024, "base": "500000"}
    monkeypatch.setenv(STATIC_ENV, "0")
    pytest.importorskip("anywidget")
    w = clock.DEMO.show(m=1024, base=500000.0)
    assert (w.m, w.base) == (1024, "500000")
    assert clock.readouts(m=1024, base=500000.0) == clock.DEMO.readouts(**clock.DEMO.state(m=1024, base=500000.0))


# --- the engine: readouts' rounding noise, colour maps, subscripts ---------------------------


def test_snap_zero():
    assert snap_zero(2.2e-16, 1e-12) == 0.0 and snap_zero(-3e-13, 1e-12) == 0.0
    assert snap_zero(1e-12, 1e-12) == 1e-12 and snap_zero(-0.5, 1e-12) == -0.5
    assert snap_zero(1e-300, 0) == 1e-300  # zero = 0 snaps nothing
    assert snap_zero(None, 1e-12) is None and math.isnan(snap_zero(math.nan, 1e-12))
    for bad in (-1.0, math.inf, math.nan, True, "1e-12"):
        with pytest.raises(ValueError, match="zero"):
            snap_zero(0.1, bad)
    with pytest.raises(TypeError, match="value"):
        snap_zero("0.1", 1e-12)


def _srgb_luminance(hex_colour: str) -> float:
    rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return float(lin @ [0.2126, 0.7152, 0.0722])


def test_colour_maps_are_sequential_and_diverging():
    assert set(COLORMAPS) == {"cividis", "PuOr"}
    for stops in COLORMAPS.values():
        assert len(stops) == 11 and all(re.fullmatch(r"#[0-9a-f]{6}", s) for s in stops)
    lum = [_srgb_luminance(s) for s in COLORMAPS["cividis"]]
    assert np.all(np.diff(lum) > 0), "cividis: lightness rises from one end to the other"
    lum = [_srgb_luminance(s) for s in COLORMAPS["PuOr"]]
    assert int(np.argmax(lum)) == 5 and np.all(np.diff(lum[:6]) > 0) and np.all(np.diff(lum[5:]) < 0), \
        "PuOr: lightest in the middle (0 of a symmetric range), darker towards both ends"
    bundled = bundle("rotation2d")
    assert f"const COLORMAPS = {json.dumps(COLORMAPS)};" in bundled


def test_core_helpers_in_node_agree_with_python(tmp_path, node):
    (tmp_path / "fig.mjs").write_text(
        bundle("rotation2d"), encoding="utf-8"  # core.js exports snapZero, cmapColor, subscript, the colours
    )
    values = [0.0, 2.2e-16, -3e-13, 1e-12, -0.25, 7.0]
    ts = [0.0, 0.05, 0.5, 0.73, 1.0, -1.0, 2.0]
    script = (
        "globalThis.window ??= { addEventListener() {} };\n"
        'const m = await import("./fig.mjs");\n'
        f"const values = {json.dumps(values)}, ts = {json.dumps(ts)};\n"
        "console.log(JSON.stringify({\n"
        "  snapped: values.map((v) => m.snapZero(v, 1e-12)), kept: values.map((v) => m.snapZero(v)),\n"
        "  nan: Number.isNaN(m.snapZero(NaN, 1e-12)),\n"
        '  colours: Object.fromEntries(["cividis", "PuOr"].map((c) => [c, ts.map((t) => m.cmapColor(c, t))])),\n'
        '  missing: m.cmapColor("cividis", NaN), subs: [m.subscript(0), m.subscript(12), m.subscript(-3)],\n'
        "}));\n"
    )
    result = _node(node, script, tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["snapped"] == [snap_zero(v, 1e-12) for v in values]
    assert out["kept"] == values and out["nan"]
    from rope_edu.plots import COLORS

    for name, stops in COLORMAPS.items():
        rgb = np.array([[int(s[i:i + 2], 16) for i in (1, 3, 5)] for s in stops], dtype=float)
        for t, shown in zip(ts, out["colours"][name]):
            x = min(max(t, 0.0), 1.0) * (len(stops) - 1)
            want = [np.interp(x, np.arange(len(stops)), rgb[:, j]) for j in range(3)]
            got = [int(v) for v in re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", shown).groups()]
            np.testing.assert_allclose(got, want, atol=0.5 + 1e-9)
    assert out["missing"] == COLORS["grey"]
    assert out["subs"] == ["₀", "₁₂", "₋₃"]


# --- the static book: the engine as its own module, loaded once a page -------------------------


def test_static_modules_are_the_bundle_split_in_two():
    """``core.js`` (colours and engine, exporting what its export statement lists) plus a figure's
    module (an import of those names, then the figure's own file) run the same statements as the
    live bundle."""
    from rope_edu.widgets._core import core_names

    modules = widgets.static_modules()
    assert set(modules) == {"core.js"} | {f"{n}.js" for n in JS_FIGURES}
    names = core_names()
    assert {"figure", "plot", "COLORS", "layoutView", "chooseLayout", "textLines"} <= set(names)
    assert len(names) == len(set(names))
    core = modules["core.js"]
    for name in JS_FIGURES:
        head, own = modules[f"{name}.js"].split("\n", 1)
        assert head == f'import {{ {", ".join(names)} }} from "./core.js";'
        assert own == (JS_DIR / f"{name}.js").read_text(encoding="utf-8")
        assert core + "\n" + own == bundle(name)
        assert len(modules[f"{name}.js"]) < len(core), f"{name}: a figure's module carries its own code only"


#: A top-level declaration of core.js (a line that starts with it, no indentation).
_TOP_LEVEL = re.compile(r"^(?:async\s+)?(?:function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)", re.M)


def test_figures_use_only_what_core_exports():
    """core.js says what it exports; its other top-level names are its own. A figure that reads one
    of those works in the live bundle (one module) but not in the static book (imports only the
    exports), so no figure may name them; and every exported name is declared."""
    from rope_edu.widgets._core import core_names

    source = (JS_DIR / "core.js").read_text(encoding="utf-8")
    declared = _TOP_LEVEL.findall(source)
    exported = core_names()[3:]
    assert set(exported) <= set(declared), sorted(set(exported) - set(declared))
    own = set(declared) - set(exported)
    for name in JS_FIGURES:
        code = re.sub(r"//[^\n]*", "", (JS_DIR / f"{name}.js").read_text(encoding="utf-8"))
        used = {n for n in own if re.search(rf"(?<![\w$.]){re.escape(n)}(?![\w$])", code)}
        assert not used, f"{name}.js reads core.js's own {sorted(used)}: add them to core.js's export statement"


def test_static_modules_link_and_run_in_node(tmp_path, node):
    """Every figure's module imports from ./core.js what it uses (an import core does not export is
    a SyntaxError when the module links) and evaluates; a figure that declares a name core.js
    exports is a SyntaxError too."""
    for file, source in widgets.static_modules().items():
        (tmp_path / file.replace(".js", ".mjs")).write_text(source.replace('"./core.js"', '"./core.mjs"'), encoding="utf-8")
    imports = "\n".join(f'const m{i} = await import("./{n}.mjs"); if (typeof m{i}.default.render !== "function") throw new Error("{n}");'
                        for i, n in enumerate(JS_FIGURES))
    result = _node(node, "globalThis.window ??= { addEventListener() {} };\n" + imports + "\nconsole.log('ok');\n", tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
    (tmp_path / "clash.mjs").write_text((tmp_path / "clock.mjs").read_text() + "\nfunction plot() {}\n", encoding="utf-8")
    result = subprocess.run([node, "--check", str(tmp_path / "clash.mjs")], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "already been declared" in result.stderr


def test_layouts_flow_tiles_and_fit_the_box(tmp_path, node):
    """A tiled layout's tiles flow into rows no wider than its column, each row centred; the engine
    shows the first layout whose text stays >= 10 px (width * 10 / 11 px), else the last."""
    (tmp_path / "core.mjs").write_text(widgets.static_modules()["core.js"], encoding="utf-8")
    script = (
        "globalThis.window ??= { addEventListener() {} };\n"
        'const m = await import("./core.mjs");\n'
        "const tiled = { width: 700, height: 400, gap: 10, columnWidth: 300, tiles: [[0, 0, 140, 50], [200, 0, 140, 80], [400, 0, 300, 60], [0, 300, 100, 20]] };\n"
        "const wide = { width: 660, height: 400 }, mid = { width: 440, height: 400 };\n"
        "const pick = (avail) => [wide, mid, tiled].indexOf(m.chooseLayout([wide, mid, tiled], avail));\n"
        "console.log(JSON.stringify({ view: m.layoutView(tiled), plain: m.layoutView(wide),\n"
        "  picks: [0, 1280, 600, 599, 400, 272, 200].map(pick), fn: m.chooseLayout((w) => ({ width: w, height: 1 }), 333).width,\n"
        "  wrapped: m.wrapWords('one two three four five', 9) }));\n"
    )
    result = _node(node, script, tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    view = out["view"]
    assert (view["w"], view["h"]) == (300, 80 + 10 + 60 + 10 + 20)
    assert [(t["x"], t["y"]) for t in view["tiles"]] == [(5, 0), (155, 0), (0, 90), (100, 160)]
    assert out["plain"] == {"w": 660, "h": 400, "tiles": None}
    # 660 units need 600 px, 440 need 400 px, the tiles' 300 need 272.7 px: below that, the last
    assert out["picks"] == [0, 0, 0, 1, 1, 2, 2]
    assert out["fn"] == 333
    assert out["wrapped"] == ["one two", "three", "four five"]
