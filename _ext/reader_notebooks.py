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
serves; each page's Colab and Binder buttons open that published copy (``reader_notebooks_branch``
of the repository, where the built site is published; see README, "Publishing"). So that a reader
sees the results before running anything, and runs the code the results came from:

* the notebook opens with the chapter's first Markdown cell (its ``# Title``), then the set-up cell,
  folded; the set-up cell installs ``rope_edu`` from the wheel this build publishes beside the
  notebooks (``wheels/``), at the same repository and branch as the Colab link: one setting,
  ``reader_notebooks_branch``, for both;
* code cells carry the book build's outputs (text, tables, plots), taken from the jupyter-cache
  the build executed the chapters into; each interactive figure's placeholder becomes a PNG of the
  figure as the site draws it in its default state (Chromium, at the site's desktop width, cached
  by what it depends on) and a line saying to run the cell to move it; each SVG plot becomes a PNG
  too (JupyterLab shows no SVG output of a notebook it does not trust); a solution's outputs are
  left out (the solution is folded), as are those of cells the book removes;
* the site also gets ``binder/requirements.txt``, Binder's environment for the published branch:
  the repository's ``binder/requirements.txt`` with the package taken from that same wheel.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path, PurePosixPath
from typing import Callable
from urllib.parse import urlparse

from sphinx.application import Sphinx
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)

# MyST is lowered here with regular expressions, not parsed with markdown-it-py and mdit-py-plugins
# (both installed with jupyter-book): the lowering rewrites a handful of constructs in place (roles,
# colon fences and their options, targets, labelled equations) and must leave every other byte of
# the cell as the author wrote it, which a parse and re-render does not promise (markdown-it renders
# HTML, and mdformat would normalise the rest). tests/test_reader_notebooks.py pins the output.
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


# --- another edition: the chapters' Markdown through the page's gettext catalog ---------------------

class Words:
    """What the reader notebook says besides the chapter's own text, in one edition's language:
    theorem, proof and exercise labels (from sphinx-proof's, sphinx-exercise's and Sphinx's own
    catalogs, as the edition's site shows them, or from ``names``), the set-up cell's title and the
    figures' captions. ``Words()`` is English, exactly what the English reader notebooks say."""

    def __init__(self, lang: str = "en", names: dict[str, str] | None = None) -> None:
        self.lang = lang
        self.names = dict(names or {})
        self.chinese = lang.lower().startswith("zh")
        self.stop = "。" if self.chinese else "."

    def name(self, english: str) -> str:
        return self.names.get(english, english)

    def end(self, text: str) -> str:
        """``text`` and a full stop: Chinese after Chinese, else ".": an untranslated title
        stays English, with its English stop."""
        from rope_edu.i18n import HAN_RANGE

        return text + ("。" if self.chinese and re.search(f"[{HAN_RANGE}]", text) else ".")

    def head(self, kind: str, number: str, title: str = "", stop: bool = True) -> str:
        """``**Theorem 4.1** (title).``; in Chinese ``**定理 4.1**（title）。``."""
        head = f"**{self.name(kind)} {number}**".replace(" **", "**")
        if title:
            head += f"（{title}）" if self.chinese else f" ({title})"
        return head + (self.stop if stop else "")

    def solution(self, number: str) -> str:
        if self.chinese:
            return f"{self.name('Exercise')} {number} 的{self.name('Solution to')}" if number \
                else self.name("Solution to")
        return f"Solution to Exercise {number}".strip()

    def admonition(self, name: str) -> str:
        return self.names.get(name.title(), name.title())

    @property
    def setup_title(self) -> str:
        return ZH_SETUP_TITLE if self.chinese else SETUP_TITLE

    @property
    def figure_caption(self) -> str:
        return ZH_FIGURE_CAPTION if self.chinese else FIGURE_CAPTION

    def continued(self, title: str) -> str:
        return f"{title}（续）" if self.chinese else f"{title} (continued)"

    def solution_code(self, title: str) -> str:
        return f"{title}：代码" if self.chinese else f"{title}: code"

    def picture(self, label: str) -> str:
        return f"<交互式图的静态图片：{label}>" if self.chinese else f"<still picture of the figure: {label}>"


ENGLISH = Words()
ZH_SETUP_TITLE = "#@title 设置：请先运行此单元（缺少 rope_edu 时安装它）"
ZH_FIGURE_CAPTION = "*下面是交互式图打开时的静态图片。运行此单元即可操作它：拖动控件会重新绘制。*"
#: Labels the edition's site takes from catalogs that lack them (sphinx-proof has no "Proof").
ZH_NAMES = {"Proof": "证明"}
#: The set-up cell's line that sets the figures' and plots' language (rope_edu.i18n), put before
#: the plots' style (which registers the Chinese font in Chinese).
STYLE_LINE = re.compile(r"^(?P<indent>[ \t]*)rope_edu\.plots\.use_style\(\)", re.M)


def edition_words(app: Sphinx) -> Words:
    """The words of the edition this build makes (``language``): English, or the labels its
    site shows (sphinx-proof's and sphinx-exercise's catalogs, Sphinx's admonition labels)."""
    lang = app.config.language or "en"
    if lang == "en" or lang.startswith("en_"):
        return ENGLISH
    from sphinx.locale import admonitionlabels, get_translation

    proof, exercise = get_translation("proof"), get_translation("exercise")
    names = {kind.title(): str(proof(kind.title())) for kind in PROOF_TYPES}
    names.update({"Exercise": str(exercise("Exercise")), "Solution to": str(exercise("Solution to"))})
    names.update({kind.title(): str(label) for kind, label in admonitionlabels.items()})
    if lang.lower().startswith("zh"):
        names.update(ZH_NAMES)
    return Words(lang, names)


#: What may stand before a message in the Markdown source: a list marker, a heading's hashes, a
#: quote's ``>``, a directive's fence (its argument is a message: a theorem's title), indentation.
_LEAD = r"(?P<lead>^[ \t]*(?:(?:[-*+]|\d+[.)])[ \t]+|#{1,6}[ \t]+|>[ \t]?|:{3,}\{[\w:-]+\}[ \t]+)*|\|[ \t]*)"
_FENCE_LEAD = r"(?P<lead>^[ \t]*:{3,}\{[\w:-]+\}[ \t]+)"
#: Sphinx's message for a proof's first paragraph carries the proof's label.
_PROOF_LABEL = re.compile(r"^(?:Proof|证明)\s*[.。:：]\s*")
#: Sphinx's message for a theorem's title: the title in parentheses, as sphinx-proof shows it.
_TITLE = re.compile(r"[(（](.*)[)）]", re.S)


def catalog_messages(path: Path) -> dict[str, str]:
    """The translated messages of a gettext catalog (``.po``): msgid -> msgstr, without fuzzy,
    empty or unchanged ones (maths, names)."""
    from babel.messages.pofile import read_po

    with open(path, "rb") as f:
        po = read_po(f)
    return {m.id: m.string for m in po if m.id and isinstance(m.id, str) and m.string
            and not m.fuzzy and m.string != m.id}


def page_messages(app: Sphinx, docname: str) -> dict[str, str]:
    """The translated messages of ``docname`` in this build's language (its catalog under
    ``locale_dirs``, as Sphinx's i18n reads it); ``{}`` in English or without a catalog."""
    lang = app.config.language or "en"
    if lang == "en":
        return {}
    from sphinx.util.i18n import docname_to_domain

    domain = docname_to_domain(docname, app.config.gettext_compact)
    for folder in app.config.locale_dirs:
        path = Path(app.srcdir) / folder / lang / "LC_MESSAGES" / f"{domain}.po"
        if path.is_file():
            return catalog_messages(path)
    return {}


def markdown_translator(messages: dict[str, str]) -> Callable[[str], str]:
    """A function that puts ``messages`` (English MyST source -> translation, Sphinx's messages:
    one paragraph, list item, heading, table cell or directive title each, lines joined by
    spaces) in place of their English in a Markdown cell's source; what no message matches stays
    as it is. A message matches whole lines (or a whole table cell), with any line breaks and
    indentation between its words; a translation over several lines keeps the indentation."""
    pairs = []
    for msgid, msgstr in messages.items():
        key, value = msgid, msgstr
        if _PROOF_LABEL.match(msgid):
            key, value = _PROOF_LABEL.sub("", msgid, count=1), _PROOF_LABEL.sub("", msgstr, count=1)
        words = key.split()
        if words:
            pairs.append((key, value, r"\s+".join(map(re.escape, words)), _LEAD))
        titled = _TITLE.fullmatch(key)
        if titled and titled[1].split():   # a theorem's title: "(Title)" in the catalog, "Title" after the fence
            pairs.append((titled[1], _TITLE.sub(r"\1", value.strip()),
                          r"\s+".join(map(re.escape, titled[1].split())), _FENCE_LEAD))
    # the longest first: a message inside a longer one's text is not taken out of it
    pairs.sort(key=lambda p: -len(p[0]))
    patterns = [(re.compile(lead + f"(?P<body>{body})" + r"(?=[ \t]*(?:$|\|))", re.M), value)
                for _, value, body, lead in pairs]

    def translate(source: str) -> str:
        found: list[tuple[str, str]] = []

        def hold(value: str) -> Callable[[re.Match], str]:
            def put(m: re.Match) -> str:
                lead = m["lead"]
                found.append((value, " " * len(lead.lstrip("\n")) if not lead.startswith("|") else ""))
                return f"{lead}\0{len(found) - 1}\0"
            return put

        for pattern, value in patterns:
            source = pattern.sub(hold(value), source)

        def back(m: re.Match) -> str:
            value, indent = found[int(m[1])]
            return value.replace("\n", "\n" + indent)

        return re.sub(r"\0(\d+)\0", back, source)

    return translate


# --- the set-up cell, outputs and figures -------------------------------------------------------

#: The first line of the shared set-up cell (scripts/notebooks.py writes it into every chapter).
SETUP_MARKER = "# rope-edu set-up cell"
#: The source set-up cell's install line: from the repository's main branch, for `make lab`.
INSTALL = re.compile(r'^(?P<indent>[ \t]*)%pip install --quiet "rope_edu @ git\+[^"]+"[ \t]*$', re.M)
SETUP_TITLE = "#@title Set-up: run this cell first (it installs rope_edu where it is missing)"
SETUP_COMMENT = """\
# rope-edu set-up cell (the same in every chapter)
# On Colab, or anywhere rope_edu is missing, install the rope_edu this notebook was built and
# run with, published beside it; where rope_edu is installed already, the install is skipped."""
#: What the package's wheel is built from (pyproject.toml names README.md and LICENSE).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "rope_edu")
WHEEL_FOLDER = "wheels"
#: Cells whose outputs the book does not show, so neither does the reader notebook.
NO_OUTPUT_TAGS = {"remove-output", "remove-cell"}
FIGURE_CAPTION = ("*Below, a still picture of the interactive figure as it opens. Run this cell to move "
                  "it: its controls then redraw it.*")
CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--headless=new", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
                 "--disable-dev-shm-usage"]
#: The site at its desktop width; pictures taken at twice the pixels and shown at the figure's width.
VIEWPORT = {"width": 1280, "height": 900}
PIXEL_RATIO = 2
QUANTIZER = "fastoctree-256"  # part of the pictures' cache key


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


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


def reader_setup_source(source: str, wheel_url: str, words: Words | None = None) -> str:
    """The shared set-up cell as the reader notebook has it: a titled form (folded), installing the
    published wheel instead of the repository's main branch; in another language (``words``),
    titled in that language and setting the figures' and plots' language (rope_edu.i18n) before
    the plots' style."""
    words = words or ENGLISH
    lines = source.split("\n")
    if not lines[0].startswith(SETUP_MARKER) or len(INSTALL.findall(source)) != 1:
        raise ValueError("the set-up cell (scripts/notebooks.py) must start with "
                         f"{SETUP_MARKER!r} and hold one `%pip install --quiet \"rope_edu @ git+...\"` line")
    body = lines[1:]
    while body and body[0].startswith("#"):
        body.pop(0)
    code = INSTALL.sub(lambda m: f'{m["indent"]}%pip install --quiet "rope_edu @ {wheel_url}"', "\n".join(body))
    if words.lang != "en":
        if len(STYLE_LINE.findall(code)) != 1:
            raise ValueError("the set-up cell (scripts/notebooks.py) must call rope_edu.plots.use_style() once")
        code = STYLE_LINE.sub(lambda m: f"{m['indent']}import rope_edu.i18n\n\n"
                              f"{m['indent']}# the figures and plots speak this notebook's language\n"
                              f'{m["indent"]}rope_edu.i18n.set_language("{words.lang}")\n{m[0]}', code)
    return f"{words.setup_title}\n{SETUP_COMMENT}\n{code}"


def figure_placeholders(cell: dict) -> list[tuple[int, str, str]]:
    """(output index, figure name, label) of each figure placeholder in a code cell's outputs."""
    from rope_edu.widgets import placeholders  # the one reader of Figure.html's markup

    found = []
    for i, output in enumerate(cell.get("outputs", [])):
        shown = placeholders(_text(output.get("data", {}).get("text/html", "")))
        if shown:
            found.append((i, shown[0].name, shown[0].label))
    return found


def _shows_outputs(cell: dict) -> bool:
    return not NO_OUTPUT_TAGS & set(cell.get("metadata", {}).get("tags", []))


def figure_outputs(png: bytes, width: int, label: str, words: Words | None = None) -> list[dict]:
    """The line that says the figure is a picture (first: read before anyone tries its controls),
    then the picture."""
    words = words or ENGLISH
    caption = words.figure_caption
    return [
        {"output_type": "display_data", "metadata": {},
         "data": {"text/markdown": [caption], "text/plain": [caption.strip("*")]}},
        {"output_type": "display_data", "metadata": {"image/png": {"width": width}},
         "data": {"image/png": base64.b64encode(png).decode("ascii"),
                  "text/plain": [words.picture(label)]}},
    ]


def reader_notebook(nb: dict, docname: str, r: Resolver, executed: dict | None = None,
                    pictures: dict | None = None, wheel_url: str | None = None,
                    translate: Callable[[str], str] | None = None, words: Words | None = None) -> dict:
    """The reader's copy of chapter ``nb``: MyST lowered; with ``executed`` (the book build's run of
    the same notebook), its outputs, each figure placeholder replaced by ``pictures[(docname, k)]``
    (``(png, width)`` of the page's k-th figure) and each SVG plot by its PNG
    (``pictures[_svg_key(svg)]``); the set-up cell moved after the title and, with
    ``wheel_url``, installing that wheel. Another edition's notebook passes ``translate`` (its
    catalog's messages put into each Markdown cell's source before the MyST is lowered:
    :func:`markdown_translator`) and ``words`` (its labels: :func:`edition_words`); code stays."""
    words = words or ENGLISH
    state: dict = {}
    cells = []
    ran = iter([c for c in executed["cells"] if c["cell_type"] == "code"]) if executed else None
    figures = 0
    for cell in nb["cells"]:
        cell = json.loads(json.dumps(cell))
        source = _text(cell["source"])
        in_solution = "solution" in state
        if cell["cell_type"] == "code" and ran is not None:
            done = next(ran)
            if _text(done["source"]) != source:
                raise ValueError(f"{docname}: the executed notebook's code differs from the chapter's")
            outputs = []
            for output in done.get("outputs", []) if _shows_outputs(cell) else []:
                output = json.loads(json.dumps(output))
                placeholder = figure_placeholders({"outputs": [output]})
                if placeholder:
                    picture = (pictures or {}).get((docname, figures))
                    if picture is None:
                        raise ValueError(f"{docname}: no picture of figure {figures + 1} ({placeholder[0][1]})")
                    outputs += figure_outputs(*picture, placeholder[0][2], words)
                    figures += 1
                elif "image/svg+xml" in output.get("data", {}):
                    png, width = (pictures or {})[_svg_key(_text(output["data"]["image/svg+xml"]))]
                    output["data"] = {"image/png": base64.b64encode(png).decode("ascii"),
                                      **{k: v for k, v in output["data"].items() if k != "image/svg+xml"}}
                    output["metadata"] = {**output.get("metadata", {}), "image/png": {"width": width}}
                    output["metadata"].pop("image/svg+xml", None)
                    outputs.append(output)
                else:
                    outputs.append(output)
            # a solution's outputs stay folded with it: the reader runs the cell to see them
            cell["outputs"] = [] if in_solution else outputs
            cell["execution_count"] = done.get("execution_count") if cell["outputs"] else None
        if cell["cell_type"] == "markdown":
            title = state.get("solution")
            if translate is not None:
                source = translate(source)
            text = lower_directives(lower_roles(source, docname, r), docname, r, state, words)
            if in_solution:  # a solution that began in an earlier cell goes on here
                text = f"<details>\n<summary>{words.continued(title)}</summary>\n\n{text}"
            if "solution" in state:  # ... and goes on after this cell: fold this part on its own
                text += "\n\n</details>"
            text = EMPTY_DETAILS.sub("", text)
            cell["source"] = re.sub(r"\n{3,}", "\n\n", text).strip("\n")
            if not cell["source"].strip():  # only a marker (a solution's end): nothing to read
                continue
        elif cell["cell_type"] == "code" and source.startswith(SETUP_MARKER):
            if wheel_url:
                cell["source"] = reader_setup_source(source, wheel_url, words)
                meta = cell.setdefault("metadata", {})
                meta.setdefault("jupyter", {})["source_hidden"] = True
                meta["cellView"] = "form"
                # the book hides it (its pages start with the title); here it is shown, folded
                meta["tags"] = [t for t in meta.get("tags", []) if t != "remove-cell"]
                if not meta["tags"]:
                    del meta["tags"]
        elif cell["cell_type"] == "code" and in_solution:
            meta = cell.setdefault("metadata", {})
            meta.setdefault("jupyter", {})["source_hidden"] = True
            meta["cellView"] = "form"  # Colab shows a form cell's title, not its code
            cell["source"] = f"#@title {words.solution_code(state['solution'])}\n" + source
        elif cell["cell_type"] == "code" and "hide-input" in cell.get("metadata", {}).get("tags", []):
            cell["metadata"].setdefault("jupyter", {})["source_hidden"] = True  # folded, as in the book
        cells.append(cell)
    # the chapter's title first, then the set-up cell
    setup = [i for i, c in enumerate(cells)
             if c["cell_type"] == "code" and _text(c["source"]).startswith((SETUP_MARKER, words.setup_title))]
    title = next((i for i, c in enumerate(cells) if c["cell_type"] == "markdown"), None)
    if setup and title is not None and setup[0] < title:
        if not _text(cells[title]["source"]).startswith("# "):
            raise ValueError(f"{docname}: the first Markdown cell must start with the chapter's `# Title`")
        cells.insert(title, cells.pop(setup[0]))
    return {**nb, "cells": cells}


def _notebook_docs(app: Sphinx) -> list[str]:
    return sorted(d for d in app.env.all_docs if str(app.env.doc2path(d)).endswith(".ipynb"))


def executed_notebook(app: Sphinx, docname: str) -> dict | None:
    """The book build's run of ``docname``, from the jupyter-cache myst-nb read its outputs from."""
    import nbformat
    from jupyter_cache import get_cache

    folder = getattr(getattr(app.env, "mystnb_config", None), "execution_cache_path", "")
    if not folder or not Path(folder).exists():
        return None
    nb = nbformat.read(str(app.env.doc2path(docname)), as_version=4)
    try:
        _, merged = get_cache(folder).merge_match_into_notebook(nb, cell_meta=())
    except KeyError:
        return None
    return json.loads(nbformat.writes(merged))


# --- the package's wheel, published beside the notebooks ---------------------------------------------

def _digest(paths: list[Path], root: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _files_under(root: Path, names) -> list[Path]:
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
    key = _digest(_files_under(root, WHEEL_SOURCES), root)
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


# --- pictures of the figures ---------------------------------------------------------------------------

def _snapshot_key(html: str, assets: str) -> str:
    return hashlib.sha256(f"{assets}\0{PIXEL_RATIO}\0{VIEWPORT}\0{QUANTIZER}\0{html}".encode()).hexdigest()[:24]


def _small_png(png: bytes) -> bytes:
    """The screenshot as a 256-colour PNG (flat colours and lines: a fraction of the bytes)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    out = io.BytesIO()
    # the octree quantizer: a fifth of median cut's time, and smaller files of the same look here
    small = image.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    small.save(out, "PNG", compress_level=9)
    return out.getvalue()


def _svg_key(svg: str) -> str:
    return "svg-" + hashlib.sha256(f"{PIXEL_RATIO}\0{QUANTIZER}\0{svg}".encode()).hexdigest()[:24]


def take_pictures(app: Sphinx, wanted: dict[str, list[tuple[str, str]]], svgs: list[str]) -> dict:
    """Pictures, as ``key -> (png, width in CSS px)``:

    * ``(docname, k)``: the k-th figure of each page as the built site draws it, in its default
      state (``wanted`` maps each page to its placeholders' (name, html), in page order);
    * ``_svg_key(svg)``: each SVG plot, as a PNG. JupyterLab shows no SVG output of a notebook it
      does not trust (a downloaded one, or Binder's) and falls back to ``<Figure size ...>``; a PNG
      it shows.

    Taken by Chromium from the built site served on 127.0.0.1 (no other host), at twice the
    pixels, cached in ``_build/.reader_figures`` by what they show, the figure engine's files and
    the site's stylesheets."""
    out = Path(app.outdir)
    # the figure engine, and every stylesheet of the site (the theme's column sets a figure's width)
    static = out / "_static"
    assets = _digest(sorted({*_files_under(static, ["rope_figures"]), *static.rglob("*.css")}), out)
    cache = out.parent / ".reader_figures"
    cache.mkdir(exist_ok=True)
    keys = {(docname, k): _snapshot_key(html, assets)
            for docname, figures in wanted.items() for k, (_, html) in enumerate(figures)}
    keys.update({_svg_key(svg): _svg_key(svg) for svg in svgs})
    pictures, todo = {}, set()
    for what, key in keys.items():
        path = cache / f"{key}.png"
        if path.exists() and path.with_suffix(".json").exists():
            pictures[what] = (path.read_bytes(), json.loads(path.with_suffix(".json").read_text())["width"])
        else:
            todo.add(what)
    if todo:
        started = time.perf_counter()
        _take_pictures(app, wanted, {k: s for s in svgs if (k := _svg_key(s)) in todo}, todo, keys, cache, pictures)
        LOGGER.info(f"reader notebooks: {len(todo)} pictures taken in {time.perf_counter() - started:.1f} s "
                    f"({len(keys) - len(todo)} from {cache})")
    for stale in cache.iterdir():  # keep only this build's pictures
        if stale.stem not in set(keys.values()):
            stale.unlink()
    return pictures


def _take_pictures(app, wanted, svgs, todo, keys, cache, pictures) -> None:
    chromium = next((p for p in CHROMIUM if os.access(p, os.X_OK)), None)
    if chromium is None:
        raise RuntimeError("the reader notebooks' pictures need Debian's chromium "
                           "(apt-get install chromium), which the browser tests use too")
    from playwright.sync_api import sync_playwright

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    def keep(what, host, label) -> None:
        width = round(host.bounding_box()["width"])
        png = _small_png(host.screenshot(animations="disabled", caret="hide"))
        key = keys[what]
        (cache / f"{key}.png").write_bytes(png)
        (cache / f"{key}.json").write_text(json.dumps({"width": width, "what": label}))
        pictures[what] = (png, width)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(app.outdir)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
            context = browser.new_context(viewport=VIEWPORT, device_scale_factor=PIXEL_RATIO,
                                          reduced_motion="reduce", color_scheme="light")
            context.route("**/*", lambda route: (route.continue_() if route.request.url.startswith(base)
                                                 else route.abort()))  # no other host
            for docname, figures in wanted.items():
                ks = [k for k in range(len(figures)) if (docname, k) in todo]
                if not ks:
                    continue
                page = context.new_page()
                page.goto(f"{base}/{docname}.html", wait_until="load", timeout=120_000)
                page.wait_for_function(
                    "() => [...document.querySelectorAll('.rope-fig-static')].every("
                    "f => f.dataset.state || f.classList.contains('rope-fig-error'))", timeout=120_000)
                # nothing sticky over a figure; fonts loaded
                page.add_style_tag(content=".bd-header, .bd-header-article, .header-article"
                                           " { position: static !important; }")
                page.evaluate("() => document.fonts.ready.then(() => true)")
                hosts = page.locator(".rope-fig-static")
                names = hosts.evaluate_all(
                    "els => els.map(e => [e.dataset.figure, e.classList.contains('rope-fig-error')])")
                if [n for n, _ in names] != [name for name, _ in figures]:
                    raise RuntimeError(f"{docname}: the page shows figures {[n for n, _ in names]}, "
                                       f"the executed notebook {[name for name, _ in figures]}")
                for k in ks:
                    if names[k][1]:
                        raise RuntimeError(f"{docname}: figure {k + 1} ({names[k][0]}) failed to draw on the site")
                    hosts.nth(k).scroll_into_view_if_needed()
                    keep((docname, k), hosts.nth(k), f"{docname}: {names[k][0]}")
                page.close()
            if svgs:
                page = context.new_page()
                for key, svg in svgs.items():
                    page.set_content('<!DOCTYPE html><html><body style="margin:0;background:#fff">'
                                     f'<div id="plot" style="display:inline-block">{svg}</div></body></html>')
                    keep(key, page.locator("#plot"), "SVG plot")
                page.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()


# --- after the build ---------------------------------------------------------------------------------

def write_reader_notebooks(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    r = Resolver(app)
    out = Path(app.outdir)
    branch = app.config.reader_notebooks_branch
    theme = app.config.html_theme_options or {}
    published = Published(theme.get("repository_url", ""), branch)
    wheel = publish_wheel(app)
    write_binder(app, wheel)
    sources, executed, wanted, svgs = {}, {}, {}, []
    for docname in _notebook_docs(app):
        sources[docname] = json.loads(Path(app.env.doc2path(docname)).read_text(encoding="utf-8"))
        executed[docname] = executed_notebook(app, docname)
        if executed[docname] is None:
            LOGGER.warning(f"reader notebooks: no executed copy of {docname} in the jupyter-cache; "
                           "its reader notebook has no outputs")
            continue
        figures = []
        for cell, ran in zip((c for c in sources[docname]["cells"] if c["cell_type"] == "code"),
                             (c for c in executed[docname]["cells"] if c["cell_type"] == "code")):
            if _shows_outputs(cell):
                outputs = ran.get("outputs", [])
                figures += [(name, _text(outputs[i]["data"]["text/html"])) for i, name, _ in figure_placeholders(ran)]
                svgs += [_text(o["data"]["image/svg+xml"]) for o in outputs if "image/svg+xml" in o.get("data", {})]
        if figures:
            wanted[docname] = figures
    try:
        pictures = take_pictures(app, wanted, svgs)
    except Exception as exc:  # (any failure is the build's warning, an error under -W)
        LOGGER.warning(f"reader notebooks: no pictures of the figures: {exc}")
        pictures = None
    # the edition's folder on the published branch ("zh/" for the Chinese site); its notebooks
    # install the one wheel, published with the English site at the branch's root
    edition = app.config.reader_notebooks_edition.strip("/")
    edition = f"{edition}/" if edition else ""
    wheel_url = published.raw(wheel)
    words = edition_words(app)
    binderhub = ((theme.get("launch_buttons") or {}).get("binderhub_url") or "").rstrip("/")
    for docname, nb in sources.items():
        target = out / "_sources" / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        ran = executed[docname] if pictures is not None else None
        translate = markdown_translator(page_messages(app, docname)) if words.lang != "en" else None
        reader = reader_notebook(nb, docname, r, ran, pictures, wheel_url, translate, words)
        target.write_text(json.dumps(reader, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        page = out / f"{docname}.html"
        if page.exists():
            html = page.read_text(encoding="utf-8")
            path = f"{edition}_sources/{docname}.ipynb"
            fixed = re.sub(r'https://colab\.research\.google\.com/github/[^"]+?/' + re.escape(docname) + r"\.ipynb",
                           lambda m: published.colab(path), html)
            if binderhub:
                binder = re.escape(binderhub) + r'/v2/gh/[^"?]+\?urlpath=(?P<ui>[a-z/]+?)/' + re.escape(docname) + r"\.ipynb"
                fixed = re.sub(binder, lambda m: published.binder(binderhub, m["ui"], path), fixed)
            if fixed != html:
                page.write_text(fixed, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.add_config_value("reader_notebooks_branch", "gh-pages", "html")
    # where this edition's site lies on that branch: "" (the English site), "zh/" (the Chinese one)
    app.add_config_value("reader_notebooks_edition", "", "html")
    # after _ext/rope_figures.py has written the figure engine into _static (default priority 500)
    app.connect("build-finished", write_reader_notebooks, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
