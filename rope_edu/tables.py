"""Results as real tables: HTML in the book and in notebooks, aligned text in a terminal.

A chapter's result that has rows and columns (the settings of ten models, errors by precision)
is a table, not ``print`` output in a monospace block that a narrow column cuts off::

    rope_edu.table(
        [["Llama 3.1 8B", 128, "half", 500000.0]],
        ["model", "head_dim", "layout", "base"],
        caption="RoPE settings read from each config.",
    )

In the book the table scrolls inside its own box when it is wider than the column. A table whose
numbers a figure already shows is ``folded=True``: closed under its caption, one click away.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

__all__ = ["Table", "table"]


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


class Table:
    """A small table of already-computed values; display it as the last expression of a cell.

    Parameters
    ----------
    rows : sequence of sequences, shape (n_rows, n_columns)
        Cell values: strings are shown as they are, floats with ``:g``, anything else with ``str``.
    columns : sequence of str, length n_columns
        Column headers.
    caption : str, optional
        A sentence shown above the table (and read by screen readers as the table's name).
    folded : bool, optional
        Show the table closed, its caption the one line that opens it (a ``<details>`` element):
        for numbers the page also draws, kept one click away. Needs a caption.
    """

    def __init__(self, rows: Sequence[Sequence[Any]], columns: Sequence[str], caption: str | None = None,
                 folded: bool = False) -> None:
        if isinstance(columns, str) or not isinstance(columns, Sequence) or not columns:
            raise TypeError(f"columns must be a non-empty sequence of header strings, got {columns!r}")
        if not all(isinstance(c, str) for c in columns):
            raise TypeError(f"columns must all be strings, got {list(columns)!r}")
        if isinstance(rows, str) or not isinstance(rows, Sequence):
            raise TypeError(f"rows must be a sequence of rows, got {type(rows).__name__}")
        for i, row in enumerate(rows):
            if isinstance(row, str) or not isinstance(row, Sequence) or len(row) != len(columns):
                raise ValueError(f"rows[{i}] must have {len(columns)} values (one per column), got {row!r}")
        if caption is not None and not isinstance(caption, str):
            raise TypeError(f"caption must be a string or None, got {type(caption).__name__}")
        if not isinstance(folded, bool):
            raise TypeError(f"folded must be True or False, got {type(folded).__name__}")
        if folded and not caption:
            raise ValueError("folded=True needs a caption: it is the line that opens the table")
        self.columns = [str(c) for c in columns]
        self.rows = [[_cell(v) for v in row] for row in rows]
        self.caption = caption
        self.folded = folded

    def _repr_html_(self) -> str:
        e = html.escape
        head = "".join(f'<th scope="col">{e(c)}</th>' for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{e(v)}</td>" for v in row) + "</tr>" for row in self.rows)
        caption = f"<caption>{e(self.caption)}</caption>" if self.caption and not self.folded else ""
        table = f'<table class="table">{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        if self.folded:   # the caption is the summary that opens it (the outputs catalog reads both)
            table = f'<details class="rope-table-fold"><summary>{e(self.caption or "")}</summary>{table}</details>'
        return f'<div class="rope-table" style="overflow-x:auto;max-width:100%">{table}</div>'

    def text(self) -> str:
        """The table as aligned plain text (for a terminal)."""
        widths = [max(len(c), *(len(r[j]) for r in self.rows)) if self.rows else len(c) for j, c in enumerate(self.columns)]
        lines = [self.caption] if self.caption else []
        lines.append("  ".join(c.ljust(w) for c, w in zip(self.columns, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in self.rows]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()


def table(rows: Sequence[Sequence[Any]], columns: Sequence[str], caption: str | None = None,
          folded: bool = False) -> Table:
    """Build a :class:`Table` (see there); it renders as HTML in the book and in notebooks."""
    return Table(rows, columns, caption, folded)
