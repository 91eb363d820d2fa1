"""The Python ``grep`` engine: the shared walker and ``re``, when there is no ripgrep."""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path

from planshell.tools.base import ToolError
from planshell.tools.grep_query import GrepHit, GrepQuery, RankedHits, is_text_file
from planshell.tools.walk import walk_files


def _grep_file(path: Path, regex: re.Pattern[str], want: int, rank: int) -> list[GrepHit]:
    """Hits in one file; none at all if it is binary (a NUL anywhere, like rg)."""
    if not is_text_file(str(path)):
        return []
    hits: list[GrepHit] = []
    try:
        with path.open("rb") as handle:
            for lineno, raw in enumerate(handle, 1):
                if b"\x00" in raw:
                    return []
                if len(hits) < want:
                    line = raw.decode("utf-8", "replace")
                    if regex.search(line.removesuffix("\n")):
                        hits.append(GrepHit(str(path), lineno, line, rank))
    except OSError:
        return []
    return hits


def python_grep(query: GrepQuery, stop: threading.Event) -> list[GrepHit]:
    """The fallback engine: same files, order, ranks and binary rules as the rg engine."""
    flags = re.IGNORECASE if query.ignore_case else 0
    try:
        regex = re.compile(query.pattern, flags)
    except re.error as exc:
        raise ToolError(f"invalid regex {query.pattern!r}: {exc}.") from None
    if query.single_file:
        return _grep_file(query.base, regex, query.want, query.rank(str(query.base)))
    glob = query.glob
    prune = (lambda p: glob.prunes_dir(query.rel(str(p)))) if glob else None
    ranked = RankedHits(query.want)
    walk = walk_files(
        query.base,
        prune=prune,
        stop=stop,
        include_hidden=query.include_hidden,
        ignore=query.ignore,
    )
    for path in walk:
        if query.wants(str(path)):
            rank = query.rank(str(path))
            if (room := ranked.room(rank)) > 0:
                ranked.add(_grep_file(path, regex, room, rank))
            if ranked.full:
                break
    return ranked.hits()


async def run_python_grep(query: GrepQuery) -> list[GrepHit]:
    """The fallback in a worker thread, told to stop if the call is cancelled."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(python_grep, query, stop)
    finally:
        stop.set()
