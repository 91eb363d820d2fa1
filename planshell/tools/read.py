"""The ``read`` tool: a text file as numbered lines, a window at a time."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pydantic import Field

from planshell.fsutil import BINARY_SNIFF_BYTES, is_binary
from planshell.tools.base import (
    Effect,
    Tool,
    ToolArgs,
    ToolContext,
    ToolData,
    ToolError,
    ToolResult,
)
from planshell.tools.walk import clip_line, human_size, require_file

READ_DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
_CHUNK = 1 << 20


class ReadArgs(ToolArgs):
    path: str = Field(description="File path, relative to the project root.")
    offset: int | None = Field(None, ge=1, description="First line (1-based).")
    limit: int | None = Field(
        None, ge=1, description=f"Lines to read (default {READ_DEFAULT_LIMIT})."
    )


@dataclass
class _Window:
    """The lines of a file chosen by offset/limit, plus the file's line count."""

    lines: list[str]
    start: int
    total: int

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1


def _count_rest(handle: BinaryIO) -> int:
    """Lines left in ``handle`` (positioned at a line start), counted in chunks."""
    count, last = 0, b"\n"
    while chunk := handle.read(_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _read_window(path: Path, start: int, limit: int, budget: int) -> _Window:
    """Read lines ``start..start+limit`` lazily, never holding the whole file.

    Stops early once ``budget`` characters are collected so one call can't
    flood the context, however long the lines are.
    """
    lines: list[str] = []
    used = 0
    lineno = 0
    with path.open("rb") as handle:
        for raw in handle:
            lineno += 1
            if lineno < start:
                continue
            line = clip_line(raw.decode("utf-8", "replace").rstrip("\r\n"), MAX_LINE_CHARS)
            if len(lines) >= limit or (lines and used + len(line) > budget):
                return _Window(lines, start, lineno + _count_rest(handle))
            lines.append(line)
            used += len(line) + 8
    return _Window(lines, start, lineno)


def _render_window(window: _Window) -> str:
    """``cat -n`` style lines, then a footer whenever anything was left out."""
    body = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(window.lines, window.start))
    omitted = window.total - len(window.lines)
    if not omitted:
        return body
    footer = f"[showed lines {window.start}-{window.end} of {window.total}; {omitted} lines omitted"
    if window.end < window.total:
        footer += f"; read more with offset={window.end + 1}"
    return f"{body}\n{footer}]"


class ReadTool(Tool[ReadArgs]):
    name = "read"
    description = (
        "Read a text file as numbered lines (`N<tab>text`; the prefix is not in the file). "
        "A long file is cut with a note giving the offset to read next."
    )
    more_hint = "read a line range with offset and limit, or grep for what you need"
    Args = ReadArgs
    effects = frozenset({Effect.READ})

    def headline(self, args: ReadArgs) -> str:
        if args.offset is None and args.limit is None:
            return f"read {args.path}"
        start = args.offset or 1
        return f"read {args.path}:{start}-{start + (args.limit or READ_DEFAULT_LIMIT) - 1}"

    async def run(self, args: ReadArgs, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._read, args, ctx)

    def _read(self, args: ReadArgs, ctx: ToolContext) -> ToolResult:
        path, rel = require_file(
            ctx, args.path, missing_hint="use find to locate the file (e.g. pattern '**/name*')."
        )
        size = path.stat().st_size
        windowed = args.offset is not None or args.limit is not None
        if size > ctx.read_max_bytes and not windowed:
            raise ToolError(
                f"{rel} is {human_size(size)}, over the {human_size(ctx.read_max_bytes)} limit for "
                "reading a whole file; read it in parts with offset and limit (e.g. offset=1, "
                "limit=200), or grep it for what you need."
            )
        with path.open("rb") as handle:
            if is_binary(handle.read(BINARY_SNIFF_BYTES)):
                raise ToolError(
                    f"{rel} looks like a binary file ({human_size(size)}), and read only shows "
                    "text; inspect it with bash (e.g. `file` or `xxd | head`) if you need to."
                )
        start = args.offset or 1
        # Room for the footer, which says where to go on.
        budget = min(ctx.read_max_bytes, ctx.result_max_chars - 300)
        window = _read_window(path, start, args.limit or READ_DEFAULT_LIMIT, budget)
        data: ToolData = {"path": rel, "start": start, "total": window.total}
        if window.total == 0:
            return ToolResult(f"[{rel} is empty]", data=data)
        if not window.lines:
            raise ToolError(
                f"offset {start} is past the end of {rel}, which has {window.total} lines."
            )
        data["end"] = window.end
        return ToolResult(_render_window(window), data=data)
