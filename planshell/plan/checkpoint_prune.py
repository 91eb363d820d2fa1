"""Old checkpoints go: only the newest plans' checkpoints are kept (issue 24 part 2).

Every executed plan leaves a folder in ``<data>/projects/<key>/checkpoints/<id>/``
(the manifest and any copies) and, in a git repository, a ref
``refs/planshell/checkpoints/<id>`` that keeps its blobs from ``git gc``. When a
new checkpoint is made, all but the :data:`KEEP_PLANS` most recent are deleted:
the folder, and the ref its manifest names. "Recent" is when the manifest was
last written (taken, or ended with its plan). The executing plan's checkpoint
and the one ``/undo`` still offers are never deleted, however old.

Only folders planshell made are touched: a name of 12 hex digits, a real folder
(not a link) holding a readable manifest for this project's root. A ref is
deleted only when it still points at the tree the manifest pinned
(``update-ref -d <ref> <tree>``; a ref moved by someone else is left alone), and only
refs of this project's manifests: a repository shared with another project folder
keeps that folder's refs.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from planshell.plan.checkpoint_manifest import IDENT, MANIFEST, load_manifest
from planshell.plan.checkpoint_store import REF_PREFIX, GitError

__all__ = ["KEEP_PLANS", "prune_checkpoints"]

KEEP_PLANS = 10


@dataclass(frozen=True)
class _Found:
    ident: str
    folder: Path
    written: int  # the manifest's mtime, in ns


def _found(checkpoints: Path) -> list[_Found]:
    """planshell's checkpoint folders under ``checkpoints``, newest first."""
    try:
        names = os.listdir(checkpoints)
    except OSError:
        return []
    out: list[_Found] = []
    for name in names:
        if not IDENT.fullmatch(name):
            continue
        folder = checkpoints / name
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                continue
            manifest = os.lstat(folder / MANIFEST)
        except OSError:
            continue
        if stat.S_ISREG(manifest.st_mode):
            out.append(_Found(name, folder, manifest.st_mtime_ns))
    return sorted(out, key=lambda f: (f.written, f.ident), reverse=True)


def prune_checkpoints(
    root: Path, checkpoints: Path, keep: set[str], limit: int = KEEP_PLANS
) -> list[str]:
    """Delete all but the ``limit`` newest checkpoints of ``root`` (and those in ``keep``).

    Returns the problems (a ref or folder that could not be deleted), one line each;
    pruning never fails the plan it runs for.
    """
    problems: list[str] = []
    for found in _found(checkpoints)[limit:]:
        if found.ident in keep:
            continue
        cp = load_manifest(root, found.ident, checkpoints)
        if cp is None:
            continue  # another project's, or unreadable: not ours to judge
        if cp.git is not None and cp.tree is not None:
            ref = REF_PREFIX + found.ident
            try:
                pinned = cp.git.run(["rev-parse", "-q", "--verify", ref]).decode().strip()
            except GitError:
                pinned = ""  # no such ref (or no repository any more): nothing to unpin
            if pinned == cp.tree:
                try:
                    cp.git.run(["update-ref", "-d", ref, cp.tree])
                except GitError as exc:  # kept whole: the next prune tries again
                    problems.append(f"checkpoint {found.ident}: the ref stays ({exc})")
                    continue
        try:
            shutil.rmtree(found.folder)
        except OSError as exc:
            problems.append(f"checkpoint {found.ident}: not deleted ({exc})")
    return problems
