"""The write-barrier receipt: did anything outside the plan change while planning?

When plan mode starts, the controller takes a :class:`Snapshot` of the project
in a background thread (:class:`PendingSnapshot`; every tool call waits for it
first, so the agent's changes all come after it);
at review and again at approval it compares the project with it and shows the
:class:`Receipt` ("no changes outside the plan" or "3 paths changed while
planning: a, b, c"). The receipt does not prevent anything (the gate, the bash
guard and the sandbox do that); it is the check that would notice if they had
failed, or if another program changed the project meanwhile.

What a check covers, in a git work tree (all git commands run with the
hardening of ``sandbox/gitsafe.py`` and ``GIT_OPTIONAL_LOCKS=0``, so they write nothing
and run none of the repository's programs):

* **the work tree**: ``git status --porcelain=v1 -z --untracked-files=all
  --ignored=matching --ignore-submodules=none``, the ``HEAD`` commit, and a
  sha256 of every modified or untracked file (up to :data:`HASH_BUDGET` bytes
  and :data:`TIME_BUDGET` seconds per check; past that, size, mtime and ctime);
* **files git ignores**: each ignored file, and every file inside an ignored
  directory, by size, mtime and ctime (a rewrite always moves ctime, which no
  program can set back), up to :data:`MAX_IGNORED` entries; a directory that
  does not fit is not compared;
* **index flags**: files marked assume-unchanged or skip-worktree (which
  ``git status`` stops looking at) are hashed like modified files;
* **the git directory**: ``HEAD``, ``config``, ``hooks/``, ``info/``,
  ``packed-refs``, ``refs/`` and everything else in it (sha256 up to 8 MiB
  each), except the content-addressed object store (only ``objects/info``,
  where ``alternates`` lives) and the ``index`` (staged changes are in the
  status; other programs rewrite it when they refresh it); up to
  :data:`MAX_META` entries, the configuring parts first;
* **submodules and nested repositories**: each is checked the same way
  (its work tree, ignored files and git directory, including
  ``.git/modules/<name>``), up to :data:`MAX_REPOS` repositories,
  :data:`MAX_DEPTH` deep.

Elsewhere a walk of the project (skipping ``.git``, ``node_modules`` and
``.venv``) records size plus sha256 (size and mtime for files over 1 MiB); it
stops after ~2 s or 20,000 entries and compares only the part both walks
covered (entries are visited in sorted order, so that part is well defined).

Only ``.planshell/plans/`` (the plan files) is never a change: the rest of
``.planshell/`` (``config.toml``) is checked like any other file. Whatever a
cap left out is listed in :attr:`Receipt.not_covered` and in the summary, so
"no changes" is never claimed for something that was not looked at. Files
outside the project (``$HOME``, ``/tmp``) are not covered: the sandbox keeps
plan-mode ``bash`` from writing them.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from planshell.fsutil import sorted_entries
from planshell.sandbox.gitsafe import git_command, git_safe_env
from planshell.text import plural

_T = TypeVar("_T")
TIME_BUDGET = 2.0  # seconds for a walk (or for hashing, in a git work tree)
MAX_FILES = 20_000
WALK_HASH_MAX = 1 << 20
HASH_BUDGET = 256 << 20  # bytes of modified/untracked content hashed per check
META_HASH_BUDGET = 64 << 20  # bytes of git-directory files hashed per check
META_HASH_MAX = 8 << 20  # git-directory files hashed up to this size
MAX_IGNORED = 20_000  # ignored files recorded per check
MAX_META = 20_000  # git-directory entries recorded per check
MAX_REPOS = 32  # submodules and nested repositories checked
MAX_DEPTH = 3  # how deep submodules of submodules are followed
GIT_TIMEOUT = 15.0
READ_CHUNK = 1 << 20  # bytes of a long git listing held at once
# How long the barrier holds tool calls for a snapshot still running in the background;
# past it the snapshot counts as failed (the receipt says so) and calls go on.
BARRIER_TIMEOUT = 120.0
SKIP_DIRS = frozenset({".git", "node_modules", ".venv"})  # walk mode only
PLANS_DIR = Path(".planshell") / "plans"
SHOWN_PATHS = 5
# Visited first in a git directory, so the entry cap is spent on what configures git.
META_FIRST = ("HEAD", "config", "hooks", "info", "packed-refs", "refs", "commondir", "objects")
SCOPE = (
    "covers the work tree (content hashes for changed files), files git ignores, "
    "the git directory (refs, config, hooks, info) and submodules; "
    "not files outside the project"
)
# Kinds of skipped parts, and how a receipt names them.
_IGNORED, _META, _REPO = "ignored dir", "git directory part", "nested repository"


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
    not_covered: tuple[str, ...] = ()  # what this snapshot left out, in words
    skipped: dict[str, str] = field(default_factory=dict)  # "dir/" -> kind, not compared


@dataclass(frozen=True)
class Receipt:
    clean: bool
    changed: list[str]
    summary: str
    taken_at: datetime  # when the snapshot was taken (plan mode started)
    capped: bool = False  # true when anything was left out (see not_covered)
    checked_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    digest: str = ""  # identifies the changed paths and their current contents
    not_covered: tuple[str, ...] = ()  # what a cap or an error left out, in words
    scope: str = SCOPE  # what a check looks at at all
    # Changed paths the protected-paths rule covers (workspace/protected.py): named first in the summary.
    protected: tuple[str, ...] = ()

    def to_entry(self) -> dict[str, Any]:
        """The session-log form (``{"type": "receipt", ...}`` is added by the caller)."""
        return {
            "clean": self.clean,
            "changed": list(self.changed),
            "summary": self.summary,
            "taken_at": self.taken_at.isoformat(),
            "checked_at": self.checked_at.isoformat(),
            "capped": self.capped,
            "not_covered": list(self.not_covered),
            "protected": list(self.protected),
        }


def take_snapshot(
    root: Path,
    *,
    ignore: Iterable[Path] = (),
    time_budget: float = TIME_BUDGET,
    max_files: int = MAX_FILES,
    stop: threading.Event | None = None,
) -> Snapshot:
    """Record the project under ``root`` now (``stop`` set: give up with an error snapshot)."""
    root = Path(root).resolve()
    ignored = _ignored(root, ignore)
    deadline = time.monotonic() + time_budget
    try:
        top = _git_top(root)
        if top is not None:
            scan = _Scan(top, ignored, None, time_budget, stop)
            head = scan.repo(top, "", 0)
            return Snapshot(
                root,
                "git",
                scan.entries,
                head=head,
                top=top,
                not_covered=scan.not_covered(),
                skipped=dict(scan.skipped),
            )
        entries, last, capped, skipped = _walk(root, ignored, deadline, max_files, stop=stop)
        return Snapshot(
            root,
            "walk",
            entries,
            last=last if capped else None,
            capped=capped,
            not_covered=_walk_not_covered(capped, skipped),
        )
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return Snapshot(root, "error", error=str(exc) or type(exc).__name__)


class Stopped(ValueError):
    """The snapshot was no longer wanted (plan mode was left while it ran)."""


class PendingSnapshot:
    """A snapshot taken in a background thread; :meth:`wait` and :meth:`result` are the barrier.

    Entering PLAN must not block the UI for as long as a big repository takes to
    scan, yet the receipt must see every change the agent makes: so the scan
    runs in a thread and every tool call waits for it first (the controller's
    barrier gate). Whatever happens it ends with a :class:`Snapshot`: one that
    raised, took longer than ``timeout`` or was cancelled becomes an ``error``
    snapshot, whose receipt says it could not check, and the waiters go on.
    """

    def __init__(
        self,
        take: Callable[[threading.Event], Snapshot],
        root: Path,
        *,
        timeout: float | None = None,
    ) -> None:
        self.root = Path(root)
        self.timeout = timeout = BARRIER_TIMEOUT if timeout is None else timeout
        self._take = take
        self._stop = threading.Event()
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._result: Snapshot | None = None
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._deadline = time.monotonic() + timeout
        # A daemon: a scan still running when the program ends must not keep it alive.
        self._thread = threading.Thread(target=self._run, name="planshell-snapshot", daemon=True)
        self._thread.start()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def waiting(self) -> int:
        """How many awaiting callers (tool calls at the barrier) the snapshot holds now."""
        with self._lock:
            return len(self._waiters)

    def cancel(self, why: str = "plan mode was left before the snapshot finished") -> None:
        """Not wanted any more: the scan stops at its next file, waiters are released."""
        self._stop.set()
        self._finish(Snapshot(self.root, "error", error=why))

    def result(self) -> Snapshot:
        """The snapshot, waiting for it (in a thread, never on the event loop) up to the timeout."""
        if not self._done.wait(max(0.0, self._deadline - time.monotonic())):
            self._expire()
        assert self._result is not None
        return self._result

    async def wait(self) -> Snapshot:
        """The snapshot, awaited without blocking the event loop (the barrier for tool calls)."""
        if not self._done.is_set():
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()
            with self._lock:
                registered = not self._done.is_set()
                if registered:
                    self._waiters.append((loop, future))
            if registered:
                left = max(0.0, self._deadline - time.monotonic())
                try:
                    await asyncio.wait_for(future, left)
                except TimeoutError:
                    self._expire()
        assert self._result is not None
        return self._result

    def _run(self) -> None:
        try:
            snapshot = self._take(self._stop)
        except Exception as exc:  # a bug or an unexpected error: said in the receipt, not raised
            snapshot = Snapshot(self.root, "error", error=f"{type(exc).__name__}: {exc}")
        self._finish(snapshot)

    def _expire(self) -> None:
        self._stop.set()
        self._finish(
            Snapshot(self.root, "error", error=f"the snapshot took longer than {self.timeout:g} s")
        )

    def _finish(self, snapshot: Snapshot) -> None:
        """The first outcome wins (a late scan after a timeout or a cancel is dropped)."""
        with self._lock:
            if self._done.is_set():
                return
            self._result = snapshot
            self._done.set()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            try:
                loop.call_soon_threadsafe(_wake, future)
            except RuntimeError:  # that loop is closed: nobody waits there any more
                pass


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def compare(
    before: Snapshot,
    *,
    ignore: Iterable[Path] = (),
    time_budget: float = TIME_BUDGET,
    max_files: int = MAX_FILES,
) -> Receipt:
    """Compare the project now with ``before``."""
    if before.kind == "error":
        return Receipt(
            False,
            [],
            f"could not check the work tree: {before.error}",
            before.taken_at,
            capped=True,
            not_covered=(f"the whole project (no snapshot: {before.error})",),
        )
    ignored = _ignored(before.root, ignore)
    deadline = time.monotonic() + time_budget
    try:
        if before.kind == "git" and before.top is not None:
            changed, now, not_covered = _compare_git(before, ignored, time_budget)
        else:
            changed, now, not_covered = _compare_walk(before, ignored, deadline, max_files)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return Receipt(
            False,
            [],
            f"could not check the work tree: {exc or type(exc).__name__}",
            before.taken_at,
        )
    digest = hashlib.sha256(
        "\0".join(f"{p}\0{now.get(p, '-')}" for p in changed).encode("utf-8", "surrogateescape")
    ).hexdigest()
    guarded = _protected(before.top or before.root, changed)
    summary = _summary(changed, not_covered)
    if guarded:
        summary = (
            f"protected paths changed (git config, hooks, .git, .planshell settings): "
            f"{_listing(list(guarded), SHOWN_PATHS)} · {summary}"
        )
    return Receipt(
        not changed,
        changed,
        summary,
        before.taken_at,
        bool(not_covered),
        digest=digest,
        not_covered=not_covered,
        protected=guarded,
    )


def _protected(base: Path, changed: list[str], limit: int = 200) -> tuple[str, ...]:
    """The changed paths the shared protected-paths rule covers (the first ``limit`` looked at)."""
    from planshell.workspace.protected import protection

    return tuple(
        p for p in changed[:limit] if protection(base, base / p.rstrip("/"), p) is not None
    )


def _summary(changed: list[str], not_covered: tuple[str, ...]) -> str:
    if not changed:
        text = "no changes seen" if not_covered else "no changes outside the plan"
    else:
        shown = ", ".join(changed[:SHOWN_PATHS])
        more = f" and {len(changed) - SHOWN_PATHS} more" if len(changed) > SHOWN_PATHS else ""
        noun = "path" if len(changed) == 1 else "paths"
        text = f"{len(changed)} {noun} changed while planning: {shown}{more}"
    if not_covered:
        text += " · not covered: " + "; ".join(not_covered)
    return text


def _listing(items: list[str], shown: int = 3) -> str:
    more = f", +{len(items) - shown}" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


# --- git ----------------------------------------------------------------------


def _git_invocation(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of a git command (a safe environment, C locale)."""
    git = git_command()
    if git is None:
        raise FileNotFoundError("git is not installed")
    return [git, *args], {**os.environ, **git_safe_env(), "LC_ALL": "C"}


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    argv, env = _git_invocation(args)
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=GIT_TIMEOUT,
        check=False,
    )


def _git_ok(args: list[str], cwd: Path) -> bytes:
    done = _git(args, cwd)
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        raise ValueError(f"git {args[0]} failed: {detail[0] if detail else done.returncode}")
    return done.stdout


def _git_top(root: Path) -> Path | None:
    if git_command() is None:
        return None
    done = _git(["rev-parse", "--show-toplevel"], root)
    if done.returncode != 0:
        return None
    text = os.fsdecode(done.stdout.rstrip(b"\n"))
    return Path(text).resolve() if text else None


def _git_dirs(top: Path) -> tuple[Path, Path]:
    """The repository's own git directory and its common one (they differ in a linked worktree)."""
    out = _git_ok(["rev-parse", "--absolute-git-dir", "--git-common-dir"], top)
    lines = [os.fsdecode(line) for line in out.splitlines()]
    if len(lines) < 2:
        raise ValueError("git rev-parse gave no git directory")
    return Path(lines[0]).resolve(), (top / lines[1]).resolve()


def _head(top: Path) -> str | None:
    done = _git(["rev-parse", "-q", "--verify", "HEAD"], top)
    return (done.stdout.decode().strip() or None) if done.returncode == 0 else None


def _status(top: Path) -> dict[str, str]:
    """Porcelain status: path -> XY (renames give both paths; directories keep their ``/``)."""
    out = _git_ok(
        [
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignored=matching",
            "--ignore-submodules=none",
        ],
        top,
    )
    listed: dict[str, str] = {}
    fields = out.split(b"\0")
    i = 0
    while i < len(fields):
        item = fields[i]
        i += 1
        if len(item) < 4:
            continue
        xy, path = item[:2].decode(errors="replace"), os.fsdecode(item[3:])
        listed[path] = xy
        if "R" in xy or "C" in xy:  # the next field is the original path
            if i < len(fields) and fields[i]:
                listed.setdefault(os.fsdecode(fields[i]), f"{xy}<")
            i += 1
    return listed


def _git_records(args: list[str], cwd: Path) -> Iterator[bytes]:
    """The NUL-separated records of a git command, read a chunk at a time.

    For listings as long as the repository (``ls-files`` of 100k files is ~7 MB):
    memory stays at one chunk however big the index is.
    """
    argv, env = _git_invocation(args)
    with subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        timer = threading.Timer(GIT_TIMEOUT, proc.kill)
        timer.start()
        try:
            tail = b""
            while chunk := proc.stdout.read(READ_CHUNK):
                records = (tail + chunk).split(b"\0")
                tail = records.pop()
                yield from records
            if tail:
                yield tail
            error = proc.stderr.read()
            code = proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:  # the caller stopped early
                proc.kill()
    if code != 0:
        detail = error.decode(errors="replace").strip().splitlines()
        raise ValueError(f"git {args[0]} failed: {detail[0] if detail else code}")


def _index(top: Path) -> tuple[dict[str, str], list[str]]:
    """Index entries git status does not look at (path -> flag), and the gitlinks (submodules).

    One pass over the whole index, streamed; only the rare entries are kept.
    """
    flagged: dict[str, str] = {}
    gitlinks: list[str] = []
    for record in _git_records(["ls-files", "-z", "--stage", "-v"], top):
        # "<tag> <mode> <object> <stage>\t<path>"; tag S = skip-worktree, lowercase = assume-unchanged
        if record[:2] == b"H " and record[2:8] != b"160000":
            continue  # a plain cached entry (nearly all of them): nothing to keep
        meta, tab, raw = record.partition(b"\t")
        if not tab or len(meta) < 9:
            continue
        tag, mode = meta[:1], meta[2:8]
        if mode == b"160000":
            gitlinks.append(os.fsdecode(raw))
        if tag == b"S":
            flagged[os.fsdecode(raw)] = "skip-worktree"
        elif tag.islower():
            flagged[os.fsdecode(raw)] = "assume-unchanged"
    return flagged, gitlinks


class _Background(Generic[_T]):
    """``func(top)`` in a daemon thread (not an executor's: those hold up the program's exit)."""

    def __init__(self, func: Callable[[Path], _T], top: Path) -> None:
        self._func, self._top = func, top
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="planshell-git", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._func(self._top)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> _T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set when no error


class _Scan:
    """One check of a git work tree: the entries to compare, and what the caps left out.

    ``before`` (a snapshot) makes a comparison scan: parts the snapshot skipped
    are skipped again, and each file is fingerprinted the way the snapshot did
    it, so a hash is never compared with a stat.
    """

    def __init__(
        self,
        top: Path,
        ignored: list[str],
        before: Snapshot | None,
        time_budget: float,
        stop: threading.Event | None = None,
    ) -> None:
        self.top = top
        self.stop = stop
        self.ignored = ignored
        self.like = before.entries if before is not None else {}
        self.was_skipped = before.skipped if before is not None else {}
        self.deadline = time.monotonic() + time_budget
        self.hash_left = {"work": HASH_BUDGET, "meta": META_HASH_BUDGET}
        self.ignored_left = MAX_IGNORED
        self.meta_left = MAX_META
        self.repos = 0
        self.entries: dict[str, str] = {}
        self.skipped: dict[str, str] = {}
        self.stat_only: list[str] = []
        self.failed: list[str] = []
        self.gitdirs: list[Path] = []

    # -- naming and recording

    def key(self, path: Path) -> str:
        """Work-tree relative when inside the project, absolute otherwise (a shared git dir)."""
        try:
            return path.relative_to(self.top).as_posix()
        except ValueError:
            return str(path)

    def record(
        self, path: str | Path, key: str, tag: str, *, content: bool, meta: bool = False
    ) -> None:
        """Fingerprint ``path``: a hash when ``content`` and the budget allow, else size and times.

        ``meta`` files (the git directory) are hashed up to :data:`META_HASH_MAX` each,
        from their own budget, so they never take the work tree's.
        """
        if self.stop is not None and self.stop.is_set():
            raise Stopped("the snapshot was stopped")
        budget = "meta" if meta else "work"
        old = self.like.get(key)
        if old is not None:
            kind, _, rest = old.partition("|")[2].partition(":")
            old_size = rest.partition(":")[0]

            def decide(size: int) -> bool:  # the snapshot's way; a new size is a change anyway
                return kind == "f" and str(size) == old_size
        else:

            def decide(size: int) -> bool:
                if not content or (meta and size > META_HASH_MAX):
                    return False
                if size > self.hash_left[budget] or time.monotonic() > self.deadline:
                    return False
                self.hash_left[budget] -= size
                return True

        fingerprint = _fingerprint(path, decide)
        if content and fingerprint.startswith("s:") and (old is None or "|s:" in old):
            self.stat_only.append(key)
        self.entries[key] = f"{tag}|{fingerprint}"

    def skip(self, key: str, kind: str) -> None:
        self.skipped[key] = kind

    # -- a repository

    def repo(self, top: Path, prefix: str, depth: int) -> str | None:
        """Scan one work tree (the project, a submodule, a nested repository); its HEAD."""
        # The four git commands at once: on a big repository each is a pass over the index.
        head_run, status_run = _Background(_head, top), _Background(_status, top)
        index_run, dirs_run = _Background(_index, top), _Background(_git_dirs, top)
        head, listed = head_run.result(), status_run.result()
        (flagged, gitlinks), (gitdir, common) = index_run.result(), dirs_run.result()
        nested: set[str] = set()
        for path, xy in listed.items():
            full = top / path.rstrip("/")
            if _is_ignored(full, self.ignored):
                continue
            key = prefix + path.rstrip("/")
            if xy == "!!":
                if path.endswith("/"):
                    self.ignored_dir(full, key + "/")
                else:
                    self.record(full, key, xy, content=False)
                continue
            if path.endswith("/") or (full.is_dir() and not full.is_symlink()):
                nested.add(path.rstrip("/"))  # a submodule or a repository inside this one
            self.record(full, key, xy, content=True)
        for path, flag in flagged.items():
            full = top / path
            if not _is_ignored(full, self.ignored):
                self.record(full, f"{prefix}{path} ({flag})", "i", content=True)
        dotgit = top / ".git"
        if not dotgit.is_dir() or dotgit.is_symlink():  # a "gitdir: ..." file, or a link
            self.record(dotgit, self.key(dotgit), "g", content=True, meta=True)
        self.gitdir(common, linked=gitdir if gitdir != common else None)
        for path in sorted(nested | set(gitlinks)):
            self.nested_repo(top / path, f"{prefix}{path}/", depth + 1)
        return head

    def nested_repo(self, path: Path, key: str, depth: int) -> None:
        if not (path / ".git").exists() or _is_ignored(path, self.ignored):
            return  # an uninitialised submodule is an empty directory
        if key in self.was_skipped or depth > MAX_DEPTH or self.repos >= MAX_REPOS:
            self.skip(key, _REPO)
            return
        self.repos += 1
        try:
            self.repo(path, key, depth)
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            self.skip(key, _REPO)
            self.failed.append(f"{key} ({exc or type(exc).__name__})")

    # -- ignored files

    def ignored_dir(self, path: Path, key: str) -> None:
        if key in self.was_skipped:
            self.skip(key, _IGNORED)
            return
        found = self.walk_unit(path, key, self.ignored_left, tag="!!", content=False)
        if found is None:
            self.skip(key, _IGNORED)
        else:
            self.ignored_left -= found

    def walk_unit(
        self,
        path: Path,
        key: str,
        limit: int,
        *,
        tag: str,
        content: bool,
        skip: Callable[[tuple[str, ...]], bool] = lambda parts: False,
    ) -> int | None:
        """Record every file under ``path`` (keys ``key + rel``); None, recording nothing, past ``limit``."""
        found: list[tuple[str, str]] = []
        for parts, child, entry in _visit(path, (), self.ignored, frozenset()):
            if self.stop is not None and self.stop.is_set():
                raise Stopped("the snapshot was stopped")
            if skip(parts):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    continue
            except OSError:
                pass
            if len(found) >= limit:
                return None
            found.append((child, key + "/".join(parts)))
        for child, child_key in found:
            self.record(child, child_key, tag, content=content, meta=tag == "g")
        return len(found)

    # -- the git directory

    def gitdir(self, gitdir: Path, *, linked: Path | None = None) -> None:
        """Everything in a git directory but the object store and the index."""
        if gitdir in self.gitdirs:
            return  # already covered (a submodule's git dir, seen in .git/modules)
        self.gitdirs.append(gitdir)
        try:
            with os.scandir(gitdir) as it:
                children = sorted(
                    it,
                    key=lambda e: (
                        META_FIRST.index(e.name) if e.name in META_FIRST else len(META_FIRST),
                        e.name,
                    ),
                )
        except OSError as exc:
            self.failed.append(f"{self.key(gitdir)} ({exc.strerror or exc})")
            return
        for entry in children:
            path = gitdir / entry.name
            key = self.key(path)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if entry.name == "index":
                continue
            if not is_dir:
                self.record(path, key, "g", content=True, meta=True)
            elif entry.name == "objects":  # content-addressed; only objects/info configures
                self.meta_unit(path / "info", key + "/info/")
            elif entry.name == "lfs":
                self.meta_unit(path, key + "/", skip=lambda parts: parts[:1] == ("objects",))
            elif entry.name == "modules":
                self.modules(path, 0)
            elif entry.name == "worktrees":  # other worktrees' own state is theirs
                continue
            else:
                self.meta_unit(path, key + "/")
        if linked is not None:
            self.gitdir(linked)

    def meta_unit(
        self, path: Path, key: str, skip: Callable[[tuple[str, ...]], bool] = lambda parts: False
    ) -> None:
        if not path.is_dir():
            return
        if key in self.was_skipped:
            self.skip(key, _META)
            return
        found = self.walk_unit(path, key, self.meta_left, tag="g", content=True, skip=skip)
        if found is None:
            self.skip(key, _META)
        else:
            self.meta_left -= found

    def modules(self, directory: Path, depth: int) -> None:
        """``.git/modules``: submodule git directories, under names that may contain ``/``."""
        for entry in sorted_entries(directory):
            path = directory / entry.name
            if not entry.is_dir(follow_symlinks=False):
                self.record(path, self.key(path), "g", content=True, meta=True)
            elif (path / "HEAD").is_file() and (path / "objects").is_dir():
                self.gitdir(path)
            elif depth < 16:
                self.modules(path, depth + 1)

    # -- the account

    def not_covered(self) -> tuple[str, ...]:
        notes: list[str] = []
        for kind in (_IGNORED, _META, _REPO):
            keys = sorted(k for k, v in self.skipped.items() if v == kind)
            if keys:
                notes.append(f"{plural(len(keys), kind)} over the cap ({_listing(keys)})")
        if self.stat_only:
            notes.append(
                f"content of {plural(len(self.stat_only), 'file')} past the hash budget "
                f"(compared by size and times: {_listing(sorted(self.stat_only))})"
            )
        if self.failed:
            notes.append(f"could not check {_listing(self.failed)}")
        return tuple(notes)


def _compare_git(
    before: Snapshot, ignored: list[str], time_budget: float
) -> tuple[list[str], dict[str, str], tuple[str, ...]]:
    assert before.top is not None
    scan = _Scan(before.top, ignored, before, time_budget)
    head = scan.repo(before.top, "", 0)
    now = scan.entries
    hidden = tuple(before.skipped.keys() | scan.skipped.keys())
    changed = sorted(
        p
        for p in before.entries.keys() | now.keys()
        if not p.startswith(hidden) and before.entries.get(p) != now.get(p)
    )
    # A part that fit in the snapshot but not now: it is new, or it grew past the cap.
    grown = sorted(k for k in scan.skipped if k not in before.skipped)
    changed = sorted({*changed, *grown})
    if head != before.head:
        changed.insert(0, f"HEAD ({_short(before.head)} -> {_short(head)})")
    return changed, now, scan.not_covered()


def _short(head: str | None) -> str:
    return head[:10] if head else "none"


# --- walk ---------------------------------------------------------------------


def _walk(
    root: Path,
    ignored: list[str],
    deadline: float,
    max_files: int,
    stop_after: tuple[str, ...] | None = None,
    stop: threading.Event | None = None,
) -> tuple[dict[str, str], tuple[str, ...] | None, bool, list[str]]:
    """Entries in sorted depth-first order; (entries, last parts, capped, skipped dirs)."""
    entries: dict[str, str] = {}
    skipped: list[str] = []
    last: tuple[str, ...] | None = None
    for parts, path, entry in _visit(root, (), ignored, SKIP_DIRS):
        if stop_after is not None and parts > stop_after:
            return entries, last, False, skipped
        if stop is not None and stop.is_set():
            raise Stopped("the snapshot was stopped")
        if len(entries) >= max_files or time.monotonic() > deadline:
            return entries, last, True, skipped
        fingerprint = _entry_fingerprint(path, entry, deadline)
        if fingerprint == "d" and entry.name in SKIP_DIRS:
            skipped.append("/".join(parts))
        if fingerprint == "d" and any(p.startswith(path + os.sep) for p in ignored):
            continue  # .planshell, made to hold the plans, is no change by itself
        entries["/".join(parts)] = fingerprint
        last = parts
    return entries, last, False, skipped


def _walk_not_covered(capped: bool, skipped: list[str]) -> tuple[str, ...]:
    notes = []
    if skipped:
        notes.append(f"{plural(len(skipped), 'skipped dir')} ({_listing(skipped)})")
    if capped:
        notes.append("part of the project (the walk was capped)")
    return tuple(notes)


def _visit(
    directory: str | Path, prefix: tuple[str, ...], ignored: list[str], skip_dirs: frozenset[str]
) -> Iterator[tuple[tuple[str, ...], str, os.DirEntry[str]]]:
    """Entries under ``directory`` in sorted depth-first order (paths as strings: this is hot)."""
    for entry in sorted_entries(directory):
        path = entry.path
        if _is_ignored(path, ignored):
            continue
        parts = (*prefix, entry.name)
        yield parts, path, entry
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir and entry.name not in skip_dirs:
            yield from _visit(path, parts, ignored, skip_dirs)


def _entry_fingerprint(path: str, entry: os.DirEntry[str], deadline: float) -> str:
    try:
        if entry.is_dir(follow_symlinks=False):
            return "d"
    except OSError:
        return "?"
    return _fingerprint(path, lambda size: size <= WALK_HASH_MAX and time.monotonic() <= deadline)


def _compare_walk(
    before: Snapshot, ignored: list[str], deadline: float, max_files: int
) -> tuple[list[str], dict[str, str], tuple[str, ...]]:
    now, last, capped, skipped = _walk(before.root, ignored, deadline, max_files, before.last)
    limits = [p for p in (before.last, last if capped else None) if p is not None]
    limit = min(limits) if limits else None

    def covered(path: str) -> bool:
        return limit is None or tuple(path.split("/")) <= limit

    changed = sorted(
        p
        for p in before.entries.keys() | now.keys()
        if covered(p) and before.entries.get(p) != now.get(p)
    )
    return changed, now, _walk_not_covered(before.capped or capped, skipped)


# --- fingerprints ---------------------------------------------------------------


def _fingerprint(path: str | Path, hash_if: Callable[[int], bool]) -> str:
    """``f:size:sha256`` for a file when ``hash_if(size)``, else ``s:size:mtime:ctime``.

    ctime is in the stat form because no program can set it back: a rewrite
    that restores size and mtime (``os.utime``) still moves it.
    """
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
    if not hash_if(st.st_size):
        return f"s:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        return f"?{exc.errno}"
    return f"f:{st.st_size}:{digest.hexdigest()}"


# --- ignoring -------------------------------------------------------------------


def _ignored(root: Path, ignore: Iterable[Path]) -> list[str]:
    return [str(root / PLANS_DIR), *(str(Path(p).resolve()) for p in ignore)]


def _is_ignored(path: str | Path, ignored: list[str]) -> bool:
    text = os.fspath(path)
    return any(text == p or text.startswith(p + os.sep) for p in ignored)
