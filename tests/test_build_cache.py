"""`make book`'s output cache never shows stale output (scripts/build_book.py).

The test builds a copy of the repository whose table of contents holds two small chapters that
print a value read from the package, then changes prose, a notebook's code and the package (and
undoes that change), rebuilding after each step with the real script, the real jupyter-cache
and the real Jupyter Book build. Each step checks what was executed, why, and what the pages show.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, probe_repository

pytestmark = [pytest.mark.book, pytest.mark.slow]

TOC = """format: jb-book
root: book/probe_intro
chapters:
  - file: notebooks/probe_a
  - file: notebooks/probe_b
  - file: book/probe_terms
"""

PROBE = 'print("probe:", getattr(rope_edu, "BUILD_PROBE", "unset"), rope_edu.frequencies(4, base=100.0))'


def _notebook(title: str, prose: str, code: str) -> dict:
    cells = [
        {"cell_type": "markdown", "id": "prose", "metadata": {}, "source": f"# {title}\n\n{prose}"},
        {"cell_type": "code", "id": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": f"# {title}: code of its own (jupyter-cache keys records on the code alone)\n"
                   f"import rope_edu\n{code}"},
    ]
    return {
        "cells": cells, "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    }


def _write(path: Path, nb: dict) -> None:
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A copy of the repository's tracked and new files, with a two-chapter table of contents."""
    root = probe_repository(tmp_path_factory.mktemp("book") / "repo", TOC, "Two chapters.")
    (root / "book" / "probe_terms.md").write_text("# Terms\n\nAn {index}`probe entry` for the search.\n")
    _write(root / "notebooks" / "probe_a.ipynb", _notebook("Chapter A", "First prose.", PROBE))
    _write(root / "notebooks" / "probe_b.ipynb", _notebook("Chapter B", "Other prose.", PROBE))
    return root


def _build(root: Path, edition: str = "en") -> str:
    """``build_book.py`` on the copy: the English site (what the cache decides), or ``"both"``
    editions in the first two steps, as `make book` builds them (the copy has no Chinese catalogs,
    so its Chinese step has nothing to build; the later steps are about the English cache)."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_book.py"), "--root", str(root), "--edition", edition],
        capture_output=True, text=True, timeout=600,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    return out


def _status(out: str) -> dict[str, str]:
    """{chapter: 'cached' | 'executed (why)'} from the script's report."""
    status = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("cached", "executed") and parts[1].startswith("notebooks/"):
            name = Path(parts[1]).stem
            status[name] = "cached" if parts[0] == "cached" else "executed " + line.split("(", 1)[1].rstrip(")")
    return status


def _page(root: Path, name: str) -> str:
    return (root / "_build" / "html" / "notebooks" / f"{name}.html").read_text(encoding="utf-8")


def _index_entries(root: Path) -> dict:
    text = (root / "_build" / "html" / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1:text.rindex(")")])["indexentries"]


def test_cache_follows_notebooks_and_package(project):
    root = project
    out = _build(root, "both")
    assert _status(out) == {"probe_a": "executed no cache", "probe_b": "executed no cache"}, out[-3000:]
    assert "probe: unset" in _page(root, "probe_a")

    # nothing changed: nothing executed, the pages are kept
    out = _build(root, "both")
    assert _status(out) == {"probe_a": "cached", "probe_b": "cached"}, out[-3000:]
    assert "Sphinx: nothing the English site is made from changed: kept as built" in out

    # one notebook's prose changed and the other's code, in one build: the first is taken from the
    # cache and its page shows the new prose; the second runs, for that reason, and shows its output
    nb = json.loads((root / "notebooks" / "probe_a.ipynb").read_text())
    nb["cells"][0]["source"] = "# Chapter A\n\nRewritten prose."
    _write(root / "notebooks" / "probe_a.ipynb", nb)
    nb = json.loads((root / "notebooks" / "probe_b.ipynb").read_text())
    nb["cells"][1]["source"] += '\nprint("second line")'
    _write(root / "notebooks" / "probe_b.ipynb", nb)
    out = _build(root)
    assert _status(out) == {"probe_a": "cached", "probe_b": "executed its code changed"}, out[-3000:]
    assert "Rewritten prose." in _page(root, "probe_a") and "First prose." not in _page(root, "probe_a")
    assert "second line" in _page(root, "probe_b")

    # the package changed a printed value: every chapter runs again and every page shows it
    init = root / "rope_edu" / "__init__.py"
    original = init.read_text(encoding="utf-8")
    init.write_text(original + '\nBUILD_PROBE = "changed-1"\n', encoding="utf-8")
    out = _build(root)
    assert _status(out) == {
        "probe_a": "executed package changed: rope_edu/__init__.py",
        "probe_b": "executed package changed: rope_edu/__init__.py",
    }, out[-3000:]
    for name in ("probe_a", "probe_b"):
        assert "probe: changed-1" in _page(root, name)

    # the change undone: no page still shows it (outputs of the earlier package state come back)
    init.write_text(original, encoding="utf-8")
    out = _build(root)
    assert _status(out) == {"probe_a": "cached", "probe_b": "cached"}, out[-3000:]
    for name in ("probe_a", "probe_b"):
        assert "probe: unset" in _page(root, name) and "changed-1" not in _page(root, name)

    # one page's prose changed, no code: that page alone is read again, and the search index keeps
    # the index entry of a page not built again (Sphinx 7.4 dropped it: _ext/sphinx_fixes.py)
    assert "probe entry" in _index_entries(root)
    nb = json.loads((root / "notebooks" / "probe_a.ipynb").read_text())
    nb["cells"][0]["source"] = "# Chapter A\n\nProse rewritten again."
    _write(root / "notebooks" / "probe_a.ipynb", nb)
    out = _build(root)
    assert "targets for 1 source files that are out of date" in out, out[-3000:]
    assert "Prose rewritten again." in _page(root, "probe_a")
    assert "probe entry" in _index_entries(root), _index_entries(root)
