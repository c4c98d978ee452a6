"""Every distribution the code imports is declared: the package's run-time imports in
pyproject.toml's dependencies (or its extras), the build's, the scripts', the benchmarks' and the
tests' in requirements.txt, except the few named below with the reason they need no line."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import ROOT

#: Imported but not declared, with the declared distribution that brings them and why that is enough.
THROUGH = {
    # rope_edu.plots / rope_edu.widgets: every call they make exists at ipywidgets 7.6.4's own bounds
    # (ipython>=4, traitlets>=4.3.1); declaring them would need lower-bound pins below the ones
    # Colab's kernel (ipykernel 6.17.1) admits
    "ipython": "ipywidgets",
    "traitlets": "ipywidgets",
    # rope_edu.plots: optional (inside try/except), the inline backend of IPython kernels
    "matplotlib-inline": "ipykernel",
    # _ext/: the Sphinx and docutils of jupyter-book (its range holds them)
    "sphinx": "jupyter-book",
    "docutils": "jupyter-book",
}
FOLDERS = {"rope_edu": "pyproject", "_ext": "requirements", "scripts": "requirements",
           "benchmarks": "requirements", "tests": "requirements"}


def _local_names() -> set[str]:
    names = {"rope_edu"}
    for folder in FOLDERS:
        names |= {p.stem for p in (ROOT / folder).rglob("*.py")}
        names |= {p.name for p in (ROOT / folder).rglob("*") if p.is_dir()}
    return names


def imported(folder: str) -> dict[str, set[str]]:
    """{top-level module: files} of the absolute imports outside the standard library."""
    local = _local_names()
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and top not in local:
                    found.setdefault(top, set()).add(path.relative_to(ROOT).as_posix())
    return found


def declared() -> dict[str, set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    package = [*project["dependencies"], *(r for extra in project.get("optional-dependencies", {}).values()
                                          for r in extra)]
    lines = [re.split(r"\s#", line, maxsplit=1)[0].strip()
             for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()]
    build = [line for line in lines if line and not line.startswith("#")]
    name = lambda r: canonicalize_name(Requirement(r).name)  # noqa: E731
    return {"pyproject": {name(r) for r in package}, "requirements": {name(r) for r in build}}


def test_every_import_is_declared():
    dists = packages_distributions()
    names = declared()
    allowed = {"pyproject": names["pyproject"], "requirements": names["requirements"] | names["pyproject"]}
    missing = []
    for folder, where in FOLDERS.items():
        for module, files in sorted(imported(folder).items()):
            candidates = {canonicalize_name(d) for d in dists.get(module, [])}
            assert candidates, f"{module} (imported by {sorted(files)[0]}) is not installed"
            if not candidates & (allowed[where] | THROUGH.keys()):
                missing.append(f"{module} ({'/'.join(sorted(candidates))}) imported by {sorted(files)[:2]}: "
                               f"declare it in {'pyproject.toml' if where == 'pyproject' else 'requirements.txt'}")
    assert not missing, "\n".join(missing)


def _closure(dist: str) -> set[str]:
    """The installed distributions ``dist`` depends on, directly or not (extras left out)."""
    from importlib.metadata import PackageNotFoundError, requires

    seen, todo = set(), [dist]
    while todo:
        try:
            reqs = requires(todo.pop()) or []
        except PackageNotFoundError:
            continue
        for r in map(Requirement, reqs):
            name = canonicalize_name(r.name)
            if (r.marker is None or r.marker.evaluate({"extra": ""})) and name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def test_what_comes_through_another_distribution_is_still_brought_by_it():
    """Each entry of THROUGH is installed as a dependency of the declared distribution it names."""
    names = declared()
    for dist, parent in THROUGH.items():
        assert parent in names["pyproject"] | names["requirements"], f"{parent} is no longer declared"
        assert dist in _closure(parent), f"{parent} no longer brings {dist}: declare {dist} itself"
