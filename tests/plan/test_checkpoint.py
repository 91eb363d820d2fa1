"""Checkpoint and undo (issue 24 part 2, engine): after undo every file's sha256 is what it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planshell.plan.checkpoint import take_checkpoint
from planshell.plan.undo import apply_undo, plan_undo
from tests.plan.checkpoint_helpers import git, state


def git_state(root: Path) -> tuple[str, bytes, str, str]:
    return (
        git(root, "rev-parse", "HEAD"),
        (root / ".git" / "index").read_bytes(),
        git(root, "for-each-ref", "refs/heads", "refs/tags"),
        git(root, "stash", "list"),
    )


def populate(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("print('a')\n")
    (root / "b.txt").write_text("one\ntwo\n")
    (root / "bin.dat").write_bytes(bytes(range(256)) * 4)
    run = root / "run.sh"
    run.write_text("#!/bin/sh\necho hi\n")
    run.chmod(0o755)
    (root / "link").symlink_to("b.txt")
    (root / "empty").mkdir()


def make_repo(root: Path) -> None:
    root.mkdir()
    git(root, "init", "-q")
    populate(root)
    (root / ".gitignore").write_text("build/\n*.log\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    (root / "stashme").write_text("x")
    git(root, "add", "stashme")
    git(root, "stash", "-q")  # one entry in the stash list
    (root / "untracked.txt").write_text("u\n")
    (root / "build").mkdir()
    (root / "build" / "out.log").write_text("small ignored\n")
    (root / "src" / "a.py").write_text("print('modified, not staged')\n")
    (root / "b.txt").write_text("staged change\n")
    git(root, "add", "b.txt")


def run_plan(root: Path) -> None:
    """What an executed plan might do: edit, delete, rename, create, chmod, relink, binary."""
    (root / "src" / "a.py").write_text("print('plan')\n")
    (root / "untracked.txt").unlink()
    (root / "b.txt").rename(root / "renamed.txt")
    (root / "new" / "deep").mkdir(parents=True)
    (root / "new" / "deep" / "f.txt").write_text("new\n")
    (root / "run.sh").chmod(0o644)
    (root / "link").unlink()
    (root / "link").symlink_to("src")
    (root / "bin.dat").write_bytes(b"\x00\xff" * 10)
    (root / "empty").rmdir()
    (root / "build" / "out.log").write_text("rebuilt\n")


def test_git_undo_restores_every_file_and_leaves_head_index_stash(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root)
    before, before_git = state(root), git_state(root)
    cp = take_checkpoint(root, data_dir=tmp_path / "data")
    assert cp.tree is not None and cp.warnings == []
    assert git_state(root) == before_git
    assert git(root, "for-each-ref", "refs/planshell").split()[1] == "tree"
    run_plan(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "made by the plan")
    cp.mark_end()
    undo = plan_undo(cp)
    assert undo.hand_edited == []
    assert "+print('modified, not staged')" in undo.diff
    assert "Binary or large file bin.dat differs" in undo.diff
    assert [c.split(" ", 1)[1] for c in undo.commits] == ["made by the plan"]
    head_after_plan = git(root, "rev-parse", "HEAD")
    index_after_plan = (root / ".git" / "index").read_bytes()
    assert apply_undo(undo) == []
    assert state(root) == before
    assert git(root, "rev-parse", "HEAD") == head_after_plan  # reported, not rewritten
    assert (root / ".git" / "index").read_bytes() == index_after_plan
    assert git(root, "stash", "list") == before_git[3]
    assert plan_undo(cp).changes == []


def test_hand_edit_after_the_plan_is_asked_about(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root)
    before = state(root)
    cp = take_checkpoint(root, data_dir=tmp_path / "data")
    (root / "src" / "a.py").write_text("plan\n")
    cp.mark_end()
    (root / "src" / "a.py").write_text("hand\n")
    (root / "mine.txt").write_text("hand-made\n")
    undo = plan_undo(cp)
    assert sorted(undo.hand_edited) == ["mine.txt", "src/a.py"]
    apply_undo(undo)
    assert (root / "src" / "a.py").read_text() == "hand\n"
    assert (root / "mine.txt").exists()
    apply_undo(plan_undo(cp), overwrite_hand_edits=True)
    assert state(root) == before


def test_non_git_directory_and_size_cap(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    populate(root)
    (root / "big.bin").write_bytes(os.urandom(4096))
    (root / "untracked.txt").write_text("u\n")
    (root / "build").mkdir()
    (root / "build" / "out.log").write_text("small\n")
    before = state(root)
    cp = take_checkpoint(root, data_dir=tmp_path / "data", max_bytes=3000)
    assert cp.tree is None and "big.bin" in cp.skipped
    assert cp.warnings and "big.bin" in cp.warnings[0]
    assert cp.warnings[0].startswith("1 file not recorded")  # not "1 files" (issue 26.22)
    run_plan(root)
    (root / "big.bin").write_bytes(b"changed")  # not recorded: left alone ...
    undo = plan_undo(cp)
    assert "big.bin" in undo.untouched
    apply_undo(undo)
    after = state(root)
    assert after.pop("big.bin") != before.pop("big.bin")
    assert after == before


def test_remember_before_write_copies_a_skipped_file(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "big.bin").write_bytes(os.urandom(4096))
    before = state(root)
    cp = take_checkpoint(root, data_dir=tmp_path / "data", max_bytes=10)
    cp.remember_before_write(root / "big.bin")
    (root / "big.bin").write_bytes(b"changed")
    apply_undo(plan_undo(cp))
    assert state(root) == before


def test_submodule_is_reported_and_untouched(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    git(sub, "init", "-q")
    (sub / "s.txt").write_text("s\n")
    git(sub, "add", "-A")
    git(sub, "commit", "-qm", "s")
    root = tmp_path / "repo"
    make_repo(root)
    git(root, "submodule", "add", "-q", str(sub), "lib")
    before = state(root)
    cp = take_checkpoint(root, data_dir=tmp_path / "data")
    assert "lib" in cp.untouched
    (root / "lib" / "s.txt").write_text("plan changed the submodule\n")
    (root / "b.txt").write_text("plan\n")
    undo = plan_undo(cp)
    assert "lib" in undo.untouched and [c.path for c in undo.changes] == ["b.txt"]
    apply_undo(undo)
    after = state(root)
    assert after.pop("lib/s.txt") != before.pop("lib/s.txt")
    assert after == before


def test_hostile_repo_undo_never_writes_outside_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep\n")
    root = tmp_path / "repo"
    make_repo(root)
    git(root, "config", "core.fsmonitor", f"touch {outside}/fsmonitor-ran; false")
    git(root, "config", "core.worktree", str(outside))
    git(root, "config", "filter.evil.clean", f"touch {outside}/filter-ran; cat")
    (root / ".gitattributes").write_text("* filter=evil\n")
    (root / "d").mkdir()
    (root / "d" / "x.txt").write_text("x\n")
    before = state(root)
    cp = take_checkpoint(root, data_dir=tmp_path / "data")
    assert cp.tree is not None and "victim.txt" not in cp.before
    # The plan swaps a folder for a symlink out of the root and writes through it.
    (root / "d" / "x.txt").unlink()
    (root / "d").rmdir()
    (root / "d").symlink_to(outside)
    (outside / "x.txt").write_text("through the link\n")
    undo = plan_undo(cp)
    apply_undo(undo, overwrite_hand_edits=True)
    assert state(root) == before
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt", "x.txt"]
    assert (outside / "victim.txt").read_text() == "keep\n"


def test_undo_refuses_a_parent_that_is_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "plain"
    (root / "d").mkdir(parents=True)
    (root / "d" / "x.txt").write_text("x\n")
    cp = take_checkpoint(root, data_dir=tmp_path / "data")
    (root / "d" / "x.txt").write_text("plan\n")
    undo = plan_undo(cp)
    (root / "d" / "x.txt").unlink()
    (root / "d").rmdir()
    (root / "d").symlink_to(outside)  # swapped in after the plan was shown
    problems = apply_undo(undo)
    assert problems and list(outside.iterdir()) == []


@pytest.mark.parametrize("use_git", [True, False])
def test_crlf_and_attributes_keep_exact_bytes(tmp_path: Path, use_git: bool) -> None:
    root = tmp_path / "repo"
    make_repo(root)
    git(root, "config", "core.autocrlf", "true")
    (root / ".gitattributes").write_text("* text=auto\n")
    (root / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    before = state(root)
    cp = take_checkpoint(root, data_dir=tmp_path / "data", use_git=use_git)
    (root / "crlf.txt").write_bytes(b"a\nb\n")
    apply_undo(plan_undo(cp))
    assert state(root) == before
