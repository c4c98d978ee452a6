"""Live widgets in a real JupyterLab: run every notebook that has widgets, move a slider,
and check that the plot the kernel redraws changes."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, notebook_paths

pytestmark = pytest.mark.browser

WIDGET_NOTEBOOKS = [p for p in notebook_paths() if "DEMO.show()" in p.read_text(encoding="utf-8")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory, chromium_path):
    """JupyterLab on a temporary copy of the notebooks, with private config/data/runtime dirs."""
    home = tmp_path_factory.mktemp("lab")
    work = home / "notebooks"
    shutil.copytree(ROOT / "notebooks", work, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    env = {k: v for k, v in os.environ.items() if k != "ROPE_EDU_STATIC"}  # live widgets, not animations
    for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "mpl"), ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                     ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")]:
        (home / sub).mkdir()
        env[var] = str(home / sub)
    port = _free_port()
    log = open(home / "lab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip", "127.0.0.1",
         f"--port={port}", "--IdentityProvider.token=", "--ServerApp.password=",
         "--LabApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=True",
         f"--ServerApp.root_dir={work}"],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api/status", timeout=2)
            break
        except Exception:
            if proc.poll() is not None:
                break
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail("JupyterLab did not start: " + (home / "lab.log").read_text()[-3000:])
    if proc.poll() is not None:
        pytest.fail("JupyterLab exited: " + (home / "lab.log").read_text()[-3000:])
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def _demo_images(page) -> list[str]:
    return page.evaluate(
        """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .rope-edu-demo')].map(d => {
            const img = d.querySelector('.widget-output img, .jp-OutputArea-output img');
            return img ? img.src : '';
        })"""
    )


@pytest.mark.parametrize("notebook", WIDGET_NOTEBOOKS, ids=[p.stem for p in WIDGET_NOTEBOOKS])
def test_widgets_redraw_live(notebook, lab_url, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{lab_url}/lab/tree/{notebook.name}?reset", wait_until="load")
    page.wait_for_function("() => window.jupyterapp && document.querySelector('.jp-NotebookPanel')", timeout=60_000)
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " return w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.status === 'idle'; }",
        timeout=90_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    n_demos = notebook.read_text(encoding="utf-8").count("DEMO.show()")
    # every demo has rendered its first plot and the kernel is idle again
    page.wait_for_function(
        f"""() => {{
            const w = window.jupyterapp.shell.currentWidget;
            const demos = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .rope-edu-demo')];
            return w.sessionContext.session.kernel.status === 'idle' && demos.length >= {n_demos}
                && demos.every(d => d.querySelector('.widget-output img, .jp-OutputArea-output img'));
        }}""",
        timeout=240_000,
    )
    errored = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) [data-mime-type='application/vnd.jupyter.stderr']").count()
    assert errored == 0, page.locator("[data-mime-type='application/vnd.jupyter.stderr']").first.inner_text()[:2000]
    demos = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .rope-edu-demo")
    assert demos.count() == n_demos
    for i in range(n_demos):
        demo = demos.nth(i)
        demo.scroll_into_view_if_needed()
        before = _demo_images(page)[i]
        handle = demo.locator(".noUi-handle")
        if handle.count():
            handle.first.focus()
            page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowRight")
        else:  # a demo driven by a drop-down only
            select = demo.locator("select").first
            options = select.locator("option").all_inner_texts()
            select.select_option(label=options[-1] if select.input_value() != options[-1] else options[0])
        page.wait_for_function(
            f"""(before) => {{
                const d = document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .rope-edu-demo')[{i}];
                const img = d.querySelector('.widget-output img, .jp-OutputArea-output img');
                return img && img.src !== before;
            }}""",
            arg=before,
            timeout=60_000,
        )
    shots = os.environ.get("ROPE_EDU_SCREENSHOT_DIR")  # optional: look at what the test saw
    if shots:
        demos.nth(0).screenshot(path=str(Path(shots) / f"live_{notebook.stem}.png"))
    assert not errors, errors
    context.close()
