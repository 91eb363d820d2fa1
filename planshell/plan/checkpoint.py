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

``plan/undo.py`` compares the project with the checkpoint (and with
:meth:`Checkpoint.mark_end`, the state when the plan finished, to find hand
edits) and restores, recreates and deletes, never outside the
root and never through a symlink (every parent is checked with ``lstat``;
writes are atomic renames onto the name itself).
"""

from __future__ import annotations

import os
import stat
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from planshell.fsutil import ReadRefused, read_project_file
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
from planshell.text import plural

MAX_BYTES = 256 << 20  # content recorded beyond what git already tracks
IGNORED_FILE_MAX = 1 << 20  # ignored files (build output, caches) recorded up to this size
READ_MAX = 1 << 31
GIT = ".git"
# planshell's own folder (plans, their run records, config): not the plan's work, so a
# checkpoint neither records it nor lets undo delete the plan or its evidence.
OWN = ".planshell"


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
    repos: list[str] = field(
        default_factory=list
    )  # nested repositories and submodules: not entered


def walk(root: Path, skip: frozenset[str] = frozenset()) -> Tree:
    """Every file, link and folder under ``root``, without following links or entering
    ``.git`` (or planshell's own ``.planshell`` at the top)."""
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
            if name == GIT or (not rel and name == OWN):
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


def read_entry(root: Path, rel: str, kind: str) -> bytes:
    if kind == "link":
        return os.fsencode(os.readlink(root / rel))
    return read_project_file(root, Path(rel), READ_MAX)


def state_of(root: Path, rel: str, kind: str, mode: int, like: str) -> FileState | None:
    """The state of a walked entry, hashed like ``like``; None if it cannot be read now."""
    try:
        return FileState(kind, mode, digest_of(read_entry(root, rel, kind), like))
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

    def remember_before_write(self, path: Path) -> bool:
        """A file tool is about to write ``path``: copy it first if the checkpoint skipped it.

        Once per file (it is then recorded); True when a copy was made.
        """
        rel = rel_path(self.root, path)
        if rel is None or rel not in self.skipped:
            return False
        try:
            st = os.lstat(self.root / rel)
            kind = "link" if stat.S_ISLNK(st.st_mode) else "file"
            digest = self.copies.keep(read_entry(self.root, rel, kind))
        except (OSError, ReadRefused):
            return False
        self.before[rel] = FileState(kind, stat.S_IMODE(st.st_mode), digest)
        self.skipped.discard(rel)
        return True

    def mark_end(self) -> None:
        """The plan finished: record what it left, so later hand edits can be told apart."""
        tree = walk(self.root, frozenset(self.untouched))
        after = {}
        for rel, (kind, mode, _size) in tree.files.items():
            if rel in self.skipped:
                continue
            state = state_of(self.root, rel, kind, mode, like_of(self, rel))
            if state is not None:
                after[rel] = state
        self.after = after  # at once: a reader never sees half an end state

    def load(self, digest: str) -> bytes:
        return self.stores[digest.split(":", 1)[0]].load(digest)


def like_of(cp: Checkpoint, rel: str) -> str:
    """Hash a path like its recorded state, or like the checkpoint's main store."""
    old = cp.before.get(rel)
    return old.digest if old is not None else ("git:" if cp.tree else "sha256:")


def rel_path(root: Path, path: Path) -> str | None:
    """``path`` as a plain relative name under ``root`` (no ``..``, no ``.git``), else None."""
    path = Path(path)
    if path.is_absolute():
        try:
            path = path.relative_to(root)
        except ValueError:
            return None
    parts = path.parts
    if not parts or parts[0] == OWN or any(p in ("", ".", "..", GIT) for p in parts):
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
            data = read_entry(root, rel, kind)
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
            f"{plural(len(cp.skipped), 'file')} not recorded (over the {max_bytes >> 20} MiB snapshot cap, "
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
    gitlinks: set[str] = set()
    tracked: set[str] = set()
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
