"""Stylesheets: the rules that can match (issue 21; 457 -> ~145 KB on every first visit).

The theme's stylesheets carry all of Bootstrap and every component the theme, sphinx-design and
myst-nb offer. A selector that names a class which no page and no script of the site contains can
never match, so it is cut; a rule with no selector left goes. Classes inside functional
pseudo-classes (``:not()``, ``:is()``, ``:where()``, ``:has()``, ...) and attribute selectors are
not counted (their absence need not stop a match), and every word that appears anywhere in the
site's scripts counts as used (scripts add classes at run time), so the cut is conservative. The
stylesheets are read by tinycss2; ``@media``, ``@supports`` and the like are cut inside, other
at-rules (``@font-face``, ``@keyframes``, ...) are kept whole.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import tinycss2
from sphinx.application import Sphinx

PURGED_CSS = ("styles/pydata-sphinx-theme.css", "sphinx-design.min.css", "mystnb.*.css", "basic.css",
              "styles/sphinx-book-theme.css", "togglebutton.css", "copybutton.css", "proof.css",
              "exercise.css", "sphinx-thebe.css", "pygments.css")
# at-rules whose block holds rules, cut like the stylesheet itself
GROUPING_RULES = {"media", "supports", "container", "layer", "document"}

_JS_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'|`([^`]*)`')
_JS_PREFIX = re.compile(r'([A-Za-z][\w-]*-)(?:\$\{|["\']\s*\+)')  # `bs-${name}-auto`, "col-" + n


def _used_words(outdir: Path) -> tuple[set[str], tuple[str, ...]]:
    """Class names on the pages and every word in the string literals of the site's scripts (which
    may add classes), and the prefixes of class names the scripts build (``bs-${...}``)."""
    used: set[str] = set()
    prefixes: set[str] = set()
    for page in outdir.rglob("*.html"):
        if "_static" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        for value in re.findall(r'\bclass="([^"]*)"', text):
            used.update(value.split())
        for script in re.findall(r"<script[^>]*>(.*?)</script>", text, re.S):
            used.update(re.findall(r"[A-Za-z_][\w-]*", script))
    for script in (outdir / "_static").rglob("*.js"):
        if "mathjax" in script.parts:
            continue
        text = script.read_text(encoding="utf-8", errors="replace")
        for literal in _JS_STRING.finditer(text):
            used.update(re.findall(r"[A-Za-z_][\w-]*", "".join(part or "" for part in literal.groups())))
        prefixes.update(_JS_PREFIX.findall(text))
    return used, tuple(sorted(prefixes))


def _selectors(prelude: list) -> list[list]:
    """A rule's selector list, split at its top-level commas (tinycss2 keeps brackets and
    functions as nested blocks, so their commas are inside them)."""
    selectors = [[]]
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            selectors.append([])
        else:
            selectors[-1].append(token)
    return selectors


def _can_match(selector: list, used: set[str], prefixes: tuple[str, ...] = ()) -> bool:
    """Every class the selector requires (``.name`` outside functions and ``[...]``) is used."""
    for before, token in zip(selector, selector[1:]):
        if before.type == "literal" and before.value == "." and token.type == "ident":
            if token.value not in used and not token.value.startswith(prefixes):
                return False
    return True


def _purge_rules(text: str, used: set[str], prefixes: tuple[str, ...] = ()) -> str:
    """The stylesheet without the selectors that cannot match."""
    css = _cut(tinycss2.parse_stylesheet(text, skip_comments=True, skip_whitespace=True), used, prefixes)
    return css if css.lower().startswith('@charset "utf-8"') else _ascii(css)


def _cut(rules: list, used: set[str], prefixes: tuple[str, ...]) -> str:
    out = []
    for rule in rules:
        if rule.type == "qualified-rule":
            keep = [tinycss2.serialize(s).strip() for s in _selectors(rule.prelude) if _can_match(s, used, prefixes)]
            if keep:
                out.append(",".join(keep) + "{" + tinycss2.serialize(rule.content) + "}")
        elif rule.type == "at-rule" and rule.lower_at_keyword in GROUPING_RULES and rule.content is not None:
            inner = _cut(tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True),
                         used, prefixes)
            if inner.strip():
                out.append(f"@{rule.at_keyword} {tinycss2.serialize(rule.prelude).strip()}{{{inner}}}")
        elif rule.type == "at-rule":
            out.append(rule.serialize())  # @font-face, @keyframes, @import ..., kept whole
        else:
            raise ValueError(f"stylesheet not understood at line {rule.source_line}, column {rule.source_column}: "
                             f"{rule.message}")
    return "".join(out)


def _ascii(css: str) -> str:
    """tinycss2 writes an escaped character (``content:"\\f02e"``) as itself: in a stylesheet that
    does not say it is UTF-8 (``@charset``), escape the non-ASCII ones again, so that it reads the
    same whatever encoding a browser assumes (a space ends an escape followed by a hex digit or a
    space)."""
    return re.sub(r"[^\x00-\x7f](?=([0-9a-fA-F ])?)",
                  lambda m: f"\\{ord(m.group(0)):x}" + (" " if m.group(1) else ""), css)


def _stylesheets(outdir: Path) -> list[Path]:
    return [css for pattern in PURGED_CSS for css in (outdir / "_static").glob(pattern)]


def _stash(outdir: Path, css: Path) -> tuple[Path, Path]:
    key = css.relative_to(outdir / "_static").as_posix().replace("/", "__")
    stash = outdir.parent / ".rope_css"
    return stash / key, stash / f"{key}.cut"


def shipped_stylesheet(outdir: Path, css: Path) -> bytes:
    """``css`` (a file under ``outdir/_static``) as the theme ships it, whether or not this extension
    has cut it yet. What the cut keeps depends on every page of the site, the Chinese edition's
    under ``zh/`` among them, so a cache keyed on the site's look (the reader notebooks' pictures)
    keys on this, not on the cut file."""
    data = css.read_bytes()
    if css in _stylesheets(outdir):
        original, mark = _stash(outdir, css)
        if mark.exists() and original.exists() and mark.read_text() == hashlib.sha256(data).hexdigest():
            return original.read_bytes()
    return data


def _restore_stylesheets(outdir: Path) -> None:
    """Start from the stylesheets as the theme ships them: a build that did not copy them again finds
    the ones this extension cut last time (its hash is kept beside a copy of the original)."""
    for css in _stylesheets(outdir):
        original, mark = _stash(outdir, css)
        data = css.read_bytes()
        if mark.exists() and original.exists() and mark.read_text() == hashlib.sha256(data).hexdigest():
            css.write_bytes(original.read_bytes())
        else:
            original.parent.mkdir(parents=True, exist_ok=True)
            original.write_bytes(data)


def _purge_stylesheets(outdir: Path) -> None:
    used, prefixes = _used_words(outdir)
    for css in _stylesheets(outdir):
        # (tinycss2 leaves out comments, the source map's address among them)
        css.write_text(_purge_rules(css.read_text(encoding="utf-8"), used, prefixes), encoding="utf-8")
        _stash(outdir, css)[1].write_text(hashlib.sha256(css.read_bytes()).hexdigest())


def _restore(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        _restore_stylesheets(Path(app.outdir))


def _purge(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        _purge_stylesheets(Path(app.outdir))


def setup(app: Sphinx) -> dict:
    # the order of the build-finished work: _ext/book_pages.py (restore first, cut last)
    app.connect("build-finished", _restore, priority=895)
    app.connect("build-finished", _purge, priority=899)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
