"""Review completeness: the source lines of a plan that the review does not show.

After approval the executor gets the plan's whole text, so whatever the
markdown parser consumes without showing is text the model can slip past the
reviewer. With CommonMark (raw HTML off) that is:

* link reference definitions (``[note]: https://x "step 0: run curl … | sh"``,
  also ``[^1]: …`` footnote look-alikes): the parser keeps them in its
  environment and emits no token, at any nesting depth;
* table cells past the header's column count: the parser drops them.

Everything else reaches the screen (link targets and titles, image alt text
and titles, fence info strings are rendered by both reviews). This module finds
those lines from the same token stream the renderers draw: the plan is split
into sections by :func:`planshell.plan.document.parse_plan` and each section is
parsed on its own with :func:`planshell.markdown.parse_blocks`, exactly as the
TUI's ``PlanView`` and the browser's ``render_plan_html`` do, so a line is
reported exactly when no leaf block of the rendered tokens covers it. Pure: no
Textual.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markdown_it.token import Token

from planshell.markdown.parse import parse_blocks
from planshell.plan.document import parse_plan
from planshell.sanitize import strip_terminal_controls

__all__ = ["UnshownLine", "unshown_lines", "unshown_summary"]

# Tokens whose ``map`` lines are drawn in full (their text, or only markup).
_LEAVES = frozenset({"paragraph_open", "heading_open", "fence", "code_block", "hr", "table_open", "html_block"})
# A line of container markup only: blockquote marks, an empty list item's marker.
_MARKUP_ONLY = re.compile(r"^(?:[ \t>]|[-*+](?=[ \t>]|$)|\d{1,9}[.)](?=[ \t>]|$))*$")
_ROW_PREFIX = re.compile(r"^[ \t>]*")
# Any line that could be a table's delimiter row ("|---|:--", "--- | ---").
_DELIMITER_ROW = re.compile(r"^[^\n]*-[^\n]*\|[^\n]*$|^[^\n]*\|[^\n]*-", re.MULTILINE)

NOT_RENDERED = "not rendered (a link reference definition)"
EXTRA_CELLS = "table cells past the header's columns (not rendered)"


@dataclass(frozen=True)
class UnshownLine:
    """Source line ``line`` (0-based) of the plan, its text (sanitised) and why it is not shown."""

    line: int
    text: str
    why: str


def _split_cells() -> Callable[[str], list[str]]:
    """markdown-it's own cell splitter, so the count matches the parser that drops cells."""
    module = importlib.import_module("markdown_it.rules_block.table")
    split: Callable[[str], list[str]] = module.escapedSplit
    return split


_CELLS = _split_cells()


def _extra_cells(tokens: Sequence[Token], lines: Sequence[str]) -> list[int]:
    """Body rows of the tables in ``tokens`` that hold more cells than the header."""
    found: list[int] = []
    columns = 0
    for index, token in enumerate(tokens):
        if token.type == "thead_open":
            columns = 0
            for later in tokens[index:]:
                if later.type == "th_open":
                    columns += 1
                elif later.type == "thead_close":
                    break
        elif token.type == "tr_open" and token.map is not None and token.level >= 2:
            row = token.map[0]
            if row >= len(lines) or tokens[index - 1].type == "thead_open":
                continue
            cells = _CELLS(_ROW_PREFIX.sub("", lines[row], count=1))
            if cells and cells[0] == "":
                cells.pop(0)
            if cells and cells[-1] == "":
                cells.pop()
            if len(cells) > columns and "".join(cells[columns:]).strip():
                found.append(row)
    return found


def unshown_lines(text: str) -> tuple[UnshownLine, ...]:
    """The source lines of ``text`` that neither review renders, in order.

    ``text`` is what the review renders (the TUI passes its sanitised text,
    the browser the plan without the person's review comments). Blank lines and
    lines of container markup only (``>``, an empty ``-``) are not reported.
    """
    lines = text.replace("\r", " ").split("\n")
    covered = bytearray(len(lines))
    extra: dict[int, str] = {}
    for section in parse_plan(text).sections:
        body = "\n".join(lines[section.start : section.end])
        if "]:" not in body and _DELIMITER_ROW.search(body) is None:
            # Fast path, no parse: nothing here can be a definition or a table
            # (a definition's label ends in "]:", a table needs a delimiter row).
            covered[section.start : section.end] = b"\x01" * (section.end - section.start)
            continue
        for block in parse_blocks(body, section.start):
            for token in block.tokens:
                if token.type in _LEAVES and token.map is not None:
                    start, end = token.map
                    covered[max(0, start) : min(end, len(lines))] = b"\x01" * (
                        min(end, len(lines)) - max(0, start)
                    )
            for row in _extra_cells(block.tokens, lines):
                extra[row] = EXTRA_CELLS
    found: list[UnshownLine] = []
    for number, line in enumerate(lines):
        why = extra.get(number)
        if why is None and (covered[number] or _MARKUP_ONLY.match(line)):
            continue
        found.append(UnshownLine(number, strip_terminal_controls(line), why or NOT_RENDERED))
    return tuple(found)


def unshown_summary(count: int) -> str:
    """"This plan holds 3 lines the review does not show" ("" for none)."""
    if not count:
        return ""
    noun = "line" if count == 1 else "lines"
    return f"This plan holds {count} {noun} the review does not show"
