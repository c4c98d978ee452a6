"""The English strings the book's figures and its "Check your model" page show: what each
catalog of ``rope_edu/locales/`` must translate (``scripts/i18n.py check``, ``tests/test_i18n_catalog.py``).

Build-time extraction, kept out of the package: it reads the figures' JavaScript, the widgets'
controls, the package's source (the template keys of :func:`rope_edu.i18n.message`) and the
checkout's ``_ext/model_check/`` and ``book/model_check.md``. Run-time translation is
:mod:`rope_edu.i18n`, which imports nothing of the package.

JavaScript is scanned by hand (:func:`_literals`), not with Babel's extractor: the figures do not
mark their strings (a label is any literal that ``text()``, ``readout()``, ``plot()``'s options or
a legend draws), so the scanner must know where a literal sits (callee and argument, object key,
array of literals), which a marker-based extractor does not report.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

from rope_edu.i18n import HOLE as _HOLE, WORDS as _WORDS, html_strings

__all__ = ["english_strings", "template_keys", "js_strings", "MODEL_CHECK", "MODEL_CHECK_SCRIPTS", "MODEL_CHECK_PAGE"]

ROOT = Path(__file__).resolve().parents[1]

_CODE_LIKE = re.compile(r"^[\w.#:-]*$|^[\d\s.,-]+$|=>|[{}]|;\s*$|^M[\d$]|^\s|\s$|^https?:|^(?:rgba?|translate|rotate)\(")


def _template(body: str) -> str:
    """A template literal's text with each ``${...}`` as ``{0}``, ``{1}``, ... (nested braces allowed)."""
    out, n, i = [], 0, 0
    while i < len(body):
        if body.startswith("${", i):
            depth, j = 1, i + 2
            while j < len(body) and depth:
                depth += {"{": 1, "}": -1}.get(body[j], 0)
                j += 1
            out.append(f"{{{n}}}")
            n += 1
            i = j
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def _shown(s: str) -> bool:
    """A literal a reader sees: words, not an attribute, class name, path or number."""
    bare = _HOLE.sub("X", s)
    return bool(_WORDS.search(_HOLE.sub("", s))) and (" " in bare or bool(re.search(r"[^\x00-\x7f]", bare))) \
        and not _CODE_LIKE.search(bare)


#: What core.js draws as text, by call and argument (``text(parent, x, y, str)``, a readout's label
#: and unit, a note, a heading, ``tr(str)`` itself) and by option (``plot()``'s labels and title).
_DRAWN_ARGS = {"text": {3}, "textLines": {3}, "readout": {1, 4}, "note": {0}, "heading": {0}, "tr": {0}}
_DRAWN_KEYS = {"xlabel", "ylabel", "title", "unit", "heading"}


def _skip_string(source: str, i: int) -> int:
    """The index just after the string or template literal that opens at ``source[i]``."""
    quote, j, depth = source[i], i + 1, 0
    while j < len(source):
        c = source[j]
        if c == "\\":
            j += 2
        elif quote == "`" and source.startswith("${", j):
            depth, j = depth + 1, j + 2
        elif quote == "`" and depth:
            if c in "\"'`":
                j = _skip_string(source, j)
                continue
            depth -= c == "}"
            j += 1
        elif c == quote:
            return j + 1
        elif c == "\n" and quote != "`":
            return j + 1          # a stray quote: the line's end closes it
        else:
            j += 1
    return j


def _literals(source: str):
    """The string and template literals of JavaScript ``source``, as (text, context, compared), and the
    array frames: literals joined by ``+`` are one (their texts concatenated, each ``${...}`` as
    ``{0}``, ``{1}``, ... in order); a literal's context is the chain of brackets around it,
    innermost last, each ``(bracket, name, position, frame)``: ``("(", callee, argument index)``,
    ``("[", None, element index)``, ``("{", key, entry index)``; ``frames[frame]`` tells whether an
    array holds literals only, and which (their indices in the list returned); ``compared``: the
    literal is an operand of ``===``, ``!==``, ``==`` or ``!=``."""
    out: list = []
    frames: list[dict] = []
    stack: list[list] = []
    i, n, last, pending = 0, len(source), "", None
    while i < n:
        c = source[i]
        if source.startswith("//", i) or source.startswith("/*", i):
            end = source.find("\n" if c == "/" and source[i + 1] == "/" else "*/", i + 2)
            i = n if end < 0 else end + (0 if source[i + 1] == "/" else 2)
            continue
        if c in "\"'`":
            j = _skip_string(source, i)
            body = source[i + 1:j - 1]
            text = (_template(body) if c == "`" else body).replace('\\"', '"').replace("\\'", "'").replace("\\n", "\n")
            if pending is not None and re.fullmatch(r"\s*\+\s*", source[pending[2]:i]):
                pending[0].append(text)
                pending[2] = j
            else:
                if pending is not None:
                    out.append(pending)
                if stack and stack[-1][0] == "[":
                    frames[stack[-1][3]]["literals"].append(len(out))
                # a literal compared with something is a value of the code, not a label
                compared = bool(re.search(r"[!=]=\s*$", source[max(0, i - 8):i]) or re.match(r"\s*[!=]=", source[j:j + 8]))
                pending = [[text], [tuple(f) for f in stack], j, compared]
            i, last = j, "x"
            continue
        if c == "/" and (last == "" or last in "(,=:[!&|?{};+-*%<>~^"):
            j, in_class = i + 1, False        # a regular expression literal
            while j < n and source[j] != "\n" and (source[j] != "/" or in_class):
                in_class = (in_class or source[j] == "[") and source[j] != "]"
                j += 2 if source[j] == "\\" else 1
            i, last = j + 1, "x"
            continue
        if c in "([{":
            callee = re.search(r"([A-Za-z_$][\w$]*)\s*$", source[max(0, i - 80):i]) if c == "(" else None
            frames.append({"literals only": True, "literals": []})
            stack.append([c, callee.group(1) if callee else None, 0, len(frames) - 1])
        elif c in ")]}":
            if stack:
                stack.pop()
        elif c == "," and stack:
            stack[-1][2] += 1
            if stack[-1][0] == "{":
                stack[-1][1] = None
        elif c == ":" and stack and stack[-1][0] == "{" and stack[-1][1] is None:
            key = re.search(r"([A-Za-z_$][\w$]*|\"[^\"]*\"|'[^']*')\s*$", source[max(0, i - 80):i])
            stack[-1][1] = key.group(1).strip("\"'") if key else ""
        if not c.isspace():
            if stack and stack[-1][0] == "[" and c not in "[{(,)]}":
                frames[stack[-1][3]]["literals only"] = False     # an element that is not a literal
            last = c
        i += 1
    if pending is not None:
        out.append(pending)
    literals = []
    for parts, context, _, compared in out:
        text, k = "", 0
        for part in parts:        # each part's placeholders numbered after the earlier parts'
            text += _HOLE.sub(lambda h, k=k: f"{{{int(h.group(1)) + k}}}", part)
            k += len(set(_HOLE.findall(part)))
        literals.append((text, context, compared))
    return literals, frames


def _drawn(text: str, context, compared: bool, frames, literals) -> bool:
    """A literal that holds a word but looks like code (one word, a trailing ``;``) and that the
    figure draws: an argument core.js draws as text (``text``, a readout's label or unit, a note,
    a heading), a plot's label or title, a legend item's label, a tick's label, or an element of
    an array of literals only, one of which is shown (the lines of a text)."""
    if not context or compared or text != text.strip() or "\n" in text:
        return False
    kind, name, position, frame = context[-1]
    if kind == "(":
        return position in _DRAWN_ARGS.get(name, ())
    if kind == "{":
        return name in _DRAWN_KEYS
    # legend(parent, x, y, [[label, colour, dashed?], ...]); xticks: [[value, label], ...]
    items, owner = context[-2:-1], context[-3:-2]
    if items and owner and items[0][0] == "[":
        if owner[0][:3] == ("(", "legend", 3) and position == 0:
            return True
        if owner[0][0] == "{" and owner[0][1] in ("xticks", "yticks") and position == 1:
            return True
    array = frames[frame]
    return array["literals only"] and any(_shown(literals[k][0]) for k in array["literals"])


def js_strings(source: str) -> set[str]:
    """The English strings a figure's JavaScript shows: literals with words (``${...}`` as ``{0}``,
    ...; literals joined by ``+`` as one string) that read as prose, and those that look like code
    (one word, a trailing ``;``) but sit where the figure draws them (:func:`_drawn`)."""
    literals, frames = _literals(source)
    found = set()
    for text, context, compared in literals:
        if _WORDS.search(_HOLE.sub("", text)) and (_shown(text) or _drawn(text, context, compared, frames, literals)):
            found.add(text)
    return found


_TEMPLATE_CALL = re.compile(r"\b(?:_m|message)\(\s*((?:\"[^\"]*\"(?:\s+if\s[^\"]*?\selse\s+)?)+)")


def template_keys() -> dict[str, set[str]]:
    """Every template key the package's Python passes to :func:`message` (as ``message(...)`` or
    ``_m(...)``), by module (``plots.py``)."""
    out: dict[str, set[str]] = {}
    root = ROOT / "rope_edu"
    for path in sorted(root.rglob("*.py")):
        if path.name == "i18n.py":
            continue
        keys = {k for m in _TEMPLATE_CALL.finditer(path.read_text(encoding="utf-8")) for k in re.findall(r'"([^"]*)"', m.group(1))}
        if keys:
            out[str(path.relative_to(root))] = keys
    return out


# --- the "Check your model" page of the book (book/model_check.md, _ext/model_check/) ------------------

#: The page's folder of scripts: the
#: English strings of ``MODEL_CHECK_SCRIPTS`` there and of the page's raw HTML form
#: (``MODEL_CHECK_PAGE``) go through this catalog on the Chinese site too.
MODEL_CHECK = ROOT / "_ext" / "model_check"
MODEL_CHECK_SCRIPTS = ("page.js", "checks.js")
MODEL_CHECK_PAGE = ROOT / "book" / "model_check.md"


def _model_check_strings() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    if MODEL_CHECK.is_dir():
        for name in MODEL_CHECK_SCRIPTS:
            out[f"model_check/{name}"] = js_strings((MODEL_CHECK / name).read_text(encoding="utf-8"))
        # the notes of the published models (rope_edu.models), shown beside the one picked
        from rope_edu.spec_export import published_tables

        out["models.PUBLISHED notes"] = {p.note for rows in published_tables().values() for p in rows.values() if p.note}
    if MODEL_CHECK_PAGE.is_file():
        source = MODEL_CHECK_PAGE.read_text(encoding="utf-8")
        out["book/model_check.md"] = {s for block in re.findall(r"```\{raw\} html\n(.*?)```", source, re.S)
                                      for s in html_strings(block)}
    return out


def english_strings() -> dict[str, set[str]]:
    """Every English string the figures show, by where it comes from (``js/clock.js``,
    ``widgets/clock.py``): the string and template literals of the figures' JavaScript that hold
    words (``${...}`` as ``{0}``, ``{1}``, ...), and each figure's title, control labels and
    drop-down labels."""
    from rope_edu import widgets
    from rope_edu.widgets import JS_DIR, NOSCRIPT, Figure

    out: dict[str, set[str]] = {"widgets/_core.py": {NOSCRIPT}}
    for path in sorted(JS_DIR.glob("*.js")):
        out[f"js/{path.name}"] = js_strings(path.read_text(encoding="utf-8"))
    for info in pkgutil.iter_modules(widgets.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{widgets.__name__}.{info.name}")
        strings: set[str] = set()
        for value in vars(module).values():
            if isinstance(value, Figure):
                strings.add(value.title)
                for c in value.controls:
                    strings.add(c.label)
                    strings.update(c.labels)
        out[f"widgets/{info.name}.py"] = {s for s in strings if s}
    # the "Check your model" page's words (its form and its scripts)
    out.update(_model_check_strings())
    return out
