"""Preview and check figures in Debian's Chromium without building the book.

    .venv/bin/python scripts/figure_preview.py rotation2d [clock ...] [--out DIR] [--width 900]

Writes DIR/index.html (the figures' static markup, as in the book) with the engine's assets,
serves it on 127.0.0.1, opens it headless at device-scale-factor 2, saves DIR/<name>.png, moves
every control by keyboard, sets random states and compares the readouts with Python
(tests/figure_driver.py). Prints one report per figure and any console error.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import importlib
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import CHROMIUM_ARGS, chromium_executable  # noqa: E402
import figure_driver  # noqa: E402
from rope_edu.widgets import JS_DIR, static_modules  # noqa: E402


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no line per request
        pass


def write_page(names: list[str], out: Path) -> None:
    assets = out / "_static" / "rope_figures"
    assets.mkdir(parents=True, exist_ok=True)
    for name in ("loader.js", "figures.css"):
        (assets / name).write_text((JS_DIR / name).read_text(encoding="utf-8"), encoding="utf-8")
    for file, source in static_modules(tuple(names)).items():  # as the book serves them
        (assets / file).write_text(source, encoding="utf-8")
    body = []
    for name in names:
        body.append(importlib.import_module(f"rope_edu.widgets.{name}").DEMO.html())
    (out / "index.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        '<link rel="stylesheet" href="_static/rope_figures/figures.css">'
        '<script type="module" src="_static/rope_figures/loader.js"></script></head><body>'
        + "\n".join(body) + "</body></html>",
        encoding="utf-8",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="+")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--width", type=int, default=900)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="figures-"))
    write_page(args.names, out)
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": 800}, device_scale_factor=2)
        errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        page.wait_for_selector(figure_driver.FIGURE_SELECTOR)
        hosts = page.locator(figure_driver.FIGURE_SELECTOR)
        page.wait_for_function(f"() => document.querySelectorAll('{figure_driver.FIGURE_SELECTOR}').length >= {len(args.names)}")
        for i in range(hosts.count()):
            hosts.nth(i).screenshot(path=str(out / f"{args.names[i]}.png"))
            print(figure_driver.exercise(page, hosts.nth(i)))
        print("console errors:", errors or "none")
        print("screenshots in", out)
        browser.close()
    server.shutdown()


if __name__ == "__main__":
    main()
