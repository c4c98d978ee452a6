"""Where the reader notebooks are published and what is published beside them: the repository's
branch Colab, Binder and the set-up cell read (:class:`Published`), the package's wheel
(:func:`publish_wheel`) and Binder's environment (:func:`write_binder`)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from sphinx.application import Sphinx

#: What the package's wheel is built from (pyproject.toml names README.md and LICENSE).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "rope_edu")
WHEEL_FOLDER = "wheels"


class Published:
    """Where the built site is published: ``reader_notebooks_branch`` of the book's GitHub
    repository (``repository.url``). Colab opens the notebooks there, Binder builds from there, and
    the set-up cell installs the wheel from there: one setting for all three."""

    def __init__(self, repository_url: str, branch: str) -> None:
        parts = urlparse(repository_url)
        path = parts.path.strip("/").removesuffix(".git").split("/")
        if parts.netloc != "github.com" or len(path) != 2 or not branch:
            raise ValueError(f"reader notebooks: repository.url must be https://github.com/<owner>/<name> and "
                             f"reader_notebooks_branch set, got {repository_url!r} and {branch!r}")
        self.owner, self.repo = path
        self.branch = branch

    def raw(self, path: str) -> str:
        """The URL of ``path`` of the published site, as a file of the branch."""
        return f"https://raw.githubusercontent.com/{self.owner}/{self.repo}/{self.branch}/{path}"

    def colab(self, path: str) -> str:
        return f"https://colab.research.google.com/github/{self.owner}/{self.repo}/blob/{self.branch}/{path}"

    def binder(self, binderhub: str, interface: str, path: str) -> str:
        return f"{binderhub}/v2/gh/{self.owner}/{self.repo}/{self.branch}?urlpath={interface}/{path}"


def digest(paths: list[Path], root: Path) -> str:
    return digest_bytes((path.relative_to(root).as_posix(), path.read_bytes()) for path in paths)


def digest_bytes(named) -> str:
    """A digest of ``(name, bytes)`` pairs."""
    h = hashlib.sha256()
    for name, data in named:
        h.update(name.encode() + b"\0" + data + b"\0")
    return h.hexdigest()[:16]


def files_under(root: Path, names) -> list[Path]:
    out = []
    for name in names:
        path = root / name
        if path.is_dir():
            out += [p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
        elif path.exists():
            out.append(path)
    return sorted(out)


def publish_wheel(app: Sphinx) -> str:
    """Build rope_edu's wheel from this checkout (cached by its files) into the site's ``wheels/``;
    returns its path in the site."""
    root = Path(app.srcdir)
    build = Path(app.outdir).parent
    key = digest(files_under(root, WHEEL_SOURCES), root)
    cache = build / ".reader_wheels" / key
    wheels = sorted(cache.glob("rope_edu-*.whl")) if cache.exists() else []
    if len(wheels) != 1:
        shutil.rmtree(build / ".reader_wheels", ignore_errors=True)
        with tempfile.TemporaryDirectory(prefix="rope_edu_wheel_") as tmp:
            src = Path(tmp) / "src"
            src.mkdir()
            for name in WHEEL_SOURCES:
                path = root / name
                if path.is_dir():
                    shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
                elif path.exists():
                    shutil.copy2(path, src / name)
            cache.mkdir(parents=True)
            # the build backend of this environment (no download): the wheel is the same either way
            subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                            "--wheel-dir", str(cache), str(src)], check=True, capture_output=True)
        wheels = sorted(cache.glob("rope_edu-*.whl"))
    folder = Path(app.outdir) / WHEEL_FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copy2(wheels[0], folder / wheels[0].name)
    return f"{WHEEL_FOLDER}/{wheels[0].name}"


def write_binder(app: Sphinx, wheel: str) -> Path:
    """Binder's environment for the published branch: the repository's, with the package taken from
    the published wheel (repo2docker installs it from the repository root, after copying the site)."""
    source = Path(app.srcdir) / "binder" / "requirements.txt"
    lines = source.read_text(encoding="utf-8").splitlines()
    editable = [i for i, line in enumerate(lines) if line.strip() == "-e ."]
    if len(editable) != 1:
        raise ValueError(f"{source}: expected one `-e .` line (the package), to publish as its wheel")
    lines[editable[0]] = f"./{wheel}"
    lines = [
        "# Binder's environment for the published site (written by _ext/reader_notebooks.py from the",
        "# repository's binder/requirements.txt): rope_edu from the wheel published beside the notebooks.",
        *(line for line in lines if not line.startswith("#")),
    ]
    target = Path(app.outdir) / "binder" / "requirements.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target
