"""What a reader notebook says in its edition's language besides the chapter's own text
(:class:`Words`: labels, the set-up cell's title, the figures' captions), and the chapters'
Markdown put through the page's gettext catalog (:func:`markdown_translator`)."""

from __future__ import annotations

import bisect
import re
from pathlib import Path
from typing import Callable

from sphinx.application import Sphinx
from rope_edu.i18n import is_chinese

#: The proof-like directives (sphinx-proof's ``prf:<type>``) whose labels an edition names.
PROOF_TYPES = {"theorem", "lemma", "corollary", "proposition", "definition", "remark", "example", "conjecture"}
SETUP_TITLE = "#@title Set-up: run this cell first (it installs rope_edu where it is missing)"
FIGURE_CAPTION = ("*Below, a still picture of the interactive figure as it opens. Run this cell to move "
                  "it: its controls then redraw it.*")


class Words:
    """What the reader notebook says besides the chapter's own text, in one edition's language:
    theorem, proof and exercise labels (from sphinx-proof's, sphinx-exercise's and Sphinx's own
    catalogs, as the edition's site shows them, or from ``names``), the set-up cell's title and the
    figures' captions. ``Words()`` is English, exactly what the English reader notebooks say."""

    def __init__(self, lang: str = "en", names: dict[str, str] | None = None) -> None:
        self.lang = lang
        self.names = dict(names or {})
        self.chinese = is_chinese(lang)
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
        """The picture's text: ``label`` (the figure's ``aria-label`` as the English run wrote it,
        the executed notebooks being shared by the editions) in this edition's language."""
        if self.lang == "en" or self.lang.startswith("en_"):
            return f"<still picture of the figure: {label}>"
        from rope_edu.i18n import translate

        label = translate(label, self.lang)
        return f"<交互式图的静态图片：{label}>" if self.chinese else f"<still picture of the figure: {label}>"


ENGLISH = Words()
ZH_SETUP_TITLE = "#@title 设置：请先运行此单元（缺少 rope_edu 时安装它）"
ZH_FIGURE_CAPTION = "*下面是交互式图打开时的静态图片。运行此单元即可操作它：拖动控件会重新绘制。*"
#: Labels the edition's site takes from catalogs that lack them (sphinx-proof has no "Proof").
ZH_NAMES = {"Proof": "证明"}
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
    if is_chinese(lang):
        names.update(ZH_NAMES)
    return Words(lang, names)


#: What may stand before a message in the Markdown source, from the start of its line: a list
#: marker, a heading's hashes, a quote's ``>``, a directive's fence (its argument is a message: a
#: theorem's title), a footnote's definition (``[^label]:``), indentation; or, anywhere in a line,
#: a table cell's ``|``. A theorem's title has only its fence before it.
_LEAD = re.compile(r"[ \t]*(?:(?:[-*+]|\d+[.)])[ \t]+|#{1,6}[ \t]+|>[ \t]?|:{3,}\{[\w:-]+\}[ \t]+"
                   r"|\[\^[^\]\s]+\]:[ \t]*)*")
_FENCE_LEAD = re.compile(r"[ \t]*:{3,}\{[\w:-]+\}[ \t]+")
_CELL_LEAD = re.compile(r"\|[ \t]*\Z")
#: What may follow a message: spaces, then the line's end or a table cell's ``|``.
_LINE_END = re.compile(r"[ \t]*(?:$|\|)", re.M)
_SPACE = re.compile(r"\s+")


def _squash(source: str) -> tuple[str, list[tuple[int, int, bool]]]:
    """``source`` with each run of white space one space, and where each piece of it starts:
    ``(position in the squashed text, position in source, whether a space)``."""
    flat, starts, last, n = [], [], 0, 0
    for m in _SPACE.finditer(source):
        text = source[last:m.start()]
        starts += [(n, last, False), (n + len(text), m.start(), True)]
        flat += [text, " "]
        n += len(text) + 1
        last = m.end()
    starts.append((n, last, False))
    flat.append(source[last:])
    return "".join(flat), starts


def _unsquash(starts: list[tuple[int, int, bool]], at: int) -> int:
    """The position in the source of the squashed text's character ``at`` (a space: its run's start)."""
    n, pos, space = starts[bisect.bisect_right(starts, (at, float("inf"), True)) - 1]
    return pos if space else pos + at - n


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
            pairs.append((key, value, " ".join(words), False))
        titled = _TITLE.fullmatch(key)
        if titled and titled[1].split():   # a theorem's title: "(Title)" in the catalog, "Title" after the fence
            pairs.append((titled[1], _TITLE.sub(r"\1", value.strip()),
                          " ".join(titled[1].split()), True))
    # the longest first: a message inside a longer one's text is not taken out of it. A message is
    # looked for as its words joined by single spaces in the source with each run of white space
    # made one space (str.find: no pattern per message, whose compiling cost seconds an edition)
    pairs.sort(key=lambda p: -len(p[0]))

    def lead_start(source: str, at: int, title: bool) -> int | None:
        """Where the lead before the message at ``at`` begins, or None if it may not stand there."""
        line = source.rfind("\n", 0, at) + 1
        if (_FENCE_LEAD if title else _LEAD).fullmatch(source, line, at):
            return line
        cell = None if title else _CELL_LEAD.search(source, line, at)
        return cell.start() if cell else None

    def translate(source: str) -> str:
        found: list[tuple[str, str]] = []
        flat, starts = _squash(source)
        for _, value, words, title in pairs:
            parts, done, at = [], 0, flat.find(words)
            while at >= 0:
                begin, end = _unsquash(starts, at), _unsquash(starts, at + len(words) - 1) + 1
                start = lead_start(source, begin, title)
                if start is not None and start >= done and _LINE_END.match(source, end):
                    lead = source[start:begin]
                    found.append((value, " " * len(lead) if not lead.startswith("|") else ""))
                    parts += [source[done:start], f"{lead}\0{len(found) - 1}\0"]
                    done = end
                at = flat.find(words, at + (len(words) if done == end else 1))
            if parts:
                source = "".join(parts) + source[done:]
                flat, starts = _squash(source)

        def back(m: re.Match) -> str:
            value, indent = found[int(m[1])]
            return value.replace("\n", "\n" + indent)

        return re.sub(r"\0(\d+)\0", back, source)

    return translate
