"""The ``find`` tool: files by glob below a folder, newest first."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from pydantic import Field

from planshell.tools.base import Effect, Tool, ToolContext, ToolResult
from planshell.tools.walk import (
    ScopeArgs,
    glob_to_regex,
    relative_posix,
    require_dir,
    search_ignore,
    skipped_note,
    walk_files,
)

FIND_MAX_RESULTS = 500


class FindArgs(ScopeArgs):
    pattern: str = Field(description="Glob on paths below `path`: '**/*.py', 'src/**/test_*.py'.")
    path: str = Field(".", description="Directory to search in.")


class FindTool(Tool[FindArgs]):
    name = "find"
    description = (
        "Find files by glob (`**` spans directories, `{a,b}` alternatives), newest first. "
        "Skips git-ignored files and hidden folders unless asked."
    )
    more_hint = "use a narrower pattern or path"
    Args = FindArgs
    effects = frozenset({Effect.READ})

    def headline(self, args: FindArgs) -> str:
        where = "" if args.path in (".", "") else f" in {args.path}"
        return f"find {args.pattern}{where}"

    async def run(self, args: FindArgs, ctx: ToolContext) -> ToolResult:
        stop = threading.Event()
        try:
            return await asyncio.to_thread(self._find, args, ctx, stop)
        finally:
            stop.set()

    def _find(self, args: FindArgs, ctx: ToolContext, stop: threading.Event) -> ToolResult:
        base, rel = require_dir(ctx, args.path)
        regex = glob_to_regex(args.pattern.removeprefix("./"))
        walk = walk_files(
            base,
            stop=stop,
            include_hidden=args.include_hidden,
            ignore=search_ignore(ctx, base, args),
        )
        found = [p for p in walk if regex.fullmatch(relative_posix(p, base))]
        if not found:
            return ToolResult(
                f"No files match {args.pattern} in {rel}{skipped_note(args)}", data={"count": 0}
            )
        found.sort(key=lambda p: ctx.display(p))
        found.sort(key=_mtime, reverse=True)
        lines = [ctx.display(p) for p in found[:FIND_MAX_RESULTS]]
        if len(found) > FIND_MAX_RESULTS:
            lines.append(
                f"[showing the {FIND_MAX_RESULTS} most recently modified of {len(found)} "
                "matches; use a narrower pattern or path]"
            )
        return ToolResult("\n".join(lines), data={"count": len(found)})


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
