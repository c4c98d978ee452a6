"""Notebooks for readers: each chapter lowered from MyST to what every Jupyter front end renders.

The chapters are written for Jupyter Book: ``{cite}`` roles, ``{prf:ref}``, ``{eq}``, proof and
exercise directives, ``(label)=`` targets. Colab, JupyterLab and VS Code show those as raw text. After
each build this extension writes, for every notebook page, a copy whose Markdown uses only
CommonMark, HTML and MathJax, with the numbers and links of the built site:

* citations become author–year links to the site's bibliography;
* references to theorems, equations, sections and pages become their numbers or titles, linked;
* theorems, lemmas and proofs become formatted Markdown; exercises are numbered, and each
  solution is folded: its Markdown in a ``<details>`` block, its code cells collapsed;
* labelled display equations carry ``\\tag{n}``; label targets and directive options are gone.

The copy replaces ``_sources/<page>.ipynb`` in the site, which is what the page's download button
serves, and each page's Colab button opens that published copy (``reader_notebooks_branch`` of
the repository, where the built site is published; see README, "Publishing").
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Callable

from sphinx.application import Sphinx

PROOF_TYPES = {"theorem", "lemma", "corollary", "proposition", "definition", "remark", "example", "conjecture"}
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
            names = [" ".join(p.last_names) for p in people]
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
        title = text or f"{match['realtype'].title()} {number}".strip()
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


def _tag_equations(text: str, r: Resolver) -> str:
    """``$$ ... $$ (label)`` -> ``$$ ... \\tag{n} $$`` (the number the site shows)."""

    def tag(m: re.Match) -> str:
        body, label = m["body"], m["label"]
        return f"$${body.rstrip()}\n\\tag{{{r.equation_number(label)}}}\n$$"

    return re.sub(r"\$\$(?P<body>(?:(?!\$\$).)+?)\$\$\s*\((?P<label>[^)\s]+)\)", tag, text, flags=re.S)


def lower_directives(text: str, docname: str, r: Resolver, state: dict) -> str:
    """Rewrite colon-fenced directives; ``state`` carries an open solution across cells."""
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
            head = f"**{kind.title()} {number}**".replace(" **", "**") + (f" ({arg})" if arg else "")
            out.append(head + ".")
            stack.append((colons, ""))
        elif name == "prf:proof":
            out.append("*Proof.*")
            stack.append((colons, "$\\square$"))
        elif name == "exercise":
            label = options.get("label", "")
            number = r.exercise_number(docname, label) if label else ""
            out.append(f"**Exercise {number}**" + (f" ({arg})" if arg else ""))
            state.setdefault("exercises", {})[label] = number
            stack.append((colons, ""))
        elif name == "solution-start":
            number = state.get("exercises", {}).get(arg, "")
            state["solution"] = f"Solution to Exercise {number}".strip()
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
            out.append(f"<details>\n<summary>Solution to Exercise {number}</summary>\n")
            stack.append((colons, "\n</details>"))
        elif name in ("note", "tip", "warning", "important", "admonition", "seealso", "hint"):
            title = arg if name == "admonition" else name.title()
            out.append(f"> **{title}.**")
            stack.append((colons, ""))
        else:
            raise KeyError(f"{docname}: no reader form for the directive {{{name}}}")
    return "\n".join(out)


def reader_notebook(nb: dict, docname: str, r: Resolver) -> dict:
    state: dict = {}
    cells = []
    for cell in nb["cells"]:
        cell = json.loads(json.dumps(cell))
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        in_solution = "solution" in state
        if cell["cell_type"] == "markdown":
            title = state.get("solution")
            text = lower_directives(lower_roles(source, docname, r), docname, r, state)
            if in_solution:  # a solution that began in an earlier cell goes on here
                text = f"<details>\n<summary>{title} (continued)</summary>\n\n{text}"
            if "solution" in state:  # ... and goes on after this cell: fold this part on its own
                text += "\n\n</details>"
            text = EMPTY_DETAILS.sub("", text)
            cell["source"] = re.sub(r"\n{3,}", "\n\n", text).strip("\n")
        elif cell["cell_type"] == "code" and in_solution:
            meta = cell.setdefault("metadata", {})
            meta.setdefault("jupyter", {})["source_hidden"] = True
            meta["cellView"] = "form"  # Colab shows a form cell's title, not its code
            cell["source"] = f"#@title {state['solution']}: code\n" + source
        elif cell["cell_type"] == "code" and "hide-input" in cell.get("metadata", {}).get("tags", []):
            cell["metadata"].setdefault("jupyter", {})["source_hidden"] = True  # folded, as in the book
        cells.append(cell)
    return {**nb, "cells": cells}


def _notebook_docs(app: Sphinx) -> list[str]:
    return sorted(d for d in app.env.all_docs if str(app.env.doc2path(d)).endswith(".ipynb"))


def write_reader_notebooks(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    r = Resolver(app)
    out = Path(app.outdir)
    branch = app.config.reader_notebooks_branch
    for docname in _notebook_docs(app):
        nb = json.loads(Path(app.env.doc2path(docname)).read_text(encoding="utf-8"))
        target = out / "_sources" / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(reader_notebook(nb, docname, r), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        page = out / f"{docname}.html"
        if page.exists() and branch:
            html = page.read_text(encoding="utf-8")
            fixed = re.sub(
                r'(https://colab\.research\.google\.com/github/[^/"]+/[^/"]+/blob/)[^/"]+/' + re.escape(docname) + r"\.ipynb",
                lambda m: f"{m[1]}{branch}/_sources/{docname}.ipynb", html,
            )
            if fixed != html:
                page.write_text(fixed, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.add_config_value("reader_notebooks_branch", "gh-pages", "html")
    app.connect("build-finished", write_reader_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
