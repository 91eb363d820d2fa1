"""The ``grep`` tool: regex search of file contents, source files first.

Runs ripgrep when it is there (``grep_rg``), else the Python engine
(``grep_python``); both walk the same files in the same order and rank the
same way (``grep_query``), so the result does not depend on the engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from pydantic import Field

from planshell.tools.base import Effect, Tool, ToolContext, ToolError, ToolResult
from planshell.tools.grep_python import run_python_grep
from planshell.tools.grep_query import GlobFilter, GrepHit, GrepQuery
from planshell.tools.grep_rg import find_rg, rg_grep
from planshell.tools.walk import ScopeArgs, clip_line, search_ignore, skipped_note

GREP_LINE_CHARS = 500


class GrepArgs(ScopeArgs):
    pattern: str = Field(description="Regex (no look-around or backreferences).")
    path: str = Field(".", description="File or directory to search.")
    glob: str | None = Field(
        None, description="File filter: '*.py' (any depth), 'src/**/*.ts', '!*.min.js' excludes."
    )
    ignore_case: bool = False
    max_results: int = Field(200, ge=1, le=5000)


def _hit_order(hit: GrepHit) -> tuple[int, tuple[str, ...], int]:
    """Rank, then path component by component (as ``rg --sort path``), then line."""
    return hit.rank, Path(hit.path).parts, hit.lineno


def _hit_line(hit: GrepHit, ctx: ToolContext) -> str:
    text = clip_line(hit.line.rstrip("\r\n"), GREP_LINE_CHARS)
    return f"{ctx.display(Path(hit.path))}:{hit.lineno}:{text}"


def format_hits(hits: Iterable[GrepHit], ctx: ToolContext, limit: int) -> tuple[str, int]:
    """``relpath:lineno:line`` lines, ranked and capped; returns (text, shown).

    Capped at ``limit`` lines and at ``ctx.result_max_chars`` characters,
    whichever comes first, with a note on how to see the rest.
    """
    ordered = sorted(hits, key=_hit_order)
    lines: list[str] = []
    used = 0
    for hit in ordered[:limit]:
        line = _hit_line(hit, ctx)
        if lines and used + len(line) + 1 > ctx.result_max_chars - 200:
            break
        lines.append(line)
        used += len(line) + 1
    shown = len(lines)
    if len(ordered) > shown:
        advice = (
            "narrow the pattern, path or glob, or raise max_results"
            if shown == limit
            else f"one result is limited to {ctx.result_max_chars:,} characters, so narrow the "
            "pattern, path or glob, or read a file's lines with read"
        )
        lines.append(
            f"[showing {shown} matching lines, source files first; there are more — {advice}]"
        )
    return "\n".join(lines), shown


class GrepTool(Tool[GrepArgs]):
    name = "grep"
    description = (
        "Search file contents by regex; prints `path:line:text`, source files first. "
        "Skips git-ignored files and hidden folders unless asked."
    )
    more_hint = "narrow the pattern, path or glob, or lower max_results"
    Args = GrepArgs
    effects = frozenset({Effect.READ})

    def headline(self, args: GrepArgs) -> str:
        where = "" if args.path in (".", "") else f" in {args.path}"
        glob = f" ({args.glob})" if args.glob else ""
        return f"grep {args.pattern}{where}{glob}"

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        base = ctx.resolve(args.path)
        rel = ctx.display(base)
        if not base.exists():
            raise ToolError(f"{rel} does not exist; use find or ls to locate the right path.")
        query = GrepQuery(
            base=base,
            root=ctx.root.resolve(),
            pattern=args.pattern,
            glob=GlobFilter.parse(args.glob) if args.glob else None,
            ignore_case=args.ignore_case,
            want=args.max_results + 1,
            include_hidden=args.include_hidden,
            ignore=await asyncio.to_thread(search_ignore, ctx, base, args),
        )
        rg = find_rg()
        hits = await rg_grep(rg, query) if rg else await run_python_grep(query)
        engine = "rg" if rg else "python"
        if not hits:
            return ToolResult(
                f"No matches for {args.pattern!r} in {rel}{skipped_note(args)}",
                data={"matches": 0, "engine": engine},
            )
        text, shown = format_hits(hits, ctx, args.max_results)
        return ToolResult(
            text,
            data={"matches": shown, "capped": len(hits) > shown, "engine": engine},
        )
