"""`make book`'s decisions (scripts/build_book.py's `plan`): which chapters execute and why, and
whether Sphinx rebuilds every page and why, from the state of the files alone. No book is built
here; tests/test_build_cache.py checks the same decisions end to end with the real tools."""

from __future__ import annotations

import copy
import importlib.util
import sys
from datetime import datetime

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("build_book", ROOT / "scripts" / "build_book.py")
build_book = sys.modules["build_book"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_book)

Chapter, State, Step, plan, key_of = (
    build_book.Chapter, build_book.State, build_book.Step, build_book.plan, build_book.key_of,
)

PACKAGE = {"rope_edu/__init__.py": "a" * 64, "rope_edu/rope.py": "b" * 64, "requirements.txt": "c" * 64}
SITE = "5173" * 4
MADE = datetime(2026, 11, 27, 1, 2, 3)
A, B = "notebooks/01_a.ipynb", "notebooks/02_b.ipynb"


def _cached(name: str, seconds: float | None = 12.34) -> Chapter:
    return Chapter(name, cached_at=MADE, cached_seconds=seconds, known=True)


def _last(package: dict = PACKAGE, site_key: str = SITE, ok: bool = True) -> dict:
    """The record a finished build leaves in _build/.book_state.json."""
    return {"ok": ok, "package_key": key_of(package), "site_key": site_key, "package": package}


def _state(**changes) -> State:
    """A checkout built once and not changed since; ``changes`` replace fields."""
    fields = dict(
        chapters=(_cached(A), _cached(B)), package=PACKAGE, site_key=SITE, new_cache=False,
        last=_last(), html_built=True, force=False,
    )
    return State(**{**fields, **changes})


def test_nothing_changed_runs_nothing_and_keeps_the_pages():
    p = plan(_state())
    assert p.chapters == (
        Step(A, False, "outputs of 2026-11-27 01:02, ran 12.3 s"),
        Step(B, False, "outputs of 2026-11-27 01:02, ran 12.3 s"),
    )
    assert p.todo == [] and p.every_page == ()
    assert p.package_key == key_of(PACKAGE)


def test_a_record_without_its_run_time_says_when_only():
    p = plan(_state(chapters=(_cached(A, seconds=None),)))
    assert p.chapters == (Step(A, False, "outputs of 2026-11-27 01:02"),)


def test_first_build_runs_everything_and_every_page():
    p = plan(_state(chapters=(Chapter(A), Chapter(B)), new_cache=True, last={}, html_built=False))
    assert p.chapters == (Step(A, True, "no cache"), Step(B, True, "no cache"))
    assert p.every_page == ("no earlier build",)


def test_a_record_from_before_the_package_was_tracked_says_no_cache():
    last = {"ok": True}  # an older script's record: no package manifest, no keys
    p = plan(_state(chapters=(Chapter(A),), new_cache=True, last=last))
    assert p.chapters == (Step(A, True, "no cache"),)
    assert p.every_page == ("outputs re-executed",)


def test_one_notebooks_code_changed_runs_that_one_only():
    p = plan(_state(chapters=(_cached(A), Chapter(B, known=True))))
    assert [s.execute for s in p.chapters] == [False, True]
    assert p.todo == [Step(B, True, "its code changed")]
    assert p.every_page == ()  # Sphinx sees the notebook's change itself


def test_package_change_runs_every_chapter_and_names_the_file():
    package = {**PACKAGE, "rope_edu/__init__.py": "d" * 64}
    p = plan(_state(chapters=(Chapter(A), Chapter(B)), package=package, new_cache=True))
    assert p.todo == [Step(A, True, "package changed: rope_edu/__init__.py"),
                      Step(B, True, "package changed: rope_edu/__init__.py")]
    assert p.every_page == ("package changed",)
    assert p.package_key == key_of(package) != key_of(PACKAGE)


def test_package_change_names_three_files_then_counts():
    package = {f"rope_edu/m{i}.py": "e" * 64 for i in range(5)}
    p = plan(_state(chapters=(Chapter(A),), package=package, new_cache=True))
    # changed_files sorts: the three removed files first, then the five new ones
    assert p.todo == [Step(A, True, "package changed: requirements.txt, rope_edu/__init__.py, "
                                    "rope_edu/m0.py and 5 more")]


def test_package_change_undone_takes_the_earlier_outputs_but_rebuilds_every_page():
    """The cache folder of the restored package state is still there: nothing runs, but the pages
    on disk show the undone change, so Sphinx rebuilds them all."""
    changed = {**PACKAGE, "rope_edu/__init__.py": "d" * 64}
    p = plan(_state(last=_last(package=changed)))
    assert p.todo == []
    assert p.every_page == ("package changed",)


def test_the_package_state_is_the_package_and_its_pins_not_its_translations(tmp_path):
    """What `make book` keys the chapters' outputs on (build_book.package_files): the package's files
    and both pin files, so that a changed pin runs every chapter (the plan below); not the package's
    translations, nor anything else in the checkout. (The end-to-end build in test_build_cache.py
    changes the package itself.)"""
    for name in ("rope_edu/__init__.py", "rope_edu/widgets/js/a.js", "rope_edu/locales/zh_CN.json",
                 "rope_edu/__pycache__/x.pyc", "requirements.txt", "pyproject.toml", "README.md",
                 "notebooks/01_a.ipynb"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    found = [p.relative_to(tmp_path).as_posix() for p in build_book.package_files(tmp_path)]
    assert found == ["pyproject.toml", "requirements.txt", "rope_edu/__init__.py", "rope_edu/widgets/js/a.js"]
    before = build_book.manifest(tmp_path, build_book.package_files(tmp_path))
    (tmp_path / "requirements.txt").write_text("numpy==2.0.0\n")
    after = build_book.manifest(tmp_path, build_book.package_files(tmp_path))
    assert build_book.changed_files(before, after) == ["requirements.txt"] and key_of(before) != key_of(after)


def test_pin_change_counts_as_a_package_change():
    package = {**PACKAGE, "requirements.txt": "f" * 64}
    p = plan(_state(chapters=(Chapter(A),), package=package, new_cache=True))
    assert p.todo == [Step(A, True, "package changed: requirements.txt")]


def test_new_chapter_in_a_known_package_state_runs_and_rebuilds_every_page():
    p = plan(_state(chapters=(_cached(A), Chapter(B))))
    assert p.todo == [Step(B, True, "no cache")]
    assert p.every_page == ("outputs re-executed",)


def test_site_change_rebuilds_every_page_without_running_chapters():
    p = plan(_state(site_key="0" * 16))
    assert p.todo == []
    assert p.every_page == ("_config.yml, _toc.yml or _ext/ changed",)


def test_failed_last_build_rebuilds_every_page():
    p = plan(_state(last=_last(ok=False)))
    assert p.todo == [] and p.every_page == ("the last build failed",)


def test_a_failed_execution_record_keeps_the_keys_it_had():
    """A chapter that fails to execute records {**last, "ok": False}: the next build sees a failed
    build and the same keys."""
    p = plan(_state(last={**_last(), "ok": False}))
    assert p.every_page == ("the last build failed",)


def test_missing_pages_rebuild_every_page():
    p = plan(_state(html_built=False))
    assert p.todo == [] and p.every_page == ("no earlier build",)


def test_reasons_accumulate_in_a_fixed_order():
    package = {**PACKAGE, "rope_edu/rope.py": "0" * 64}
    p = plan(_state(chapters=(Chapter(A),), package=package, new_cache=True,
                    last=_last(ok=False, site_key="1" * 16)))
    assert p.every_page == ("the last build failed", "package changed", "_config.yml, _toc.yml or _ext/ changed")


@pytest.mark.parametrize("chapters", [(_cached(A), _cached(B)), (Chapter(A, known=True), Chapter(B))])
def test_force_runs_every_chapter_and_every_page(chapters):
    p = plan(_state(chapters=chapters, force=True, new_cache=True))
    assert p.todo == [Step(A, True, "--force"), Step(B, True, "--force")]
    assert p.every_page == ("--force",)


def test_force_on_a_first_build_gives_both_reasons():
    p = plan(_state(chapters=(Chapter(A),), force=True, new_cache=True, last={}, html_built=False))
    assert p.every_page == ("--force", "no earlier build")


def test_the_plan_is_a_function_of_its_state():
    state = _state(chapters=(_cached(A), Chapter(B, known=True)), last=_last(ok=False))
    before = copy.deepcopy(state)
    assert plan(state) == plan(state)
    assert state == before  # nothing in the state is modified


def test_a_chapter_worker_does_not_hold_the_build_lock(tmp_path, monkeypatch):
    """A worker that outlives its build (the build killed by Ctrl-C or ``timeout``) must not keep
    the checkout's lock: with fork's copy of the lock open in it, the next ``make book`` waited
    for it forever. Here the build's lock is released while its worker still runs."""
    import fcntl
    import os

    path = tmp_path / ".build_book.lock"
    held = open(path, "a+")
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    monkeypatch.setattr(build_book, "_LOCK_FD", held.fileno())
    with build_book.chapter_pool(1) as pool:
        worker = pool.submit(os.getpid).result()  # the worker is running
        held.close()  # the build ends (or is killed); its worker lives on
        with open(path, "a+") as next_build:
            fcntl.flock(next_build, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError if the worker held it
        assert pool.submit(os.getpid).result() == worker  # the same worker, still alive


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG and /proc are Linux's")
def test_a_chapter_worker_ends_with_its_build(tmp_path):
    """A build killed outright (``kill -9``, or ``timeout``'s last resort) must not leave its
    workers behind: they lived on, blocked writing to a pipe nobody read. Here a real build
    process starts a real worker on a long task and is killed; the worker must end within seconds."""
    import os
    import signal
    import subprocess
    import time

    script = tmp_path / "build.py"
    script.write_text(f"""
import importlib.util, os, sys, time
spec = importlib.util.spec_from_file_location("build_book", {str(ROOT / "scripts" / "build_book.py")!r})
build_book = sys.modules["build_book"] = importlib.util.module_from_spec(spec); spec.loader.exec_module(build_book)
pool = build_book.chapter_pool(1)
print(pool.submit(os.getpid).result(), flush=True)
pool.submit(time.sleep, 120)
time.sleep(120)
""", encoding="utf-8")
    build = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    worker = int(build.stdout.readline())
    os.kill(build.pid, signal.SIGKILL)
    build.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            return  # gone
        if open(f"/proc/{worker}/stat").read().split(")")[-1].split()[0] == "Z":
            return  # ended; its zombie waits for init to reap it
        time.sleep(0.1)
    os.kill(worker, signal.SIGKILL)
    raise AssertionError(f"the worker {worker} outlived its killed build by 10 s")


def test_a_chapter_runs_in_a_kernel_without_tcp_ports(tmp_path):
    """A kernel's TCP ports, picked free by its manager, could be taken by another process before
    the kernel bound them (a CI run: ``Address already in use``, then 60 s and ``Kernel didn't
    respond``). A chapter's kernel listens on Unix sockets in a folder of its own, and is shut down
    and its folder removed when the chapter is done."""
    import glob
    import json
    import os
    import tempfile

    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell(
        "import json, os\nfrom ipykernel import get_connection_info\n"
        "info = get_connection_info(unpack=True)\nprint(json.dumps([info['transport'], info['ip'], os.getpid()]))"
    )])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    text, _, error = build_book._execute(str(path), 60)
    assert error is None, error
    transport, ip, kernel = json.loads(nbformat.reads(text, as_version=4).cells[0].outputs[0]["text"])
    assert transport == "ipc", transport
    with pytest.raises(ProcessLookupError):  # shut down, not left running beside the next chapter's
        os.kill(kernel, 0)
    assert ip.startswith(tempfile.gettempdir()) and not ip.startswith(str(tmp_path)), ip  # not the chapter's folder
    assert not glob.glob(ip + "*"), "the kernel's sockets were left behind"
    assert not os.path.exists(os.path.dirname(ip)), "the kernel's folder was left behind"
