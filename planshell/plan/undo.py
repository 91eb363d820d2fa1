"""Undo a plan back to its checkpoint: show what would change, then restore it inside the root only.

:func:`plan_undo` compares the project with a :class:`Checkpoint` (and with the
state :meth:`Checkpoint.mark_end` recorded, to find hand edits);
:func:`apply_undo` deletes, restores and recreates. Every parent folder is
checked with ``lstat`` (a symlink or a path out of the root is refused), writes
are atomic renames onto the name itself, so nothing outside the root is
written, deleted or followed. HEAD, the index, branches and the stash are never
touched; commits made during the plan are reported.
"""

from __future__ import annotations

import difflib
import os
import stat
import uuid
from dataclasses import dataclass
from pathlib import Path

from planshell.fsutil import atomic_write_bytes, is_binary
from planshell.plan.checkpoint import (
    Checkpoint,
    FileState,
    like_of,
    read_entry,
    rel_path,
    state_of,
    walk,
)
from planshell.plan.checkpoint_store import GitError

DIFF_MAX = 256 << 10  # a side of a diff shown up to this size


@dataclass(frozen=True)
class Change:
    path: str
    action: str  # "restore", "recreate" or "delete"
    diff: str
    hand_edited: bool


@dataclass
class UndoPlan:
    """What :func:`apply_undo` would do; ``hand_edited`` paths need a person's yes."""

    checkpoint: Checkpoint
    changes: list[Change]
    make_dirs: list[str]
    remove_dirs: list[str]
    untouched: list[str]  # reported, not restored: submodules, nested repos, skipped files
    commits: list[str]  # made during the plan; reported, never rewritten

    @property
    def hand_edited(self) -> list[str]:
        return [c.path for c in self.changes if c.hand_edited]

    @property
    def diff(self) -> str:
        return "".join(c.diff for c in self.changes)


def _diff(rel: str, old: bytes | None, new: bytes | None) -> str:
    """``new`` (now) -> ``old`` (checkpoint) as a unified diff, or one line for binary files."""
    a, b = new or b"", old or b""
    if is_binary(a) or is_binary(b) or max(len(a), len(b)) > DIFF_MAX:
        return f"Binary or large file {rel} differs\n"
    lines = difflib.unified_diff(
        a.decode(errors="replace").splitlines(keepends=True),
        b.decode(errors="replace").splitlines(keepends=True),
        "/dev/null" if new is None else f"a/{rel}",
        "/dev/null" if old is None else f"b/{rel}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def plan_undo(cp: Checkpoint, root: Path | None = None) -> UndoPlan:
    """Compare the project with the checkpoint: what undo would restore, delete and ask about."""
    root = (root or cp.root).resolve()
    tree = walk(root, frozenset(cp.untouched))
    changes: list[Change] = []
    for rel in sorted(set(cp.before) | set(tree.files)):
        if rel in cp.skipped or _own_record(rel):
            continue
        old = cp.before.get(rel)
        now = None
        if rel in tree.files:
            kind, mode, _size = tree.files[rel]
            now = state_of(root, rel, kind, mode, like_of(cp, rel))
        if old is not None and old.same(now):
            continue
        if old is None and now is None:
            continue
        after = cp.after.get(rel) if cp.after is not None else None
        hand = cp.after is not None and not (
            (after is None and now is None) or (after is not None and after.same(now))
        )
        action = "delete" if old is None else "recreate" if now is None else "restore"
        old_bytes = cp.load(old.digest) if old is not None else None
        new_bytes = read_entry(root, rel, tree.files[rel][0]) if rel in tree.files else None
        changes.append(Change(rel, action, _diff(rel, old_bytes, new_bytes), hand))
    make_dirs = sorted(d for d in cp.dirs if d not in tree.dirs)
    remove_dirs = sorted((d for d in tree.dirs if d not in cp.dirs), reverse=True)
    return UndoPlan(
        cp,
        changes,
        make_dirs,
        remove_dirs,
        sorted(cp.untouched) + sorted(cp.skipped),
        commits_during(cp),
    )


def _own_record(rel: str) -> bool:
    """planshell's bookkeeping beside the plans (run records with their reports, temp files,
    the folder's .gitignore): the audit of the plan is never undone. Plan files are."""
    return rel.startswith(".planshell/plans/") and not rel.endswith(".md")


def commits_during(cp: Checkpoint) -> list[str]:
    """Commits made since the checkpoint (``<hash> <subject>``), newest first; [] without git."""
    if cp.git is None:
        return []
    now = cp.git.head()
    if now is None or now == cp.head:
        return []
    span = [now] if cp.head is None else [f"{cp.head}..{now}"]
    try:
        out = cp.git.run(["log", "--no-ext-diff", "--format=%H %s", "-n", "50", *span, "--"])
    except GitError:
        return [f"HEAD moved from {cp.head} to {now}"]
    return out.decode(errors="replace").splitlines() or [f"HEAD moved from {cp.head} to {now}"]


class UnsafePath(Exception):
    """A path undo will not write: it would leave the root or pass through a symlink."""


def _parent(root: Path, rel: str, create: bool) -> Path:
    """The real folder ``rel`` lives in, checked one component at a time with ``lstat``."""
    if rel_path(root, Path(rel)) is None:
        raise UnsafePath(f"{rel}: not a plain path inside the project")
    folder = root
    for part in Path(rel).parts[:-1]:
        folder = folder / part
        try:
            st = os.lstat(folder)
        except FileNotFoundError:
            if not create:
                raise UnsafePath(f"{rel}: its folder is gone") from None
            os.mkdir(folder, 0o755)
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise UnsafePath(f"{rel}: {folder.relative_to(root)} is not a folder (a symlink?)")
    real = os.path.realpath(folder)
    if real != str(root) and not real.startswith(str(root) + os.sep):
        raise UnsafePath(f"{rel}: leads outside the project")
    return folder


def apply_undo(
    plan: UndoPlan, root: Path | None = None, overwrite_hand_edits: bool = False
) -> list[str]:
    """Carry out ``plan``; hand-edited paths only with ``overwrite_hand_edits``. Returns problems."""
    cp = plan.checkpoint
    root = (root or cp.root).resolve()
    problems: list[str] = []
    todo = [c for c in plan.changes if overwrite_hand_edits or not c.hand_edited]
    for change in sorted(todo, key=lambda c: c.path.count("/"), reverse=True):
        try:
            folder = _parent(root, change.path, create=False)
            target = folder / Path(change.path).name
            if change.action != "recreate" and os.path.lexists(target):
                if stat.S_ISDIR(os.lstat(target).st_mode):
                    continue  # a folder where a file was: emptied and removed below
                if change.action == "delete":
                    os.unlink(target)
        except (OSError, UnsafePath) as exc:
            problems.append(str(exc))
    for rel in plan.remove_dirs:
        try:
            _parent(root, rel, create=False)
            os.rmdir(root / rel)  # only when empty: a kept file keeps its folder
        except (OSError, UnsafePath):
            pass
    for rel in plan.make_dirs:
        try:
            folder = _parent(root, rel, create=True)
            if not os.path.lexists(folder / Path(rel).name):
                os.mkdir(folder / Path(rel).name, cp.dirs[rel])
        except (OSError, UnsafePath) as exc:
            problems.append(str(exc))
    for change in todo:
        if change.action == "delete":
            continue
        try:
            _restore(
                root, change.path, cp.before[change.path], cp.load(cp.before[change.path].digest)
            )
        except (OSError, UnsafePath, GitError) as exc:
            problems.append(f"{change.path}: {exc}")
    for rel, mode in cp.dirs.items():
        path = root / rel
        try:
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) != mode:
                _parent(root, rel, create=False)
                os.chmod(path, mode, follow_symlinks=False)
        except (OSError, UnsafePath, NotImplementedError):
            pass
    return problems


def _restore(root: Path, rel: str, state: FileState, data: bytes) -> None:
    folder = _parent(root, rel, create=True)
    target = folder / Path(rel).name
    if os.path.isdir(target) and not os.path.islink(target):
        os.rmdir(target)  # a folder the plan made here, emptied above
    if state.kind == "file":
        atomic_write_bytes(target, data, mode=state.mode)
        return
    tmp = folder / f".{Path(rel).name}.{uuid.uuid4().hex[:8]}.tmp"
    os.symlink(os.fsdecode(data), tmp)
    try:
        os.replace(tmp, target)
    except OSError:
        os.unlink(tmp)
        raise
