"""Where a checkpoint keeps file contents: the repository's object store, or copies in planshell's data dir.

Both stores name a content by a self-describing digest (``git:<blob id>`` or
``sha256:<hex>``), so a checkpoint can mix them: in a git repository most
files are blobs, and a file copied later by ``remember_before_write`` is a copy.

Git runs as planshell runs it everywhere (``sandbox/gitsafe.py``: hooks off,
fsmonitor/pager/ssh/credential programs pinned to harmless values), plus
``GIT_DIR``/``GIT_WORK_TREE`` set explicitly (a repository's ``core.worktree``
cannot point the snapshot elsewhere) and every inherited ``GIT_*`` variable
dropped. Contents are hashed with ``hash-object --no-filters``: no clean
filter, textconv or end-of-line conversion runs or changes a byte, so a
restore gives back exactly the bytes that were there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from planshell.fsutil import ReadRefused, atomic_write_bytes, read_user_file
from planshell.sandbox.gitsafe import git_safe_env

GIT_TIMEOUT = 120.0
INDEX_MAX = 512 << 20  # a real index copied (read-only) for ls-files, up to this size
BLOB_MAX = 1 << 31  # a stored content read back, up to this size
REF_PREFIX = "refs/planshell/checkpoints/"


def digest_of(data: bytes, like: str) -> str:
    """The digest of ``data`` in the same algorithm as ``like`` (``git:`` or ``sha256:``)."""
    if like.startswith("git:"):
        return "git:" + hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Store(Protocol):
    """Reads back a content a checkpoint recorded."""

    def load(self, digest: str) -> bytes: ...


class GitError(Exception):
    """A git command failed, or git cannot be used here (the caller falls back to copies)."""


@dataclass(frozen=True)
class Git:
    """One repository, run with the hardened environment; ``cwd`` is the project root."""

    top: Path
    cwd: Path
    index: Path  # GIT_INDEX_FILE for every command: a private copy or a temporary index

    def env(self) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        return {
            **base,
            **git_safe_env(),
            "GIT_DIR": str(self.top / ".git"),
            "GIT_WORK_TREE": str(self.top),
            "GIT_INDEX_FILE": str(self.index),
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "LC_ALL": "C",
        }

    def run(self, args: list[str], data: bytes | None = None) -> bytes:
        git = shutil.which("git")
        if git is None:
            raise GitError("git is not installed")
        try:
            done = subprocess.run(
                [git, *args],
                cwd=self.cwd,
                env=self.env(),
                input=data,
                stdin=None if data is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitError(f"git {args[0]}: {exc}") from exc
        if done.returncode != 0:
            lines = done.stderr.decode(errors="replace").strip().splitlines()
            raise GitError(f"git {args[0]} failed: {lines[0] if lines else done.returncode}")
        return done.stdout

    def head(self) -> str | None:
        try:
            return self.run(["rev-parse", "-q", "--verify", "HEAD^{commit}"]).decode().strip()
        except GitError:
            return None


def git_top(root: Path) -> Path | None:
    """The work tree ``root`` belongs to: the nearest folder, ``root`` or above, with a ``.git``."""
    for folder in (root, *root.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def copy_index(top: Path, into: Path) -> Path:
    """A private copy of the real index (it is never opened for writing), or a missing path."""
    dest = into / "real-index"
    try:
        gitdir = Git(top, top, dest).run(["rev-parse", "--absolute-git-dir"]).decode().strip()
        data = read_user_file(Path(gitdir) / "index", INDEX_MAX)
    except (GitError, OSError, ReadRefused):
        return dest  # no index yet (a fresh repository): ls-files sees nothing tracked
    atomic_write_bytes(dest, data, mode=0o600)
    return dest


@dataclass
class GitStore:
    """Blobs in the repository's own object store, pinned by a tree under ``refs/planshell/``."""

    git: Git

    def hash_files(self, paths: list[Path]) -> list[str]:
        """Write each file's exact bytes as a blob (no filters); their ``git:`` digests."""
        if not paths:
            return []
        text = b"".join(os.fsencode(p) + b"\n" for p in paths)
        if any(b"\n" in os.fsencode(p) for p in paths):
            raise GitError("a file name holds a newline")
        out = self.git.run(["hash-object", "-w", "--no-filters", "--stdin-paths"], text)
        return ["git:" + line for line in out.decode().split()]

    def hash_data(self, items: list[bytes]) -> list[str]:
        """Blobs for in-memory contents (symlink targets), through temporary files."""
        with tempfile.TemporaryDirectory(prefix="planshell-links-") as tmp:
            paths = []
            for i, data in enumerate(items):
                path = Path(tmp) / str(i)
                atomic_write_bytes(path, data, mode=0o600)
                paths.append(path)
            return self.hash_files(paths)

    def pin(self, entries: list[tuple[str, str, str]], ident: str) -> str:
        """Write ``(mode, digest, path from top)`` entries as a tree through a fresh index; pin it."""
        lines = b"".join(
            f"{mode} {digest.removeprefix('git:')}\t".encode() + os.fsencode(path) + b"\0"
            for mode, digest, path in entries
        )
        self.git.run(["update-index", "--add", "-z", "--index-info"], lines)
        tree = self.git.run(["write-tree", "--missing-ok"]).decode().strip()
        self.git.run(["update-ref", REF_PREFIX + ident, tree])
        return tree

    def load(self, digest: str) -> bytes:
        out = self.git.run(["cat-file", "blob", digest.removeprefix("git:")])
        if digest_of(out, digest) != digest:
            raise GitError(f"blob {digest} does not match its name")
        return out


@dataclass
class CopyStore:
    """Copies, named by sha256, in ``<data>/projects/<key>/checkpoints/<id>/blobs``."""

    folder: Path

    def keep(self, data: bytes) -> str:
        digest = digest_of(data, "sha256:")
        path = self.folder / digest.removeprefix("sha256:")
        if not path.exists():
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            atomic_write_bytes(path, data, mode=0o600)
        return digest

    def load(self, digest: str) -> bytes:
        data = read_user_file(self.folder / digest.removeprefix("sha256:"), BLOB_MAX)
        if digest_of(data, digest) != digest:
            raise OSError(f"stored copy {digest} does not match its name")
        return data
