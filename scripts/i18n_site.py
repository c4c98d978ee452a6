"""The Chinese site (``scripts/i18n.py build``): its Jupyter Book configuration, the search's
dictionary, the build itself (kept when nothing it reads changed), the static files shared with the
English site and the plots' Chinese labels."""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from i18n_common import LANG, LOCALES, SEARCH_DICT, SUBDIR, TERMS, load_terms
from i18n_fonts import translate_svg
from rope_edu.i18n import HAN_RANGE


# --- configuration -------------------------------------------------------------------------------

def config(root: Path, *, gettext: bool = False) -> dict:
    """The Chinese edition's Jupyter Book configuration, made from ``_config.yml``."""
    cfg = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    sphinx = cfg.setdefault("sphinx", {})
    # a configuration file outside the root: extension folders given absolutely
    sphinx["local_extensions"] = {k: str((root / v).resolve()) + "/" for k, v in sphinx.get("local_extensions", {}).items()}
    extra = sphinx.setdefault("config", {})
    extra["gettext_compact"] = False
    extra["gettext_uuid"] = False
    extra["gettext_location"] = False
    if gettext:
        cfg.setdefault("execute", {})["execute_notebooks"] = "off"
        return cfg
    extra.update({
        "language": LANG,
        "locale_dirs": [str((root / LOCALES).resolve())],
        "gettext_allow_fuzzy_translations": False,
        "html_search_language": "zh",
        # the Chinese reader notebooks, opened by the Chinese pages' Colab and Binder buttons
        "reader_notebooks_edition": f"{SUBDIR}/",
        # jieba splits the text into words for the search index; it knows the book's terms
        # (位置编码, 外推, ...) from the term table, else it cuts them into characters or pairs; the
        # query is cut the same way, with the table's other names for its terms (_ext/editions.py)
        "html_search_options": {"dict": str((root / SEARCH_DICT).resolve()), "terms": str((root / TERMS).resolve())},
        # sphinx-togglebutton's hint on proofs, solutions and other dropdowns
        "togglebutton_hint": "点击展开",
        "togglebutton_hint_hide": "点击收起",
        # the footer's date: 2026 年 12 月 2 日 (Sphinx's Chinese default pads: 12 月 02 日)
        "html_last_updated_fmt": "%Y 年 %-m 月 %-d 日",
    })
    cfg["title"] = "RoPE 旋转位置编码：从第一性原理讲起"
    cfg["author"] = "rope-edu 作者"  # the footer's "By ..." and copyright line
    # the English build's executed outputs: the same cache, nothing executed again
    cfg.setdefault("execute", {})["cache"] = str((root / "_build" / ".jupyter_cache").resolve())
    html = cfg.setdefault("html", {})
    html["baseurl"] = html.get("baseurl", "").rstrip("/") + f"/{SUBDIR}/" if html.get("baseurl") else ""
    return cfg


def _jupyter_book(root: Path, cfg: dict, out: Path, *extra: str) -> int:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "_config.yml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False), encoding="utf-8")
    jb = Path(sys.executable).with_name("jupyter-book")
    # as make book runs it (scripts/build_book.py): a chapter executed here (its English outputs not
    # cached) writes the figures' static markup, not live widgets
    env = {**os.environ, "ROPE_EDU_STATIC": "1", "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([str(jb), "build", "--path-output", str(out), "--config", str(path), *extra, str(root)],
                          cwd=root, env=env).returncode


def write_search_dict(root: Path) -> int:
    """jieba's dictionary of the term table's Chinese terms (those written without spaces: jieba
    reads a line as "word [frequency] [tag]"); returns how many."""
    words = sorted({zh for _, zh, _ in load_terms(root) if re.fullmatch(f"[{HAN_RANGE}\\w-]+", zh)})
    path = root / SEARCH_DICT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{w}\n" for w in words), encoding="utf-8")
    return len(words)


# --- the Chinese site ----------------------------------------------------------------------------

_URL = re.compile(r'((?:href|src)=")([^"#?:]+)')


def _share(en: Path, zh: Path) -> int:
    """Delete from the Chinese site every file under _static/ and _images/ that the English site
    has byte for byte, and point the Chinese pages at the English copy; returns bytes saved. The
    package's wheel and Binder's environment (wheels/, binder/) are the English site's too: the
    Chinese reader notebooks install that wheel, and Binder reads the branch's root."""
    shared: set[Path] = set()
    saved = 0
    for folder in ("_static", "_images", "wheels", "binder"):
        for path in sorted((zh / folder).rglob("*")):
            twin = en / path.relative_to(zh)
            if path.is_file() and twin.is_file() and filecmp.cmp(path, twin, shallow=False):
                shared.add(path.relative_to(zh))
                saved += path.stat().st_size
                path.unlink()
        for path in sorted((zh / folder).rglob("*"), reverse=True) + [zh / folder]:
            if path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    for page in zh.rglob("*.html"):
        here = page.parent
        text = page.read_text(encoding="utf-8")

        def up(m: re.Match) -> str:
            target = Path(os.path.normpath(here / m.group(2)))
            try:
                rel = target.relative_to(zh)
            except ValueError:
                return m.group(0)
            return m.group(1) + "../" + m.group(2) if rel in shared else m.group(0)

        page.write_text(_URL.sub(up, text), encoding="utf-8")
    return saved


def translate_plots(root: Path, site: Path) -> int:
    """The plots of the Chinese site (SVG, text kept as text) with their labels through the figure
    catalog and the Chinese font they need embedded (translate_svg); returns how
    many changed. A plot no message matches stays byte for byte the English one (and is shared)."""
    changed = 0
    for path in sorted((site / "_images").glob("*.svg")):
        svg = path.read_text(encoding="utf-8")
        out = translate_svg(svg, LANG)
        if out != svg:
            path.write_text(out, encoding="utf-8")
            changed += 1
    return changed


#: What the Chinese build reads besides the English build's outputs (those are keyed below by the
#: output cache's records): sources, catalogs, extensions, the package and this script.
ZH_INPUTS = ["notebooks/*.ipynb", "book/**/*", "_config.yml", "_toc.yml", "_ext/**/*", f"{LOCALES}/**/*",
             "rope_edu/**/*", "scripts/i18n*.py", "requirements.txt"]


def inputs_key(root: Path, patterns: list[str] = ZH_INPUTS) -> str:
    """A digest of everything an edition is made from: the files ``patterns`` match (default
    :data:`ZH_INPUTS`, the Chinese edition's) and the English build's executed outputs (the
    records of ``_build/.jupyter_cache``). scripts/build_book.py keys the English site on it too."""
    import hashlib

    digest = hashlib.sha256()
    files = sorted({p for pattern in patterns for p in root.glob(pattern)
                    if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"})
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    cache = root / "_build" / ".jupyter_cache"
    if cache.exists():
        digest.update(os.path.realpath(cache).encode())
        # the executed notebooks only: jupyter-cache's database is rewritten whenever a record is
        # read (its "accessed" time), so a build that only read the outputs would change the key
        for record in sorted(cache.rglob("*.ipynb")):
            digest.update(f"{record.relative_to(cache)}:{record.stat().st_size}:{record.stat().st_mtime_ns}".encode())
    return digest.hexdigest()[:20]


def build(root: Path, *, every_page: bool = False) -> int:
    out = root / "_build" / "zh"
    if not (root / LOCALES / LANG).is_dir():
        print("Chinese edition: no catalogs (python scripts/i18n.py update)")
        return 0
    stamp = out / ".inputs_key"
    key = inputs_key(root)
    site = root / "_build" / "html" / SUBDIR
    if not every_page and stamp.is_file() and stamp.read_text() == key and (site / "index.html").exists():
        print("Chinese edition: nothing it reads changed (sources, catalogs, outputs): kept as built")
        return 0
    stamp.unlink(missing_ok=True)
    if every_page:
        # every page again; the pictures of the Chinese figures (keyed on what they show) are kept
        for stale in (out / "_build").glob("*"):
            if stale.name != ".reader_figures":
                shutil.rmtree(stale) if stale.is_dir() and not stale.is_symlink() else stale.unlink()
    # formulas are not translated: the English build's MathML cache (_ext/book_math.py) serves both
    mathml = root / "_build" / "rope_mathml.json"
    if mathml.is_file():
        (out / "_build").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(mathml, out / "_build" / mathml.name)
    # the reader notebooks' pictures (_ext/reader_notebooks.py) are keyed on what they show: the
    # plots are the same in both editions, so the English build's pictures are not taken again
    pictures = root / "_build" / ".reader_figures"
    if pictures.is_dir():
        cache = out / "_build" / pictures.name
        cache.mkdir(parents=True, exist_ok=True)
        for picture in pictures.iterdir():
            if not (cache / picture.name).exists():
                shutil.copyfile(picture, cache / picture.name)
    # the package's wheel: the English build's (the Chinese notebooks install the one published
    # with the English site; the same file is then shared, not published twice)
    wheels = root / "_build" / ".reader_wheels"
    if wheels.is_dir():
        shutil.rmtree(out / "_build" / wheels.name, ignore_errors=True)
        shutil.copytree(wheels, out / "_build" / wheels.name)
    write_search_dict(root)
    status = _jupyter_book(root, config(root), out, "-W", "-n", "--keep-going")
    if status:
        return status
    site = root / "_build" / "html" / SUBDIR
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(out / "_build" / "html", site)
    plots = translate_plots(root, site)
    saved = _share(root / "_build" / "html", site)
    print(f"Chinese edition in _build/html/{SUBDIR} ({saved / 1e6:.1f} MB of static files shared with the English, "
          f"{plots} plots with Chinese labels)")
    stamp.write_text(key)
    return 0
