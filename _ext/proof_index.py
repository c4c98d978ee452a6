"""A proof index that readers can use: "Theorem 4.1 · RoPE rotations form a group", by chapter.

sphinx-proof's own index lists raw labels (``thm-rope-group``) in alphabetical order. This one
groups the results by chapter, in the order of the pages and with the numbers and titles they show.

Also: a proof folded in a "Proof" dropdown (``::::{admonition} Proof`` with ``:class: dropdown``
around ``:::{prf:proof}``) opened on "Proof" and then "Proof." again, which sphinx-proof writes
before every proof's text (issue 45). On the HTML pages the repeated word goes; the catalogs keep
their messages (the gettext builder sees the text as written).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx_proof.domain import ProofIndex
from sphinx_proof.nodes import proof_node

HEADER = re.compile(r"^:{3,}\{prf:(?P<type>[a-z]+)\}[ \t]*(?P<title>.*)\n(?P<options>(?::[a-z-]+:.*\n)*)", re.M)


def _titles(env, docname: str) -> dict[str, str]:
    """{label: title} from the directives of one source page."""
    path = Path(env.doc2path(docname))
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        cells = json.loads(text)["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    titles = {}
    for m in HEADER.finditer(text):
        label = re.search(r":label:\s*(\S+)", m["options"])
        if label:
            # plain text in the index: $n - m$ -> n - m, W_q -> W_q
            titles[label.group(1)] = re.sub(r"\$([^$]*)\$", r"\1", m["title"].strip()).replace("\\", "")
    return titles


def _chapter(env, docname: str) -> tuple[str, tuple]:
    """The chapter a page belongs to, and its number: the page itself when the numbered part lists
    it, else the numbered page whose toctree holds it (a further page of a chapter, a `sections:`
    entry in _toc.yml, has no number of its own)."""
    number = env.toc_secnumbers.get(docname, {}).get("", ())
    if number:
        return docname, tuple(number)
    for parent, children in env.toctree_includes.items():
        if docname in children and env.toc_secnumbers.get(parent, {}).get(""):
            return parent, tuple(env.toc_secnumbers[parent][""])
    return docname, ()


def generate(self: ProofIndex, docnames=None):
    env = self.domain.env
    proofs = getattr(env, "proof_list", {})
    groups: dict[str, list] = defaultdict(list)
    order: dict[str, tuple] = {}
    titles: dict[str, dict[str, str]] = {}
    for label, values in proofs.items():
        docname = values["docname"]
        if docname not in titles:
            titles[docname] = _titles(env, docname)
        chapter_doc, chapter = _chapter(env, docname)
        head = env.titles[chapter_doc].astext()
        key = (f"Chapter {'.'.join(map(str, chapter))}. " if chapter else "") + head
        order[key] = tuple(chapter) or (999,)
        numbers = env.toc_fignumbers.get(docname, {}).get(values["countertype"], {}).get(label, ())
        name = f"{values['realtype'].title()} {'.'.join(map(str, numbers))}".strip()
        # name, subtype, docname, anchor, extra, qualifier, description
        place = list(titles[docname]).index(label) if label in titles[docname] else len(titles[docname])
        # the chapter's own page first, then its further pages in reading order
        pages = env.toctree_includes.get(chapter_doc, [])
        page = pages.index(docname) + 1 if docname in pages else 0
        groups[key].append(((page, place), (name, 0, docname, label, "", "", titles[docname].get(label, ""))))
    content = [(key, [entry for _, entry in sorted(groups[key])]) for key in sorted(groups, key=order.get)]
    return content, False


#: The word a proof starts with: sphinx-proof's "Proof. ", or the Chinese catalog's translation of it.
PROOF_WORD = re.compile(r"^\s*(?:Proof|证明)\s*[.。:：]\s*")


def _folded_proof_label(proof: nodes.Element) -> nodes.Text | None:
    """The text node that starts ``proof`` with "Proof." when a dropdown titled "Proof" holds it."""
    fold = proof.parent
    if not isinstance(fold, nodes.admonition) or "dropdown" not in fold["classes"]:
        return None
    title = next((c for c in fold.children if isinstance(c, nodes.title)), None)
    if title is None or not PROOF_WORD.match(title.astext() + "."):
        return None
    para = next(proof.findall(nodes.paragraph), None)
    first = next(para.findall(nodes.Text), None) if para is not None else None
    return first if first is not None and PROOF_WORD.match(first.astext()) else None


def drop_repeated_proof_word(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Say "Proof" once in a folded proof: drop the body's "Proof." under the fold's "Proof"."""
    if app.builder.format != "html":
        return
    for proof in list(doctree.findall(proof_node)):
        first = _folded_proof_label(proof)
        if first is None:
            continue
        rest = PROOF_WORD.sub("", first.astext(), count=1)
        if rest:
            first.parent.replace(first, nodes.Text(rest))
        else:
            first.parent.remove(first)


def setup(app: Sphinx) -> dict:
    ProofIndex.generate = generate
    app.connect("doctree-resolved", drop_repeated_proof_word)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
