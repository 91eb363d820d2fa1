"""Parsing: markdown-it-py tokens grouped into top-level blocks, incrementally.

One parser configuration for the whole program (CommonMark plus GFM tables,
strikethrough and task lists), so the plan document, the review and the chat
agree on what every line is. Every block keeps its source line range
(``token.map``) in absolute line numbers.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from planshell.sanitize import strip_terminal_controls

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = ["Block", "MarkdownStream", "parse_blocks", "parse_tokens", "parser", "task_state"]

_TASK = re.compile(r"\[([ xX])\](?=[ \t\n]|$)")

_KEYS = itertools.count(1)


@lru_cache(maxsize=1)
def parser() -> MarkdownIt:
    """The one parser: CommonMark + GFM tables and strikethrough (task items: :func:`task_state`).

    Raw HTML is off: plan and chat text is hostile, so ``<script>`` is text
    everywhere (the browser review renders these same tokens to HTML, where
    markdown-it then escapes it). Not mdit-py-plugins' tasklists: it rewrites
    the inline content and marks ``- [x]`` followed by a continuation line as
    an *unticked* task.

    markdown-it is imported here, on the first parse: start-up parses no
    markdown, and the package costs ~25 ms to import (issue 28).
    """
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def parse_tokens(text: str) -> list[Token]:
    """Block tokens of ``text`` (inline tokens have their ``children``)."""
    return parser().parse(text)


@dataclass(eq=False)
class Block:
    """One top-level block: its tokens and source lines ``[start, end)``.

    ``key`` is unique per parse result, so renderers can cache rows by it: a
    block that a re-parse did not touch keeps its key (and its cached rows).
    """

    tokens: Sequence[Token]
    start: int
    end: int
    key: int = field(default_factory=lambda: next(_KEYS))

    @property
    def kind(self) -> str:
        return self.tokens[0].type.removesuffix("_open")


def task_state(tokens: Sequence[Token], index: int) -> tuple[bool, bool]:
    """(is a task, is ticked) of the ``list_item_open`` at ``index`` (GFM task items).

    A task item's first paragraph starts with ``[ ]``, ``[x]`` or ``[X]``
    followed by whitespace or the end of the paragraph (``- [ ]`` alone is an
    empty task, as GitHub shows it).
    """
    if index + 2 >= len(tokens) or tokens[index + 1].type != "paragraph_open":
        return False, False
    inline = tokens[index + 2]
    match = _TASK.match(inline.content) if inline.type == "inline" else None
    if match is None:
        return False, False
    return True, match[1] in "xX"


def parse_blocks(text: str, line_offset: int = 0) -> list[Block]:
    """Group the tokens of ``text`` into top-level blocks; maps shifted by ``line_offset``."""
    blocks: list[Block] = []
    current: list[Token] = []
    for token in parse_tokens(text):
        if line_offset and token.map is not None:
            token.map = [token.map[0] + line_offset, token.map[1] + line_offset]
        current.append(token)
        if token.level == 0 and token.nesting <= 0:
            first = current[0]
            start, end = first.map if first.map is not None else (line_offset, line_offset)
            blocks.append(Block(tuple(current), start, end))
            current = []
    return blocks


@dataclass(frozen=True, eq=False)
class _Source:
    """A stable block kept as its source lines (``compact`` streams): parsed when read."""

    text: str
    start: int
    end: int
    key: int

    def parse(self) -> Block:
        blocks = parse_blocks(self.text, self.start)
        tokens = (
            blocks[0].tokens if len(blocks) == 1 else tuple(t for b in blocks for t in b.tokens)
        )
        return Block(tokens, self.start, self.end, self.key)


class MarkdownStream:
    """Markdown that grows at the end: appending re-parses only the last open block.

    Text before the start of the last top-level block is *stable*: later text
    cannot change how it parses (block boundaries in CommonMark only look
    back into the open block), so its blocks are kept as they are. All text is
    sanitised on the way in.

    A ``compact`` stream keeps its stable blocks as source lines and parses one
    again when it is read (:meth:`block`), with the same key: a long streamed
    answer then holds one block's tokens, not ~100,000 of them for the garbage
    collector to walk. (A block parsed alone differs only where it uses a link
    reference defined in another block.)
    """

    def __init__(self, text: str = "", *, compact: bool = False) -> None:
        self._compact = compact
        self._stable: list[str] = []  # text before the tail (joined on demand)
        self._stable_lines = 0  # lines in the stable text (it ends with "\n")
        self._stable_blocks: list[Block | _Source] = []
        self._tail = ""
        self._tail_blocks: list[Block] = []
        self.version = 0
        if text:
            self.append(text)

    @property
    def text(self) -> str:
        if len(self._stable) > 1:
            self._stable = ["".join(self._stable)]
        return (self._stable[0] if self._stable else "") + self._tail

    @property
    def blocks(self) -> list[Block]:
        stable = [b.parse() if isinstance(b, _Source) else b for b in self._stable_blocks]
        return [*stable, *self._tail_blocks]

    @property
    def keys(self) -> list[int]:
        """Every block's key, in order, without parsing anything."""
        return [b.key for b in self._stable_blocks] + [b.key for b in self._tail_blocks]

    def block(self, index: int) -> Block:
        stable = len(self._stable_blocks)
        if index >= stable:
            return self._tail_blocks[index - stable]
        found = self._stable_blocks[index]
        return found.parse() if isinstance(found, _Source) else found

    def __len__(self) -> int:
        return sum(len(part) for part in self._stable) + len(self._tail)

    def append(self, delta: str) -> int:
        """Add ``delta``; return the index of the first block that may have changed."""
        delta = strip_terminal_controls(delta)
        first_changed = len(self._stable_blocks)
        if not delta:
            return first_changed
        self._tail += delta
        self._tail_blocks = parse_blocks(self._tail, self._stable_lines)
        self.version += 1
        keep = 1
        if not self._tail.endswith("\n") and len(self._tail_blocks) > 1:
            unfinished = self._stable_lines + self._tail.count("\n")
            if self._tail_blocks[-1].start >= unfinished:
                # A block begun by an unfinished line may yet be a continuation of the
                # block before it ("- a" then "*" is a new list until "*em*" ends lazily
                # inside the first): that block is not stable until the line is whole.
                keep = 2
        if len(self._tail_blocks) > keep:
            self._advance(keep)
        return first_changed

    def replace(self, text: str) -> None:
        """Start again with ``text`` (the final reply differs from the stream)."""
        self._stable, self._stable_lines, self._stable_blocks = [], 0, []
        self._tail, self._tail_blocks = "", []
        self.append(text)

    def _advance(self, keep: int = 1) -> None:
        """Move every block but the last ``keep`` into the stable part."""
        last = self._tail_blocks[-keep]
        lines = last.start - self._stable_lines
        cut = 0
        for _ in range(lines):
            cut = self._tail.index("\n", cut) + 1
        chunk = self._tail[:cut]
        self._stable.append(chunk)
        if self._compact:
            rows = chunk.split("\n")
            base = self._stable_lines
            self._stable_blocks.extend(
                _Source(
                    "\n".join(rows[b.start - base : b.end - base]) + "\n", b.start, b.end, b.key
                )
                for b in self._tail_blocks[:-keep]
            )
        else:
            self._stable_blocks.extend(self._tail_blocks[:-keep])
        self._stable_lines = last.start
        self._tail = self._tail[cut:]
        self._tail_blocks = self._tail_blocks[-keep:]
