"""A plan's top-level markdown blocks and their source lines: what "after the block" means.

A review comment (``> [!REVIEW]``) is written after the block it is about, by
the terminal and by the browser page alike, so both must cut the plan into the
same blocks with the same line ranges. They come from here: parsed one section
at a time, as the TUI's plan view parses, from the text the screen shows
(terminal controls stripped, every line break kept so line numbers are the
file's). The browser page renders these blocks to HTML.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planshell.markdown.parse import parse_blocks
from planshell.plan.document import Section, parse_plan
from planshell.sanitize import strip_terminal_controls

if TYPE_CHECKING:
    from markdown_it.token import Token

__all__ = ["PlanBlock", "block_lines", "plan_blocks", "section_blocks"]


@dataclass(frozen=True)
class PlanBlock:
    """One top-level block: its source lines ``[start, end)`` (0-based) and its tokens.

    ``end`` excludes trailing blank lines, so it is the line a comment goes on.
    """

    start: int
    end: int
    kind: str
    tokens: tuple[Token, ...]


def plan_blocks(text: str) -> list[PlanBlock]:
    """The plan's top-level blocks, section by section."""
    text = strip_terminal_controls(text)
    sections = parse_plan(text).sections
    return section_blocks(block_lines(text), sections)


def block_lines(text: str) -> list[str]:
    """``text`` (sanitised) split into the lines :func:`section_blocks` reads.

    markdown-it also breaks lines at "\r": keep its line numbers the file's.
    """
    return text.replace("\r", " ").split("\n")


def section_blocks(lines: list[str], sections: Sequence[Section]) -> list[PlanBlock]:
    """The top-level blocks of ``sections`` only (of the sanitised text's :func:`block_lines`).

    Each section is parsed on its own, so a range of sections costs what it
    holds, not what the plan holds: the browser page serves a long plan in chunks.
    """
    out: list[PlanBlock] = []
    for section in sections:
        for block in parse_blocks("\n".join(lines[section.start : section.end]), section.start):
            if block.tokens[0].map is None:  # pragma: no cover - top-level blocks have maps
                continue
            end = min(block.end, len(lines))
            while end > block.start + 1 and not lines[end - 1].strip():
                end -= 1
            out.append(PlanBlock(block.start, end, block.kind, tuple(block.tokens)))
    return out
