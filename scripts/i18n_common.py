"""What every part of the Chinese edition's tooling shares (``scripts/i18n.py`` and its modules): where
things are, the term table, and which messages are display maths."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LANG = "zh_CN"
LOCALES = "locales"
SUBDIR = "zh"   # the Chinese site: _build/html/zh/
#: The outputs' catalog: its domain (locales/zh_CN/LC_MESSAGES/outputs.po).
OUTPUTS = "outputs"

#: jieba's user dictionary for the Chinese search index: the term table's Chinese terms
#: (written by ``build`` from locales/zh_CN/terms.csv).
SEARCH_DICT = Path("_build") / SUBDIR / "search_terms.txt"
TERMS = Path(LOCALES) / LANG / "terms.csv"


def _is_math(msgid: str) -> bool:
    """A display maths block (its message is the LaTeX itself)."""
    text = msgid.strip()
    return bool(text) and "\n" in msgid and not re.search(r"[.:;,]\s*$", text.splitlines()[0]) \
        and not re.search(r"\s[a-z]{3,}\s[a-z]{3,}\s", re.sub(r"\\text\{[^}]*\}", "", text)) and "\\" in text


def load_terms(root: Path) -> list[tuple[str, str, str]]:
    """The term table: (English, Chinese, note on usage) per row, the longest English first."""
    import csv

    with open(root / TERMS, encoding="utf-8", newline="") as f:
        rows = [(r["english"].strip(), r["chinese"].strip(), (r.get("note") or "").strip()) for r in csv.DictReader(f)]
    seen = set()
    for en, zh, _ in rows:
        if not en or not zh:
            raise ValueError(f"{TERMS}: a row needs an English and a Chinese term, got {en!r}, {zh!r}")
        if en.lower() in seen:
            raise ValueError(f"{TERMS}: {en!r} is listed twice")
        seen.add(en.lower())
    return sorted(rows, key=lambda r: -len(r[0]))


def save_if_changed(po, path: Path) -> bool:
    """Write the polib catalog ``po`` to ``path`` only when its text differs from the file's: an
    unchanged catalog keeps its mtime, so the next build neither compiles its .mo again nor reads
    every Chinese page again (Sphinx goes by the catalogs' mtimes). Returns whether it wrote."""
    if path.is_file() and path.read_text(encoding="utf-8") == str(po):
        return False
    po.save(str(path))
    return True
