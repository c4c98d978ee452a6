"""Fixtures for the tests that use the real tools: the book build, Chromium, JupyterLab."""

from __future__ import annotations

import fcntl
import functools
import http.server
import json
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILD_HTML = ROOT / "_build" / "html"
#: Debian's Chromium builds, the first one installed is used. chromium-headless-shell first: the
#: same Blink, without the browser's window layer (what Playwright runs headless by default); the
#: page surveys took 12 % less CPU in it, with the same measures (issue 46). Playwright starts
#: either headless (``--headless``).
CHROMIUM_CANDIDATES = ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium", "/usr/bin/chromium-browser"]
# Flags that keep Chromium from phoning home (this machine's network is closed).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--disable-dev-shm-usage",
]


def probe_repository(root: Path, toc: str, intro: str) -> Path:
    """A copy of the repository's tracked and new files at ``root``, without its chapters and
    without the Chinese catalogs (so ``make book`` there builds the English edition only), with
    the table of contents ``toc`` and a landing page saying ``intro``; the probe chapters go
    under ``root/notebooks``."""
    import shutil

    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file() and not name.startswith(("notebooks/", "locales/")):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / name)
    (root / "notebooks").mkdir(exist_ok=True)
    (root / "_toc.yml").write_text(toc, encoding="utf-8")
    (root / "book" / "probe_intro.md").write_text(f"# Probe book\n\n{intro}\n", encoding="utf-8")
    return root


def notebook_paths() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def chromium_executable() -> str | None:
    """The first of :data:`CHROMIUM_CANDIDATES` installed, or None."""
    return next((path for path in CHROMIUM_CANDIDATES if os.access(path, os.X_OK)), None)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's chromium. Missing: a failure under CI (CI=true), a skip with the fix otherwise."""
    path = chromium_executable()
    if path:
        return path
    message = ("Debian's chromium is not installed (apt-get install -y chromium-headless-shell, or chromium);"
               " browser tests need it")
    if os.environ.get("CI"):
        pytest.fail(message + " and CI is set, so this is a failure, not a skip")
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def _shared_build(name: str, args: list[str]) -> subprocess.CompletedProcess:
    """Run ``args`` (a build) once per test run: under pytest-xdist the first worker that needs it
    runs it while the others wait on a lock, then reuse its recorded result."""
    build_dir = ROOT / "_build"
    build_dir.mkdir(exist_ok=True)
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
    record = build_dir / f".{name}_result.json"
    with open(build_dir / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if run_id and record.exists():
            done = json.loads(record.read_text(encoding="utf-8"))
            if done["run_id"] == run_id:
                return subprocess.CompletedProcess(done["args"], done["returncode"], done["stdout"], done["stderr"])
        result = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=1500)
        record.write_text(json.dumps({
            "run_id": run_id, "args": args, "returncode": result.returncode,
            "stdout": result.stdout, "stderr": result.stderr,
        }), encoding="utf-8")
        return result


@pytest.fixture(scope="session")
def english_build() -> subprocess.CompletedProcess:
    """The English site, built exactly as `make book` builds it (warnings are errors), once per run.

    `scripts/build_book.py --edition en` executes the chapters whose cached outputs may be stale
    (all of them in a fresh clone) and rebuilds the pages that need it. The tests that read only
    the English site (the reader notebooks) start as soon as it is done, while the worker that
    built it goes on to the Chinese edition (:func:`book_build`).
    """
    return _shared_build("book_build_en", [sys.executable, str(ROOT / "scripts" / "build_book.py"), "--edition", "en"])


@pytest.fixture(scope="session")
def book_build(english_build) -> subprocess.CompletedProcess:
    """Both editions, as `make book` builds them: the English (:func:`english_build`), then the
    Chinese from its outputs (`scripts/build_book.py --edition zh`), once per test run."""
    if english_build.returncode != 0:
        return english_build
    zh = _shared_build("book_build_zh", [sys.executable, str(ROOT / "scripts" / "build_book.py"), "--edition", "zh"])
    return subprocess.CompletedProcess(english_build.args + zh.args, zh.returncode,
                                       english_build.stdout + zh.stdout, english_build.stderr + zh.stderr)


#: Into how many parts the pages the browser surveys open are dealt (every SURVEY_PARTS-th page:
#: two or three of the 39 pages, 15-30 s of work, each). A worker that needs the survey does every part
#: nobody has started, then waits for the ones under way (:func:`shared_survey`), so every worker
#: that reaches the survey shares it to the end. With two halves instead, the worker that came
#: last surveyed its half alone while the others waited: a core idle for about 70 s of a CI run
#: on three workers (2026-12).
SURVEY_PARTS = 16


def _page_survey(part: int):
    """One part of the pages the browser surveys open (every SURVEY_PARTS-th one), each visited once."""
    def run(built_book, site_url, browser):
        import test_surfaces

        pages = _browser_pages(str(built_book))[part::SURVEY_PARTS]
        return test_surfaces.survey(browser, site_url, pages, axe=test_surfaces.AXE_JS.exists())
    return run


@functools.lru_cache(maxsize=4)
def _browser_pages(html_root: str) -> list[str]:
    import test_surfaces

    return test_surfaces.browser_pages(Path(html_root))


#: The surveys of every page that several tests share: each part is computed once per test run,
#: by whichever worker gets to it first.
SURVEYS = {f"pages_{k:02d}": _page_survey(k) for k in range(SURVEY_PARTS)}


@pytest.fixture(scope="session")
def page_survey(built_book, site_url, browser) -> dict:
    """Every page the browser surveys open (test_surfaces.browser_pages), visited once per test
    run: ``{"surfaces": {(view, page): ...}, "reports": {page: ...}}`` (test_surfaces.survey)."""
    merged: dict = {"surfaces": {}, "reports": {}}
    for name in SURVEYS:
        part = shared_survey(name, built_book, site_url, browser)
        for key in merged:
            merged[key].update(part[key])
    return merged


@functools.lru_cache(maxsize=512)
def _parsed(path: str, mtime_ns: int):
    from bs4 import BeautifulSoup

    return BeautifulSoup(Path(path).read_text(encoding="utf-8"), "html.parser")


def page_soup(path: Path):
    """A built page parsed once per worker (BeautifulSoup, html.parser; a chapter page takes a
    third of a second), shared by every test that reads it: read it, never change it (a test that
    removes nodes parses its own copy)."""
    return _parsed(str(path), path.stat().st_mtime_ns)


def _record(name: str) -> Path:
    return ROOT / "_build" / f".{name}_result.pickle"


def _done(name: str, run_id: str) -> bool:
    """Whether the survey ``name`` is recorded for this run (its run id beside it: no unpickling)."""
    marker = _record(name).with_suffix(".run")
    return marker.exists() and marker.read_text() == run_id


def _compute_into(name: str, lock, run_id: str, *args):
    """With ``lock`` held: the survey's result for this run, computed and recorded if missing."""
    record = _record(name)
    if _done(name, run_id):
        return pickle.loads(record.read_bytes())["result"]
    result = SURVEYS[name](*args)
    record.write_bytes(pickle.dumps({"run_id": run_id, "result": result}))
    record.with_suffix(".run").write_text(run_id)
    return result


def shared_survey(name: str, built_book, site_url, browser):
    """The survey ``name`` of :data:`SURVEYS`, computed once per test run and shared by the
    pytest-xdist workers through a pickled result under a lock.

    The first worker that needs one computes it; a worker that finds it under way first computes
    every other one nobody has started, then waits for it. So the workers that need the surveys
    share their parts to the end, whenever each arrives. (pytest-xdist's ``--dist loadgroup``
    would keep such tests on one worker, but its group marks are not honoured with pytest 9.)
    Outside xdist: computed.
    """
    args = (built_book, site_url, browser)
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
    if not run_id:
        return SURVEYS[name](*args)
    (ROOT / "_build").mkdir(exist_ok=True)
    with open(ROOT / "_build" / f".{name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another worker is on it: do the ones nobody has started meanwhile
            for other in SURVEYS:
                if other == name or _done(other, run_id):
                    continue
                with open(ROOT / "_build" / f".{other}.lock", "w") as other_lock:
                    try:
                        fcntl.flock(other_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        continue
                    if not _done(other, run_id):
                        _compute_into(other, other_lock, run_id, *args)
            fcntl.flock(lock, fcntl.LOCK_EX)
        return _compute_into(name, lock, run_id, *args)


@pytest.fixture(scope="session")
def built_book(book_build) -> Path:
    """The built site, both editions."""
    if book_build.returncode != 0 or not (BUILD_HTML / "index.html").exists():
        pytest.fail("the book did not build; see test_book_builds for the log")
    return BUILD_HTML


@pytest.fixture(scope="session")
def built_english(english_build) -> Path:
    """The built English site (the Chinese edition may still be building)."""
    if english_build.returncode != 0 or not (BUILD_HTML / "index.html").exists():
        pytest.fail("the English site did not build; see test_book_builds for the log")
    return BUILD_HTML


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep pytest output clean
        pass


@pytest.fixture(scope="session")
def site_url(built_book):
    """Serve _build/html on 127.0.0.1 (a random free port) for the browser tests."""
    handler = functools.partial(_QuietHandler, directory=str(built_book))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def smollm2_gguf():
    """SmolLM2-135M's GGUF file read once per worker (``rope_edu.trained.read_gguf``): its config and
    tensors (read-only arrays, so tests can share them). The trained-model tests are one
    ``xdist_group`` ("trained"), so under ``make test`` one worker reads it, once."""
    pytest.importorskip("gguf")
    from rope_edu import trained

    return trained.read_gguf()


@pytest.fixture(scope="session")
def smollm2_tokenizer():
    """SmolLM2-135M's tokenizer, built once per worker from the GGUF file (``trained.load_tokenizer``)."""
    pytest.importorskip("transformers")
    from rope_edu import trained

    return trained.load_tokenizer()


#: Fixtures that need the built book (the first test that asks builds it: minutes in a fresh clone).
BOOK_FIXTURES = frozenset({"book_build", "built_book", "site_url", "page_survey", "page_reports", "surfaces",
                           "english_build", "built_english"})
#: Fixtures that need both editions (the others of BOOK_FIXTURES need the English site only).
BOTH_EDITIONS = BOOK_FIXTURES - {"english_build", "built_english"}
#: Fixtures that start Chromium (or need it).
BROWSER_FIXTURES = frozenset({"browser", "chromium_path", "page_survey", "page_reports", "surfaces"})


#: Module-scoped fixtures that take seconds to minutes to make (a probe book built, a Jupyter
#: server started, a page driven in Chromium, the trained model turned into layers), by (module,
#: fixture): every test that uses one joins the named ``xdist_group``, so the fixture is made once
#: per run, not once on each worker that happens to be dealt one of its tests (a module fixture
#: of chapter pages on a phone took 71 s and 67 s on the two workers of one run).
SHARED_FIXTURES = {
    ("test_check_folds", "project"): "check_folds",
    ("test_live_lab", "jupyter"): "live_lab",
    ("test_model_check", "mc_page"): "model_check_page",
    ("test_trained_probe", "loaded"): "trained",
}


def _shared_fixture_group(item) -> None:
    """Mark ``item`` with the group of the :data:`SHARED_FIXTURES` fixture it uses, if any."""
    module = item.module.__name__ if getattr(item, "module", None) else ""
    for (where, fixture), group in SHARED_FIXTURES.items():
        if module == where and fixture in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(group))
            return


def _keep_with_its_group(config, item) -> None:
    """Under ``--dist loadgroup`` (``make test``), a test marked ``xdist_group("name")`` runs on
    the worker that runs the rest of its group, so what the group loads (the trained model) is
    loaded by one worker, once.

    pytest-xdist 3.8 groups a test by renaming it ``<nodeid>@<group>`` on each worker, through
    ``item._nodeid``; pytest 9 keeps the id in ``item._id`` (a ``NodeId``), so that rename does
    nothing and every group is dealt out test by test. This does the same rename on the attribute
    pytest 9 reads (``tests/test_conftest_groups.py`` checks that a group stays on one worker)."""
    if not getattr(config.option, "loadgroup", False):  # set on the workers by xdist
        return
    from _pytest.nodeid import coerce_node_id

    groups = {m.args[0] if m.args else m.kwargs.get("name", "default") for m in item.iter_markers("xdist_group")}
    if groups and "@" not in item.nodeid:
        item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(sorted(groups))}")


def pytest_collection_modifyitems(config, items):
    """Run order: the book build's own test first, then every test that does not need the book,
    then those that need the English site only, then those that need both editions (a stable
    sort: files keep their order within each group).

    pytest-xdist deals tests to the workers in this order, so one worker builds the book at once
    while the other runs the tests that need no book; in file order both workers soon reached a
    test of the book and one of them waited minutes for the other's build."""
    def rank(item) -> int:
        if item.name == "test_book_builds":
            return 0
        names = set(getattr(item, "fixturenames", ()))
        return 3 if BOTH_EDITIONS & names else 2 if BOOK_FIXTURES & names else 1

    # the markers follow the fixtures, so `-m "not book and not browser"` (make check) leaves out
    # every test that needs the built book or Chromium, whatever its file says
    for item in items:
        _shared_fixture_group(item)
        _keep_with_its_group(config, item)
        names = set(getattr(item, "fixturenames", ()))
        if BOOK_FIXTURES & names or item.name == "test_book_builds":
            item.add_marker(pytest.mark.book)
        if BROWSER_FIXTURES & names:
            item.add_marker(pytest.mark.browser)
    items.sort(key=rank)
