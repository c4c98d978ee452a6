"""How a chapter page reads on a laptop: the numbers issue 29 asks for, from the built site.

For each chapter page, in Chromium at 1280x800 (or ``--size WxH``) with every fold closed:
where its first figure starts and how long the page is (in screens of the viewport's height),
how many verdict blocks and show-code bars the flow shows, how many one-line check folds it has,
and every display equation, table or code block wider than its column.

    .venv/bin/python scripts/page_metrics.py                      # every chapter page
    .venv/bin/python scripts/page_metrics.py 05_frequencies 07    # pages whose name starts so
    .venv/bin/python scripts/page_metrics.py --size 390x844 --shots /tmp/shots 03

``--shots DIR`` also saves a screenshot of each page's first screen. The limits (first figure
within 1.5 screens, at most 20 screens, 3 verdicts, 5 show-code bars, nothing wider than the
column) are checked on every page by ``tests/test_surfaces.py``; this script prints the numbers.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Measured in the page; its argument is a screen's height in CSS pixels (800 at 1280x800).
MEASURE_JS = r"""
(screen) => {
  const H = screen || window.innerHeight;
  // a folded dropdown (sphinx-togglebutton's .toggle-hidden) clips its content without hiding it
  const vis = e => e.checkVisibility() && !e.closest('.toggle-hidden');
  const top = e => e.getBoundingClientRect().top + window.scrollY;
  const main = document.querySelector('main article, article, main') || document.body;
  const figs = [...main.querySelectorAll('.rope-fig, .cell_output img, figure img')].filter(vis);
  const first = figs.length ? Math.min(...figs.map(top)) : null;
  const verdicts = [...main.querySelectorAll('.rope-verdict')].filter(vis)
    .filter(e => !(e.parentElement && e.parentElement.closest('.rope-verdict'))).length;
  const bars = [...main.querySelectorAll('details.hide > summary, summary')].filter(vis)
    .filter(s => /show code|code cell/i.test(s.textContent)).length;
  const folds = [...main.querySelectorAll('.rope-checks')].filter(vis).length;
  const wide = [];
  for (const e of main.querySelectorAll('mjx-container[display="true"], div.math, table, pre')) {
    if (!vis(e)) continue;
    const box = e.closest('.bd-article-container, article') || main;
    const column = Math.min(box.clientWidth, main.clientWidth);
    const w = e.tagName === 'MJX-CONTAINER' ? e.firstElementChild?.getBoundingClientRect().width ?? e.scrollWidth
                                            : e.scrollWidth;
    if (w > column + 1) wide.push(`${e.tagName.toLowerCase()} ${Math.round(w)}px > ${Math.round(column)}: `
                                  + (e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 60));
  }
  return {first_figure: first === null ? null : +(first / H).toFixed(2),
          screens: +(document.documentElement.scrollHeight / H).toFixed(1),
          verdicts, show_code_bars: bars, check_folds: folds, wide};
}
"""


def chapter_pages(html: Path, prefixes: list[str]) -> list[str]:
    """The chapter pages' names (``notebooks/<stem>.html``) that start with one of ``prefixes``."""
    stems = sorted(p.stem for p in (html / "notebooks").glob("*.html"))
    return [s for s in stems if not prefixes or any(s.startswith(x) for x in prefixes)]


def serve(html: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pages", nargs="*", help="name prefixes of chapter pages (default: all)")
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html", help="the built site")
    parser.add_argument("--size", default="1280x800", help="viewport WIDTHxHEIGHT (default 1280x800)")
    parser.add_argument("--shots", type=Path, help="save each page's first screen here")
    args = parser.parse_args(argv)
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        parser.error(f"--size must be WIDTHxHEIGHT, e.g. 1280x800, got {args.size!r}")
    if not (args.html / "notebooks").is_dir():
        parser.error(f"--html {args.html} has no notebooks/ folder: build the book first (make book)")
    pages = chapter_pages(args.html, args.pages)
    if not pages:
        parser.error(f"no chapter page starts with {args.pages}")
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import CHROMIUM_ARGS, chromium_executable  # the browser tests' Chromium

    chromium = chromium_executable()
    if chromium is None:
        parser.error("Debian's chromium is not installed (apt-get install chromium-headless-shell, or chromium)")
    server, url = serve(args.html)
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    print(f"{'page':34s} {'first fig':>9s} {'screens':>7s} {'verdicts':>8s} {'code bars':>9s} {'folds':>5s}")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": width, "height": height})
            for stem in pages:
                page.goto(f"{url}/notebooks/{stem}.html", wait_until="load")
                page.wait_for_timeout(1500)  # MathJax and the figures settle
                m = page.evaluate(MEASURE_JS, height)
                first = "-" if m["first_figure"] is None else f"{m['first_figure']:.2f}"
                print(f"{stem:34s} {first:>9s} {m['screens']:7.1f} {m['verdicts']:8d} {m['show_code_bars']:9d} "
                      f"{m['check_folds']:5d}")
                for w in m["wide"]:
                    print(f"    wide: {w}")
                if args.shots:
                    page.screenshot(path=str(args.shots / f"{stem}_{width}.png"))
            browser.close()
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
