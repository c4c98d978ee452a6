"""The catalogs (``scripts/i18n.py update``): the pages' messages refreshed from the English sources
(sphinx-intl), the outputs' from the English build, display maths filled in, the glossary's terms."""

from __future__ import annotations

import shutil
from pathlib import Path

from i18n_common import LANG, LOCALES, TERMS, _is_math, load_terms, save_if_changed
from i18n_outputs import update_outputs
from i18n_site import _jupyter_book, config


def tidy(po) -> int:
    """What makes a catalog invalid gettext (``msgfmt --check``), though polib and Sphinx read it:
    an obsolete entry whose msgid is also a live one (a message that came back), and gettext's
    guess that prose with a "%" is a Python format string (``#, python-format``, which msgfmt then
    checks). Removes both from ``po`` (a polib catalog); returns how many it changed."""
    live = {e.msgid for e in po if not e.obsolete}
    changed = 0
    for entry in [e for e in po if e.obsolete and e.msgid in live]:
        po.remove(entry)
        changed += 1
    for entry in po:
        if "python-format" in entry.flags:
            entry.flags.remove("python-format")
            changed += 1
    return changed


def update(root: Path) -> int:
    import polib
    from sphinx_intl import basic

    pot = root / "_build" / "i18n_pot"
    shutil.rmtree(pot, ignore_errors=True)
    if _jupyter_book(root, config(root, gettext=True), pot, "--builder", "custom", "--custom-builder", "gettext"):
        return 1
    basic.update(str(root / LOCALES), str(pot / "_build" / "gettext"), (LANG,))
    update_outputs(root)
    print(f"glossary: {fill_glossary(root)} terms set from {TERMS}")
    todo = 0
    for po_path in sorted((root / LOCALES / LANG / "LC_MESSAGES").rglob("*.po")):
        po = polib.pofile(str(po_path), wrapwidth=0)
        tidy(po)
        for entry in po:
            if _is_math(entry.msgid) and (not entry.msgstr or "fuzzy" in entry.flags):
                entry.msgstr = entry.msgid   # maths is not translated (a fuzzy match is old maths)
                if "fuzzy" in entry.flags:
                    entry.flags.remove("fuzzy")
        save_if_changed(po, po_path)
        left = [e for e in po if (not e.msgstr or "fuzzy" in e.flags) and not e.obsolete]
        todo += len(left)
        if left:
            print(f"{po_path.relative_to(root)}: {len(left)} to translate")
    print(f"{todo} messages to translate")
    return 0


def fill_glossary(root: Path) -> int:
    """The glossary's terms in the Chinese catalog from the term table: "旋转位置编码（rotary
    position embedding）", the English beside the Chinese; returns how many it set."""
    import polib

    path = root / LOCALES / LANG / "LC_MESSAGES" / "book" / "glossary.po"
    if not path.is_file():
        return 0
    table = {en.lower(): zh for en, zh, _ in load_terms(root)}
    po = polib.pofile(str(path), wrapwidth=0)
    n = 0
    for entry in po:
        zh = table.get(entry.msgid.strip().lower())
        if zh and not entry.obsolete:
            want = f"{zh}（{entry.msgid}）"
            if entry.msgstr != want or "fuzzy" in entry.flags:
                entry.msgstr = want
                if "fuzzy" in entry.flags:
                    entry.flags.remove("fuzzy")
                n += 1
    save_if_changed(po, path)
    return n
