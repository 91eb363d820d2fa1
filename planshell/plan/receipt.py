"""The write-barrier receipt: did anything outside the plan change while planning?

When plan mode starts, the controller takes a :class:`Snapshot` of the work
tree; at review and again at approval it compares the work tree with it and
shows the :class:`Receipt` ("no changes outside the plan" or "3 paths changed
while planning: a, b, c"). The receipt does not prevent anything (the gate,
the bash guard and the sandbox do that); it is the check that would notice
if they had failed, or if another program changed the project meanwhile.

* **In a git work tree**: ``git status --porcelain=v1 -z --untracked-files=all``
  (run with the git hardening of ``gitsafe.py``), the ``HEAD`` commit, and a
  sha256 of every modified or untracked file (files over 8 MiB, and any file
  once 2 s of hashing have passed, are fingerprinted by size and mtime). A
  path that enters, leaves or changes in that list is a change; so is a moved
  ``HEAD``. Files git ignores are not covered.
* **Elsewhere**: a walk of the project (skipping ``.git``, ``node_modules``,
  ``.venv`` and ``.planshell``) recording size plus sha256 (size and mtime for
  files over 1 MiB). The walk stops after ~2 s or 20,000 entries; the receipt
  then says it was capped and compares only the part both walks covered
  (entries are visited in sorted order, so that part is well defined).

Paths under ``.planshell/`` (the plan files) are never changes.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planshell.plan.gitsafe import git_command, git_safe_env

TIME_BUDGET = 2.0  # seconds for a walk (or for hashing, in a git work tree)
MAX_FILES = 20_000
WALK_HASH_MAX = 1 << 20
GIT_HASH_MAX = 8 << 20
GIT_TIMEOUT = 15.0
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", ".planshell"})
SHOWN_PATHS = 5


@dataclass(frozen=True)
class Snapshot:
    root: Path
    kind: str  # "git" | "walk" | "error"
    entries: dict[str, str] = field(default_factory=dict)  # path -> fingerprint
    taken_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    head: str | None = None
    top: Path | None = None  # the git top level (paths are relative to it)
    last: tuple[str, ...] | None = None  # the walk's frontier when capped
    capped: bool = False
    error: str | None = None


@dataclass(frozen=True)
class Receipt:
    clean: bool
    changed: list[str]
    summary: str
    taken_at: datetime  # when the snapshot was taken (plan mode started)
    capped: bool = False
    checked_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    digest: str = ""  # identifies the changed paths and their current contents

    def to_entry(self) -> dict[str, Any]:
        """The session-log form (``{"type": "receipt", ...}`` is added by the caller)."""
        return {
            "clean": self.clean,
            "changed": list(self.changed),
            "summary": self.summary,
            "taken_at": self.taken_at.isoformat(),
            "checked_at": self.checked_at.isoformat(),
            "capped": self.capped,
        }


def take_snapshot(
    root: Path,
    *,
    ignore: Iterable[Path] = (),
    time_budget: float = TIME_BUDGET,
    max_files: int = MAX_FILES,
) -> Snapshot:
    """Record the work tree under ``root`` now."""
    root = Path(root).resolve()
    ignored = _ignored(root, ignore)
    deadline = time.monotonic() + time_budget
    try:
        top = _git_top(root)
        if top is not None:
            ignored.append(top / ".planshell")
            head, listed = _git_state(top)
            entries = {
                path: f"{xy}|{_fingerprint(top / path, GIT_HASH_MAX, deadline)}"
                for path, xy in listed.items()
                if not _is_ignored(top / path, ignored)
            }
            return Snapshot(root, "git", entries, head=head, top=top)
        entries, last, capped = _walk(root, ignored, deadline, max_files)
        return Snapshot(root, "walk", entries, last=last if capped else None, capped=capped)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return Snapshot(root, "error", error=str(exc) or type(exc).__name__)


def compare(
    before: Snapshot,
    *,
    ignore: Iterable[Path] = (),
    time_budget: float = TIME_BUDGET,
    max_files: int = MAX_FILES,
) -> Receipt:
    """Compare the work tree now with ``before``."""
    if before.kind == "error":
        return Receipt(
            False, [], f"could not check the work tree: {before.error}", before.taken_at
        )
    ignored = _ignored(before.root, ignore)
    deadline = time.monotonic() + time_budget
    try:
        if before.kind == "git" and before.top is not None:
            changed, now = _compare_git(before, [*ignored, before.top / ".planshell"], deadline)
            capped = False
        else:
            changed, now, capped = _compare_walk(before, ignored, deadline, max_files)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return Receipt(
            False, [], f"could not check the work tree: {exc or type(exc).__name__}",
            before.taken_at,
        )
    digest = hashlib.sha256(
        "\0".join(f"{p}\0{now.get(p, '-')}" for p in changed).encode("utf-8", "surrogateescape")
    ).hexdigest()
    return Receipt(not changed, changed, _summary(changed, capped), before.taken_at, capped,
                   digest=digest)


def _summary(changed: list[str], capped: bool) -> str:
    if not changed:
        text = "no changes outside the plan"
    else:
        shown = ", ".join(changed[:SHOWN_PATHS])
        more = f" and {len(changed) - SHOWN_PATHS} more" if len(changed) > SHOWN_PATHS else ""
        noun = "path" if len(changed) == 1 else "paths"
        text = f"{len(changed)} {noun} changed while planning: {shown}{more}"
    if capped:
        text += " (the check was capped: only part of the project was compared)"
    return text


# --- git ----------------------------------------------------------------------


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    git = git_command()
    if git is None:
        raise FileNotFoundError("git is not installed")
    return subprocess.run(
        [git, *args],
        cwd=cwd,
        env={**os.environ, **git_safe_env(), "LC_ALL": "C"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=GIT_TIMEOUT,
        check=False,
    )


def _git_top(root: Path) -> Path | None:
    if git_command() is None:
        return None
    done = _git(["rev-parse", "--show-toplevel"], root)
    if done.returncode != 0:
        return None
    text = os.fsdecode(done.stdout.rstrip(b"\n"))
    return Path(text).resolve() if text else None


def _git_state(top: Path) -> tuple[str | None, dict[str, str]]:
    """``HEAD`` and the porcelain status: path -> XY (for renames, both paths)."""
    head_run = _git(["rev-parse", "-q", "--verify", "HEAD"], top)
    head = head_run.stdout.decode().strip() or None if head_run.returncode == 0 else None
    done = _git(["status", "--porcelain=v1", "-z", "--untracked-files=all"], top)
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        raise ValueError(f"git status failed: {detail[0] if detail else done.returncode}")
    listed: dict[str, str] = {}
    fields = done.stdout.split(b"\0")
    i = 0
    while i < len(fields):
        item = fields[i]
        i += 1
        if len(item) < 4:
            continue
        xy, path = item[:2].decode(errors="replace"), os.fsdecode(item[3:])
        listed[path.rstrip("/")] = xy
        if "R" in xy or "C" in xy:  # the next field is the original path
            if i < len(fields) and fields[i]:
                listed.setdefault(os.fsdecode(fields[i]), f"{xy}<")
            i += 1
    return head, listed


def _compare_git(
    before: Snapshot, ignored: list[Path], deadline: float
) -> tuple[list[str], dict[str, str]]:
    assert before.top is not None
    top = before.top
    head, listed = _git_state(top)
    now: dict[str, str] = {}
    for path, xy in listed.items():
        if _is_ignored(top / path, ignored):
            continue
        old = before.entries.get(path)
        if old is None:  # new in the list: a change whatever its contents
            fingerprint = _fingerprint(top / path, GIT_HASH_MAX, deadline)
        else:  # the way the snapshot did it, so a hash is never compared with a stat
            by_stat = old.partition("|")[2].startswith("s:")
            fingerprint = _fingerprint(top / path, None, None, by_stat=by_stat)
        now[path] = f"{xy}|{fingerprint}"
    changed = sorted(p for p in before.entries.keys() | now.keys() if before.entries.get(p) != now.get(p))
    if head != before.head:
        changed.insert(0, f"HEAD ({_short(before.head)} -> {_short(head)})")
    return changed, now


def _short(head: str | None) -> str:
    return head[:10] if head else "none"


# --- walk ---------------------------------------------------------------------


def _walk(
    root: Path,
    ignored: list[Path],
    deadline: float,
    max_files: int,
    stop_after: tuple[str, ...] | None = None,
) -> tuple[dict[str, str], tuple[str, ...] | None, bool]:
    """Entries in sorted depth-first order; (entries, last parts, capped)."""
    entries: dict[str, str] = {}
    last: tuple[str, ...] | None = None
    for parts, path, entry in _visit(root, (), ignored):
        if stop_after is not None and parts > stop_after:
            return entries, last, False
        if len(entries) >= max_files or time.monotonic() > deadline:
            return entries, last, True
        entries["/".join(parts)] = _entry_fingerprint(path, entry, deadline)
        last = parts
    return entries, last, False


def _visit(
    directory: Path, prefix: tuple[str, ...], ignored: list[Path]
) -> Iterator[tuple[tuple[str, ...], Path, os.DirEntry[str]]]:
    try:
        with os.scandir(directory) as it:
            children = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in children:
        path = directory / entry.name
        if _is_ignored(path, ignored):
            continue
        parts = (*prefix, entry.name)
        yield parts, path, entry
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir and entry.name not in SKIP_DIRS:
            yield from _visit(path, parts, ignored)


def _entry_fingerprint(path: Path, entry: os.DirEntry[str], deadline: float) -> str:
    try:
        if entry.is_dir(follow_symlinks=False):
            return "d"
    except OSError:
        return "?"
    return _fingerprint(path, WALK_HASH_MAX, deadline)


def _compare_walk(
    before: Snapshot, ignored: list[Path], deadline: float, max_files: int
) -> tuple[list[str], dict[str, str], bool]:
    now, last, capped = _walk(before.root, ignored, deadline, max_files, before.last)
    limits = [p for p in (before.last, last if capped else None) if p is not None]
    limit = min(limits) if limits else None

    def covered(path: str) -> bool:
        return limit is None or tuple(path.split("/")) <= limit

    changed = sorted(
        p for p in before.entries.keys() | now.keys()
        if covered(p) and before.entries.get(p) != now.get(p)
    )
    return changed, now, before.capped or capped


# --- fingerprints ---------------------------------------------------------------


def _fingerprint(
    path: Path, hash_max: int | None, deadline: float | None, *, by_stat: bool = False
) -> str:
    """``f:size:sha256`` for a file (``s:size:mtime`` when too big, out of time or asked)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "-"
    except OSError as exc:
        return f"?{exc.errno}"
    if stat.S_ISLNK(st.st_mode):
        try:
            return f"l:{os.readlink(path)}"
        except OSError:
            return "l:?"
    if stat.S_ISDIR(st.st_mode):
        return "d"
    if not stat.S_ISREG(st.st_mode):
        return f"o:{stat.S_IFMT(st.st_mode)}"
    too_big = hash_max is not None and st.st_size > hash_max
    late = deadline is not None and time.monotonic() > deadline
    if by_stat or too_big or late:
        return f"s:{st.st_size}:{st.st_mtime_ns}"
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        return f"?{exc.errno}"
    return f"f:{st.st_size}:{digest.hexdigest()}"


# --- ignoring -------------------------------------------------------------------


def _ignored(root: Path, ignore: Iterable[Path]) -> list[Path]:
    return [root / ".planshell", *(Path(p).resolve() for p in ignore)]


def _is_ignored(path: Path, ignored: list[Path]) -> bool:
    return any(path == p or p in path.parents for p in ignored)
