"""The gates a maintainer relies on: ruff on the code, mypy on the package, one version number.

Both tools are configured in pyproject.toml ([tool.ruff], [tool.mypy]) and pinned in
requirements.txt; ``make lint`` runs the same two commands. mypy keeps its cache in .mypy_cache
(git-ignored): a warm run takes a few seconds, a cold one (a fresh clone in CI) well under a minute.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tomllib

import pytest

from conftest import ROOT


def _run(tool: str, *args: str) -> subprocess.CompletedProcess:
    if importlib.util.find_spec(tool) is None:
        if os.environ.get("CI"):
            pytest.fail(f"{tool} is not installed and CI is set (requirements.txt pins it)")
        pytest.skip(f"{tool} is not installed (pip install -r requirements.txt)")
    return subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    out = _run("ruff", "check", "--no-cache", "rope_edu", "scripts", "tests", "_ext")
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


def test_mypy_finds_nothing_in_the_package():
    out = _run("mypy", "rope_edu")
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


def test_one_version_number():
    """pyproject.toml states the version; the package reads it from its installed metadata."""
    import rope_edu

    stated = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert rope_edu.__version__ == stated
    assert f'"{stated}"' not in (ROOT / "rope_edu" / "__init__.py").read_text(encoding="utf-8")


def test_the_package_says_it_is_typed():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert (ROOT / "rope_edu" / "py.typed").is_file()
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["rope_edu"]


def test_the_readme_installs_this_version():
    """README.md names the published wheel by its file name, which carries the version: the same
    as pyproject.toml's (review of issue 43, item 18)."""
    import re

    stated = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    named = re.findall(r"wheels/rope_edu-([0-9][^-]*)-py3-none-any\.whl", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert named and set(named) == {stated}, (named, stated)
