"""``make test``'s ``--dist loadgroup`` keeps an ``xdist_group`` on one worker (conftest's
``_keep_with_its_group``), and leaves ungrouped tests dealt to both: run on a scratch project with
two real pytest-xdist workers and this repository's hook."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist")

CONFTEST = Path(__file__).with_name("conftest.py")

pytestmark = pytest.mark.slow  # two worker processes: seconds

PROJECT = {
    "conftest.py": f'''
import importlib.util

_spec = importlib.util.spec_from_file_location("rope_conftest", {str(CONFTEST)!r})
_rope = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_rope)


def pytest_collection_modifyitems(config, items):
    for item in items:
        _rope._keep_with_its_group(config, item)
''',
    "test_grouped.py": '''
import os, pathlib, time, pytest

pytestmark = pytest.mark.xdist_group("model")


@pytest.mark.parametrize("i", range(8))
def test_in_the_group(i):
    time.sleep(0.05)
    pathlib.Path(f"grouped_{i}").write_text(os.environ["PYTEST_XDIST_WORKER"])
''',
    "test_free.py": '''
import os, pathlib, time, pytest


@pytest.mark.parametrize("i", range(8))
def test_dealt_out(i):
    time.sleep(0.3)
    pathlib.Path(f"free_{i}").write_text(os.environ["PYTEST_XDIST_WORKER"])
''',
}


def _workers(tmp_path: Path, prefix: str) -> set[str]:
    return {p.read_text() for p in tmp_path.glob(f"{prefix}_*")}


def test_a_group_runs_on_one_worker_and_the_rest_on_both(tmp_path):
    for name, text in PROJECT.items():
        (tmp_path / name).write_text(text)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                          "-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder", "--rootdir", str(tmp_path),
                          str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(list(tmp_path.glob("grouped_*"))) == 8 and len(list(tmp_path.glob("free_*"))) == 8
    assert len(_workers(tmp_path, "grouped")) == 1, "the group was split between the workers"
    assert _workers(tmp_path, "free") == {"gw0", "gw1"}, "the ungrouped tests did not use both workers"


def test_each_shared_fixture_is_a_fixture_of_its_module():
    """conftest.SHARED_FIXTURES names fixtures by module: a renamed fixture or module would drop its
    tests out of their group silently (each worker would make the fixture again)."""
    import ast

    from conftest import SHARED_FIXTURES

    for (module, fixture), group in SHARED_FIXTURES.items():
        tree = ast.parse((CONFTEST.parent / f"{module}.py").read_text(encoding="utf-8"))
        fixtures = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                    and any("fixture" in ast.unparse(d) for d in node.decorator_list)}
        assert fixture in fixtures, (module, fixture, group)
