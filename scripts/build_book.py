"""Build the book, executing only the chapters whose outputs could have changed (`make book`).

    python scripts/build_book.py            # what `make book` runs
    python scripts/build_book.py --force    # execute every chapter and rebuild every page

Outputs are cached per notebook with jupyter-cache (myst-nb's ``execute_notebooks: cache``), and
the cache is keyed on everything that can change them:

* a notebook's code cells (and their metadata): jupyter-cache's own hash;
* the package (every file under ``rope_edu/``: code, data, the figures' JavaScript and CSS) and
  the pins (``requirements.txt``, ``pyproject.toml``): one cache folder per state of these,
  ``_build/.jupyter_caches/<key>``, linked as ``_build/.jupyter_cache`` for myst-nb.

So a change to the package executes every chapter again, and undoing it finds the earlier
folder, whose outputs were made by exactly the package that is back. Prose is not part of any
key: a chapter whose Markdown alone changed is re-rendered from its cached outputs.

Before Sphinx runs, this script executes the chapters that miss the cache, two at a time
(each in a fresh kernel, in the notebook's folder, as myst-nb would), and says which and why.
Sphinx then rebuilds only the pages whose source changed; every page is rebuilt when the
package, ``_config.yml``, ``_toc.yml`` or ``_ext/`` changed, or when the last build failed
(an incremental build would not repeat the warnings of pages it does not read again).

The decisions are one pure function, :func:`plan`: the state of the files (hashes, what the
cache holds, the last build's record) in, which chapters run and why and whether every page is
rebuilt and why out (tests/test_build_plan.py). :func:`build` gathers that state, prints the plan,
then :func:`execute` runs the chapters and :func:`sphinx` builds the pages.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import i18n  # noqa: E402  (scripts/i18n.py: the Chinese edition)

# The environment the chapters run in while the static site is built (figures become bundles).
BOOK_ENV = {"ROPE_EDU_STATIC": "1", "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1"}
KEEP_CACHES = 4  # package states whose outputs are kept (the newest used)
#: What the English site is made from besides the executed outputs: when none of it changed since
#: the last successful build, Sphinx is not started at all (a no-change `make book` in seconds).
EN_INPUTS = ["notebooks/*.ipynb", "book/**/*", "_config.yml", "_toc.yml", "_ext/**/*", "rope_edu/**/*",
             "requirements.txt", "pyproject.toml", "scripts/build_book.py"]


def _files(root: Path, patterns: list[str]) -> list[Path]:
    found: set[Path] = set()
    for pattern in patterns:
        found.update(p for p in root.glob(pattern) if p.is_file())
    return sorted(p for p in found if "__pycache__" not in p.parts and p.suffix != ".pyc")


def package_files(root: Path) -> list[Path]:
    """Everything a chapter's outputs can depend on besides its own code. Not the translations
    (rope_edu/locales: the chapters run in English; the Chinese edition translates their outputs
    when it is built), so that editing a translation executes nothing again."""
    locales = root / "rope_edu" / "locales"
    return [p for p in _files(root, ["rope_edu/**/*", "requirements.txt", "pyproject.toml"]) if locales not in p.parents]


def site_files(root: Path) -> list[Path]:
    """Files that change every page without changing any notebook (Sphinx cannot see _ext/)."""
    return _files(root, ["_config.yml", "_toc.yml", "_ext/*.py"])


def manifest(root: Path, files: list[Path]) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def key_of(files: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16]


def changed_files(old: dict[str, str], new: dict[str, str]) -> list[str]:
    return sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))


def toc_notebooks(root: Path) -> list[Path]:
    """The notebooks listed in ``_toc.yml``, in reading order."""
    import yaml

    def walk(node) -> list[str]:
        if isinstance(node, dict):
            out = [node["file"]] if isinstance(node.get("file"), str) else []
            for value in node.values():
                if isinstance(value, (list, dict)):
                    out += walk(value)
            return out
        if isinstance(node, list):
            return [f for item in node for f in walk(item)]
        return []

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    paths = [root / (f if f.endswith(".ipynb") else f + ".ipynb") for f in walk(toc)]
    return [p for p in paths if p.exists()]


def execution_timeout(root: Path) -> int:
    import yaml

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    return int((config.get("execute") or {}).get("timeout", 180))


def _execute(path: str, timeout: int) -> tuple[str, float, str | None]:
    """Run one notebook top to bottom in a fresh kernel (a worker process)."""
    import nbformat
    from jupyter_cache.executors.utils import single_nb_execution

    from kernels import PrivateSocketKernelManager

    nb = nbformat.read(path, as_version=4)
    result = single_nb_execution(nb, cwd=str(Path(path).parent), timeout=timeout, allow_errors=False,
                                 kernel_manager_class=PrivateSocketKernelManager)  # no TCP ports to lose
    # the error's own text holds the failing cell and its traceback (exc_string is nbclient's stack)
    error = None if result.err is None else f"{type(result.err).__name__}: {result.err}"
    return nbformat.writes(nb), result.time, error


def _link_cache(build: Path, folder: Path) -> None:
    """Point ``_build/.jupyter_cache`` (myst-nb's default) at this package state's folder."""
    link = build / ".jupyter_cache"
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.is_dir():
        shutil.rmtree(link)  # a plain folder from an older build: it had no package key
    link.symlink_to(folder.relative_to(build), target_is_directory=True)


def _prune(caches: Path, keep: Path) -> None:
    folders = sorted((p for p in caches.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in [p for p in folders if p != keep][KEEP_CACHES - 1:]:
        shutil.rmtree(old, ignore_errors=True)


def _short(names: list[str], n: int = 3) -> str:
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


# --- the plan: what runs and why, from the state of the files alone (no side effects) ----------

@dataclass(frozen=True)
class Chapter:
    """What the output cache holds for one chapter (``name``: its path in the repository)."""

    name: str
    cached_at: datetime | None = None  # the cache holds outputs of its current code, made then
    cached_seconds: float | None = None  # how long those took to run (older records lack it)
    known: bool = False  # the cache holds outputs of another version of its code


@dataclass(frozen=True)
class State:
    """Everything the decisions depend on."""

    chapters: tuple[Chapter, ...]  # in reading order
    package: dict[str, str]  # manifest (path: sha256) of ``package_files``
    site_key: str  # key_of the manifest of ``site_files``
    new_cache: bool  # this package state had no cache folder before this build
    last: dict  # the last build's record (``_build/.book_state.json``; {} before the first)
    html_built: bool  # ``_build/html/index.html`` exists
    force: bool = False


@dataclass(frozen=True)
class Step:
    name: str
    execute: bool
    why: str  # why it runs, or where its outputs come from


@dataclass(frozen=True)
class Plan:
    chapters: tuple[Step, ...]
    every_page: tuple[str, ...]  # why Sphinx rebuilds every page; () = only pages whose source changed
    package_key: str

    @property
    def todo(self) -> list[Step]:
        return [s for s in self.chapters if s.execute]


def plan(state: State) -> Plan:
    """Which chapters execute and why, and whether Sphinx rebuilds every page and why."""
    pkg_key = key_of(state.package)
    last = state.last
    if state.force:
        why_new = "--force"
    elif state.new_cache and last.get("package"):
        why_new = "package changed: " + _short(changed_files(last["package"], state.package))
    else:
        why_new = "no cache"

    steps = []
    for ch in state.chapters:
        if ch.cached_at is not None and not state.force:
            took = f", ran {ch.cached_seconds:.1f} s" if ch.cached_seconds is not None else ""
            steps.append(Step(ch.name, False, f"outputs of {ch.cached_at:%Y-%m-%d %H:%M}{took}"))
        else:
            steps.append(Step(ch.name, True, "its code changed" if ch.known and not state.force else why_new))

    every = []
    if state.force:
        every.append("--force")
    if not state.html_built or not last:
        every.append("no earlier build")
    elif not last.get("ok"):
        every.append("the last build failed")
    if last.get("package_key") not in (None, pkg_key):
        every.append("package changed")
    if last.get("site_key") not in (None, state.site_key):
        every.append("_config.yml, _toc.yml or _ext/ changed")
    if any(s.execute and s.why != "its code changed" for s in steps) and not every:
        every.append("outputs re-executed")
    return Plan(tuple(steps), tuple(every), pkg_key)


# --- the facts, the execution and Sphinx -----------------------------------------------------

def _open_cache(build_dir: Path, pkg_key: str, force: bool):
    """This package state's cache folder, linked for myst-nb (emptied first with ``force``), and
    whether it is new; older states beyond :data:`KEEP_CACHES` are removed."""
    from jupyter_cache import get_cache

    caches = build_dir / ".jupyter_caches"
    folder = caches / pkg_key
    if force and folder.exists():
        shutil.rmtree(folder)
    new = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    os.utime(folder)  # newest used: kept by _prune
    _link_cache(build_dir, folder)
    _prune(caches, folder)
    return get_cache(str(folder)), new


def _chapters(root: Path, cache) -> tuple[Chapter, ...]:
    """What ``cache`` holds for each notebook of the table of contents."""
    import nbformat

    known_uris = {r.uri for r in cache.list_cache_records()}
    out = []
    for path in toc_notebooks(root):
        try:
            record = cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            record = None
        out.append(Chapter(
            path.relative_to(root).as_posix(),
            cached_at=record.created if record is not None else None,
            cached_seconds=record.data.get("execution_seconds") if record is not None else None,
            known=str(path) in known_uris,
        ))
    return tuple(out)


def execute(root: Path, steps: list[Step], cache, jobs: int) -> list[str]:
    """Run ``steps``, ``jobs`` at a time, store their outputs in ``cache``, say what ran and why;
    returns the chapters that failed."""
    import nbformat
    from jupyter_cache.base import CacheBundleIn

    timeout = execution_timeout(root)
    failed = []
    with chapter_pool(jobs) as pool:
        futures = {pool.submit(_execute, str(root / s.name), timeout): s for s in steps}
        for future in concurrent.futures.as_completed(futures):
            step = futures[future]
            text, seconds, error = future.result()
            if error:
                failed.append(step.name)
                print(f"  FAILED    {step.name}  after {seconds:.1f} s ({step.why})\n{error[-3000:]}")
                continue
            cache.cache_notebook_bundle(
                CacheBundleIn(nbformat.reads(text, as_version=4), str(root / step.name),
                              data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True,
            )
            print(f"  executed  {step.name}  in {seconds:.1f} s ({step.why})")
    return failed


def sphinx(root: Path, every_page: tuple[str, ...]) -> int:
    """``jupyter-book build`` (warnings are errors), after removing the last build's pages when
    every page is to be rebuilt; returns its exit status."""
    build_dir = root / "_build"
    if every_page:
        for stale in ("html", ".doctrees", "jupyter_execute"):
            shutil.rmtree(build_dir / stale, ignore_errors=True)
        print(f"Sphinx: every page ({'; '.join(every_page)})")
    else:
        print("Sphinx: only pages whose source changed")
    jb = Path(sys.executable).with_name("jupyter-book")
    return subprocess.run([str(jb), "build", "-W", "-n", "--keep-going", str(root)], cwd=root).returncode


def build(root: Path, *, force: bool = False, jobs: int | None = None, edition: str = "both") -> int:
    """``edition``: "both" (``make book``), "en" (the English site only; the Chinese edition is then
    due, and ``--edition zh`` builds it from this build's record), or "zh"."""
    if edition == "zh":
        return build_chinese(root)
    started = time.perf_counter()
    os.environ.update(BOOK_ENV)
    # the kernels and Sphinx import this checkout's package, whatever is installed
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))

    build_dir = root / "_build"
    state_file = build_dir / ".book_state.json"
    last = json.loads(state_file.read_text()) if state_file.exists() else {}
    pkg = manifest(root, package_files(root))
    site_key = key_of(manifest(root, site_files(root)))
    cache, new_cache = _open_cache(build_dir, key_of(pkg), force)
    the_plan = plan(State(
        chapters=_chapters(root, cache), package=pkg, site_key=site_key, new_cache=new_cache,
        last=last, html_built=(build_dir / "html" / "index.html").exists(), force=force,
    ))

    todo = the_plan.todo
    for step in the_plan.chapters:
        if not step.execute:
            print(f"  cached    {step.name}  ({step.why})")
    if todo:
        jobs = jobs or min(len(todo), os.cpu_count() or 1, 2)
        print(f"Executing {len(todo)} of {len(the_plan.chapters)} chapters, {jobs} at a time:")
        failed = execute(root, todo, cache, jobs)
        if failed:
            print(f"make book: {len(failed)} chapter(s) failed to execute: {', '.join(failed)}")
            state_file.write_text(json.dumps({**last, "ok": False}))
            return 1
    executed = time.perf_counter() - started

    sphinx_started = time.perf_counter()
    en_key = i18n.inputs_key(root, EN_INPUTS)
    if (not todo and not the_plan.every_page and last.get("ok") and last.get("en_key") == en_key
            and (build_dir / "html" / "index.html").exists()):
        print("Sphinx: nothing the English site is made from changed: kept as built")
        returncode = 0
    else:
        returncode = sphinx(root, the_plan.every_page)
    seconds = time.perf_counter() - sphinx_started
    # the Chinese edition is due, every page of it when the English site was rebuilt whole
    zh_every = bool(the_plan.every_page) or bool(last.get("zh_every_page"))
    state_file.write_text(json.dumps({
        "ok": returncode == 0, "package_key": the_plan.package_key, "site_key": site_key, "package": pkg,
        "zh_every_page": zh_every, "en_key": en_key if returncode == 0 else None,
    }))
    zh_seconds = 0.0
    if returncode == 0 and edition == "both":   # from the English build's outputs (scripts/i18n.py)
        zh_started = time.perf_counter()
        returncode = build_chinese(root)
        zh_seconds = time.perf_counter() - zh_started
    total = time.perf_counter() - started
    print(
        f"make book: {len(todo)} executed, {len(the_plan.chapters) - len(todo)} from cache "
        f"({executed:.1f} s); Sphinx {seconds:.1f} s; "
        + (f"Chinese edition {zh_seconds:.1f} s; " if edition == "both" else "Chinese edition not built; ")
        + f"total {total:.1f} s" + ("" if returncode == 0 else f"; FAILED (exit {returncode})")
    )
    return returncode


def build_chinese(root: Path) -> int:
    """The Chinese edition (scripts/i18n.py) after the English one, every page again when the last
    English build said so; nothing when nothing it reads changed (:func:`i18n.inputs_key`)."""
    state_file = root / "_build" / ".book_state.json"
    last = json.loads(state_file.read_text()) if state_file.exists() else {}
    if not last.get("ok"):
        print("Chinese edition: the English build has not succeeded; build it first (make book)")
        return 1
    started = time.perf_counter()
    returncode = i18n.build(root, every_page=bool(last.get("zh_every_page")))
    if returncode == 0:
        state_file.write_text(json.dumps({**last, "zh_every_page": False}))
    print(f"make book --edition zh: Chinese edition {time.perf_counter() - started:.1f} s")
    return returncode


#: The descriptor of the held ``_build/.build_book.lock`` while :func:`locked_build` runs, else None.
_LOCK_FD: int | None = None


def _start_worker(fd: int | None, build: int) -> None:
    """In each chapter-executing worker, before any chapter:

    * close the copy of the build lock that fork gave it. A ``flock`` lock lasts while any
      descriptor of it is open, so a worker left behind by a killed build (Ctrl-C, ``timeout``)
      would otherwise hold the checkout's lock until it was killed too, and the next
      ``make book`` would wait for it forever;
    * end with the build (Linux: ``PR_SET_PDEATHSIG``): a killed build's workers otherwise lived
      on, blocked writing their results to a pipe nobody read, with their kernels. A kernel ends
      by itself once its worker has gone (ipykernel watches its parent).
    """
    if fd is not None:
        os.close(fd)
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != build:  # the build died before the line above
            os._exit(1)


def chapter_pool(jobs: int) -> concurrent.futures.ProcessPoolExecutor:
    """The worker processes that execute chapters: none of them holds the build lock, and none
    outlives the build."""
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs, initializer=_start_worker, initargs=(_LOCK_FD, os.getpid()))


def locked_build(root: Path, **kwargs) -> int:
    """:func:`build`, one at a time per checkout (several authors' terminals, or test workers)."""
    import fcntl

    global _LOCK_FD
    (root / "_build").mkdir(exist_ok=True)
    with open(root / "_build" / ".build_book.lock", "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "unknown"
            print(f"make book: another build of this checkout is running (process {holder}); "
                  "waiting for it", flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        lock.seek(0)
        lock.truncate()
        lock.write(str(os.getpid()))
        lock.flush()
        _LOCK_FD = lock.fileno()
        try:
            return build(root, **kwargs)
        finally:
            _LOCK_FD = None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="execute every chapter and rebuild every page")
    parser.add_argument("--jobs", type=int, default=None, help="chapters executed at once (default: 2)")
    parser.add_argument("--edition", choices=["both", "en", "zh"], default="both",
                        help="both editions (default), the English only, or the Chinese after an English-only build")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)  # tests build copies
    args = parser.parse_args(argv)
    return locked_build(args.root.resolve(), force=args.force, jobs=args.jobs, edition=args.edition)


if __name__ == "__main__":
    sys.exit(main())
