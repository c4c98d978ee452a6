"""Checks out of the flow: one compact line per section that opens the section's verdicts.

Every claim in a chapter is followed by a check cell (``rope_edu.verify``) that runs on every
build and fails the build when its claim is wrong. A check whose code is not the lesson is
tagged ``hide-input``; this extension gathers those cells of a section into one fold at the end
of the section's own text (before its subsections)::

    ✓ 6 checks in this section                 <- the only line the flow shows
        checked: R_mᵀR_n = R_(n−m), ...        <- each verdict opens its code
            with verify(...) as v: ...

A cell is gathered when it is tagged ``hide-input``, is not inside an exercise or a solution,
and everything it printed is verdict lines (``checked: ...``). Cells that print anything else
(a table, a plot, a number the prose quotes) stay where they are, and so do the visible check
cells, whose code is the lesson. Only the page changes: the notebooks, their execution and the
reader notebooks are untouched.
"""

from __future__ import annotations

import re
import unicodedata
from html import escape
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from output_words import translate_printed, translate_text
from rope_edu.i18n import is_chinese

FOLDER = "rope_checks"
STATIC = Path(__file__).with_name("check_folds")
PREFIX = "checked:"


class check_group(nodes.General, nodes.Element):
    """The fold holding a section's checks (``checks`` verdicts) and the code of ``outputs``
    other cells whose code is folded (plots, tables)."""


class check_item(nodes.General, nodes.Element):
    """One folded cell's code, opened from its ``verdicts`` (a check) or its ``label``."""


def group_label(checks: int, outputs: int, plots: int, language: str | None = "en") -> str:
    """The fold's one line: "6 checks and the code of 2 figures in this section" (in Chinese on
    the Chinese edition: "本节：6 项检查和 2 张图的代码", "本节：1 项输出的代码")."""
    if is_chinese(language):
        parts = [f"{checks} 项检查"] if checks else []
        if outputs:
            parts.append(f"{outputs} 张图的代码" if plots == outputs else f"{outputs} 项输出的代码")
        # a number after 和 gets its space, as everywhere in the Chinese text: 6 项检查和 2 张图的代码
        return "本节：" + "".join(p if i == 0 else ("和 " if p[0].isdigit() else "和") + p for i, p in enumerate(parts))
    parts = [f"{checks} check{'s' if checks != 1 else ''}"] if checks else []
    if outputs:
        parts.append(f"the code of {outputs} {'figure' if plots == outputs else 'output'}{'s' if outputs != 1 else ''}")
    label = " and ".join(parts) + " in this section"
    return label if checks else label[0].upper() + label[1:]


def _visit_group(self, node: check_group) -> None:
    n = node["checks"]
    label = group_label(n, node["outputs"], node["plots"], self.config.language)
    mark = '<span class="rope-checks-mark" aria-hidden="true">✓</span> ' if n else ""
    self.body.append(f'<details class="rope-checks">\n<summary>{mark}{escape(label)}</summary>\n')


#: A verdict as ``rope_edu.verify`` prints it: "checked: <claim>", then what it measured, if anything
#: ("; max error 4e-16 (allowed 1e-12)", "; max relative error ...", "; exact").
_VERDICT = re.compile(r"^checked: (?P<claim>.*?)(?:; (?P<details>(?:max error|max relative error|exact)\b.*))?$", re.S)
#: What it measured, in Chinese: each part of the details (", " between them).
_DETAILS_ZH = ((re.compile(r"^max relative error (\S+) \(allowed (\S+)\)$"), r"最大相对误差 \1（允许 \2）"),
               (re.compile(r"^max error (\S+) \(allowed (\S+)\)$"), r"最大误差 \1（允许 \2）"),
               (re.compile(r"^max error (\S+)$"), r"最大误差 \1"),
               (re.compile(r"^exact$"), "完全相等"))


def split_verdict(text: str) -> tuple[str | None, str]:
    """(the claim, what was measured) of a verdict line; (None, "") for text that is not one."""
    m = _VERDICT.match(text)
    return (m["claim"], m["details"] or "") if m else (None, "")


def _claim_in(claim: str, claims: dict[str, str]) -> str | None:
    """A claim through the outputs catalog: as it is, else its template (its numbers as ``{0}``,
    ``{1}``, ..., ``output_words.template``, what ``scripts/i18n.py update`` writes) with this build's
    numbers put back; None when it has no translation."""
    return claims.get(claim) or translate_text(claim, claims)


def _details_zh(details: str) -> str:
    parts = []
    for part in details.split(", "):
        for pattern, zh in _DETAILS_ZH:
            if pattern.match(part):
                part = pattern.sub(zh, part)
                break
        parts.append(part)
    return "，".join(parts)


def verdict_text(text: str, claims: dict[str, str]) -> str | None:
    """A verdict line in Chinese as plain text ("已检查：<claim>；最大误差 ..."), for a verdict that
    a cell prints in the flow (not folded); None when it is no verdict or its claim has no translation."""
    claim, details = split_verdict(text)
    said = _claim_in(claim, claims) if claim is not None else None
    if said is None:
        return None
    return "已检查：" + said + ("；" + _details_zh(details) if details else "")


def verdict_html(text: str, language: str | None = "en", claims: dict[str, str] | None = None) -> str:
    """A verdict as the fold shows it (HTML): as printed in English; in Chinese "已检查：" with the claim
    through ``claims`` (the outputs catalog: English claim template -> translation; a claim it lacks
    stays English, marked so) and what was measured in Chinese."""
    claim, details = split_verdict(text)
    if not is_chinese(language) or claim is None:
        return escape(text)
    said = _claim_in(claim, claims or {})
    out = "已检查：" + (escape(said) if said else f'<span lang="en">{escape(claim)}</span>')
    if details:
        out += "；" + escape(_details_zh(details))
    return out


def _claims(app: Sphinx) -> dict[str, str]:
    """The outputs catalog of the edition (the checks' claims among its messages; {} in English)."""
    try:
        from editions import output_catalog
    except ImportError:
        return {}
    return output_catalog(app)[1]


def _visit_item(self, node: check_item) -> None:
    if node["verdicts"]:
        claims = _claims(self.builder.app) if is_chinese(self.config.language) else {}
        lines = "".join(f'<span class="rope-verdict">{verdict_html(v, self.config.language, claims)}</span>'
                        for v in node["verdicts"])
    else:
        lines = f'<span class="rope-code-label">{escape(node["label"])}</span>'
    self.body.append(f'<details class="rope-check">\n<summary><span class="rope-check-lines">{lines}</span></summary>\n')


def _depart(self, node: nodes.Element) -> None:
    self.body.append("</details>\n")


def _split_verdicts(text: str) -> tuple[list[str], str]:
    """(the verdicts printed in ``text``, each joined onto one line; the rest of the text)."""
    verdicts: list[str] = []
    rest: list[str] = []
    in_verdict = False
    for line in text.splitlines():
        if line.startswith(PREFIX):
            verdicts.append(line)
            in_verdict = True
        elif in_verdict and line.startswith("    "):   # verify() wraps a long verdict with an indent
            verdicts[-1] += " " + line.strip()
        else:
            in_verdict = False
            rest.append(line)
    return verdicts, "\n".join(rest).strip("\n")


#: A solution's code cell folded where it stands, when it prints no verdict (by language).
SOLUTION_CODE = {"en": "show the code", "zh": "显示代码"}

#: A folded cell's line in the fold, by language: (figure with a caption, figure, table, output).
LABELS = {
    "en": ("code of the figure: {}", "code of the figure above", "code of the table above",
           "code of the output above"),
    "zh": ("图的代码：{}", "上图的代码", "上表的代码", "上方输出的代码"),
}


#: The atoms a Chinese caption is never cut inside: a number with its digit groups ("10 000", "1,024",
#: "0.5"), a Latin word or name ("SmolLM2-135M", "4-bit"); any other character is an atom of its own.
_ATOM = re.compile(r"\d+(?: \d{3})+(?!\d)|[A-Za-z0-9]+(?:[.,\-_/+^×'][A-Za-z0-9]+)*|.", re.S)
_BREAK_AFTER = set("，。；：、）」』！？,;:)")


def _width(text: str) -> int:
    """Columns ``text`` takes: two for a wide (East Asian) character, one for any other."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def clip_zh(text: str, width: int = 48) -> str:
    """``text`` if it fits ``width`` columns, else its longest head that does (with "…"), cut after a
    punctuation mark when one falls in the second half, else between two atoms (:data:`_ATOM`):
    never inside a number or a Latin word."""
    if _width(text) <= width:
        return text
    head, used, cuts = "", 0, []
    for atom in _ATOM.findall(text):
        used += _width(atom)
        if used > width - 1:   # room for the …
            break
        head += atom
        cuts.append((len(head), atom[-1] in _BREAK_AFTER))
    if not cuts:
        return "…"
    at = next((n for n, punct in reversed(cuts) if punct and _width(head[:n]) >= width // 2), cuts[-1][0])
    return head[:at].rstrip(" ，；：、,;:") + "…"


#: What no wrapped Chinese line starts with (the line-breaking rule of Chinese typesetting): closing
#: punctuation and a per cent sign go down with the atom before them.
_NO_LINE_START = set("，。；：、）」』！？%,.;:)")


def wrap_zh(text: str, width: int = 74, indent: int = 4) -> str:
    """``text`` wrapped to ``width`` columns as ``rope_edu.verdicts`` wraps an English verdict (its
    later lines indented by ``indent``): a Chinese line breaks between any two characters, never
    inside a number or a Latin word (:data:`_ATOM`) and never before closing punctuation (the atom
    before it goes down with it); a printed line does not wrap by itself."""
    lines, line = [], []
    for atom in _ATOM.findall(text):
        if "".join(line).strip() and _width("".join(line) + atom) > width:
            carry = []
            if atom in _NO_LINE_START:   # down go the punctuation before it and the atom before that
                while len(line) > 2 and line[-1] in _NO_LINE_START:
                    carry.insert(0, line.pop())
                if len(line) > 2 and not line[-1].isspace():
                    carry.insert(0, line.pop())
            lines.append("".join(line).rstrip())
            line = [" " * indent] + carry
            if atom.isspace() and not carry:
                continue
        line.append(atom)
    lines.append("".join(line).rstrip())
    return "\n".join(lines)


def _label(output: nodes.Element | None, language: str | None = "en") -> tuple[str, bool]:
    """What a folded cell's code makes (for its line in the fold), and whether it is a plot."""
    zh = is_chinese(language)
    captioned, figure, table, other = LABELS["zh" if zh else "en"]
    if output is not None:
        for fig in output.findall(nodes.figure):
            caption = next(iter(fig.findall(nodes.caption)), None)
            if caption is not None:
                text = caption.astext()
                if zh:   # no spaces between words: what fits 48 columns, cut between words
                    return captioned.format(clip_zh(text)), True
                words = text.split()
                return captioned.format(" ".join(words[:9]) + (" …" if len(words) > 9 else "")), True
        if next(iter(output.findall(nodes.image)), None) is not None:
            return figure, True
        if next(iter(output.findall(nodes.table)), None) is not None or "<table" in output.astext():
            return table, False
    return other, False


def _in_exercise(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if type(parent).__name__.startswith(("exercise", "solution")):
            return True
        parent = parent.parent
    return False


def _in_solution(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if type(parent).__name__.startswith("solution"):
            return True
        parent = parent.parent
    return False


def _fold(cell: nodes.container, language: str | None = "en") -> tuple[nodes.container, list[str], str, bool]:
    """Take a folded cell apart: (its code as a cell of the fold, its verdicts, its label, is a
    plot). The cell keeps, in place, whatever it printed besides its verdicts."""
    source = [c for c in cell.children if c.get("nb_element") == "cell_code_source"]
    output = next((c for c in cell.children if c.get("nb_element") == "cell_code_output"), None)
    verdicts: list[str] = []
    if output is not None:
        for block in list(output.children):
            if isinstance(block, nodes.literal_block) and "stream" in block["classes"]:
                found, rest = _split_verdicts(block.astext())
                verdicts += found
                if not rest.strip():
                    output.remove(block)
                elif found:
                    block.children = [nodes.Text(rest)]
                    block.rawsource = rest
        if not output.children:
            cell.remove(output)
            output = None
    label, plot = _label(output, language)
    for s in source:
        cell.remove(s)
    cell["hide_mode"] = None   # the fold replaces myst-nb's "Show code cell source" bar
    folded = nodes.container(nb_element="cell_code", classes=list(cell["classes"]) + ["rope-check-cell"])
    item = check_item(verdicts=verdicts, label=label)
    item.extend(source)
    folded.append(item)
    return folded, verdicts, label, plot


class GatherChecks(SphinxPostTransform):
    """Move the code of a section's folded cells, and the verdicts of its checks, into one
    :class:`check_group` (before myst-nb folds cell inputs, priority 199)."""

    default_priority = 198
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for section in list(self.document.findall(nodes.section)):
            cells = [c for c in section.children
                     if isinstance(c, nodes.container) and c.get("nb_element") == "cell_code"
                     and c.get("hide_mode") == "input" and not _in_exercise(c)
                     and any(x.get("nb_element") == "cell_code_source" for x in c.children)]
            if not cells:
                continue
            group = check_group(checks=0, outputs=0, plots=0)
            for cell in cells:
                folded, verdicts, _, plot = _fold(cell, self.config.language)
                group.append(folded)
                if verdicts:
                    group["checks"] += len(verdicts)
                else:
                    group["outputs"] += 1
                    group["plots"] += plot
                if not cell.children:
                    section.remove(cell)
            # at the end of the section's own text, before its first subsection
            index = next((i for i, c in enumerate(section.children) if isinstance(c, nodes.section)),
                         len(section.children))
            section.insert(index, group)


class FoldSolutions(SphinxPostTransform):
    """Inside an opened solution the reader meets the answer, not a wall of code (issue 45: on a
    phone a solution was mostly wrapped code). Each code cell of a solution keeps its place, its
    code folded under its verdicts (or "show the code" when it prints none) and everything else
    it printed below, open. The solution's title is plain text: sphinx-exercise makes "Exercise 3.1"
    in it a link to the exercise (just above it), and a tap there jumped to the exercise instead
    of opening the solution."""

    default_priority = 198
    formats = ("html",)

    def run(self, **kwargs) -> None:
        zh = is_chinese(self.config.language)
        for solution in [n for n in self.document.findall(nodes.Element) if type(n).__name__.startswith("solution")]:
            for title in solution.findall(nodes.title):
                for link in list(title.findall(nodes.reference)):   # as text: sphinx-togglebutton
                    link.replace_self(nodes.Text(link.astext()))       # opens on a tap on the title itself
                break
        for cell in list(self.document.findall(nodes.container)):
            if (cell.get("nb_element") != "cell_code" or not _in_solution(cell)
                    or not any(c.get("nb_element") == "cell_code_source" for c in cell.children)):
                continue
            at = next(i for i, c in enumerate(cell.children) if c.get("nb_element") == "cell_code_source")
            folded, verdicts, _, _ = _fold(cell, self.config.language)
            item = folded.children[0]
            if not verdicts:
                item["label"] = SOLUTION_CODE["zh" if zh else "en"]
            cell.insert(at, item)
            cell["classes"] = list(cell["classes"]) + ["rope-check-cell"]


class TranslateVerdicts(SphinxPostTransform):
    """On a translated edition: the verdicts a cell prints in the flow (a visible check, a check in
    an exercise, a cell that prints more than verdicts) in the edition's language, as the folded
    ones (after :class:`GatherChecks` took those out). A verdict whose claim has no translation stays
    as printed."""

    default_priority = 205
    formats = ("html",)

    def run(self, **kwargs) -> None:
        if not is_chinese(self.config.language):
            return
        claims = _claims(self.app)
        for block in self.document.findall(nodes.literal_block):
            if "stream" not in block["classes"] or PREFIX not in block.astext():
                continue
            text = translate_printed(block.astext(), {},
                                     verdict=lambda line: _wrapped(verdict_text(line, claims)))
            if text != block.astext():
                block[:] = [nodes.Text(text)]
                block.rawsource = text


def _wrapped(text: str | None) -> str | None:
    return None if text is None else wrap_zh(text)


def _add_assets(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.add_css_file(f"{FOLDER}/checks.css")


def _write_assets(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / "_static" / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    (out / "checks.css").write_text((STATIC / "checks.css").read_text(encoding="utf-8"), encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.add_node(check_group, html=(_visit_group, _depart))
    app.add_node(check_item, html=(_visit_item, _depart))
    app.add_post_transform(GatherChecks)
    app.add_post_transform(FoldSolutions)
    app.add_post_transform(TranslateVerdicts)
    app.connect("builder-inited", _add_assets)
    app.connect("build-finished", _write_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
