"""A checkpoint of the project when EXECUTE starts, and the undo back to it (engine half of issue 24).

:func:`take_checkpoint` records every file under the root (tracked,
untracked, and ignored files up to :data:`IGNORED_FILE_MAX`) with its mode,
and symlinks as links. In a git repository the contents go into the
repository's object store and a tree (written through a temporary index) is
pinned at ``refs/planshell/checkpoints/<id>``; HEAD, the real index, branches
and the stash are never written. Elsewhere the contents are copied into
planshell's data dir up to ``max_bytes``; what does not fit is listed in
``warnings`` and left alone by undo unless :meth:`Checkpoint.remember_before_write`
copied it before a tool wrote it.

:func:`plan_undo` compares the project with the checkpoint (and with
:meth:`Checkpoint.mark_end`, the state when the plan finished, to find hand
edits); :func:`apply_undo` restores, recreates and deletes, never outside the
root and never through a symlink (every parent is checked with ``lstat``;
writes are atomic renames onto the name itself).
"""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from planshell.fsutil import ReadRefused, atomic_write_bytes, is_binary, read_project_file
from planshell.plan.checkpoint_store import (
    CopyStore,
    Git,
    GitError,
    GitStore,
    Store,
    copy_index,
    digest_of,
    git_top,
)

MAX_BYTES = 256 << 20  # content recorded beyond what git already tracks
IGNORED_FILE_MAX = 1 << 20  # ignored files (build output, caches) recorded up to this size
READ_MAX = 1 << 31
DIFF_MAX = 256 << 10  # a side of a diff shown up to this size
GIT = ".git"


@dataclass(frozen=True)
class FileState:
    """One file or symlink: ``digest`` of its bytes (a link: of its target)."""

    kind: str  # "file" or "link"
    mode: int
    digest: str

    def same(self, other: FileState | None) -> bool:
        if other is None or self.kind != other.kind or self.digest != other.digest:
            return False
        return self.kind == "link" or self.mode == other.mode


@dataclass
class Tree:
    """What a walk of the root found: files and links by path, folders with their modes."""

    files: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # kind, mode, size
    dirs: dict[str, int] = field(default_factory=dict)
    repos: list[str] = field(default_factory=list)  # nested repositories and submodules: not entered


def walk(root: Path, skip: frozenset[str] = frozenset()) -> Tree:
    """Every file, link and folder under ``root``, without following links or entering ``.git``."""
    tree = Tree()
    stack = [""]
    while stack:
        rel = stack.pop()
        folder = root / rel if rel else root
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if name == GIT:
                continue
            path = f"{rel}/{name}" if rel else name
            try:
                st = os.lstat(folder / name)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if path in skip or os.path.lexists(folder / name / GIT):
                    tree.repos.append(path)
                    continue
                tree.dirs[path] = stat.S_IMODE(st.st_mode)
                stack.append(path)
            elif stat.S_ISLNK(st.st_mode):
                tree.files[path] = ("link", 0o777, st.st_size)
            elif stat.S_ISREG(st.st_mode):
                tree.files[path] = ("file", stat.S_IMODE(st.st_mode), st.st_size)
    return tree


def _read(root: Path, rel: str, kind: str) -> bytes:
    if kind == "link":
        return os.fsencode(os.readlink(root / rel))
    return read_project_file(root, Path(rel), READ_MAX)


def state_of(root: Path, rel: str, kind: str, mode: int, like: str) -> FileState | None:
    """The state of a walked entry, hashed like ``like``; None if it cannot be read now."""
    try:
        return FileState(kind, mode, digest_of(_read(root, rel, kind), like))
    except (OSError, ReadRefused):
        return None


@dataclass
class Checkpoint:
    """The project as EXECUTE found it; ``after`` is filled by :meth:`mark_end`."""

    ident: str
    root: Path
    before: dict[str, FileState]
    dirs: dict[str, int]
    stores: dict[str, Store]  # by digest prefix: "git" and/or "sha256"
    copies: CopyStore
    skipped: set[str] = field(default_factory=set)  # present, not recorded: undo leaves them
    untouched: list[str] = field(default_factory=list)  # submodules and nested repositories
    warnings: list[str] = field(default_factory=list)
    git: Git | None = None
    tree: str | None = None  # the pinned tree (git)
    head: str | None = None
    after: dict[str, FileState] | None = None

    def remember_before_write(self, path: Path) -> None:
        """A file tool is about to write ``path``: copy it first if the checkpoint skipped it."""
        rel = _rel(self.root, path)
        if rel is None or rel not in self.skipped:
            return
        try:
            st = os.lstat(self.root / rel)
            kind = "link" if stat.S_ISLNK(st.st_mode) else "file"
            digest = self.copies.keep(_read(self.root, rel, kind))
        except (OSError, ReadRefused):
            return
        self.before[rel] = FileState(kind, stat.S_IMODE(st.st_mode), digest)
        self.skipped.discard(rel)

    def mark_end(self) -> None:
        """The plan finished: record what it left, so later hand edits can be told apart."""
        tree = walk(self.root, frozenset(self.untouched))
        self.after = {}
        for rel, (kind, mode, _size) in tree.files.items():
            if rel in self.skipped:
                continue
            state = state_of(self.root, rel, kind, mode, _like(self, rel))
            if state is not None:
                self.after[rel] = state

    def load(self, digest: str) -> bytes:
        return self.stores[digest.split(":", 1)[0]].load(digest)


def _like(cp: Checkpoint, rel: str) -> str:
    """Hash a path like its recorded state, or like the checkpoint's main store."""
    old = cp.before.get(rel)
    return old.digest if old is not None else ("git:" if cp.tree else "sha256:")


def _rel(root: Path, path: Path) -> str | None:
    """``path`` as a plain relative name under ``root`` (no ``..``, no ``.git``), else None."""
    path = Path(path)
    if path.is_absolute():
        try:
            path = path.relative_to(root)
        except ValueError:
            return None
    parts = path.parts
    if not parts or any(p in ("", ".", "..", GIT) for p in parts):
        return None
    return "/".join(parts)


def take_checkpoint(
    root: Path,
    *,
    data_dir: Path | None = None,
    max_bytes: int = MAX_BYTES,
    use_git: bool = True,
) -> Checkpoint:
    """Record the project before the plan's first change (see the module doc).

    ``data_dir``: where copies go (default ``<data>/projects/<key>/checkpoints``).
    """
    root = root.resolve()
    ident = uuid.uuid4().hex[:12]
    if data_dir is None:
        from planshell.agent.session import project_dir

        data_dir = project_dir(root) / "checkpoints"
    copies = CopyStore(data_dir / ident / "blobs")
    top = git_top(root) if use_git else None
    if top is not None:
        with tempfile.TemporaryDirectory(prefix="planshell-checkpoint-") as tmp:
            try:
                return _take_git(root, top, ident, copies, max_bytes, Path(tmp))
            except GitError as exc:
                cp = _take_copies(root, ident, copies, max_bytes)
                cp.warnings.insert(0, f"git could not record the checkpoint ({exc}); copied files")
                return cp
    return _take_copies(root, ident, copies, max_bytes)


def _take_copies(root: Path, ident: str, copies: CopyStore, max_bytes: int) -> Checkpoint:
    tree = walk(root)
    cp = Checkpoint(ident, root, {}, tree.dirs, {"sha256": copies}, copies, untouched=tree.repos)
    budget = max_bytes
    for rel, (kind, mode, size) in sorted(tree.files.items()):
        if size > budget:
            cp.skipped.add(rel)
            continue
        try:
            data = _read(root, rel, kind)
        except (OSError, ReadRefused):
            cp.skipped.add(rel)
            continue
        budget -= len(data)
        cp.before[rel] = FileState(kind, mode, copies.keep(data))
    _warn_skipped(cp, max_bytes)
    return cp


def _warn_skipped(cp: Checkpoint, max_bytes: int) -> None:
    if cp.skipped:
        names = ", ".join(sorted(cp.skipped)[:5]) + (", ..." if len(cp.skipped) > 5 else "")
        cp.warnings.append(
            f"{len(cp.skipped)} files not recorded (over the {max_bytes >> 20} MiB snapshot cap, "
            f"ignored and over {IGNORED_FILE_MAX >> 20} MiB, or unreadable): {names}; "
            "undo leaves them as they are unless a file tool copies one before writing it"
        )


def _nul_list(data: bytes) -> list[str]:
    return [os.fsdecode(item) for item in data.split(b"\0") if item]


def _take_git(
    root: Path, top: Path, ident: str, copies: CopyStore, max_bytes: int, tmp: Path
) -> Checkpoint:
    real = Git(top, root, copy_index(top, tmp))
    staged = real.run(["ls-files", "-z", "-s", "--", "."])
    gitlinks, tracked = set(), set()
    for line in _nul_list(staged):
        meta, path = line.split("\t", 1)
        (gitlinks if meta.startswith("160000") else tracked).add(path)
    ignored = set(
        _nul_list(real.run(["ls-files", "-z", "-o", "-i", "--exclude-standard", "--", "."]))
    )
    tree = walk(root, frozenset(gitlinks))
    store = GitStore(Git(top, root, tmp / "checkpoint-index"))
    cp = Checkpoint(ident, root, {}, tree.dirs, {"git": store, "sha256": copies}, copies)
    cp.git, cp.head, cp.untouched = real, real.head(), tree.repos
    budget = max_bytes
    files: list[str] = []
    links: list[str] = []
    for rel, (kind, _mode, size) in sorted(tree.files.items()):
        if rel not in tracked:
            too_big = rel in ignored and kind == "file" and size > IGNORED_FILE_MAX
            if too_big or size > budget:
                cp.skipped.add(rel)
                continue
            budget -= size
        (links if kind == "link" else files).append(rel)
    digests = store.hash_files([root / rel for rel in files])
    targets = [os.fsencode(os.readlink(root / rel)) for rel in links]
    digests += store.hash_data(targets)
    prefix = root.relative_to(top).as_posix()
    entries = []
    for rel, digest in zip(files + links, digests, strict=True):
        kind, mode, _size = tree.files[rel]
        cp.before[rel] = FileState(kind, mode, digest)
        git_mode = "120000" if kind == "link" else ("100755" if mode & 0o100 else "100644")
        entries.append((git_mode, digest, rel if prefix == "." else f"{prefix}/{rel}"))
    cp.tree = store.pin(entries, ident)
    _warn_skipped(cp, max_bytes)
    return cp


# --- undo ---------------------------------------------------------------------------


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
        a.decode().splitlines(keepends=True),
        b.decode().splitlines(keepends=True),
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
        if rel in cp.skipped:
            continue
        old = cp.before.get(rel)
        now = None
        if rel in tree.files:
            kind, mode, _size = tree.files[rel]
            now = state_of(root, rel, kind, mode, _like(cp, rel))
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
        new_bytes = _read(root, rel, tree.files[rel][0]) if rel in tree.files else None
        changes.append(Change(rel, action, _diff(rel, old_bytes, new_bytes), hand))
    make_dirs = sorted(d for d in cp.dirs if d not in tree.dirs)
    remove_dirs = sorted((d for d in tree.dirs if d not in cp.dirs), reverse=True)
    return UndoPlan(
        cp, changes, make_dirs, remove_dirs, sorted(cp.untouched) + sorted(cp.skipped), _commits(cp)
    )


def _commits(cp: Checkpoint) -> list[str]:
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
    if _rel(root, Path(rel)) is None:
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


def apply_undo(plan: UndoPlan, root: Path | None = None, overwrite_hand_edits: bool = False) -> list[str]:
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
            _restore(root, change.path, cp.before[change.path], cp.load(cp.before[change.path].digest))
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
