"""A checkpoint written down beside its copies, so ``--continue`` can still undo the plan.

The manifest (``<data>/projects/<key>/checkpoints/<id>/manifest.json``) names
the recorded states, the pinned git tree or the copies folder, and the state
:meth:`Checkpoint.mark_end` recorded; the session's ``mode`` entry carries
only the id. It lives in planshell's data dir (the user's), never in the
project, so a repository cannot plant one; it is still parsed with pydantic
and a root other than the project's is refused.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ValidationError

from planshell.fsutil import ReadRefused, atomic_write_text, read_user_file
from planshell.plan.checkpoint import Checkpoint, FileState
from planshell.plan.checkpoint_store import CopyStore, Git, GitStore, Store

MANIFEST = "manifest.json"
MANIFEST_MAX = 256 << 20
IDENT = re.compile(r"[0-9a-f]{12}")


class _Manifest(BaseModel):
    version: int = 1
    ident: str
    root: str
    before: dict[str, tuple[str, int, str]]
    dirs: dict[str, int]
    skipped: list[str]
    untouched: list[str]
    warnings: list[str]
    git_top: str | None
    tree: str | None
    head: str | None
    after: dict[str, tuple[str, int, str]] | None


def manifest_path(cp: Checkpoint) -> Path:
    """Beside the copies: ``<checkpoints>/<id>/manifest.json``."""
    return cp.copies.folder.parent / MANIFEST


def save_manifest(cp: Checkpoint) -> Path:
    """Write (or rewrite, after ``mark_end``) the manifest of ``cp``."""
    git_top = cp.git.top if cp.git is not None else None

    def states(items: dict[str, FileState]) -> dict[str, tuple[str, int, str]]:
        return {rel: (s.kind, s.mode, s.digest) for rel, s in items.items()}

    manifest = _Manifest(
        ident=cp.ident,
        root=str(cp.root),
        before=states(cp.before),
        dirs=cp.dirs,
        skipped=sorted(cp.skipped),
        untouched=cp.untouched,
        warnings=cp.warnings,
        git_top=str(git_top) if git_top is not None else None,
        tree=cp.tree,
        head=cp.head,
        after=states(cp.after) if cp.after is not None else None,
    )
    path = manifest_path(cp)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write_text(path, manifest.model_dump_json())
    return path


def load_manifest(root: Path, ident: str, checkpoints: Path) -> Checkpoint | None:
    """The checkpoint ``ident`` of ``root`` from ``checkpoints/<id>/``, or None if it is gone or unusable."""
    if not IDENT.fullmatch(ident):
        return None
    folder = checkpoints / ident
    try:
        raw = read_user_file(folder / MANIFEST, MANIFEST_MAX)
        manifest = _Manifest.model_validate_json(raw)
    except (OSError, ReadRefused, ValidationError, ValueError):
        return None
    root = root.resolve()
    if manifest.ident != ident or Path(manifest.root) != root:
        return None
    copies = CopyStore(folder / "blobs")
    stores: dict[str, Store] = {"sha256": copies}
    git = None
    if manifest.git_top is not None:
        # Only cat-file, rev-parse and log run on a loaded checkpoint: no index is needed.
        git = Git(Path(manifest.git_top), root, folder / "no-index")
        stores["git"] = GitStore(git)

    def states(items: dict[str, tuple[str, int, str]]) -> dict[str, FileState]:
        return {rel: FileState(kind, mode, digest) for rel, (kind, mode, digest) in items.items()}

    return Checkpoint(
        ident,
        root,
        states(manifest.before),
        manifest.dirs,
        stores,
        copies,
        skipped=set(manifest.skipped),
        untouched=manifest.untouched,
        warnings=manifest.warnings,
        git=git if manifest.tree is not None else None,
        tree=manifest.tree,
        head=manifest.head,
        after=states(manifest.after) if manifest.after is not None else None,
    )
