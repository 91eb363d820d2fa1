"""Review completeness: the source lines of a plan that the review does not show.

After approval the executor gets the plan's whole text, so whatever the
markdown parser consumes without showing is text the model can slip past the
reviewer. With CommonMark (raw HTML off) that is:

* link reference definitions (``[note]: https://x "step 0: run curl … | sh"``,
  also ``[^1]: …`` footnote look-alikes): the parser keeps them in its
  environment and emits no token, at any nesting depth;
* table cells past the header's column count: the parser drops them;
* what the sanitiser removes before display: terminal control sequences with
  their payloads (``ESC ] 0 ; any text BEL``), controls, invisible and bidi
  characters, and character references that decode to them (``&#x202E;``).

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

import html
import importlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import perf_counter

from markdown_it.token import Token

from planshell.markdown.parse import parse_blocks
from planshell.plan.document import Section, parse_plan
from planshell.sanitize import strip_terminal_controls

__all__ = ["UnshownCheck", "UnshownLine", "unshown_lines", "unshown_summary"]

# Tokens whose ``map`` lines are drawn in full (their text, or only markup).
_LEAVES = frozenset(
    {"paragraph_open", "heading_open", "fence", "code_block", "hr", "table_open", "html_block"}
)
# A line of container markup only: blockquote marks, an empty list item's marker.
_MARKUP_ONLY = re.compile(r"^(?:[ \t>]|[-*+](?=[ \t>]|$)|\d{1,9}[.)](?=[ \t>]|$))*$")
_ROW_PREFIX = re.compile(r"^[ \t>]*")

NOT_RENDERED = "not rendered (a link reference definition)"
EXTRA_CELLS = "table cells past the header's columns (not rendered)"
CONTROLS = "holds terminal controls or invisible characters the review removes (shown escaped here)"
INVISIBLE_REFERENCE = "a character reference to an invisible or control character"
# Character references: markdown decodes them, so "&#x202E;" is a bidi override on screen.
_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class UnshownLine:
    """Source line ``line`` (0-based) of the plan, its text and why it is not shown.

    ``text`` is safe for a terminal: sanitised, or with what the sanitiser
    would remove written as escapes (``\\x1b]0;…\\x07``) when that is the reason.
    """

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


def _escaped(line: str) -> str:
    """``line`` with every character the sanitiser would remove written as an escape (``\\x1b``)."""
    out: list[str] = []
    for char in line:
        if char == "\t" or strip_terminal_controls(char) == char:
            out.append(char)
        else:
            code = ord(char)
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else f"\\u{code:04x}"
                if code < 0x10000
                else f"\\U{code:08x}"
            )
    return "".join(out)


def _invisible_reference(line: str) -> bool:
    for match in _REFERENCE.finditer(line):
        decoded = html.unescape(match.group())
        if decoded != match.group() and strip_terminal_controls(decoded) != decoded:
            return True
    return False


def unshown_lines(text: str) -> tuple[UnshownLine, ...]:
    """The source lines of the plan ``text`` (as the file holds it) that the reviews do not show.

    Both reviews render ``strip_terminal_controls(text)`` (the sanitiser keeps
    every line break, so line numbers agree). Reported, in order: lines the
    markdown leaves out (see the module docstring), lines from which the
    sanitiser removes something (an OSC sequence's payload is text the
    executor reads; such lines are shown escaped), and lines with a character
    reference to an invisible character. Blank lines and lines of container
    markup only (``>``, an empty ``-``) are not reported.
    """
    check = UnshownCheck(text)
    check.step(float("inf"))
    return check.result()


class UnshownCheck:
    """:func:`unshown_lines` in slices, for a caller that must stay responsive.

    A 100k-line plan takes over a second; the review screen runs it in ~5 ms
    slices on its own thread (a worker thread held the GIL against ``n``/``p``).
    ``clean`` and ``sections`` may be passed when the caller already has them
    (``strip_terminal_controls(text)`` and its ``parse_plan`` sections); they are
    used only for text without "\r", where they are exactly what this computes.
    """

    def __init__(
        self, text: str, *, clean: str | None = None, sections: Sequence[Section] | None = None
    ) -> None:
        self._raw_lines = text.split("\n")
        if clean is None or "\r" in text:
            clean, sections = strip_terminal_controls(text), None
        self._lines = clean.replace("\r", " ").split("\n")
        if len(self._lines) != len(self._raw_lines):  # pragma: no cover - keeps line breaks
            raise ValueError("the sanitiser changed the number of lines")
        self._covered = bytearray(len(self._lines))
        self._whys: dict[int, list[str]] = {}
        self._sections = (
            tuple(sections) if sections is not None else parse_plan("\n".join(self._lines)).sections
        )
        self._section = 0  # the next section to parse
        self._line = 0  # the next line to judge, once every section is parsed
        self._found: list[UnshownLine] = []

    @property
    def done(self) -> bool:
        return self._line >= len(self._lines)

    def step(self, deadline: float) -> bool:
        """Work until ``deadline`` (``time.perf_counter``); True when the check is complete."""
        lines, covered = self._lines, self._covered
        while self._section < len(self._sections):
            section = self._sections[self._section]
            self._section += 1
            part = lines[section.start : section.end]
            body = "\n".join(part)
            if "]:" not in body and not any("|" in line and "-" in line for line in part):
                # Fast path, no parse: nothing here can be a definition or a table (a
                # definition's label ends in "]:", a table needs a delimiter row "|---|").
                covered[section.start : section.end] = b"\x01" * (section.end - section.start)
            else:
                for block in parse_blocks(body, section.start):
                    for token in block.tokens:
                        if token.type in _LEAVES and token.map is not None:
                            start, end = max(0, token.map[0]), min(token.map[1], len(lines))
                            covered[start:end] = b"\x01" * max(0, end - start)
                    for row in _extra_cells(block.tokens, lines):
                        self._whys.setdefault(row, []).append(EXTRA_CELLS)
            if perf_counter() >= deadline:
                return False
        while self._line < len(lines):
            number = self._line
            self._line += 1
            line = lines[number]
            reasons = self._whys.get(number, [])
            if not covered[number] and not _MARKUP_ONLY.match(line):
                reasons.insert(0, NOT_RENDERED)
            raw = self._raw_lines[number].removesuffix("\r")  # CRLF files hide nothing
            shown = line
            if raw != line and (_CONTROL.search(raw) or strip_terminal_controls(raw) != raw):
                reasons.append(CONTROLS)
                shown = _escaped(raw)
            if "&" in line and _invisible_reference(line):
                reasons.append(INVISIBLE_REFERENCE)
            if reasons:
                self._found.append(UnshownLine(number, shown, "; ".join(reasons)))
            if number % 2048 == 0 and perf_counter() >= deadline:
                return self.done
        return True

    def result(self) -> tuple[UnshownLine, ...]:
        """The unshown lines, in order (call once :meth:`step` returned True)."""
        assert self.done, "step() until it returns True"
        return tuple(self._found)


def unshown_summary(count: int) -> str:
    """ "This plan holds 3 lines the review does not show" ("" for none)."""
    if not count:
        return ""
    noun = "line" if count == 1 else "lines"
    return f"This plan holds {count} {noun} the review does not show"
