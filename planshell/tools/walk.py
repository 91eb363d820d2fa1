"""The walk that ``find`` and both ``grep`` engines share, and helpers of the file tools.

One walker (same skipped directories, same order, symlinks never followed) so
that ``find`` and both ``grep`` engines see the same files; ``glob_to_regex``
is also what permission rules match paths with.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from planshell.fsutil import sorted_entries
from planshell.procfs import is_sensitive_proc_path
from planshell.tools.base import ToolArgs, ToolContext, ToolError
from planshell.tools.ignore import Chain, IgnoreRules

#: Directories that are never descended into by ``find``/``grep`` (vendored or
#: generated trees whose matches are noise). Naming one explicitly still works.
SKIP_DIRS: frozenset[str] = frozenset({".git", "node_modules", ".venv", "__pycache__"})


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


def relative_posix(path: Path, base: Path) -> str:
    return path.relative_to(base).as_posix()
