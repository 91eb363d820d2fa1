"""Read-only file tools: ``read``, ``ls``, ``find`` and ``grep``.

They share one walker (same skipped directories, same order, symlinks never
followed) so that ``find`` and both ``grep`` engines see the same files.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import Field

from planshell.fsutil import BINARY_SNIFF_BYTES, is_binary, sorted_entries
from planshell.procfs import is_sensitive_proc_path
from planshell.tools.base import (
    Effect,
    Tool,
    ToolArgs,
    ToolContext,
    ToolData,
    ToolError,
    ToolResult,
)
from planshell.tools.ignore import Chain, IgnoreRules

#: Directories that are never descended into by ``find``/``grep`` (vendored or
#: generated trees whose matches are noise). Naming one explicitly still works.
SKIP_DIRS: frozenset[str] = frozenset({".git", "node_modules", ".venv", "__pycache__"})

READ_DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
GREP_LINE_CHARS = 500
LS_MAX_ENTRIES = 500
FIND_MAX_RESULTS = 500
_CHUNK = 1 << 20


# --------------------------------------------------------------------------- helpers


def human_size(size: int) -> str:
    """``1536`` -> ``1.5 KB``: sizes the model (and user) can read at a glance."""
    if size < 1024:
        return f"{size} B"
    value = size / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def clip_line(line: str, limit: int) -> str:
    """Cut an over-long line, saying how much was dropped."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]} [... {len(line) - limit} more characters truncated]"


def require_file(ctx: ToolContext, raw: str, *, missing_hint: str) -> tuple[Path, str]:
    """Resolve ``raw`` to an existing regular file, or refuse with a next step."""
    path = ctx.resolve(raw)
    rel = ctx.display(path)
    if not path.exists():
        raise ToolError(f"{rel} does not exist; {missing_hint}")
    if path.is_dir():
        raise ToolError(f"{rel} is a directory, not a file; use ls to list what it contains.")
    if not path.is_file():
        raise ToolError(
            f"{rel} is not a regular file (a device, socket or pipe) and cannot be read."
        )
    return path, rel


def require_dir(ctx: ToolContext, raw: str) -> tuple[Path, str]:
    """Resolve ``raw`` to an existing directory, or refuse with a next step."""
    path = ctx.resolve(raw)
    rel = ctx.display(path)
    if not path.exists():
        raise ToolError(
            f"{rel} does not exist; use find to locate it (e.g. pattern '**/{path.name}*')."
        )
    if not path.is_dir():
        raise ToolError(f"{rel} is a file, not a directory; use read to see its contents.")
    return path, rel


def is_hidden(name: str) -> bool:
    """Dot-names are hidden, as in ``ls`` and ripgrep."""
    return name.startswith(".")


def walk_files(
    base: Path,
    *,
    prune: Callable[[Path], bool] | None = None,
    stop: threading.Event | None = None,
    include_hidden: bool = True,
    ignore: IgnoreRules | None = None,
) -> Iterator[Path]:
    """Regular files below ``base``, depth-first with entries in name order.

    This is ripgrep's ``--sort path`` order, which lets ``grep`` stop early and
    still return the same hits with either engine. ``SKIP_DIRS``, hidden
    folders (unless ``include_hidden``), entries ``ignore`` rules out and
    directories ``prune`` rejects are not entered; ``base`` itself is never
    filtered, so naming a skipped folder searches it. Symlinks are skipped so
    a link can never lead outside the project.
    """
    chain = ignore.chain(base) if ignore is not None else ()
    yield from _walk(base, chain, prune, stop, include_hidden, ignore)


def _walk(
    directory: Path,
    chain: Chain,
    prune: Callable[[Path], bool] | None,
    stop: threading.Event | None,
    include_hidden: bool,
    ignore: IgnoreRules | None,
) -> Iterator[Path]:
    for entry in sorted_entries(directory):
        if stop is not None and stop.is_set():
            return
        if entry.is_symlink():
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if (
                entry.name in SKIP_DIRS
                or (not include_hidden and is_hidden(entry.name))
                or (ignore is not None and ignore.ignored(chain, path, True))
                or (prune is not None and prune(path))
            ):
                continue
            inner = ignore.descend(chain, path) if ignore is not None else ()
            yield from _walk(path, inner, prune, stop, include_hidden, ignore)
        elif (
            entry.is_file(follow_symlinks=False)
            and (ignore is None or not ignore.ignored(chain, path, False))
            and not is_sensitive_proc_path(entry.path)  # a walk from / or /proc
        ):
            yield path


def _glob_class(glob: str, start: int) -> tuple[str, int] | None:
    """Translate ``[...]`` at ``start``; None when it is not a closed class."""
    j = start + 1
    if j < len(glob) and glob[j] in "!^":
        j += 1
    if j < len(glob) and glob[j] == "]":
        j += 1
    while j < len(glob) and glob[j] != "]":
        j += 1
    if j >= len(glob):
        return None
    body = glob[start + 1 : j].replace("\\", "\\\\")
    negated = body[:1] in ("!", "^")
    body = "^/" + body[1:] if negated else body
    return f"[{body}]", j + 1


def glob_to_regex(glob: str) -> re.Pattern[str]:
    """Compile a glob to a regex over ``/``-separated relative paths.

    ``*`` and ``?`` stay inside one path component, a whole-component ``**``
    spans any number of directories, ``[...]`` and ``{a,b}`` work as in
    ripgrep and git.
    """
    out: list[str] = []
    depth = 0
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if glob.startswith("**", i) and (i == 0 or glob[i - 1] == "/"):
            end = i + 2
            if end == n:
                out.append(".*")
                i = end
                continue
            if glob[end] == "/":
                out.append("(?:[^/]*/)*")
                i = end + 1
                continue
        if c == "*":
            out.append("[^/]*")
            while i + 1 < n and glob[i + 1] == "*":
                i += 1
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (cls := _glob_class(glob, i)) is not None:
            out.append(cls[0])
            i = cls[1]
            continue
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "," and depth:
            out.append("|")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        raise ToolError(f"invalid glob {glob!r}: a '{{' is never closed.")
    try:
        return re.compile("".join(out), re.DOTALL)
    except re.error as exc:
        raise ToolError(f"invalid glob {glob!r}: {exc}.") from None


# --------------------------------------------------------------------------- read


class ReadArgs(ToolArgs):
    path: str = Field(description="File path, relative to the project root.")
    offset: int | None = Field(None, ge=1, description="First line (1-based).")
    limit: int | None = Field(None, ge=1, description=f"Lines to read (default {READ_DEFAULT_LIMIT}).")


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


# --------------------------------------------------------------------------- ls


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


# --------------------------------------------------------------------------- find

class ScopeArgs(ToolArgs):
    """What a recursive search may leave out: shared by ``find`` and ``grep``."""

    # Self-explanatory names, and the tool descriptions say what they change:
    # every schema word is sent with every request.
    include_ignored: bool = False
    include_hidden: bool = False


def search_ignore(ctx: ToolContext, base: Path, args: ScopeArgs) -> IgnoreRules | None:
    """The ignore rules for a recursive search of ``base``, or None when off.

    Off as well when ``base`` lies in an ignored folder: naming it asked for it.
    """
    if args.include_ignored:
        return None
    rules = IgnoreRules(ctx.root.resolve())
    return None if base.is_dir() and rules.within_ignored(base) else rules


def skipped_note(args: ScopeArgs) -> str:
    """What a search left out and how to bring it back, for empty results."""
    left_out = [
        what
        for what, included in (
            ("ignored files (include_ignored)", args.include_ignored),
            ("hidden folders (include_hidden)", args.include_hidden),
        )
        if not included
    ]
    return f" (not searched: {' and '.join(left_out)})" if left_out else ""


class FindArgs(ScopeArgs):
    pattern: str = Field(description="Glob on paths below `path`: '**/*.py', 'src/**/test_*.py'.")
    path: str = Field(".", description="Directory to search in.")


def _relative_posix(path: Path, base: Path) -> str:
    return path.relative_to(base).as_posix()


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
        found = [p for p in walk if regex.fullmatch(_relative_posix(p, base))]
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


# --------------------------------------------------------------------------- grep


class GrepArgs(ScopeArgs):
    pattern: str = Field(description="Regex (no look-around or backreferences).")
    path: str = Field(".", description="File or directory to search.")
    glob: str | None = Field(
        None, description="File filter: '*.py' (any depth), 'src/**/*.ts', '!*.min.js' excludes."
    )
    ignore_case: bool = False
    max_results: int = Field(200, ge=1, le=5000)


@dataclass(frozen=True)
class GlobFilter:
    """A ripgrep ``--glob`` with gitignore semantics, for the Python engine.

    Unanchored globs (no inner ``/``) match the file name; anchored ones match
    the root-relative path; a trailing ``/`` only matches directories; ``!``
    excludes, and then also prunes matching directories, as ripgrep does.
    """

    raw: str
    regex: re.Pattern[str]
    anchored: bool
    negated: bool
    dir_only: bool

    @classmethod
    def parse(cls, raw: str) -> GlobFilter:
        negated = raw.startswith("!")
        body = raw[1:] if negated else raw
        dir_only = body.endswith("/")
        body = body.rstrip("/")
        anchored = "/" in body
        return cls(raw, glob_to_regex(body.lstrip("/")), anchored, negated, dir_only)

    def _hits(self, rel: str) -> bool:
        subject = rel if self.anchored else rel.rsplit("/", 1)[-1]
        return self.regex.fullmatch(subject) is not None

    def wants_file(self, rel: str) -> bool:
        hit = not self.dir_only and self._hits(rel)
        return not hit if self.negated else hit

    def prunes_dir(self, rel: str) -> bool:
        return self.negated and self._hits(rel)


# What a match is worth: source code first, then other text (docs, config, data),
# then plans, lock files and generated files, whose matches mostly echo the source.
RANK_SOURCE, RANK_TEXT, RANK_GENERATED = 0, 1, 2

SOURCE_SUFFIXES: frozenset[str] = frozenset(
    ".py .pyi .pyx .js .jsx .mjs .cjs .ts .tsx .mts .cts .vue .svelte .go .rs .c .h .cc .cpp "
    ".cxx .hpp .hh .hxx .m .mm .java .kt .kts .scala .groovy .gradle .swift .cs .fs .vb .rb "
    ".php .pl .pm .lua .sh .bash .zsh .fish .ps1 .r .jl .ex .exs .erl .hrl .hs .ml .mli .clj "
    ".cljs .dart .zig .nim .sql .proto .graphql .tf .el .vim .cmake".split()
)
SOURCE_NAMES: frozenset[str] = frozenset({"Makefile", "Dockerfile", "CMakeLists.txt"})
LOCK_NAMES: frozenset[str] = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "pnpm-lock.yaml",
        "yarn.lock",
        "go.sum",
        "Cargo.lock",
        "poetry.lock",
        "uv.lock",
        "Pipfile.lock",
        "Gemfile.lock",
        "composer.lock",
        "flake.lock",
    }
)
GENERATED_SUFFIXES: tuple[str, ...] = (
    ".lock", ".min.js", ".min.css", ".map", "_pb2.py", "_pb2.pyi", ".pb.go", ".snap", ".svg",
)  # fmt: skip
GENERATED_DIRS: frozenset[str] = frozenset(
    {".planshell", "dist", "build", "generated", "__generated__", "__snapshots__", "vendor"}
)


def file_rank(rel: str) -> int:
    """How early a file's matches are listed (lower first); ``rel`` is root-relative."""
    *dirs, name = rel.split("/")
    if (
        name in LOCK_NAMES
        or name.endswith(GENERATED_SUFFIXES)
        or not GENERATED_DIRS.isdisjoint(dirs)
    ):
        return RANK_GENERATED
    if name in SOURCE_NAMES or os.path.splitext(name)[1].lower() in SOURCE_SUFFIXES:
        return RANK_SOURCE
    return RANK_TEXT


@dataclass(frozen=True)
class GrepHit:
    path: str  # absolute, as found on disk
    lineno: int
    line: str  # raw line, terminator included
    rank: int = RANK_TEXT


class RankedHits:
    """The first ``want`` hits of each rank, in path order.

    Both engines fill it the same way, so the shown lines agree. Once the best
    rank holds ``want`` hits nothing later can displace them, and the search
    stops; otherwise it reads the whole tree, keeping ``want`` per rank.
    """

    def __init__(self, want: int) -> None:
        self.want = want
        self.by_rank: dict[int, list[GrepHit]] = {}

    def room(self, rank: int) -> int:
        return self.want - len(self.by_rank.get(rank, ()))

    def add(self, hits: list[GrepHit]) -> None:
        for hit in hits:
            if self.room(hit.rank) > 0:
                self.by_rank.setdefault(hit.rank, []).append(hit)

    @property
    def full(self) -> bool:
        return self.room(RANK_SOURCE) <= 0

    def hits(self) -> list[GrepHit]:
        return [hit for rank in sorted(self.by_rank) for hit in self.by_rank[rank]]


@dataclass
class _GrepQuery:
    base: Path
    root: Path
    pattern: str
    glob: GlobFilter | None
    ignore_case: bool
    want: int  # hits kept per rank (max_results + 1, to know it was capped)
    include_hidden: bool = False
    ignore: IgnoreRules | None = None  # None: ignore files are not honoured

    def rel(self, path: str) -> str:
        """``path`` relative to the project root (as globs and ranks see it)."""
        p = Path(path)
        return _relative_posix(p, self.root) if p.is_relative_to(self.root) else path

    def rank(self, path: str) -> int:
        return file_rank(self.rel(path))

    @functools.cached_property
    def single_file(self) -> bool:
        return self.base.is_file()

    def wants(self, path: str) -> bool:
        """Whether the glob (if any) lets this file be searched; a file named
        in ``path`` always is."""
        return self.glob is None or self.single_file or self.glob.wants_file(self.rel(path))


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


def _is_text_file(path: str) -> bool:
    """The binary test both engines share: sniff the head with ``is_binary``."""
    try:
        with open(path, "rb") as handle:
            return not is_binary(handle.read(BINARY_SNIFF_BYTES))
    except OSError:
        return False


def _grep_file(path: Path, regex: re.Pattern[str], want: int, rank: int) -> list[GrepHit]:
    """Hits in one file; none at all if it is binary (a NUL anywhere, like rg)."""
    if not _is_text_file(str(path)):
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


def _python_grep(query: _GrepQuery, stop: threading.Event) -> list[GrepHit]:
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


def _rg_command(rg: str, query: _GrepQuery) -> list[str]:
    """ripgrep told to behave like the fallback: hidden files searched but hidden
    folders pruned (unless asked), ignore files honoured (unless asked), our skip
    list, path order, JSON so paths and lines parse exactly.

    A ``--glob`` that includes files overrides ignore files in rg (``-g '*.md'``
    brings back an ignored ``notes.md``), so with ignore rules on, such a glob
    is applied to rg's results instead (:meth:`_GrepQuery.wants`); excluding
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

    def __init__(self, query: _GrepQuery) -> None:
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
        elif (
            kind == "match"
            and self.wanted
            and len(self.pending) < self.ranked.room(self.rank)
        ):
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
                and _is_text_file(self.pending[0].path)
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


async def _rg_grep(rg: str, query: _GrepQuery) -> list[GrepHit]:
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
        query = _GrepQuery(
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
        hits = await _rg_grep(rg, query) if rg else await _run_python_grep(query)
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


async def _run_python_grep(query: _GrepQuery) -> list[GrepHit]:
    """The fallback in a worker thread, told to stop if the call is cancelled."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(_python_grep, query, stop)
    finally:
        stop.set()
