"""The Chinese site (``scripts/i18n.py build``): its Jupyter Book configuration, the search's
dictionary, the build itself (kept when nothing it reads changed), the static files shared with the
English site and the plots' Chinese labels."""

from __future__ import annotations

import filecmp
import json
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


#: The Chinese site's folders whose files the English site may hold byte for byte (then shared).
SHAREABLE = ("_static", "_images", "wheels", "binder")


def _signature(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _point_up(page: Path, site: Path, shared: set[str]) -> None:
    """Point the Chinese page's references to shared files at the English copy, one folder up."""
    here = page.parent
    text = page.read_text(encoding="utf-8")

    def up(m: re.Match) -> str:
        target = Path(os.path.normpath(here / m.group(2)))
        try:
            rel = target.relative_to(site).as_posix()
        except ValueError:
            return m.group(0)
        return m.group(1) + "../" + m.group(2) if rel in shared else m.group(0)

    page.write_text(_URL.sub(up, text), encoding="utf-8")


def publish(built: Path, site: Path, en: Path, record: Path, *, every_page: bool = False) -> tuple[int, int, int]:
    """Bring the Chinese build's pages ``built`` into ``site`` (``_build/html/zh``): each file
    copied, a plot's labels translated (``translate_svg``: text kept as text, the Chinese font it
    needs embedded; a plot no message matches stays the English one), a file under :data:`SHAREABLE`
    that the English site ``en`` has byte for byte deleted and the pages pointed at the English
    copy. Only what changed since the last time is done again: a file whose size and time, and its
    English twin's, are those in ``record`` (a JSON file) and whose result is still in ``site``;
    ``every_page`` does all. Returns (bytes shared, plots with Chinese labels, files done)."""
    last = {} if every_page or not record.is_file() else json.loads(record.read_text())
    before = last.get("files", {})
    if not before:
        shutil.rmtree(site, ignore_errors=True)
    files, done = {}, 0
    for path in sorted(p for p in built.rglob("*") if p.is_file()):
        rel = path.relative_to(built).as_posix()
        twin = en / rel if rel.split("/", 1)[0] in SHAREABLE else None
        sig = [_signature(path), _signature(twin) if twin else None]
        kept = before.get(rel)
        if kept and kept[0] == sig and (kept[1] or (site / rel).is_file()):
            files[rel] = kept
            continue
        target = site / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        done += 1
        is_plot = False
        if rel.startswith("_images/") and rel.endswith(".svg"):
            svg = target.read_text(encoding="utf-8")
            out = translate_svg(svg, LANG)
            if out != svg:
                target.write_text(out, encoding="utf-8")
                is_plot = True
        is_shared = twin is not None and twin.is_file() and filecmp.cmp(target, twin, shallow=False)
        if is_shared:
            target.unlink()
        files[rel] = [sig, is_shared, is_plot, sig[0][0]]
    for rel in set(before) - set(files):
        (site / rel).unlink(missing_ok=True)
    shared = {rel for rel, entry in files.items() if entry[1]}
    # the pages copied again above, and every page when what is shared changed
    every = set(last.get("shared", [])) != shared
    for rel, entry in files.items():
        if rel.endswith(".html") and not entry[1] and (every or before.get(rel) is not entry):
            if before.get(rel) is entry:   # kept, already pointed: from the build again
                shutil.copyfile(built / rel, site / rel)
                done += 1
            _point_up(site / rel, site, shared)
    for folder in sorted((d for d in site.rglob("*") if d.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    record.write_text(json.dumps({"files": files, "shared": sorted(shared)}))
    saved = sum(entry[3] for entry in files.values() if entry[1])
    return saved, sum(entry[2] for entry in files.values()), done


#: What the Chinese build reads besides the English build's outputs (those are keyed below by the
#: output cache's records): sources, catalogs, extensions, the package and this script.
ZH_INPUTS = ["notebooks/*.ipynb", "book/**/*", "_config.yml", "_toc.yml", "_ext/**/*", f"{LOCALES}/**/*",
             "rope_edu/**/*", "scripts/i18n*.py", "requirements.txt"]


#: Files that builds write beside the sources they are made from, left out of :func:`inputs_key`:
#: Python's bytecode, and the ``.mo`` catalogs Sphinx compiles from the ``.po`` ones (in the key)
#: while it builds the Chinese edition. With the ``.mo`` files counted, the first `make book` after
#: one that compiled them (a fresh checkout's) found the key changed and built the Chinese edition
#: again, though nothing had changed (7.1 s of a 7.7 s no-change build, 2026-12).
DERIVED = (".pyc", ".mo")


def inputs_key(root: Path, patterns: list[str] = ZH_INPUTS) -> str:
    """A digest of everything an edition is made from: the files ``patterns`` match (default
    :data:`ZH_INPUTS`, the Chinese edition's) and the English build's executed outputs (the
    records of ``_build/.jupyter_cache``). scripts/build_book.py keys the English site on it too."""
    import hashlib

    digest = hashlib.sha256()
    files = sorted({p for pattern in patterns for p in root.glob(pattern)
                    if p.is_file() and "__pycache__" not in p.parts and p.suffix not in DERIVED})
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
    saved, plots, done = publish(out / "_build" / "html", site, root / "_build" / "html",
                                 out / ".published.json", every_page=every_page)
    print(f"Chinese edition in _build/html/{SUBDIR} ({saved / 1e6:.1f} MB of static files shared with the English, "
          f"{plots} plots with Chinese labels; {done} files published again)")
    stamp.write_text(key)
    return 0
