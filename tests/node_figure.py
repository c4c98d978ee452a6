"""Run a figure module's exported JavaScript functions under Node.js, without a browser.

A figure module (``rope_edu/widgets/js/<name>.js``) may export, next to its default figure, the
pure function that computes what it draws (e.g. ``export { compute }``). Tests call it here over
many states, far more than the browser tests can afford, and compare with the Python package.
Without ``node`` the calling test skips, or fails under CI (see :func:`require_node`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from rope_edu.widgets import bundle
from rope_edu.widgets._core import to_json

_DRIVER = """
import { readFileSync } from "node:fs";
globalThis.window ??= { addEventListener() {} };  // core.js installs a keyboard listener on load
const mod = await import(process.argv[2]);
const { fn, calls, extra, pick } = JSON.parse(readFileSync(0, "utf8"));
const out = calls.map((args) => { const r = mod[fn](...args, ...extra); return pick ? r[pick] : r; });
const clean = (v) => (typeof v === "number" && !Number.isFinite(v) ? (Number.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity") : v);
process.stdout.write(JSON.stringify(out, (k, v) => clean(v)));
"""


def _restore(value: Any) -> Any:
    if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf").replace("NaN", "nan"))
    if isinstance(value, list):
        return [_restore(v) for v in value]
    if isinstance(value, dict):
        return {k: _restore(v) for k, v in value.items()}
    return value


def require_node() -> str:
    """Path of ``node``. Missing: a failure under CI (``CI`` set; ``.ci/run`` installs Debian's
    nodejs), a skip otherwise (the browser tests still exercise the same JavaScript)."""
    node = shutil.which("node")
    if node is None:
        message = "node is not installed (Debian: apt-get install nodejs)"
        if os.environ.get("CI"):
            pytest.fail(message + " and CI is set, so this is a failure, not a skip")
        pytest.skip(message + ": the figure's JavaScript is checked by the browser tests only")
    return node


def call_js(
    name: str, fn: str, calls: list[list[Any]], extra: list[Any] = (), pick: str | None = None
) -> list[Any]:
    """``[fn(*args, *extra) for args in calls]`` evaluated by figure ``name``'s bundled module in
    Node (``fn(...)[pick]`` with ``pick``, to bring back only part of each result; ``extra`` is
    sent once, e.g. the figure's data).

    Non-finite numbers come back as Python floats (``nan``, ``inf``)."""
    node = require_node()
    with tempfile.TemporaryDirectory() as tmp:
        module = Path(tmp) / f"{name}.mjs"
        module.write_text(bundle(name), encoding="utf-8")
        driver = Path(tmp) / "driver.mjs"
        driver.write_text(_DRIVER, encoding="utf-8")
        payload = json.dumps({"fn": fn, "calls": to_json(calls), "extra": to_json(list(extra)), "pick": pick}, allow_nan=False)
        done = subprocess.run(
            [node, str(driver), module.as_uri()], input=payload, capture_output=True, text=True, timeout=120, check=False
        )
    if done.returncode != 0:
        raise RuntimeError(f"node failed on {name}.{fn}: {done.stderr.strip()}")
    return _restore(json.loads(done.stdout))
