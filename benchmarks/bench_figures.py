"""Redraw latency of every figure, in the static book and live, and the weight of chapter pages.

    .venv/bin/python benchmarks/bench_figures.py [--rounds 3] [--front-ends lab notebook7] [--no-live]
        [--no-static] [--only 07 10 ...]

Static: serves ``_build/html`` (run ``make book`` first) and opens every chapter page in Debian's
Chromium. Live: starts JupyterLab on a copy of the notebooks, runs each chapter with figures in a
fresh kernel (one at a time, kernels shut down in between). In both, each control of each figure is
moved by keyboard ``--rounds`` times; a redraw's latency is the time from the key event to the first
painted frame that shows the new figure (tests/figure_driver.py). Targets (issue 11): static median
per page <= 50 ms (max <= 100 ms), live median per notebook <= 100 ms. Page weight: a chapter
page's own HTML and images (target <= 1 MB). Timings on a loaded machine are noisy: read them as
orders of magnitude, and compare runs on the same machine.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import figure_driver  # noqa: E402
from conftest import CHROMIUM_ARGS, chromium_executable, notebook_paths  # noqa: E402
from test_book import CHAPTER_PAGE_LIMIT, page_weight  # noqa: E402

STATIC_TARGET_MS, STATIC_MAX_MS, LIVE_TARGET_MS = 50.0, 100.0, 100.0


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no line per request
        pass


def _latencies(page, hosts, rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for i in range(hosts.count()):
        name = hosts.nth(i).get_attribute("data-figure")
        values: list[float] = []
        for r in range(rounds):
            report = figure_driver.exercise(page, hosts.nth(i), n_random=0, seed=r)
            values += [v for v in report["latency_ms"] if v is not None]
        out[f"{name}#{i}"] = values
    return out


def _row(label: str, values: list[float], target: float) -> str:
    if not values:
        return f"  {label:<34} no redraw measured"
    med = statistics.median(values)
    return (f"  {label:<34} median {med:6.1f} ms  max {max(values):6.1f} ms  "
            f"n={len(values):<3} median/target {med / target:4.2f}")


def _chapters(only: list[str] | None) -> list[Path]:
    """Chapter notebooks, or those whose file name contains one of ``only``."""
    return [nb for nb in notebook_paths() if not only or any(o in nb.stem for o in only)]


def bench_static(browser, rounds: int, only: list[str] | None = None) -> None:
    html = ROOT / "_build" / "html"
    if not (html / "index.html").exists():
        print("static: no _build/html; run `make book` first")
        return
    handler = functools.partial(_QuietHandler, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    print(f"static book (target: median <= {STATIC_TARGET_MS:.0f} ms per page, max <= {STATIC_MAX_MS:.0f} ms)")
    page = browser.new_page(viewport={"width": 1200, "height": 900}, device_scale_factor=2)
    for nb in _chapters(only):
        weight = page_weight(html, f"notebooks/{nb.stem}.html")
        print(f" {nb.stem}: page weight {weight / 1e6:.3f} MB (weight/limit {weight / CHAPTER_PAGE_LIMIT:.2f})")
        if "DEMO.show(" not in nb.read_text(encoding="utf-8"):
            continue
        page.goto(f"{url}/notebooks/{nb.stem}.html", wait_until="load")
        page.wait_for_selector(figure_driver.FIGURE_SELECTOR, timeout=30_000)
        per_fig = _latencies(page, page.locator(figure_driver.FIGURE_SELECTOR), rounds)
        for label, values in per_fig.items():
            print(_row(label, values, STATIC_TARGET_MS))
        print(_row("page", [v for vs in per_fig.values() for v in vs], STATIC_TARGET_MS))
    page.close()
    server.shutdown()


def bench_live(browser, rounds: int, front_ends: list[str], only: list[str] | None = None) -> None:
    server = figure_driver.JupyterServer(Path(tempfile.mkdtemp(prefix="bench-live-")), ROOT / "notebooks")
    url = server.start()
    try:
        for front_end in front_ends:
            print(f"live, {front_end} (target: median <= {LIVE_TARGET_MS:.0f} ms per notebook)")
            for nb in _chapters(only):
                if "DEMO.show(" not in nb.read_text(encoding="utf-8"):
                    continue
                page = browser.new_page(viewport={"width": 1300, "height": 1000})
                try:
                    figure_driver.open_and_run(page, url, front_end, nb)
                    hosts = page.locator(f"{figure_driver.PANEL} {figure_driver.FIGURE_SELECTOR}")
                    per_fig = _latencies(page, hosts, rounds)
                    print(f" {nb.stem}")
                    for label, values in per_fig.items():
                        print(_row(label, values, LIVE_TARGET_MS))
                    print(_row("notebook", [v for vs in per_fig.values() for v in vs], LIVE_TARGET_MS))
                finally:
                    page.close()
                    figure_driver.shutdown_kernels(url)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--front-ends", nargs="+", default=["lab"], choices=list(figure_driver.FRONT_ENDS))
    parser.add_argument("--no-live", action="store_true")
    parser.add_argument("--no-static", action="store_true")
    parser.add_argument("--only", nargs="+", metavar="PART", help="chapters whose file name contains PART")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_ARGS)
        if not args.no_static:
            bench_static(browser, args.rounds, args.only)
        if not args.no_live:
            bench_live(browser, args.rounds, args.front_ends, args.only)
        browser.close()


if __name__ == "__main__":
    main()
