"""Drive rope-edu figures in a real browser page (static book, JupyterLab or Notebook 7).

Shared by the browser tests and by ``benchmarks/bench_figures.py``. A figure is any element with
class ``rope-fig`` and a ``data-state`` attribute (set by ``core.js`` after each draw); its controls
carry ``data-control``, its readouts ``data-readout``.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

FIGURE_SELECTOR = ".rope-fig[data-state]"

_SNAPSHOT = "(host) => host.querySelector('svg.rope-fig-svg').innerHTML"

_RANDOM_STATE_JS = """([host, seed]) => {
  let x = seed >>> 0;
  const rand = () => { x = (x * 1664525 + 1013904223) >>> 0; return x / 4294967296; };
  for (const input of host.querySelectorAll('[data-control]')) {
    if (input.type === 'range') {
      const min = Number(input.min), max = Number(input.max), step = Number(input.step);
      const k = Math.floor(rand() * (Math.round((max - min) / step) + 1));
      input.value = String(min + k * step);
      input.dispatchEvent(new Event('input', {bubbles: true}));
    } else if (input.tagName === 'SELECT') {
      input.selectedIndex = Math.floor(rand() * input.options.length);
      input.dispatchEvent(new Event('change', {bubbles: true}));
    } else if (input.type === 'checkbox') {
      input.checked = rand() < 0.5;
      input.dispatchEvent(new Event('change', {bubbles: true}));
    }
  }
  return JSON.parse(host.dataset.state);
}"""

_READOUTS_JS = """(host) => Object.fromEntries([...host.querySelectorAll('[data-readout]')]
  .filter(r => !r.hidden).map(r => [r.dataset.readout, r.querySelector('output').textContent]))"""

_ARM_JS = """([host, index]) => {
  // Time from the key event on control `index` to the first painted frame showing a new SVG.
  const svg = host.querySelector('svg.rope-fig-svg');
  const before = svg.innerHTML;
  delete host.__latency;
  let t0 = null;
  // e.timeStamp: when the key event was created, whichever listener sees it first
  window.addEventListener('keydown', (e) => { t0 = e.timeStamp; }, {capture: true, once: true});
  const start = performance.now();
  const poll = () => {
    if (t0 !== null && svg.innerHTML !== before) {
      requestAnimationFrame(() => { host.__latency = performance.now() - t0; });
    } else if (performance.now() - start > 3000) {
      host.__latency = null;
    } else {
      requestAnimationFrame(poll);
    }
  };
  requestAnimationFrame(poll);
}"""


def figure_module(name: str):
    """The Python module of figure ``name`` (a figure's name is its module's name)."""
    return importlib.import_module(f"rope_edu.widgets.{name}")


def parse_readout(text: str) -> tuple[float, float]:
    """A displayed number and the half-unit of its last digit (its display precision)."""
    t = text.strip().replace("−", "-").split(" ")[0].removesuffix("°")   # 92° (core.js: no space)
    if t in ("n/a",):
        return math.nan, 0.0
    if t in ("∞", "-∞"):
        return (math.inf if t == "∞" else -math.inf), 0.0
    match = re.fullmatch(r"(-?\d+)(?:\.(\d+))?(?:e(-?\d+))?", t)
    if not match:
        raise ValueError(f"readout {text!r} is not a number")
    decimals = len(match.group(2) or "")
    exponent = int(match.group(3) or 0)
    return float(t), 0.5 * 10.0 ** (exponent - decimals)


def compare_readouts(name: str, state: dict[str, Any], shown: dict[str, str]) -> list[str]:
    """Differences between what the page shows and the figure's Python readouts for ``state``."""
    module = figure_module(name)
    expected = module.DEMO.readouts(**state)
    problems = []
    if not shown:
        problems.append(f"{name}: no readouts shown")
    for key, text in shown.items():
        if key not in expected:
            problems.append(f"{name}: readout {key!r} shown on the page has no Python counterpart")
            continue
        value, half_unit = parse_readout(text)
        want = float(expected[key]) if expected[key] is not None else math.nan
        if math.isnan(want) or math.isnan(value):
            if not (math.isnan(want) and math.isnan(value)):
                problems.append(f"{name} {state}: {key} shows {text!r}, Python gives {want!r}")
            continue
        # to display precision (plus a hair for float formatting, and exact ties at the half unit)
        if abs(value - want) > half_unit * 1.0001 + 1e-12 * max(1.0, abs(want)):
            problems.append(f"{name} {state}: {key} shows {text!r}, Python gives {want!r}")
    return problems


def exercise(page, host, *, n_random: int = 4, seed: int = 0) -> dict[str, Any]:
    """Move every control of one figure by keyboard, then set random states and read the readouts.

    Returns ``{"name", "controls", "unchanged": [controls whose move left the SVG the same],
    "problems": [readout mismatches], "latency_ms": [per control]}``.
    """
    handle = host.element_handle()
    name = host.get_attribute("data-figure")
    controls = host.locator("[data-control]")
    report: dict[str, Any] = {"name": name, "controls": controls.count(), "unchanged": [], "problems": [], "latency_ms": []}
    for i in range(controls.count()):
        control = controls.nth(i)
        label = control.get_attribute("data-control")
        if not control.evaluate("e => e.labels.length > 0 && e.labels[0].textContent.trim().length > 0"):
            report["problems"].append(f"{name}: control {label!r} has no visible <label>")
        tag = control.evaluate("e => e.tagName + ':' + (e.type || '')")
        if tag.startswith("SELECT"):
            options = control.locator("option").evaluate_all("os => os.map(o => o.value)")
            current = control.input_value()
            key = "ArrowDown" if options.index(current) < len(options) - 1 else "ArrowUp"
        elif tag.endswith("checkbox"):
            key = "Space"
        else:
            at_max = control.evaluate("e => Number(e.value) + Number(e.step) > Number(e.max) + 1e-9")
            key = "ArrowLeft" if at_max else "ArrowRight"
        before = page.evaluate(_SNAPSHOT, handle)
        control.focus()
        page.evaluate(_ARM_JS, [handle, i])
        page.keyboard.press(key)
        page.wait_for_function("(h) => h.__latency !== undefined", arg=handle, timeout=10_000)
        latency = page.evaluate("(h) => h.__latency", handle)
        after = page.evaluate(_SNAPSHOT, handle)
        report["latency_ms"].append(latency)
        if before == after:
            report["unchanged"].append(label)
    rng = np.random.default_rng(seed)
    for _ in range(n_random):
        state = page.evaluate(_RANDOM_STATE_JS, [handle, int(rng.integers(1, 2**31))])
        shown = page.evaluate(_READOUTS_JS, handle)
        report["problems"] += compare_readouts(name, state, shown)
    return report


# --- live: a Jupyter server, JupyterLab 4 and Notebook 7 --------------------------------------

FRONT_ENDS = {"lab": "lab/tree/{name}?reset", "notebook7": "notebooks/{name}"}
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


class JupyterServer:
    """``jupyter lab`` (which also serves Notebook 7) on a copy of ``notebooks`` in ``home``, with
    private config, data and runtime folders, no token, and the app exposed to the page."""

    def __init__(self, home: Path, notebooks: Path) -> None:
        self.home, self.work = Path(home), Path(home) / "notebooks"
        shutil.copytree(notebooks, self.work, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        self.proc: subprocess.Popen | None = None

    def start(self) -> str:
        env = {k: v for k, v in os.environ.items() if k != "ROPE_EDU_STATIC"}  # live widgets
        env["OPENBLAS_NUM_THREADS"] = "1"
        for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "mpl"),
                         ("JUPYTERLAB_SETTINGS_DIR", "settings"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")]:
            (self.home / sub).mkdir(exist_ok=True)
            env[var] = str(self.home / sub)
        # the kernels listen on Unix sockets in the runtime folder (scripts/kernels.py says why); a
        # socket's path must stay under ~107 bytes, so the folder is a short one in /tmp
        self.runtime = tempfile.mkdtemp(prefix="rope-jr-")
        env["JUPYTER_RUNTIME_DIR"] = self.runtime
        # the port is picked free here and bound by the server a moment later; another process may
        # take it meanwhile. The server is told not to move to another port (it would serve where
        # nobody looks): it exits, and it is started again on a new port
        for _ in range(3):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            self.log = open(self.home / "server.log", "w")
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip", "127.0.0.1",
                 f"--port={port}", "--ServerApp.port_retries=0", "--IdentityProvider.token=",
                 "--ServerApp.password=", "--LabApp.expose_app_in_browser=True",
                 "--JupyterNotebookApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=True",
                 f"--ServerApp.root_dir={self.work}", "--KernelManager.transport=ipc"],
                env=env, stdout=self.log, stderr=subprocess.STDOUT,
            )
            url = f"http://127.0.0.1:{port}"
            deadline = time.time() + 90
            while time.time() < deadline and self.proc.poll() is None:
                try:
                    urllib.request.urlopen(f"{url}/api/status", timeout=2)
                    return url
                except Exception:
                    time.sleep(0.5)
            self.log.close()
            if self.proc.poll() is None or f"port {port} is not available" not in (self.home / "server.log").read_text():
                break
        raise RuntimeError("Jupyter did not start: " + (self.home / "server.log").read_text()[-3000:])

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.log.close()
            shutil.rmtree(self.runtime, ignore_errors=True)


def close_notebook(page) -> None:
    """Close every notebook open in the app of ``page`` without asking to save (the live copies
    are scratch files), so the next one opened is the only panel on the page."""
    page.evaluate("""() => {
      for (const w of [...window.jupyterapp.shell.widgets('main')]) {
        if (w.context && w.context.model) w.context.model.dirty = false;
        w.dispose();
      }
    }""")


def shutdown_kernels(url: str) -> None:
    """Kernels left running on 2 cores slow every later notebook down."""
    for k in json.load(urllib.request.urlopen(f"{url}/api/kernels", timeout=10)):
        urllib.request.urlopen(urllib.request.Request(f"{url}/api/kernels/{k['id']}", method="DELETE"), timeout=10)


def open_and_run(page, url: str, front_end: str, notebook: Path) -> int:
    """Open ``notebook`` in ``front_end``, run all cells; return the number of figures it shows.

    In JupyterLab, a page that already shows the app opens the notebook in it (``docmanager:open``,
    as a reader opens a second notebook): starting the app took about half of each chapter's time.
    Close it with :func:`close_notebook` before the next."""
    if front_end == "lab" and page.evaluate("() => !!window.jupyterapp"):
        # not awaited: the command's promise settled 10-15 s after the panel and its kernel were
        # ready (measured), and the waits below see both
        page.evaluate("(path) => { window.jupyterapp.commands.execute('docmanager:open', {path, factory: 'Notebook'}); }",
                      notebook.name)
    else:
        page.goto(f"{url}/{FRONT_ENDS[front_end].format(name=notebook.name)}", wait_until="load")
    page.wait_for_function(f"() => window.jupyterapp && document.querySelector('{PANEL}')", timeout=60_000)
    page.wait_for_function(
        "(path) => { const w = window.jupyterapp.shell.currentWidget;"
        " return w && w.context && w.context.path === path"
        " && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.status === 'idle'; }",
        arg=notebook.name, timeout=90_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    expected = notebook.read_text(encoding="utf-8").count("DEMO.show(")
    page.wait_for_function(
        f"""() => {{
            const w = window.jupyterapp.shell.currentWidget;
            const figs = document.querySelectorAll('{PANEL} {FIGURE_SELECTOR}');
            return w.sessionContext.session.kernel.status === 'idle' && figs.length >= {expected};
        }}""",
        timeout=240_000,
    )
    return expected


# --- layout: every figure fits the width it gets ---------------------------------------------

#: Smallest text drawn in a figure (CSS px as shown) and smallest touch target on a phone (CSS px).
MIN_TEXT_PX = 10.0
MIN_TOUCH_PX = 44.0

# For every figure on the page: its layout, what sticks out (the host past the viewport, any element
# inside it wider than its box: scrollWidth > clientWidth), the smallest text drawn in its SVG in CSS
# px as shown (font size times the drawing's scale; a tiled layout's text lives in the <defs> its
# tiles show, drawn at the scale of the outer <svg>), and the height of its sliders and menus.
FIT_JS = r"""() => Array.from(document.querySelectorAll('.rope-fig[data-state]'), (host) => {
  const vw = document.documentElement.clientWidth;
  const r = host.getBoundingClientRect();
  const out = {name: host.dataset.figure, layout: host.dataset.layout, view: host.dataset.view,
               width: r.width, left: r.left, right: r.right, vw, overflow: [], minText: null, small: [], controls: []};
  if (r.left < -0.5 || r.right > vw + 0.5) out.overflow.push(`box ${Math.round(r.left)}..${Math.round(r.right)} of ${vw}`);
  for (const e of [host, ...host.querySelectorAll('*')]) {
    // inside the drawing only its outer <svg> counts (an SVG element's box is its content's, clipped or not)
    if (e instanceof SVGElement && !e.matches('svg.rope-fig-svg')) continue;
    if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
      out.overflow.push(`${e.tagName.toLowerCase()}.${e.className.baseVal ?? e.className}: scrollWidth ${e.scrollWidth} > ${e.clientWidth}`);
    const b = e.getBoundingClientRect();
    if (b.width > 0 && (b.left < -0.5 || b.right > vw + 0.5))
      out.overflow.push(`${e.tagName.toLowerCase()}.${e.className.baseVal ?? e.className} at ${Math.round(b.left)}..${Math.round(b.right)} of ${vw}`);
  }
  const svg = host.querySelector('svg.rope-fig-svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  for (const t of svg.querySelectorAll('text')) {
    if (!t.textContent.trim()) continue;
    let k = scale;  // any scaling transform between the drawing and the text
    for (let e = t; e && e !== svg; e = e.parentNode) {
      const list = e.transform && e.transform.baseVal;
      if (list && list.numberOfItems) { const m = list.consolidate().matrix; k *= Math.sqrt(Math.abs(m.a * m.d - m.b * m.c)); }
    }
    const px = parseFloat(getComputedStyle(t).fontSize) * k;
    out.minText = out.minText === null ? px : Math.min(out.minText, px);
    if (px < 10 - 1e-6 && out.small.length < 5) out.small.push(`"${t.textContent.slice(0, 30)}" ${px.toFixed(1)} px`);
  }
  for (const c of host.querySelectorAll('input[type=range], select'))
    out.controls.push([c.dataset.control || c.tagName, c.getBoundingClientRect().height]);
  return out;
})"""


#: Every figure of the page is mounted (drawn, or shown as failed).
MOUNTED_JS = ("() => { const f = [...document.querySelectorAll('.rope-fig-static')];"
              " return f.length > 0 && f.every(h => h.dataset.state || h.classList.contains('rope-fig-error')); }")


#: Two frames: what a resize observer does with the layout of this frame is drawn by then.
TWO_FRAMES_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"

#: No CSS transition is running: after a resize to a laptop the theme slides its sidebar in (a
#: 0.25 s transition of its margin), and the article and its figures move with it.
TRANSITIONS_DONE_JS = ("() => document.getAnimations().every("
                       "a => !(a instanceof CSSTransition) || a.playState !== 'running')")


def transitions_done(page, timeout: int = 2_000) -> None:
    """Wait until no CSS transition runs, then two frames (the layout it ends in is measured, not
    one on the way); after ``timeout`` ms go on."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(TRANSITIONS_DONE_JS, timeout=timeout)
    except PlaywrightTimeout:
        return
    page.evaluate(TWO_FRAMES_JS)


def settle(page) -> None:
    """Wait for the figures' resize observers to lay them out again (two frames after a resize),
    and for the page's transitions to end (measured 2026-12: without this wait, a figure measured
    after a resize from a phone to a laptop stood anywhere from 128 to 288 px from the left)."""
    page.evaluate(TWO_FRAMES_JS)
    transitions_done(page)
    page.wait_for_timeout(100)


def measure_fit(page) -> list[dict]:
    """:data:`FIT_JS` on ``page``: one report per figure."""
    return page.evaluate(FIT_JS)


def fit_problems(report: dict, *, phone: bool) -> list[str]:
    """What is wrong with one figure's :data:`FIT_JS` report (on a phone: controls too small too)."""
    name = report["name"]
    problems = [f"{name}: {o}" for o in report["overflow"]]
    if report["minText"] is None or report["minText"] < MIN_TEXT_PX - 1e-6:
        problems.append(f"{name}: text under {MIN_TEXT_PX} px: {report['small']}")
    if phone:
        problems += [f"{name}: {c} is {h:.0f} px tall (under {MIN_TOUCH_PX})" for c, h in report["controls"] if h < MIN_TOUCH_PX - 0.5]
    return problems
