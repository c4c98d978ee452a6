"""The Chinese edition: one source (the English chapters), gettext catalogs under locales/zh_CN/.

    python scripts/i18n.py update        # after the English changed: refresh the catalogs, list what to translate
    python scripts/i18n.py check         # untranslated or fuzzy messages, and translations that changed the maths,
                                         # roles, code spans, link targets or numbers of their English message
    python scripts/i18n.py build         # the Chinese site into _build/html/zh (make book runs it after the English)

Messages are Sphinx's: one paragraph, list item, heading or theorem title each, in MyST source
(roles, ``$...$``, backticks), parsed again after translation. Display maths blocks are messages
too; ``update`` fills them with their own text (maths is not translated). The Chinese build reads
the English build's executed outputs from the same jupyter-cache (nothing runs twice) and, once
built, shares every static file and image that is byte-for-byte the English one.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
LANG = "zh_CN"
LOCALES = "locales"
SUBDIR = "zh"   # the Chinese site: _build/html/zh/


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
    })
    cfg["title"] = "RoPE 旋转位置编码：从第一性原理讲起"
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
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([str(jb), "build", "--path-output", str(out), "--config", str(path), *extra, str(root)],
                          cwd=root, env=env).returncode


# --- catalogs ------------------------------------------------------------------------------------

def _is_math(msgid: str) -> bool:
    """A display maths block (its message is the LaTeX itself)."""
    text = msgid.strip()
    return bool(text) and "\n" in msgid and not re.search(r"[.:;,]\s*$", text.splitlines()[0]) \
        and not re.search(r"\s[a-z]{3,}\s[a-z]{3,}\s", re.sub(r"\\text\{[^}]*\}", "", text)) and "\\" in text


def update(root: Path) -> int:
    import polib
    from sphinx_intl import basic

    pot = root / "_build" / "i18n_pot"
    shutil.rmtree(pot, ignore_errors=True)
    if _jupyter_book(root, config(root, gettext=True), pot, "--builder", "custom", "--custom-builder", "gettext"):
        return 1
    basic.update(str(root / LOCALES), str(pot / "_build" / "gettext"), (LANG,))
    todo = 0
    for po_path in sorted((root / LOCALES / LANG / "LC_MESSAGES").rglob("*.po")):
        po = polib.pofile(str(po_path), wrapwidth=0)
        for entry in po:
            if _is_math(entry.msgid) and (not entry.msgstr or "fuzzy" in entry.flags):
                entry.msgstr = entry.msgid   # maths is not translated (a fuzzy match is old maths)
                if "fuzzy" in entry.flags:
                    entry.flags.remove("fuzzy")
        po.save()
        left = [e for e in po if (not e.msgstr or "fuzzy" in e.flags) and not e.obsolete]
        todo += len(left)
        if left:
            print(f"{po_path.relative_to(root)}: {len(left)} to translate")
    print(f"{todo} messages to translate")
    return 0


# --- the gate ------------------------------------------------------------------------------------

_ROLE = re.compile(r"\{[a-z:-]+\}`[^`]*`")
_CODE = re.compile(r"(?<![`{}a-z])`[^`]+`")
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
_LINK = re.compile(r"\]\(([^)\s]+)\)|<(https?://[^>]+)>")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")


def _parts(text: str) -> dict[str, list[str]]:
    roles = _ROLE.findall(text)
    rest = _ROLE.sub(" ", text)
    maths = _MATH.findall(rest)
    rest = _MATH.sub(" ", rest)
    code = _CODE.findall(rest)
    rest = _CODE.sub(" ", rest)
    links = ["".join(m) for m in _LINK.findall(rest)]
    rest = _LINK.sub(" ", rest)
    numbers = [n.replace(",", "") for n in _NUMBER.findall(rest)]
    return {"roles": sorted(roles), "maths": sorted(maths), "code spans": sorted(code),
            "link targets": sorted(links), "numbers": sorted(numbers)}


def problems(msgid: str, msgstr: str) -> list[str]:
    """How a translation differs from its English message in what must not change."""
    if not msgstr:
        return []
    a, b = _parts(msgid), _parts(msgstr)
    return [f"{kind}: {a[kind]} -> {b[kind]}" for kind in a if a[kind] != b[kind]]


def check(root: Path, *, strict: bool = True) -> int:
    import polib

    bad = untranslated = fuzzy = total = 0
    for po_path in sorted((root / LOCALES / LANG / "LC_MESSAGES").rglob("*.po")):
        for entry in polib.pofile(str(po_path)):
            if entry.obsolete:
                continue
            total += 1
            if not entry.msgstr:
                untranslated += 1
            elif "fuzzy" in entry.flags:
                fuzzy += 1
            for p in problems(entry.msgid, entry.msgstr):
                bad += 1
                print(f"{po_path.relative_to(root)}: {entry.msgid[:60]!r}: {p}")
    print(f"{total} messages: {total - untranslated - fuzzy} translated, {untranslated} untranslated, "
          f"{fuzzy} fuzzy, {bad} translations that change the English message's maths, roles, code, links or numbers")
    return 1 if bad or (strict and (untranslated or fuzzy)) else 0


# --- the Chinese site ----------------------------------------------------------------------------

_URL = re.compile(r'((?:href|src)=")([^"#?:]+)')


def _share(en: Path, zh: Path) -> int:
    """Delete from the Chinese site every file under _static/ and _images/ that the English site
    has byte for byte, and point the Chinese pages at the English copy; returns bytes saved."""
    shared: set[Path] = set()
    saved = 0
    for folder in ("_static", "_images"):
        for path in sorted((zh / folder).rglob("*")):
            twin = en / path.relative_to(zh)
            if path.is_file() and twin.is_file() and filecmp.cmp(path, twin, shallow=False):
                shared.add(path.relative_to(zh))
                saved += path.stat().st_size
                path.unlink()
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


def build(root: Path, *, every_page: bool = False) -> int:
    out = root / "_build" / "zh"
    if every_page:
        shutil.rmtree(out / "_build", ignore_errors=True)
    if not (root / LOCALES / LANG).is_dir():
        print("Chinese edition: no catalogs (python scripts/i18n.py update)")
        return 0
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
    status = _jupyter_book(root, config(root), out, "-W", "-n", "--keep-going")
    if status:
        return status
    site = root / "_build" / "html" / SUBDIR
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(out / "_build" / "html", site)
    saved = _share(root / "_build" / "html", site)
    print(f"Chinese edition in _build/html/{SUBDIR} ({saved / 1e6:.1f} MB of static files shared with the English)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["update", "check", "build"])
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.command == "update":
        return update(args.root)
    if args.command == "check":
        return check(args.root)
    return build(args.root)


if __name__ == "__main__":
    sys.exit(main())
