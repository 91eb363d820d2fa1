"""The ``ls`` tool: one directory, folders first, files with sizes."""

from __future__ import annotations

import asyncio
import os

from pydantic import Field

from planshell.tools.base import Effect, Tool, ToolArgs, ToolContext, ToolResult
from planshell.tools.walk import human_size, require_dir

LS_MAX_ENTRIES = 500


class LsArgs(ToolArgs):
    path: str = Field(".", description="Directory, relative to the project root.")


def _ls_line(entry: os.DirEntry[str]) -> str:
    """One entry: ``name/`` for directories, ``name  size`` for files."""
    if entry.is_symlink():
        try:
            return f"{entry.name} -> {os.readlink(entry.path)}"
        except OSError:
            return f"{entry.name} -> ?"
    if entry.is_dir():
        return f"{entry.name}/"
    try:
        return f"{entry.name}  {human_size(entry.stat().st_size)}"
    except OSError:
        return entry.name


class LsTool(Tool[LsArgs]):
    name = "ls"
    description = (
        "List one directory: subdirectories (ending in /) first, then files with sizes. "
        "Use find to search recursively."
    )
    more_hint = "list a subdirectory, or use find with a pattern"
    Args = LsArgs
    effects = frozenset({Effect.READ})

    def headline(self, args: LsArgs) -> str:
        return f"ls {args.path}"

    async def run(self, args: LsArgs, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._ls, args, ctx)

    def _ls(self, args: LsArgs, ctx: ToolContext) -> ToolResult:
        path, rel = require_dir(ctx, args.path)
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: (not e.is_dir() or e.is_symlink(), e.name))
        lines = [_ls_line(e) for e in entries[:LS_MAX_ENTRIES]]
        if not lines:
            return ToolResult(f"[{rel} is empty]", data={"path": rel, "entries": 0})
        if len(entries) > LS_MAX_ENTRIES:
            lines.append(
                f"[showing {LS_MAX_ENTRIES} of {len(entries)} entries; use find with a "
                "pattern to narrow it down]"
            )
        return ToolResult("\n".join(lines), data={"path": rel, "entries": len(entries)})
