"""The lower-bound environment: rope_edu installed from its built wheel next to the lowest versions
of its dependencies that pyproject.toml declares (``tests/lower-bounds.txt``), with the kernel Colab
ships. ``tests/test_reader_notebooks.py`` runs every reader notebook in it.

There are two: one on the Python running the tests (3.11 here), with everything the chapters
import, and one on the lowest Python that ``requires-python`` admits (3.10), where it is installed,
with the lines of ``tests/lower-bounds.txt`` whose environment markers admit it (no torch: the only
torch that installs without a download of several GB is the 3.11 wheel on this machine's disk).

Building one takes a minute or two (the registries, and torch from this machine's disk), so each is
cached under ``~/.cache/rope-edu/lower-bounds/<key>/``, the key being a hash of
``tests/lower-bounds.txt`` and of the Python that builds it; a new key replaces the old cache.
``make test`` starts ``python tests/lower_bounds.py`` in the background, so that a cold build
overlaps the book build; the test waits for it (one lock per key) or builds it itself.

Each test run then makes its own copy of the cached environment (hard links: about a second, no
space) and installs the package into it from a wheel built from a copy of the package's files, with
no index: pip resolves the wheel's declared dependencies against the environment, so a bound raised
in pyproject.toml above ``tests/lower-bounds.txt`` fails here, not on a reader's machine.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import fcntl
import functools
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "tests" / "lower-bounds.txt"
CACHE = Path(os.environ.get("ROPE_EDU_CACHE", Path.home() / ".cache" / "rope-edu")) / "lower-bounds"
#: What the wheel is built from: the package and the files pyproject.toml names.
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "rope_edu")
KERNEL_NAME = "rope-edu-lower-bounds"
#: Where a background build (``make test``) writes its log.
LOG = CACHE / "build.log"


def pins(python_version: str | None = None) -> dict[str, str]:
    """``{name: version}`` of the ``name==version`` lines of tests/lower-bounds.txt whose
    environment marker admits Python ``python_version`` ("3.10"; default: this Python)."""
    from packaging.requirements import Requirement

    python_version = python_version or f"{sys.version_info[0]}.{sys.version_info[1]}"
    out = {}
    for line in PINS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        specs = list(req.specifier)
        if len(specs) != 1 or specs[0].operator != "==":
            raise ValueError(f"{PINS.name}: every line pins one version (name==version), got {line!r}")
        if req.marker is None or req.marker.evaluate({"python_version": python_version}):
            out[_canonical(req.name)] = specs[0].version
    return out


def minimum_python() -> str:
    """The lowest Python ``requires-python`` admits, as "3.10"."""
    import tomllib

    spec = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    match = re.fullmatch(r"\s*>=\s*(\d+)\.(\d+)\s*", spec)
    if not match:
        raise ValueError(f"requires-python = {spec!r}: expected '>=X.Y'")
    return f"{match.group(1)}.{match.group(2)}"


def find_python(version: str) -> Path | None:
    """An interpreter of Python ``version`` ("3.10") with venv: this one, one on PATH, or pyenv's."""
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == version:
        return Path(sys.executable)
    home = Path.home() / ".pyenv" / "versions"
    candidates = [shutil.which(f"python{version}"), f"/usr/bin/python{version}",
                  *sorted(glob.glob(str(home / f"{version}.*" / "bin" / f"python{version}")), reverse=True)]
    probe = f"import sys, venv; sys.exit(sys.version_info[:2] != {tuple(int(x) for x in version.split('.'))})"
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            if subprocess.run([candidate, "-c", probe], capture_output=True).returncode == 0:
                return Path(candidate)
    return None


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().strip()


def _version_of(python: Path) -> str:
    return _run([str(python), "-c", "import sys; print(sys.version)"]).stdout.strip()


def key(python: Path) -> str:
    """The cache key: the pins' bytes and the version of the Python that builds the environment
    (not its path: a fresh clone of the repository reuses the cache)."""
    h = hashlib.sha256(PINS.read_bytes())
    h.update(f"{_version_of(python)}|{sys.platform}|{os.uname().machine}".encode())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _run(args: list[str], **kw) -> subprocess.CompletedProcess:
    # pip's per-index warnings about the machine's local mirrors say nothing about this environment
    result = subprocess.run(args, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        noise = re.compile(r"^WARNING: Location '.*' is ignored", re.M)
        err = "\n".join(l for l in (result.stdout + result.stderr).splitlines() if not noise.match(l))
        raise RuntimeError(f"{' '.join(map(str, args))} failed ({result.returncode}):\n{err[-4000:]}")
    return result


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess:
    """The test venv's pip (this interpreter's pip, run against ``python``)."""
    return _run([sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", *args])


def _install_pins(python: Path) -> None:
    """tests/lower-bounds.txt into the environment of ``python``: with pip, or with uv where
    ROPE_EDU_UV names its command (.ci/run: ``uv pip install`` and the machine's package sources,
    scripts/uv_options.py), which installs the same pins in a fraction of pip's time."""
    uv = os.environ.get("ROPE_EDU_UV")
    if uv:
        _run([*shlex.split(uv), "--python", str(python), "--quiet", "-r", str(PINS)])
    else:
        _pip(python, "install", "--quiet", "-r", str(PINS))


def ensure_env(python: Path | None = None) -> Path:
    """The cached environment of tests/lower-bounds.txt on ``python`` (default: this Python),
    without rope_edu, built if missing."""
    python = python or Path(sys.executable)
    k = key(python)
    env = CACHE / k
    with _locked(CACHE / f"{k}.lock"):
        if (env / ".complete").exists():
            return env
        shutil.rmtree(env, ignore_errors=True)
        start = time.monotonic()
        _run([str(python), "-m", "venv", "--without-pip", str(env)])
        _install_pins(env / "bin" / "python")
        freeze = _pip(env / "bin" / "python", "list", "--format", "json").stdout
        (env / "freeze.json").write_text(freeze, encoding="utf-8")
        (env / ".complete").write_text(f"{time.monotonic() - start:.1f}\n", encoding="utf-8")
    _drop_other_keys(k, python)
    return env


def _drop_other_keys(k: str, python: Path) -> None:
    """Remove cached environments of earlier pins on the same Python (1-2 GB each) that nobody uses."""
    for lock in CACHE.glob("*.lock"):
        other = lock.stem
        if other == k or not re.fullmatch(r"[0-9a-f]{16}", other):
            continue
        cfg = CACHE / other / "pyvenv.cfg"
        if cfg.exists() and f"{_version_of(python).split()[0]}" not in cfg.read_text(encoding="utf-8"):
            continue  # another Python's environment
        with open(lock, "w") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(CACHE / other, ignore_errors=True)
            lock.unlink(missing_ok=True)


def build_wheel(out: Path) -> Path:
    """rope_edu's wheel, built from a copy of the files it is made of (never from a stale
    ``build/`` in the work tree) as pip builds it for a reader: in an isolated build environment
    with the build backend pyproject.toml names (not the test venv's setuptools)."""
    with tempfile.TemporaryDirectory(prefix="rope_edu_wheel_") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in WHEEL_SOURCES:
            path = ROOT / name
            if path.is_dir():
                shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            elif path.exists():
                shutil.copy2(path, src / name)
        out.mkdir(parents=True, exist_ok=True)
        _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(src)])
    wheels = sorted(out.glob("rope_edu-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one rope_edu wheel in {out}, found {wheels}")
    return wheels[0]


@functools.lru_cache(maxsize=None)
def _wheel() -> Path:
    """This process's wheel of the checkout, built once (both environments take the same one)."""
    out = Path(tempfile.mkdtemp(prefix="rope_edu_wheel_"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    return build_wheel(out)


def run_env(dest: Path, python: Path | None = None) -> Path:
    """A copy of the cached environment on ``python`` at ``dest``, with rope_edu installed from its
    wheel.

    Returns the copy's python. The copy is hard-linked (a second, no space; falls back to a real
    copy across file systems); pip only adds files to it, so the cache is never modified.
    """
    env = ensure_env(python)
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if subprocess.run(["cp", "-al", str(env), str(dest)], capture_output=True).returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(env, dest, symlinks=True)
    python = dest / "bin" / "python"
    wheel = _wheel()
    # No index: the wheel's dependencies must be met by what is installed, at the pinned bounds.
    _pip(python, "install", "--quiet", "--no-index", "--find-links", str(wheel.parent), "rope_edu")
    kernel = dest / "kernels" / KERNEL_NAME
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (rope-edu lower bounds)",
        "language": "python",
    }), encoding="utf-8")
    return python


#: Locks on the copies this process uses, held (shared) until it exits.
_HELD: list = []


def shared_run_env(run_id: str, python: Path | None = None) -> Path:
    """The copy for the test run ``run_id`` (PYTEST_XDIST_TESTRUNUID): the first worker that needs
    it makes it, the others wait and reuse it; outside xdist (``""``) each process has its own.
    ``python``: the interpreter it is built on (default: this one).

    Every process using a copy holds a shared lock on it (``<copy>.use``) until it exits, so that
    concurrent test runs never touch each other's copy; a copy nobody holds is removed when the
    next one is made. Making it is serialised by another lock (``<copy>.build``).
    """
    if not re.fullmatch(r"[0-9A-Za-z_-]+", run_id or "-"):
        raise ValueError(f"unexpected test run id {run_id!r}")
    python = python or Path(sys.executable)
    run_id = (run_id or f"solo-{os.getpid()}-{time.time_ns()}") + f"-{key(python)}"
    runs = CACHE / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    dest = runs / run_id
    use = open(runs / f"{run_id}.use", "a")
    fcntl.flock(use, fcntl.LOCK_SH)
    _HELD.append(use)
    with _locked(runs / f"{run_id}.build"):
        if not (dest / ".ready").exists():
            _drop_unused_runs(runs, keep=run_id)
            run_env(dest, python)
            (dest / ".ready").touch()
    return dest


def _drop_unused_runs(runs: Path, keep: str) -> None:
    for use_path in runs.glob("*.use"):
        if use_path.stem == keep:
            continue
        with open(use_path, "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            stale = runs / use_path.stem
            if stale.exists():  # removed in the background: tens of thousands of files
                trash = runs / f"trash-{os.getpid()}-{time.time_ns()}"
                stale.rename(trash)
                subprocess.Popen(["rm", "-rf", str(trash)], start_new_session=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            use_path.with_suffix(".build").unlink(missing_ok=True)
            use_path.unlink(missing_ok=True)


def pythons() -> dict[str, Path | None]:
    """The interpreters the lower-bound environments are built on: this one, and the lowest one
    ``requires-python`` admits (None where this machine lacks it)."""
    return {"current": Path(sys.executable), "minimum": find_python(minimum_python())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", action="store_true", help=f"write what happens to {LOG} (for make test)")
    args = parser.parse_args()
    lines, status = [], 0
    for name, python in pythons().items():
        start = time.monotonic()
        if python is None:
            lines.append(f"{name}: no Python {minimum_python()} on this machine")
            continue
        try:
            env = ensure_env(python)
            lines.append(f"{name}: lower-bound environment ready in {time.monotonic() - start:.1f} s: {env}")
        except Exception as e:  # the test builds it again and reports the error
            lines.append(f"{name}: lower-bound environment failed: {e}")
            status = 1
    if args.log:
        LOG.parent.mkdir(parents=True, exist_ok=True)
        LOG.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        print("\n".join(lines))
    sys.exit(status)


if __name__ == "__main__":
    main()
