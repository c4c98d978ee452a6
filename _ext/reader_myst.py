"""MyST lowered to what every Jupyter front end renders, for the reader notebooks
(``_ext/reader_notebooks.py``): roles become numbered links to the built site (:class:`Resolver`,
:func:`lower_roles`), directives formatted Markdown (:func:`lower_directives`), labelled equations
carry ``\\tag{n}``."""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath

from sphinx.application import Sphinx

from reader_words import ENGLISH, PROOF_TYPES, Words, edition_words

#: TeX's accent commands and the combining marks they put on the next letter.
_ACCENTS = {"`": "\u0300", "'": "\u0301", "^": "\u0302", "~": "\u0303", '"': "\u0308", "=": "\u0304",
            ".": "\u0307", "c": "\u0327", "v": "\u030c", "u": "\u0306", "H": "\u030b"}
_ACCENT = re.compile(r"\{?\\([`'^~\"=.]|[cvuH](?![a-zA-Z]))\s*\{?([a-zA-Z])\}?\}?")


def _letters(tex: str) -> str:
    """A BibTeX name as the letters it makes: Rozi{\\`e}re is Rozière (the reader notebooks showed
    "Rozi`ere"); what is left of braces and backslashes goes."""
    text = _ACCENT.sub(lambda m: unicodedata.normalize("NFC", m.group(2) + _ACCENTS[m.group(1)]), tex)
    return re.sub(r"[{}\\]", "", text)


# MyST is lowered here with regular expressions, not parsed with markdown-it-py and mdit-py-plugins
# (both installed with jupyter-book): the lowering rewrites a handful of constructs in place (roles,
# colon fences and their options, targets, labelled equations) and must leave every other byte of
# the cell as the author wrote it, which a parse and re-render does not promise (markdown-it renders
# HTML, and mdformat would normalise the rest). tests/test_reader_notebooks.py pins the output.
ROLE = re.compile(r"\{(?P<role>[a-z]+(?::[a-z]+)?)\}`(?P<body>[^`]+)`")
FENCE = re.compile(r"^(?P<colons>:{3,})\{(?P<name>[a-z:-]+)\}\s*(?P<arg>.*)$")
OPTION = re.compile(r"^:(?P<key>[a-z-]+):\s*(?P<value>.*)$")
TARGET = re.compile(r"^\((?P<label>[^)\s]+)\)=\s*$")
EMPTY_DETAILS = re.compile(r"<details>\n<summary>[^<]*</summary>\s*</details>\n*")
EQ_LABEL = re.compile(r"\$\$\s*\((?P<label>[^)\s]+)\)")


class Resolver:
    """Numbers, titles and URLs of the built site, from Sphinx's environment."""

    def __init__(self, app: Sphinx) -> None:
        self.env = app.env
        self.site = (app.config.html_baseurl or "").rstrip("/") + "/"
        self.words = edition_words(app)   # "Theorem 4.1" in the edition's language
        self.std = self.env.get_domain("std")
        self.math = self.env.get_domain("math")
        self.citations = {}
        for citation in self.env.get_domain("cite").citations:
            self.citations.setdefault(citation.key, citation)

    def url(self, docname: str, anchor: str = "") -> str:
        return f"{self.site}{docname}.html" + (f"#{anchor}" if anchor else "")

    def number(self, docname: str, figtype: str, key: str) -> str:
        numbers = self.env.toc_fignumbers.get(docname, {}).get(figtype, {}).get(key)
        return ".".join(map(str, numbers)) if numbers else ""

    # --- roles ---------------------------------------------------------------------------------

    def cite(self, keys: str, textual: bool) -> str:
        parts = []
        for key in (k.strip() for k in keys.split(",")):
            citation = self.citations.get(key)
            if citation is None:
                raise KeyError(f"citation {key!r} is not in the bibliography")
            entry = citation.entry
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            # LaTeX accents as the letters they make (Rozi{\`e}re: Rozière, not "Rozi`ere")
            names = [_letters(" ".join(p.last_names)) for p in people]
            who = names[0] if len(names) == 1 else " and ".join(names) if len(names) == 2 else f"{names[0]} et al."
            if not names:
                who = str(entry.fields.get("organization") or entry.fields.get("title", key)).strip("{}")
            who = re.sub(r"[{}\\]", "", who)
            year = entry.fields.get("year", "n.d.")
            link = self.url(citation.bibliography_key.docname, citation.citation_id)
            parts.append(f"[{who} ({year})]({link})" if textual else f"[{who}, {year}]({link})")
        return ", ".join(parts) if textual else "(" + "; ".join(parts) + ")"

    def doc(self, body: str, fromdoc: str) -> str:
        text, target = _split(body)
        path = str(PurePosixPath(fromdoc).parent / target) if not target.startswith("/") else target.lstrip("/")
        docname = _normalise(path)
        if docname not in self.env.all_docs:
            raise KeyError(f"{{doc}} target {target!r} from {fromdoc} is not a page")
        return f"[{text or self.env.titles[docname].astext()}]({self.url(docname)})"

    def ref(self, body: str) -> str:
        text, label = _split(body)
        if label in self.std.labels:  # a section: it has a title of its own
            docname, anchor, title = self.std.labels[label]
        elif text and label in self.std.anonlabels:  # a paragraph: the reference gives the text
            (docname, anchor), title = self.std.anonlabels[label], text
        else:
            raise KeyError(f"{{ref}} label {label!r} is not defined")
        return f"[{text or title}]({self.url(docname, anchor)})"

    def proof_ref(self, body: str) -> str:
        text, label = _split(body)
        match = self.env.proof_list[label]
        number = "" if match["nonumber"] else self.number(match["docname"], match["countertype"], label)
        title = text or f"{self.words.name(match['realtype'].title())} {number}".strip()
        return f"[{title}]({self.url(match['docname'], label)})"

    def equation(self, label: str) -> str:
        docname, _ = self.math.equations[label]
        return f"[({self.equation_number(label)})]({self.url(docname, 'equation-' + label)})"

    def equation_number(self, label: str) -> str:
        docname, number = self.math.equations[label]
        return self.number(docname, "displaymath", f"equation-{label}") or str(number)

    def exercise_number(self, docname: str, label: str) -> str:
        return self.number(docname, "exercise", label)

    def link(self, target: str, fromdoc: str) -> str:
        """A relative Markdown link to a page of the book, as a link to the site."""
        path, _, anchor = target.partition("#")
        docname = _normalise(str(PurePosixPath(fromdoc).parent / path))
        return self.url(docname, anchor) if docname in self.env.all_docs else target


def _split(body: str) -> tuple[str, str]:
    """``text <target>`` -> (text, target); ``target`` -> ("", target)."""
    match = re.fullmatch(r"(?s)(?P<text>.*?)\s*<(?P<target>[^<>]+)>", body.strip())
    return (match["text"].strip(), match["target"].strip()) if match else ("", body.strip())


def _normalise(path: str) -> str:
    parts: list[str] = []
    for part in PurePosixPath(path).parts:
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return re.sub(r"\.(ipynb|md)$", "", "/".join(parts))


def lower_roles(text: str, docname: str, r: Resolver) -> str:
    def role(m: re.Match) -> str:
        name, body = m["role"], m["body"]
        if name in ("cite", "cite:p"):
            return r.cite(body, textual=False)
        if name == "cite:t":
            return r.cite(body, textual=True)
        if name == "doc":
            return r.doc(body, docname)
        if name == "ref":
            return r.ref(body)
        if name == "prf:ref":
            return r.proof_ref(body)
        if name == "eq":
            return r.equation(body.strip())
        if name in ("math",):
            return f"${body}$"
        raise KeyError(f"{docname}: no reader form for the role {{{name}}}")

    text = ROLE.sub(role, text)
    text = EQ_LABEL.sub(lambda m: "$$", _tag_equations(text, r))
    # relative links to other pages of the book point at the site
    return re.sub(
        r"\]\((?!https?:|mailto:|#)([^)\s]+\.(?:ipynb|md)(?:#[^)\s]*)?)\)",
        lambda m: f"]({r.link(m[1], docname)})", text,
    )


FOOTNOTE_DEF = re.compile(r"^\[\^(?P<label>[^\]\s]+)\]:[ \t]*", re.M)
FOOTNOTE_REF = re.compile(r"\[\^(?P<label>[^\]\s]+)\]")


def lower_footnotes(text: str, state: dict) -> str:
    """MyST footnotes, which Jupyter front ends do not read: a reference ``[^label]`` becomes its
    number as a superscript, a definition ``[^label]: ...`` a paragraph that starts with it, where
    the author wrote it. Numbered in order of definition through the notebook (``state``), as the
    site numbers them."""
    numbers = state.setdefault("footnotes", {})
    for m in FOOTNOTE_DEF.finditer(text):
        numbers.setdefault(m["label"], len(numbers) + 1)

    def number(label: str) -> str:
        if label not in numbers:
            raise KeyError(f"footnote [^{label}] has no definition before its cell's end")
        return f"<sup>{numbers[label]}</sup>"

    text = FOOTNOTE_DEF.sub(lambda m: number(m["label"]) + " ", text)
    return FOOTNOTE_REF.sub(lambda m: number(m["label"]), text)


def _tag_equations(text: str, r: Resolver) -> str:
    """``$$ ... $$ (label)`` -> ``$$ ... \\tag{n} $$`` (the number the site shows)."""

    def tag(m: re.Match) -> str:
        body, label = m["body"], m["label"]
        return f"$${body.rstrip()}\n\\tag{{{r.equation_number(label)}}}\n$$"

    return re.sub(r"\$\$(?P<body>(?:(?!\$\$).)+?)\$\$\s*\((?P<label>[^)\s]+)\)", tag, text, flags=re.S)


def _wraps_proof(lines: list[str], i: int) -> bool:
    """Whether the directive whose body starts at ``lines[i]`` holds a ``{prf:proof}`` first."""
    for line in lines[i:]:
        if not line.strip():
            continue
        m = FENCE.match(line.strip())
        return bool(m) and m["name"] == "prf:proof"
    return False


def lower_directives(text: str, docname: str, r: Resolver, state: dict, words: "Words | None" = None) -> str:
    """Rewrite colon-fenced directives; ``state`` carries an open solution across cells; the labels
    they get (Theorem, Proof, Exercise, ...) are in the language of ``words`` (default English)."""
    words = words or ENGLISH
    lines = text.split("\n")
    out: list[str] = []
    stack: list[tuple[str, str]] = []  # (colons, closing text)
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line.strip())
        if stack and line.strip() == stack[-1][0]:
            out.append(stack.pop()[1])
            i += 1
            continue
        if m is None:
            if not TARGET.match(line.strip()):
                out.append(line)
            i += 1
            continue
        colons, name, arg = m["colons"], m["name"], m["arg"].strip()
        options: dict[str, str] = {}
        i += 1
        while i < len(lines) and OPTION.match(lines[i].strip()):
            o = OPTION.match(lines[i].strip())
            options[o["key"]] = o["value"]
            i += 1
        kind = name.split(":")[-1]
        if name.startswith("prf:") and kind in PROOF_TYPES:
            label = options.get("label", "")
            number = r.number(docname, kind, label) if label else ""
            out.append(words.head(kind.title(), number, arg))
            stack.append((colons, ""))
        elif name == "prf:proof":
            out.append(f"*{words.end(words.name('Proof'))}*")
            stack.append((colons, "$\\square$"))
        elif name == "exercise":
            label = options.get("label", "")
            number = r.exercise_number(docname, label) if label else ""
            out.append(words.head("Exercise", number, arg, stop=False))
            state.setdefault("exercises", {})[label] = number
            stack.append((colons, ""))
        elif name == "solution-start":
            number = state.get("exercises", {}).get(arg, "")
            state["solution"] = words.solution(number)
            # the closing fence of the start marker
            while i < len(lines) and lines[i].strip() != colons:
                i += 1
            i += 1
            out.append(f"<details>\n<summary>{state['solution']}</summary>\n")
        elif name == "solution-end":
            while i < len(lines) and lines[i].strip() != colons:
                i += 1
            i += 1
            state.pop("solution", None)
            out.append("\n</details>")
        elif name == "solution":
            number = state.get("exercises", {}).get(arg, "")
            out.append(f"<details>\n<summary>{words.solution(number)}</summary>\n")
            stack.append((colons, "\n</details>"))
        elif name == "admonition" and _wraps_proof(lines, i):
            # the page's "Proof" dropdown around a proof: the proof says "*Proof.*" itself
            stack.append((colons, ""))
        elif name in ("note", "tip", "warning", "important", "admonition", "seealso", "hint"):
            title = arg if name == "admonition" else words.admonition(name)
            out.append(f"> **{words.end(title)}**")
            stack.append((colons, ""))
        else:
            raise KeyError(f"{docname}: no reader form for the directive {{{name}}}")
    return "\n".join(out)
