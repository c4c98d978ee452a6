"""Live figures in a real Jupyter server, in JupyterLab 4 and in Notebook 7.

For every chapter notebook with figures: open it, run all cells in a fresh kernel, wait for every
figure to be drawn by its anywidget front end, then move each control by keyboard (the figure must
redraw), set random states and compare the printed readouts with the package's Python, and check
that the control values reach the kernel. The kernel is shut down before the next notebook.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import figure_driver
from conftest import ROOT, notebook_paths

pytestmark = pytest.mark.browser

FIGURE_NOTEBOOKS = [p for p in notebook_paths() if "DEMO.show(" in p.read_text(encoding="utf-8")]
FRONT_ENDS = {"lab": "lab/tree/{name}?reset", "notebook7": "notebooks/{name}"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def jupyter_url(tmp_path_factory, chromium_path):
    """A Jupyter server (JupyterLab and Notebook 7) on a temporary copy of the notebooks."""
    home = tmp_path_factory.mktemp("jupyter")
    work = home / "notebooks"
    shutil.copytree(ROOT / "notebooks", work, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    env = {k: v for k, v in os.environ.items() if k != "ROPE_EDU_STATIC"}  # live widgets, not static markup
    env["OPENBLAS_NUM_THREADS"] = "1"
    for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "mpl"), ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                     ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")]:
        (home / sub).mkdir()
        env[var] = str(home / sub)
    port = _free_port()
    log = open(home / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip", "127.0.0.1",
         f"--port={port}", "--IdentityProvider.token=", "--ServerApp.password=",
         "--LabApp.expose_app_in_browser=True", "--JupyterNotebookApp.expose_app_in_browser=True",
         "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={work}"],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline and proc.poll() is None:
        try:
            urllib.request.urlopen(f"{url}/api/status", timeout=2)
            break
        except Exception:
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail("Jupyter did not start: " + (home / "server.log").read_text()[-3000:])
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def _shutdown_kernels(url: str) -> None:
    """Kernels left running on 2 cores slow every later notebook down."""
    kernels = json.load(urllib.request.urlopen(f"{url}/api/kernels", timeout=10))
    for k in kernels:
        urllib.request.urlopen(urllib.request.Request(f"{url}/api/kernels/{k['id']}", method="DELETE"), timeout=10)


PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def open_and_run(page, url: str, front_end: str, notebook: Path) -> int:
    """Open ``notebook`` in ``front_end``, run all cells; return the number of figures it shows."""
    page.goto(f"{url}/{FRONT_ENDS[front_end].format(name=notebook.name)}", wait_until="load")
    page.wait_for_function(f"() => window.jupyterapp && document.querySelector('{PANEL}')", timeout=60_000)
    kernel_idle = (
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " return w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.status === 'idle'; }"
    )
    page.wait_for_function(kernel_idle, timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    expected = notebook.read_text(encoding="utf-8").count("DEMO.show(")
    page.wait_for_function(
        f"""() => {{
            const w = window.jupyterapp.shell.currentWidget;
            const figs = document.querySelectorAll('{PANEL} {figure_driver.FIGURE_SELECTOR}');
            return w.sessionContext.session.kernel.status === 'idle' && figs.length >= {expected};
        }}""",
        timeout=240_000,
    )
    return expected


def _kernel_value(page, code: str) -> str:
    """Run ``code`` in the notebook's kernel and return the text/plain result."""
    return page.evaluate(
        """async (code) => {
            const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
            let out = null;
            const future = kernel.requestExecute({code, store_history: false, silent: false});
            future.onIOPub = (msg) => {
                if (msg.header.msg_type === 'execute_result') out = msg.content.data['text/plain'];
                if (msg.header.msg_type === 'error') out = 'ERROR ' + msg.content.ename + ': ' + msg.content.evalue;
            };
            await future.done;
            return out;
        }""",
        code,
    )


@pytest.mark.parametrize("front_end", list(FRONT_ENDS))
@pytest.mark.parametrize("notebook", FIGURE_NOTEBOOKS, ids=[p.stem for p in FIGURE_NOTEBOOKS])
def test_figures_work_live(notebook, front_end, jupyter_url, browser):
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    # Errors from our figures' code (anywidget loads each module from a blob: URL); the front ends'
    # own start-up noise in a bare test profile is not ours to fix.
    page.on("pageerror", lambda e: "blob:" in (e.stack or "") and errors.append(e.stack))
    page.on("console", lambda m: m.type == "error" and "rope-edu" in m.text and errors.append(m.text))
    try:
        expected = open_and_run(page, jupyter_url, front_end, notebook)
        stderr = page.locator(f"{PANEL} [data-mime-type='application/vnd.jupyter.stderr']")
        assert stderr.count() == 0, stderr.first.inner_text()[:2000]
        figures = page.locator(f"{PANEL} {figure_driver.FIGURE_SELECTOR}")
        assert figures.count() == expected
        for i in range(expected):
            host = figures.nth(i)
            host.scroll_into_view_if_needed()
            report = figure_driver.exercise(page, host, n_random=3, seed=i)
            assert report["controls"] > 0, report
            assert not report["unchanged"], f"controls that did not change the figure: {report}"
            assert not report["problems"], report["problems"]
        # the kernel sees the controls: the last figure's state reached its widget's traits
        # (the figure is the value of its cell, so it is in Out[]; find it by its traits)
        state = json.loads(figures.nth(expected - 1).get_attribute("data-state"))
        name = figures.nth(expected - 1).get_attribute("data-figure")
        synced = _kernel_value(
            page,
            "import json as _j\nfrom ipywidgets.widgets.widget import _instances as _w\n"
            f"_figs = [w for w in _w.values() if getattr(w, '_name', None) == {name!r}]\n"
            f"_j.dumps([{{k: getattr(w, k) for k in {list(state)!r}}} for w in _figs])",
        )
        assert synced and not synced.startswith("ERROR"), synced
        assert state in json.loads(ast.literal_eval(synced)), (state, synced)
        shots = os.environ.get("ROPE_EDU_SCREENSHOT_DIR")  # optional: look at what the test saw
        if shots:
            figures.nth(0).screenshot(path=str(Path(shots) / f"live_{front_end}_{notebook.stem}.png"))
        assert not errors, errors
    finally:
        context.close()
        _shutdown_kernels(jupyter_url)
