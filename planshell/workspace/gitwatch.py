"""No new ``.git`` anywhere in the project: a check around every call that may write.

The workspace sandbox binds every existing ``.git`` read-only, but a bind
mount cannot protect a folder that does not exist yet: a command can ``git
init nested`` and give it a ``core.fsmonitor``, or rewrite a submodule's
``.git`` pointer (``gitdir: ../evilgit``) to a repository it just built. The
next plain ``git status`` *the user* runs there, outside any sandbox, runs the
attacker's command. So around every tool call that is not read-only (``bash``
in every mode, ``edit``, ``write``; the agent loop calls this), the project is
snapshotted before and compared after:

* every ``.git`` entry (folder: its inode; pointer file: its text; symlink: its
  target), found by ``protected.ProjectScan`` (no folder skipped, cheap after
  the first walk: one ``lstat`` per folder);
* the parts of each known git directory that make git run programs:
  ``config``, ``config.worktree``, ``commondir`` and the hooks (``*.sample``
  files never run and are left alone);
* every ``.gitmodules``, and ``.planshell/`` except ``plans/``.

What changed is undone: a new ``.git`` (or one whose folder was replaced) is
moved aside into planshell's data folder for this project
(``<data>/projects/<key>/quarantine/``), a changed or removed pointer or guarded
file is restored, a new guarded file is moved aside. The result tells the
model, a ``Notice`` tells the person. Two exceptions, both a person's decision
(``permit``, set by the permission gate): a call a person approved after being
warned (creating a repository, writing a protected file) keeps everything;
a command a person approved otherwise keeps changes to existing git config,
hooks and ``.gitmodules`` (``git remote add`` outside the sandbox) but still
no new ``.git``, no rewritten pointer and no ``.planshell`` change.

Not covered: a process that outlives the call (the bash tool kills the
command's process group, and the sandbox its PID namespace, but an unsandboxed
``setsid`` child can escape and act later), and changes another program makes
while a call runs (they are undone too: the watch cannot tell who made them).
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from planshell.fsutil import ReadRefused, atomic_write_bytes, read_user_file
from planshell.sanitize import plain_line
from planshell.tools.base import RunWatch, ToolArgs
from planshell.workspace.protected import (
    GIT,
    GITMODULES,
    PLANS,
    PLANSHELL,
    pointer_target,
    project_scan,
)

PERSON = "person"  # a person approved this call
ALL = "all"  # a person approved it after a protected-path / new-repository warning
FILE_MAX = 1 << 20  # guarded files kept (to restore) up to this size
MAX_GUARDED = 2_000  # guarded files per snapshot
GITDIR_FILES = ("config", "config.worktree", "commondir")
SHOWN = 8  # lines of a report before "and N more"

REPO_WHY = (
    "a .git that planshell did not create can make git run commands (core.fsmonitor, hooks) "
    "the next time you run git in that folder"
)


@dataclass(frozen=True)
class Entry:
    kind: str  # "dir", "file", "link", "other"
    ident: tuple[int, int]  # (device, inode)
    data: bytes | None  # a file's content (up to FILE_MAX) or a link's target; None: not kept
    stamp: tuple[int, int]  # (size, mtime_ns), compared when the content is not kept
    mode: int = 0o644

    def same(self, other: Entry) -> bool:
        if self.kind != other.kind:
            return False
        if self.kind == "dir":
            return self.ident == other.ident
        if self.data is not None and other.data is not None:
            return self.data == other.data
        return self.stamp == other.stamp and self.ident == other.ident


@dataclass
class State:
    gits: dict[Path, Entry]
    files: dict[
        Path, tuple[str, Entry]
    ]  # guarded file -> (kind, entry); kind: git, gitmodules, planshell
    gitdirs: tuple[Path, ...]  # git directories whose config and hooks are guarded
    complete: bool


def _entry(path: Path) -> Entry | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    ident, stamp, mode = (
        (st.st_dev, st.st_ino),
        (st.st_size, st.st_mtime_ns),
        stat.S_IMODE(st.st_mode),
    )
    if stat.S_ISDIR(st.st_mode):
        return Entry("dir", ident, None, stamp, mode)
    if stat.S_ISLNK(st.st_mode):
        try:
            return Entry("link", ident, os.fsencode(os.readlink(path)), stamp, mode)
        except OSError:
            return Entry("link", ident, None, stamp, mode)
    if stat.S_ISREG(st.st_mode):
        data: bytes | None = None
        if st.st_size <= FILE_MAX:
            try:
                data = read_user_file(path, FILE_MAX)
            except (OSError, ReadRefused):
                data = None
        return Entry("file", ident, data, stamp, mode)
    return Entry("other", ident, None, stamp, mode)


def _gitdirs_of(git: Path, entry: Entry) -> list[Path]:
    """The git directory a ``.git`` entry stands for, and its common dir (worktrees)."""
    if entry.kind == "dir":
        gitdir: Path | None = git
    elif entry.kind == "file":
        gitdir = pointer_target(git)
    else:
        gitdir = git.resolve() if git.exists() else None
    if gitdir is None or not gitdir.is_dir():
        return []
    dirs = [gitdir]
    try:
        common = (
            read_user_file(gitdir / "commondir", 4096, truncate=True)
            .decode("utf-8", errors="replace")
            .strip()
        )
    except (OSError, ReadRefused):
        common = ""
    if common:
        target = Path(common) if Path(common).is_absolute() else gitdir / common
        if target.is_dir():
            dirs.append(target.resolve())
    return dirs


def _git_above(root: Path) -> Path | None:
    """The ``.git`` of the repository the project is a sub-folder of, if any."""
    for folder in root.parents:
        candidate = folder / GIT
        if os.path.lexists(candidate):
            return candidate
    return None


@dataclass
class ProjectWatch(RunWatch):
    """The check around each call that may write (see the module doc); one per runtime."""

    root: Path
    on_notice: Callable[[str], object] | None = None
    quarantine_dir: Callable[[], Path] | None = None  # tests; default: the project's data dir
    _permits: dict[int, tuple[ToolArgs, str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _told_incomplete: bool = False

    def __post_init__(self) -> None:
        self.root = self.root.resolve()

    # --- the permission gate's side ------------------------------------------------

    def permit(self, args: ToolArgs, level: str) -> None:
        """A person approved the call with these exact ``args`` (``PERSON`` or ``ALL``)."""
        with self._lock:
            self._permits[id(args)] = (args, level)

    def _take_permit(self, args: ToolArgs) -> str:
        with self._lock:
            held = self._permits.pop(id(args), None)
        return held[1] if held is not None and held[0] is args else ""

    # --- RunWatch --------------------------------------------------------------------

    def start(self, tool: str, args: ToolArgs) -> object:
        permit = self._take_permit(args)
        try:
            return (self.state(), permit, tool)
        except Exception as exc:  # the call still runs; finish says it was not checked
            return f"{type(exc).__name__}: {exc}"

    def finish(self, token: object) -> str:
        if isinstance(token, str):
            return f"[planshell] Could not check the project for new .git folders ({token})."
        if not isinstance(token, tuple) or len(token) != 3:
            return ""
        before, permit, tool = token
        assert isinstance(before, State)
        try:
            after = self.state(before.gitdirs)
            lines = self.settle(before, after, str(permit))
        except Exception as exc:
            return (
                f"[planshell] Could not check the project for new .git folders after this "
                f"call ({type(exc).__name__}: {exc}); check before running git here."
            )
        notes: list[str] = []
        if not (before.complete and after.complete) and not self._told_incomplete:
            self._told_incomplete = True
            notes.append(
                "[planshell] The project has too many folders to check completely for new .git "
                "folders after each command; part of it is not checked."
            )
        if lines:
            notes.append(self._report(str(tool), lines))
        return "\n".join(notes)

    def _report(self, tool: str, lines: list[str]) -> str:
        undone = [line for line in lines if not line.startswith("kept")]
        shown = [plain_line(line, 400) for line in lines[:SHOWN]]  # names come from the repo
        shown += [f"and {len(lines) - SHOWN} more"] if len(lines) > SHOWN else []
        body = "\n".join(f"- {line}" for line in shown)
        if not undone:
            return (
                f"[planshell] This {tool} call changed git or planshell files (approved):\n{body}"
            )
        return (
            f"[planshell] This {tool} call changed files that nothing may change unasked, so "
            f"planshell undid it ({REPO_WHY}; .planshell/ holds the project's settings):\n{body}\n"
            "To create a repository, run git init, git clone, git submodule add/update or git "
            "worktree add as its own command: the user is asked first. Do not work around this."
        )

    def announce(self, note: str) -> None:
        if self.on_notice is not None:
            self.on_notice(note)

    # --- snapshots -------------------------------------------------------------------

    def state(self, gitdirs: tuple[Path, ...] | None = None) -> State:
        """The ``.git`` entries and guarded files now (guarding ``gitdirs``, else those found)."""
        marks, complete = project_scan(self.root).marks()
        above = _git_above(self.root)
        gits: dict[Path, Entry] = {}
        files: dict[Path, tuple[str, Entry]] = {}
        found_dirs: list[Path] = []
        for path in [*marks, *([above] if above is not None else [])]:
            name = path.name.casefold()
            if name == GIT:
                entry = _entry(path)
                if entry is not None:
                    gits[path] = entry
                    found_dirs += _gitdirs_of(path, entry)
            elif name == GITMODULES:
                self._guard(files, path, "gitmodules")
            elif name == PLANSHELL:
                self._guard_tree(files, path)
        dirs = tuple(dict.fromkeys(found_dirs)) if gitdirs is None else gitdirs
        for gitdir in dirs:
            for name in GITDIR_FILES:
                self._guard(files, gitdir / name, "git")
            try:
                hooks = sorted(os.scandir(gitdir / "hooks"), key=lambda e: e.name)
            except OSError:
                hooks = []
            for hook in hooks:
                if not hook.name.endswith(".sample"):
                    self._guard(files, Path(hook.path), "git")
        return State(gits, files, dirs, complete)

    def _guard(self, files: dict[Path, tuple[str, Entry]], path: Path, kind: str) -> None:
        if len(files) >= MAX_GUARDED:
            return
        entry = _entry(path)
        if entry is not None:
            files[path] = (kind, entry)

    def _guard_tree(self, files: dict[Path, tuple[str, Entry]], folder: Path) -> None:
        """Every file under a ``.planshell`` folder except its ``plans/``."""
        if os.path.islink(folder) or not folder.is_dir():
            self._guard(files, folder, "planshell")
            return
        for top, dirs, names in os.walk(folder):
            if Path(top) == folder:
                dirs[:] = [d for d in dirs if d.casefold() != PLANS]
            for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(top, d)))]:
                self._guard(files, Path(top, name), "planshell")

    # --- comparing and undoing -------------------------------------------------------

    def settle(self, before: State, after: State, permit: str) -> list[str]:
        """Undo what ``permit`` does not allow; one line per change, saying what was done."""
        lines: list[str] = []
        moved: list[Path] = []
        for path in sorted(set(before.gits) | set(after.gits)):
            old, new = before.gits.get(path), after.gits.get(path)
            if old is not None and new is not None and old.same(new):
                continue
            rel = self._show(path)
            if permit == ALL:
                lines.append(
                    f"kept: {rel} {'created' if old is None else 'changed'} (you approved it)"
                )
                continue
            if new is None:
                assert old is not None
                if old.kind == "dir":
                    lines.append(f"{rel} (a git folder) is gone; planshell cannot bring it back")
                else:
                    lines.append(self._restore(path, old, f"removed .git pointer {rel}"))
                continue
            if old is None or old.kind != new.kind or old.kind == "dir":
                what = "git repository" if new.kind == "dir" else f".git {new.kind}"
                label = f"new {what} {rel}" if old is None else f"replaced .git at {rel}"
                lines.append(self._move_aside(path, label))
                moved.append(path)
                if old is not None and old.kind != "dir":
                    lines.append(self._restore(path, old, f"the previous .git pointer {rel}"))
                elif old is not None:
                    lines.append(f"the previous git folder at {rel} is no longer there")
                continue
            lines.append(self._restore(path, old, f"changed .git pointer {rel}"))
        for path in sorted(set(before.files) | set(after.files)):
            if any(path == m or m in path.parents for m in moved):
                continue
            kind, old_entry = before.files.get(path, ("", None))
            kind2, new_entry = after.files.get(path, ("", None))
            if old_entry is not None and new_entry is not None and old_entry.same(new_entry):
                continue
            kind = kind or kind2
            rel = self._show(path)
            if permit == ALL or (permit == PERSON and kind in ("git", "gitmodules")):
                lines.append(f"kept: {rel} changed (you approved the command)")
                continue
            if old_entry is None:
                lines.append(self._move_aside(path, f"new file {rel}"))
            else:
                lines.append(self._restore(path, old_entry, f"changed {rel}"))
        return lines

    def _show(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def _quarantine_root(self) -> Path:
        if self.quarantine_dir is not None:
            return self.quarantine_dir()
        from planshell.agent.session import project_dir

        return project_dir(self.root) / "quarantine"

    def _move_aside(self, path: Path, label: str) -> str:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + f"-{time.time_ns() % 1_000_000:06d}"
        rel = self._show(path).lstrip("/")
        dest = self._quarantine_root() / stamp / rel
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(path), str(dest))
        except OSError as exc:
            return (
                f"{label}: could NOT be moved aside ({exc.strerror or exc}); remove it before "
                "running git there"
            )
        return f"{label}: moved to {dest}"

    def _restore(self, path: Path, old: Entry, label: str) -> str:
        if old.data is None:
            return (
                f"{label}: could NOT be restored (too large to keep); check it before running git"
            )
        try:
            if os.path.lexists(path) and (path.is_dir() and not path.is_symlink()):
                moved = self._move_aside(path, "")
                if "could NOT" in moved:
                    raise OSError(moved)
            if old.kind == "link":
                if os.path.lexists(path):
                    os.unlink(path)
                os.symlink(os.fsdecode(old.data), path)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(path, old.data, mode=old.mode)
        except OSError as exc:
            return f"{label}: could NOT be restored ({exc.strerror or exc}); check it before running git"
        return f"{label}: restored"
