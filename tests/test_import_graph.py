"""The package's imports form no circle, and it does not read the repository checkout.

Every ``import`` and ``from ... import`` of ``rope_edu/`` is read with ``ast`` (also those inside
functions: a deferred import still ties two modules together), as edges between the package's
modules: ``from .x import name`` is an edge to ``rope_edu.x``, ``from . import x`` to the module
``rope_edu.x`` when there is one. A package's ``__init__`` importing its own submodules is the
normal direction; a submodule importing back from its package's ``__init__`` (``from . import f``)
closes a circle and is reported like any other.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rope_edu"


def modules(package: Path = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's ``__init__``) for every module of ``package``."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of ``package`` -> the modules of ``package`` it imports."""
    found = modules(package)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in found.items():
        here = name if is_package else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in found}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[:len(here.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target in found:
                    edges |= {f"{target}.{a.name}" if f"{target}.{a.name}" in found else target for a in node.names}
        graph[name] = edges - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_package_imports_form_no_circle():
    graph = import_graph()
    assert len(graph) > 20 and "rope_edu.rope" in graph["rope_edu"]      # the walk sees the package
    found = cycles(graph)
    assert found == [], "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_translation_is_the_ground_floor():
    """rope_edu.i18n imports nothing of the package: the widgets and plots build on it."""
    assert import_graph()["rope_edu.i18n"] == set()


def test_the_cycle_finder_finds_a_circle(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from . import a\n")
    (package / "a.py").write_text("def f():\n    from .sub import b\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("from .. import a\nfrom ..c import x\n")
    (package / "c.py").write_text("x = 1\n")
    graph = import_graph(package)
    assert graph["pkg.sub.b"] == {"pkg.a", "pkg.c"}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b"]]


def test_the_package_does_not_read_the_checkout():
    """No module builds a path above the package (``parents[1]``, ``../_ext``, ``../book``): an
    installed package has no checkout around it."""
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for bad in ("parents[1]", "parent.parent", '"_ext"', '"book"', "../"):
            assert bad not in source, f"{path.relative_to(ROOT)} reads the checkout ({bad})"


def private_imports(package: Path = PACKAGE) -> list[str]:
    """Every ``from <module> import _name`` in ``package`` where ``<module>`` is another module of the
    package (a name with one leading underscore, not a dunder), and every ``module._name`` read off a
    module of the package imported as a name. A module whose own name starts with an underscore
    (``_checks``) is the package's shared room: its names carry none."""
    found = modules(package)
    out = []
    for name, (path, is_package) in found.items():
        here = name if is_package else name.rpartition(".")[0]
        aliases: dict[str, str] = {}
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[:len(here.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target not in found:
                    continue
                for a in node.names:
                    if f"{target}.{a.name}" in found:
                        aliases[a.asname or a.name] = f"{target}.{a.name}"
                    elif a.name.startswith("_") and not a.name.startswith("__") and target != name:
                        out.append(f"{path.relative_to(package.parent)}:{node.lineno} imports {a.name} from {target}")
            elif isinstance(node, ast.Import):
                aliases.update({(a.asname or a.name): a.name for a in node.names if a.name in found and a.asname})
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                out.append(f"{path.relative_to(package.parent)}:{node.lineno} reads {node.value.id}.{node.attr}")
    return out


def test_no_module_imports_another_modules_underscore_names():
    """A name another module uses is public within the package (no leading underscore): an
    underscore says "only this module reads it", which a reader of the module can then trust."""
    found = private_imports()
    assert found == [], "underscore names shared between modules: " + "; ".join(found)


def test_the_underscore_check_finds_a_shared_private_name(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def _helper():\n    pass\n\n\ndef public():\n    pass\n")
    (package / "b.py").write_text("from .a import _helper, public\nfrom . import a\n\n\ndef f():\n    return a._helper\n")
    assert private_imports(package) == ["pkg/b.py:1 imports _helper from pkg.a", "pkg/b.py:6 reads a._helper"]
