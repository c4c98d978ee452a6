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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The environment the chapters run in while the static site is built (figures become bundles).
BOOK_ENV = {"ROPE_EDU_STATIC": "1", "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1"}
KEEP_CACHES = 4  # package states whose outputs are kept (the newest used)


def _files(root: Path, patterns: list[str]) -> list[Path]:
    found: set[Path] = set()
    for pattern in patterns:
        found.update(p for p in root.glob(pattern) if p.is_file())
    return sorted(p for p in found if "__pycache__" not in p.parts and p.suffix != ".pyc")


def package_files(root: Path) -> list[Path]:
    """Everything a chapter's outputs can depend on besides its own code."""
    return _files(root, ["rope_edu/**/*", "requirements.txt", "pyproject.toml"])


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

    nb = nbformat.read(path, as_version=4)
    result = single_nb_execution(nb, cwd=str(Path(path).parent), timeout=timeout, allow_errors=False)
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


def build(root: Path, *, force: bool = False, jobs: int | None = None) -> int:
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    started = time.perf_counter()
    os.environ.update(BOOK_ENV)
    # the kernels and Sphinx import this checkout's package, whatever is installed
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))

    build_dir = root / "_build"
    caches = build_dir / ".jupyter_caches"
    state_file = build_dir / ".book_state.json"
    state = json.loads(state_file.read_text()) if state_file.exists() else {}

    pkg = manifest(root, package_files(root))
    pkg_key = key_of(pkg)
    site_key = key_of(manifest(root, site_files(root)))
    folder = caches / pkg_key
    if force and folder.exists():
        shutil.rmtree(folder)
    new_folder = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    os.utime(folder)  # newest used: kept by _prune
    _link_cache(build_dir, folder)
    _prune(caches, folder)
    cache = get_cache(str(folder))

    if force:
        why_new = "--force"
    elif new_folder and state.get("package"):
        why_new = "package changed: " + _short(changed_files(state["package"], pkg))
    else:
        why_new = "no cache"
    known_uris = {r.uri for r in cache.list_cache_records()}

    notebooks = toc_notebooks(root)
    todo: list[tuple[Path, str]] = []
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        try:
            record = cache.match_cache_notebook(nb)
        except KeyError:
            record = None
        name = path.relative_to(root).as_posix()
        if record is not None:
            seconds = record.data.get("execution_seconds")
            took = f", ran {seconds:.1f} s" if seconds is not None else ""
            print(f"  cached    {name}  (outputs of {record.created:%Y-%m-%d %H:%M}{took})")
        else:
            reason = "its code changed" if str(path) in known_uris else why_new
            todo.append((path, reason))

    failed = []
    if todo:
        jobs = jobs or min(len(todo), os.cpu_count() or 1, 2)
        print(f"Executing {len(todo)} of {len(notebooks)} chapters, {jobs} at a time:")
        timeout = execution_timeout(root)
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(_execute, str(p), timeout): (p, why) for p, why in todo}
            for future in concurrent.futures.as_completed(futures):
                path, why = futures[future]
                name = path.relative_to(root).as_posix()
                text, seconds, error = future.result()
                if error:
                    failed.append(name)
                    print(f"  FAILED    {name}  after {seconds:.1f} s ({why})\n{error[-3000:]}")
                    continue
                cache.cache_notebook_bundle(
                    CacheBundleIn(nbformat.reads(text, as_version=4), str(path), data={"execution_seconds": seconds}),
                    check_validity=False, overwrite=True,
                )
                print(f"  executed  {name}  in {seconds:.1f} s ({why})")
    executed = time.perf_counter() - started
    if failed:
        print(f"make book: {len(failed)} chapter(s) failed to execute: {', '.join(failed)}")
        state_file.write_text(json.dumps({**state, "ok": False}))
        return 1

    html = build_dir / "html"
    full_reasons = []
    if force:
        full_reasons.append("--force")
    if not (html / "index.html").exists() or not state:
        full_reasons.append("no earlier build")
    elif not state.get("ok"):
        full_reasons.append("the last build failed")
    if state.get("package_key") not in (None, pkg_key):
        full_reasons.append("package changed")
    if state.get("site_key") not in (None, site_key):
        full_reasons.append("_config.yml, _toc.yml or _ext/ changed")
    if any(why != "its code changed" for _, why in todo) and not full_reasons:
        full_reasons.append("outputs re-executed")
    if full_reasons:
        for stale in ("html", ".doctrees", "jupyter_execute"):
            shutil.rmtree(build_dir / stale, ignore_errors=True)
        print(f"Sphinx: every page ({'; '.join(full_reasons)})")
    else:
        print("Sphinx: only pages whose source changed")

    jb = Path(sys.executable).with_name("jupyter-book")
    sphinx_started = time.perf_counter()
    result = subprocess.run([str(jb), "build", "-W", "-n", "--keep-going", str(root)], cwd=root)
    sphinx = time.perf_counter() - sphinx_started
    state_file.write_text(json.dumps({
        "ok": result.returncode == 0, "package_key": pkg_key, "site_key": site_key, "package": pkg,
    }))
    total = time.perf_counter() - started
    print(
        f"make book: {len(todo)} executed, {len(notebooks) - len(todo)} from cache "
        f"({executed:.1f} s); Sphinx {sphinx:.1f} s; total {total:.1f} s"
        + ("" if result.returncode == 0 else f"; Sphinx FAILED (exit {result.returncode})")
    )
    return result.returncode


def locked_build(root: Path, **kwargs) -> int:
    """:func:`build`, one at a time per checkout (several authors' terminals, or test workers)."""
    import fcntl

    (root / "_build").mkdir(exist_ok=True)
    with open(root / "_build" / ".build_book.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("make book: another build of this checkout is running; waiting for it", flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        return build(root, **kwargs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="execute every chapter and rebuild every page")
    parser.add_argument("--jobs", type=int, default=None, help="chapters executed at once (default: 2)")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)  # tests build copies
    args = parser.parse_args(argv)
    return locked_build(args.root.resolve(), force=args.force, jobs=args.jobs)


if __name__ == "__main__":
    sys.exit(main())
