"""Staleness: did the files a plan cites change since the plan was written?

When ``write_plan`` writes a plan, :func:`record_cited` notes the commit
(``HEAD``, in a git work tree) and a SHA-256 (plus the git blob id) of every
file the plan cites: the exact paths of its declared scope
(:func:`planshell.plan.scope.plan_scope`) that exist. The record is the plan's
sidecar ``<stem>.cited.json`` (written by :class:`PlanStore`). The review and
the start of execution compare it with the files now (:func:`check_cited`) and
warn: "written at abc1234; 2 cited files changed since".

The repository is hostile: only regular files inside the project are hashed
(a symlink is noted, never followed; a FIFO is refused on the open descriptor
by the safe reader), each under :data:`MAX_HASH_BYTES`, at most
:data:`MAX_CITED` of them and :data:`MAX_HASH_TOTAL` bytes in all; the
controller records off the event loop. :func:`cited_diffs` shows what changed: the earlier
content comes from git's object store (``git cat-file blob``, which runs no
diff driver or textconv a repository could configure) when it is there, and
the diff is made here with difflib.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planshell.fsutil import ReadRefused, is_binary, read_project_file
from planshell.plan.scope import normalise_entry, plan_scope
from planshell.sandbox.gitsafe import git_command, git_safe_env

__all__ = [
    "MAX_CITED",
    "MAX_HASH_BYTES",
    "CitedFile",
    "CitedRecord",
    "Staleness",
    "check_cited",
    "cited_diffs",
    "record_cited",
]

MAX_CITED = 100  # files hashed per plan
MAX_HASH_BYTES = 4 << 20  # a cited file over this is noted, not hashed
MAX_HASH_TOTAL = 64 << 20  # bytes hashed per record; files past it are noted, not hashed
MAX_DIFF_LINES = 400  # lines of diff shown per file
GIT_TIMEOUT = 10.0
SHOWN = 3  # files named in the one-line summary


@dataclass(frozen=True)
class CitedFile:
    """A cited path and its hashes when the plan was written; ``note`` says why none."""

    path: str
    sha256: str | None = None
    blob: str | None = None  # git's blob id of the same bytes (to find them again)
    note: str = ""


@dataclass(frozen=True)
class CitedRecord:
    """What a plan's cited files were when it was written (the sidecar's content)."""

    head: str | None
    files: tuple[CitedFile, ...]

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": 1,
                "head": self.head,
                "files": [
                    {"path": f.path, "sha256": f.sha256, "blob": f.blob, "note": f.note}
                    for f in self.files
                ],
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> CitedRecord | None:
        """The record, or None when the sidecar is not one (it is repository-writable)."""
        try:
            data: Any = json.loads(text)
            head = data.get("head")
            files = tuple(
                CitedFile(
                    _relative(item["path"]),
                    _hex(item.get("sha256")),
                    _hex(item.get("blob")),
                    str(item.get("note") or "")[:200],
                )
                for item in data["files"][:MAX_CITED]
            )
        except (ValueError, TypeError, KeyError, AttributeError):
            return None
        return cls(_hex(head), files)


def _relative(value: object) -> str:
    """A recorded path, only if it is a plain project-relative file path (else ValueError)."""
    path = normalise_entry(value) if isinstance(value, str) else None
    if path is None or path.endswith("/"):
        raise ValueError(f"not a project path: {value!r}")
    return path


def _hex(value: object) -> str | None:
    if (
        isinstance(value, str)
        and 7 <= len(value) <= 64
        and all(c in "0123456789abcdef" for c in value)
    ):
        return value
    return None


@dataclass(frozen=True)
class Staleness:
    """The comparison with the files now: which cited files changed (or went)."""

    head: str | None
    changed: tuple[str, ...]
    head_now: str | None = None

    @property
    def stale(self) -> bool:
        return bool(self.changed)

    @property
    def summary(self) -> str:
        """ "written at abc1234; 2 cited files changed since: a.py, b.py" ("" when fresh)."""
        if not self.changed:
            return ""
        count = len(self.changed)
        noun = "file" if count == 1 else "files"
        names = ", ".join(self.changed[:SHOWN])
        more = f" and {count - SHOWN} more" if count > SHOWN else ""
        where = f"written at {self.head[:7]}" if self.head else "written earlier"
        return f"{where}; {count} cited {noun} changed since: {names}{more}"


# --------------------------------------------------------------------------- hashing


def _hash(root: Path, rel: str) -> CitedFile:
    """Hash one cited file, if it is a regular file inside the project under the cap."""
    target = Path(root) / rel
    try:
        info = target.lstat()
    except FileNotFoundError:
        return CitedFile(rel, note="missing")
    except OSError as error:
        return CitedFile(rel, note=f"cannot inspect: {error.strerror}")
    if stat.S_ISLNK(info.st_mode):
        return CitedFile(rel, note="a symlink: not followed")
    if not stat.S_ISREG(info.st_mode):
        return CitedFile(rel, note="not a regular file")
    if info.st_size > MAX_HASH_BYTES:
        return CitedFile(rel, note=f"over {MAX_HASH_BYTES >> 20} MiB: not hashed")
    try:
        data = read_project_file(root, target, MAX_HASH_BYTES)
    except FileNotFoundError:
        return CitedFile(rel, note="missing")
    except ReadRefused as refused:
        return CitedFile(rel, note=refused.message)
    except OSError as error:
        return CitedFile(rel, note=f"cannot read: {error.strerror}")
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
    return CitedFile(rel, hashlib.sha256(data).hexdigest(), blob)


def _cited_paths(text: str) -> list[str]:
    """The plan's exact scope paths (directories and globs are not files to hash)."""
    return sorted(plan_scope(text).paths)[:MAX_CITED]


def _git(root: Path, args: list[str]) -> subprocess.CompletedProcess[bytes] | None:
    git = git_command()
    if git is None:
        return None
    try:
        return subprocess.run(
            [git, *args],
            cwd=root,
            env={**os.environ, **git_safe_env(), "LC_ALL": "C"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _head(root: Path) -> str | None:
    done = _git(root, ["rev-parse", "-q", "--verify", "HEAD^{commit}"])
    if done is None or done.returncode != 0:
        return None
    return _hex(done.stdout.decode(errors="replace").strip())


def record_cited(root: Path, text: str) -> CitedRecord:
    """HEAD and the hashes of the files plan ``text`` cites (only those that exist)."""
    files: list[CitedFile] = []
    budget = MAX_HASH_TOTAL
    for rel in _cited_paths(text):
        size = _size(root, rel)
        if size is not None and size > budget:
            files.append(CitedFile(rel, note="over the hashing budget: not hashed"))
            continue
        cited = _hash(root, rel)
        if cited.note == "missing":
            continue
        if cited.sha256 is not None:
            budget -= size or 0
        files.append(cited)
    return CitedRecord(_head(root), tuple(files))


def _size(root: Path, rel: str) -> int | None:
    """The size ``lstat`` gives (a symlink's own), or None when there is nothing there."""
    try:
        return (Path(root) / rel).lstat().st_size
    except OSError:
        return None


def check_cited(root: Path, record: CitedRecord) -> Staleness:
    """Which recorded files now differ (changed, gone, or no longer hashable)."""
    changed = [
        cited.path
        for cited in record.files
        if cited.sha256 is not None and _hash(root, cited.path).sha256 != cited.sha256
    ]
    head_now = _head(root) if record.head else None
    return Staleness(record.head, tuple(changed), head_now)


def _earlier(root: Path, cited: CitedFile) -> bytes | None:
    """The bytes the file had when the plan was written, if git still has them."""
    if cited.blob is None:
        return None
    sized = _git(root, ["cat-file", "-s", cited.blob])  # a forged id may name a huge object
    if sized is None or sized.returncode != 0:
        return None
    try:
        if int(sized.stdout.strip() or b"-1") > MAX_HASH_BYTES:
            return None
    except ValueError:
        return None
    done = _git(root, ["cat-file", "blob", cited.blob])
    if done is None or done.returncode != 0:
        return None
    data = done.stdout
    if hashlib.sha256(data).hexdigest() != cited.sha256:
        return None  # not the bytes we hashed (a forged sidecar): show nothing of it
    return data


def cited_diffs(root: Path, record: CitedRecord, staleness: Staleness) -> str:
    """A unified diff per changed cited file, or a note of what changed when there is none."""
    by_path = {cited.path: cited for cited in record.files}
    parts: list[str] = []
    for rel in staleness.changed:
        cited = by_path.get(rel)
        if cited is None:
            continue
        now = _hash(root, rel)
        if now.sha256 is None:
            parts.append(f"{rel}: {now.note or 'cannot be read now'} (it was hashed when written)")
            continue
        before = _earlier(root, cited)
        if before is None:
            parts.append(
                f"{rel}: changed since the plan was written (sha256 {cited.sha256[:12] if cited.sha256 else '?'}"
                f" -> {now.sha256[:12]}); the earlier content is not in git's object store, "
                "so no diff can be shown."
            )
            continue
        try:
            current = read_project_file(root, Path(root) / rel, MAX_HASH_BYTES)
        except (OSError, ReadRefused):
            parts.append(f"{rel}: cannot be read now")
            continue
        if is_binary(before) or is_binary(current):
            parts.append(f"{rel}: binary file changed")
            continue
        diff = list(
            difflib.unified_diff(
                before.decode("utf-8", "replace").splitlines(),
                current.decode("utf-8", "replace").splitlines(),
                fromfile=f"a/{rel} (when the plan was written)",
                tofile=f"b/{rel} (now)",
                lineterm="",
            )
        )
        if len(diff) > MAX_DIFF_LINES:
            diff = [*diff[:MAX_DIFF_LINES], f"… {len(diff) - MAX_DIFF_LINES} more diff lines"]
        parts.append("\n".join(diff))
    return "\n\n".join(parts)
