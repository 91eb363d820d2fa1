"""The ripgrep ``grep`` engine: the fast path, streamed and stopped early."""

from __future__ import annotations

import asyncio
import base64
import importlib.metadata
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from planshell.tools.base import ToolError
from planshell.tools.grep_query import RANK_TEXT, GrepHit, GrepQuery, RankedHits, is_text_file
from planshell.tools.walk import SKIP_DIRS


def packaged_rg() -> str | None:
    """The ``rg`` that the ``ripgrep`` wheel installed next to this Python's scripts."""
    try:
        dist = importlib.metadata.distribution("ripgrep")
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if entry.name in ("rg", "rg.exe"):
            path = Path(str(dist.locate_file(entry))).resolve()
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
    return None


def find_rg() -> str | None:
    """The ripgrep binary: the packaged one, else one on ``PATH``; None means the
    Python engine (a function so tests can swap engines)."""
    return packaged_rg() or shutil.which("rg")


def _rg_command(rg: str, query: GrepQuery) -> list[str]:
    """ripgrep told to behave like the fallback: hidden files searched but hidden
    folders pruned (unless asked), ignore files honoured (unless asked), our skip
    list, path order, JSON so paths and lines parse exactly.

    A ``--glob`` that includes files overrides ignore files in rg (``-g '*.md'``
    brings back an ignored ``notes.md``), so with ignore rules on, such a glob
    is applied to rg's results instead (:meth:`GrepQuery.wants`); excluding
    globs are passed on, and prune folders early.

    Only fixed flags: the pattern goes in ``--regexp``, the glob in one
    ``--glob=`` argument, the path after ``--``, and ``--no-config`` keeps
    ``RIPGREP_CONFIG_PATH`` from adding options such as ``--pre``.
    """
    cmd = [rg, "--json", "--sort=path", "--no-config", "--hidden", "--no-messages"]
    if query.ignore is None:
        cmd.append("--no-ignore")
    if query.ignore_case:
        cmd.append("--ignore-case")
    if query.glob is not None and (query.glob.negated or query.ignore is None):
        cmd.append(f"--glob={query.glob.raw}")
    cmd += [f"--glob=!{name}/" for name in sorted(SKIP_DIRS)]
    if not query.include_hidden:
        cmd.append("--glob=!.*/")
    return [*cmd, "--regexp", query.pattern, "--", str(query.base)]


def _json_text(obj: dict[str, Any]) -> str:
    """rg JSON strings come as ``text``, or ``bytes`` (base64) when not UTF-8."""
    if "text" in obj:
        return str(obj["text"])
    return base64.b64decode(obj["bytes"]).decode("utf-8", "replace")


def _json_path(obj: dict[str, Any]) -> str:
    """A path from rg JSON, decoded the way ``os.scandir`` names are."""
    if "text" in obj:
        return str(obj["text"])
    return os.fsdecode(base64.b64decode(obj["bytes"]))


class _RgCollector:
    """Buffers each file's matches until rg's ``end`` message says it was text."""

    def __init__(self, query: GrepQuery) -> None:
        self.query = query
        self.ranked = RankedHits(query.want)
        self.pending: list[GrepHit] = []
        self.rank = RANK_TEXT
        self.wanted = True  # the current file passes the glob
        self.finished = False  # saw rg's summary: the search ran to completion

    @property
    def full(self) -> bool:
        return self.ranked.full

    def feed(self, message: dict[str, Any]) -> None:
        kind, data = message.get("type"), message.get("data", {})
        if kind == "begin":
            path = _json_path(data["path"])
            self.pending = []
            self.rank = self.query.rank(path)
            self.wanted = self.query.wants(path)
        elif kind == "match" and self.wanted and len(self.pending) < self.ranked.room(self.rank):
            self.pending.append(
                GrepHit(
                    _json_path(data["path"]),
                    data["line_number"],
                    _json_text(data["lines"]),
                    self.rank,
                )
            )
        elif kind == "end":
            if (
                self.pending
                and data.get("binary_offset") is None
                and is_text_file(self.pending[0].path)
            ):
                self.ranked.add(self.pending)
            self.pending = []
        elif kind == "summary":
            self.finished = True


class _RgProtocol(asyncio.SubprocessProtocol):
    """Feeds rg's JSON lines to a collector as they arrive.

    Once the collector is full it closes rg's stdout, so rg stops on EPIPE by
    itself: signalling it instead races with its exit (``Popen`` would reap it
    behind asyncio's child watcher).
    """

    def __init__(self, collector: _RgCollector) -> None:
        self.collector = collector
        self.partial = bytearray()
        self.stderr = bytearray()
        self.transport: asyncio.SubprocessTransport | None = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 2:
            self.stderr += data
            return
        cut = data.rfind(b"\n")
        if self.collector.full or cut < 0:
            self.partial += data
            return
        lines = (self.partial + data[:cut]).split(b"\n")
        self.partial = bytearray(data[cut + 1 :])
        for line in lines:
            self.collector.feed(json.loads(line))
            if self.collector.full:
                self._close_stdout()
                return

    def _close_stdout(self) -> None:
        assert self.transport is not None
        if (pipe := self.transport.get_pipe_transport(1)) is not None:
            pipe.close()

    def connection_lost(self, exc: Exception | None) -> None:
        """rg has exited and its pipes are closed."""
        if not self.done.done():
            self.done.set_result(None)


async def rg_grep(rg: str, query: GrepQuery) -> list[GrepHit]:
    """Run ripgrep from the root (so anchored globs and the global excludes are
    root-relative) and stream its JSON, stopping it once the best rank is full."""
    collector = _RgCollector(query)
    transport, protocol = await asyncio.get_running_loop().subprocess_exec(
        lambda: _RgProtocol(collector),
        *_rg_command(rg, query),
        cwd=query.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        await protocol.done
    finally:
        transport.close()  # kills rg only if we are cancelled while it runs
    if not collector.full and not collector.finished:
        detail = protocol.stderr.decode("utf-8", "replace").strip()
        raise ToolError(_rg_failure(query.pattern, detail))
    return collector.ranked.hits()


def _rg_failure(pattern: str, detail: str) -> str:
    """rg refuses before searching (bad regex or glob): pass its words on."""
    detail = detail.removeprefix("rg: ")
    if detail.startswith("regex parse error"):
        return f"invalid regex {pattern!r}: {detail}"
    return f"grep failed: {detail or 'rg stopped without a result'}"
