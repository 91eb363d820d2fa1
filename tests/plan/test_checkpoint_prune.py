"""Old checkpoints are pruned: refs and folders of all but the newest plans go (issue 24 part 2)."""

from __future__ import annotations

import os
from pathlib import Path

from planshell.plan.checkpoint import take_checkpoint
from planshell.plan.checkpoint_manifest import MANIFEST, save_manifest
from planshell.plan.checkpoint_prune import prune_checkpoints
from planshell.plan.undo_keeper import CheckpointKeeper
from tests.plan.checkpoint_helpers import git

REFS = "refs/planshell/checkpoints/"


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


def refs(root: Path) -> set[str]:
    out = git(root, "for-each-ref", "--format=%(refname)", REFS)
    return {line.removeprefix(REFS) for line in out.split()}


def folders(checkpoints: Path) -> set[str]:
    return {p.name for p in checkpoints.iterdir()}


def test_all_but_the_newest_and_the_kept_are_deleted(tmp_path: Path) -> None:
    root = repo(tmp_path)
    checkpoints = tmp_path / "data"
    idents = []
    for n in range(13):
        cp = take_checkpoint(root, data_dir=checkpoints)
        manifest = save_manifest(cp)
        os.utime(manifest, ns=(n * 10**9, n * 10**9))  # written in this order
        idents.append(cp.ident)
    assert refs(root) == set(idents)
    # Not planshell's: a link named like a checkpoint, and another project's checkpoint.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / MANIFEST).write_text("{}")
    os.symlink(elsewhere, checkpoints / "0123456789ab")
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.txt").write_text("b\n")
    foreign = save_manifest(take_checkpoint(other, data_dir=checkpoints, use_git=False))
    os.utime(foreign, ns=(0, 0))  # the oldest of all
    head = git(root, "rev-parse", "HEAD")

    kept = {idents[0]}  # the checkpoint /undo still offers, however old
    assert prune_checkpoints(root, checkpoints, kept, limit=10) == []

    survivors = {idents[0], *idents[-10:]}
    assert refs(root) == survivors
    assert folders(checkpoints) == survivors | {"0123456789ab", foreign.parent.name}
    assert (elsewhere / MANIFEST).exists()
    assert git(root, "rev-parse", "HEAD") == head  # nothing else in the repository moved
    assert git(root, "status", "--porcelain") == ""


def test_a_ref_someone_moved_is_left_alone(tmp_path: Path) -> None:
    root = repo(tmp_path)
    checkpoints = tmp_path / "data"
    old = take_checkpoint(root, data_dir=checkpoints)
    os.utime(save_manifest(old), ns=(0, 0))
    new = take_checkpoint(root, data_dir=checkpoints)
    save_manifest(new)
    git(root, "update-ref", REFS + old.ident, "HEAD")  # no longer the tree planshell pinned
    assert prune_checkpoints(root, checkpoints, {new.ident}, limit=1) == []
    assert folders(checkpoints) == {new.ident}
    assert refs(root) == {old.ident, new.ident}


def test_the_keeper_prunes_when_a_plan_starts_and_keeps_the_undo_it_offers(
    tmp_path: Path,
) -> None:
    root = repo(tmp_path)
    keeper = CheckpointKeeper(root, lambda event: None, lambda: None, keep_plans=1)
    plans = []
    for _ in range(3):
        keeper.start()
        keeper.settle()
        assert keeper.ident is not None
        plans.append(keeper.ident)
        (root / "a.txt").write_text(f"plan {len(plans)}\n")
        keeper.end()
        keeper.settle()
    checkpoints = keeper.data_dir()
    # The third plan's start kept its own and the second's (its /undo was still offered).
    assert folders(checkpoints) == set(plans[1:])
    assert refs(root) == set(plans[1:])
    assert keeper.undo(overwrite_hand_edits=False) == []
    assert (root / "a.txt").read_text() == "plan 2\n"
