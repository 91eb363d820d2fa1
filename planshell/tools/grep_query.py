"""What a ``grep`` asks and finds, shared by both engines.

The ``--glob`` filter, how a file's matches rank, the hits kept per rank and
the binary test: both engines use them so that they show the same lines.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from planshell.fsutil import BINARY_SNIFF_BYTES, is_binary
from planshell.tools.ignore import IgnoreRules
from planshell.tools.walk import glob_to_regex, relative_posix


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
class GrepQuery:
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
        return relative_posix(p, self.root) if p.is_relative_to(self.root) else path

    def rank(self, path: str) -> int:
        return file_rank(self.rel(path))

    @functools.cached_property
    def single_file(self) -> bool:
        return self.base.is_file()

    def wants(self, path: str) -> bool:
        """Whether the glob (if any) lets this file be searched; a file named
        in ``path`` always is."""
        return self.glob is None or self.single_file or self.glob.wants_file(self.rel(path))


def is_text_file(path: str) -> bool:
    """The binary test both engines share: sniff the head with ``is_binary``."""
    try:
        with open(path, "rb") as handle:
            return not is_binary(handle.read(BINARY_SNIFF_BYTES))
    except OSError:
        return False
