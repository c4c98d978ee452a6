"""The words code cells print and compute, through the outputs catalog, their numbers left as computed.

A chapter's outputs are executed once, in English (the Chinese build reads the English build's
executed notebooks). Two kinds of them are prose:

- **printed lines** (a stream output's lines that read as English: "max error 3e-16 at position 12",
  "16,384 tokens read in 2 windows"), besides the checks' verdicts (``checked: ...``, translated by
  ``check_folds.verdict_html`` / :func:`translate_verdict`);
- **computed paragraphs** (Markdown a cell writes, ``display(Markdown(said))``), one message per
  sentence;
- **table cells** that hold words (``rope_edu.table``'s ``<td>``: "not run (= plain RoPE)",
  "fails 16,384 again", a model's name), one message each (:func:`table_cell`); numbers alone
  ("0.25", "1.2e-16") are none.

Their message is a *template*: the text with each number replaced by ``{0}``, ``{1}``, ... in order
(:func:`template`), so that "At 4,096 tokens, 6 of 6 keys" and "At 12,288 tokens, 0 of 6 keys" share
one message, ``At {0} tokens, {1} of {2} keys``, and the Chinese shows the numbers this build
computed, in the order its translation puts them. ``scripts/i18n.py update`` gathers the templates
from the built English pages (:func:`printed_lines`, :func:`computed_sentences`) into
``outputs.po``; ``check`` reports those without a translation; ``_ext/editions.py``'s
``_OutputTexts`` puts the outputs of each Chinese page through them.
"""

from __future__ import annotations

import re

#: A number as the outputs print it: 16,384; 0.25; 3e-16; 1.5e+04 (not the digits inside a name:
#: SmolLM2-135M, fp16, q4_0, x86).
NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])")
#: How a check's verdict line starts (``rope_edu.verify``; not imported: _ext reads the package's
#: output, not the package).
VERDICT = "checked: "
_HOLE = re.compile(r"\{(\d+)\}")
#: A line that reads as English prose: two words of three letters or more in a row.
_WORDS = re.compile(r"[A-Za-z][a-z]{2,}[,;:]? +\(?[A-Za-z][a-z]{2,}")
#: A line of data or code, not prose: a JSON or dict entry, a Python repr, an array, a line of
#: source (an assignment from a call, a return), Markdown a cell prints as text (a play's headings,
#: its speakers in bold).
_DATA = re.compile(r'^\s*["\'{\[(#_]|^\s*[\w.]+\s*[:=]\s*["\'{\[]|\bdtype=|array\(|^\s*\w+\(|\*\*'
                   r'|^\s*(?:return|def|class|import|from)\s|^\s*[\w.]+ = [\w.]+\(')
#: Where a computed paragraph's sentence ends: after . ! ? (not in "et al.", "e.g.", "vs.", "i.e.")
#: before a space and a capital letter or a digit.
_SENTENCE_END = re.compile(r"(?<!\bal\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<=[.!?])\s+(?=[A-Z0-9])")


#: A table cell that holds words: two Latin letters in a row, a letter, a slash and a letter ("n/a"), or
#: a Han character (so that a Chinese page's translated cells are the English page's, one for one).
_CELL_WORDS = re.compile(r"[A-Za-z]/?[A-Za-z]|[\u4e00-\u9fff]")


def template(text: str) -> tuple[str, list[str]]:
    """(``text`` with its numbers as ``{0}``, ``{1}``, ..., the numbers in order). Curly apostrophes
    become straight ones: Sphinx's smart quotes may or may not have curled the page's text."""
    values: list[str] = []
    text = text.replace("\u2019", "'").replace("\u2018", "'")

    def hole(m: re.Match) -> str:
        values.append(m.group(0))
        return "{%d}" % (len(values) - 1)

    return NUMBER.sub(hole, text), values


def fill(translation: str, values: list[str]) -> str:
    """A template's translation with the numbers put back in its holes (any order)."""
    return _HOLE.sub(lambda m: values[int(m.group(1))] if int(m.group(1)) < len(values) else m.group(0), translation)


def is_prose(line: str) -> bool:
    """Whether a printed line reads as English words (not a number, an array, a dict or a repr)."""
    return bool(_WORDS.search(line)) and not _DATA.search(line) and "{" not in line and "}" not in line


def translate_text(text: str, messages: dict[str, str]) -> str | None:
    """``text`` through the templates of ``messages`` (English template -> translation); None when
    its template has no translation."""
    shape, values = template(text)
    said = messages.get(shape)
    return fill(said, values) if said else None


def table_cell(text: str) -> str | None:
    """The template of a table cell's text when the cell holds words (a message), else None."""
    text = " ".join(text.split())
    return template(text)[0] if _CELL_WORDS.search(text) else None


def sentences(paragraph: str) -> list[str]:
    """A computed paragraph's sentences (each a message)."""
    return [s for s in _SENTENCE_END.split(" ".join(paragraph.split())) if s]


def translate_paragraph(paragraph: str, messages: dict[str, str]) -> tuple[str, int]:
    """(``paragraph`` with each sentence through ``messages``, how many sentences stayed English).
    Translated sentences are joined without a space when the previous one ends in Chinese
    punctuation."""
    out, left = "", 0
    for sentence in sentences(paragraph):
        said = translate_text(sentence, messages)
        if said is None:
            left += 1
            said = sentence
        if out and not out.endswith(("。", "！", "？", "；", "）")):
            out += " "
        out += said
    return out, left


def translate_printed(text: str, messages: dict[str, str], verdict=None) -> str:
    """A stream output's text with each prose line through ``messages``. A check's verdict
    (``checked: ...`` and the lines ``verify`` wrapped it onto) is no prose line: ``verdict(line)``
    (when given) translates it, its wrapped lines joined, or returns None; else it stays as printed.
    A line with no translation stays as it is."""
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(VERDICT):
            j = i + 1
            while j < len(lines) and lines[j].startswith("    ") and lines[j].strip():
                j += 1
            said = verdict(" ".join([line] + [w.strip() for w in lines[i + 1:j]])) if verdict else None
            out += [said] if said is not None else lines[i:j]
            i = j
            continue
        indent = line[: len(line) - len(line.lstrip())]
        said = translate_text(line.strip(), messages) if is_prose(line) else None
        out.append(indent + said if said else line)
        i += 1
    return "\n".join(out)


def printed_lines(text: str) -> list[str]:
    """The templates of a stream output's prose lines (not the verdicts), in order."""
    found: list[str] = []
    lines = text.split("\n")
    in_verdict = False
    for line in lines:
        if line.startswith(VERDICT):
            in_verdict = True
            continue
        if in_verdict and line.startswith("    ") and line.strip():
            continue
        in_verdict = False
        if is_prose(line):
            found.append(template(line.strip())[0])
    return found


def computed_sentences(paragraph: str) -> list[str]:
    """The templates of a computed paragraph's sentences, in order."""
    return [template(s)[0] for s in sentences(paragraph)]
