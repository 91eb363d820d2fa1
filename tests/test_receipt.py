"""The write-barrier receipt: snapshots, comparisons, and the controller's use of them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from planshell.agent import events as ev
from planshell.llm.scripted import Reply
from planshell.plan import receipt as rc
from planshell.plan.controller import Mode
from planshell.plan.decider import Decision, Review
from tests.test_plan_mode import PLAN, make, write_and_review

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "T")
    (root / "README.md").write_text("hello\n")
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "dirty.txt").write_text("committed\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    (root / "dirty.txt").write_text("modified before planning\n")  # dirty at snapshot time
    (root / "untracked.txt").write_text("here before\n")
    return root


def check(root: Path, **kw) -> rc.Receipt:
    return rc.compare(rc.take_snapshot(root, **kw), **kw)


# --- git work trees ------------------------------------------------------------------


@needs_git
def test_git_no_change_is_clean(repo):
    snap = rc.take_snapshot(repo)
    assert snap.kind == "git" and {"dirty.txt", "untracked.txt"} <= snap.entries.keys()
    receipt = rc.compare(snap)
    assert receipt.clean and receipt.changed == []
    assert receipt.summary == "no changes outside the plan"
    assert receipt.taken_at == snap.taken_at and not receipt.capped


@needs_git
def test_git_changes_are_listed(repo):
    snap = rc.take_snapshot(repo)
    (repo / "README.md").write_text("edited\n")  # tracked, clean before
    (repo / "dirty.txt").write_text("modified again\n")  # dirty before, changed again
    (repo / "src" / "new.py").write_text("x = 1\n")  # created
    (repo / "src" / "a.py").unlink()  # deleted
    receipt = rc.compare(snap)
    assert not receipt.clean
    assert receipt.changed == ["README.md", "dirty.txt", "src/a.py", "src/new.py"]
    assert receipt.summary == (
        "4 paths changed while planning: README.md, dirty.txt, src/a.py, src/new.py"
    )


@needs_git
def test_git_untracked_file_removed_and_head_moved(repo):
    snap = rc.take_snapshot(repo)
    (repo / "untracked.txt").unlink()
    git(repo, "commit", "-q", "--allow-empty", "-m", "sneaky")
    receipt = rc.compare(snap)
    assert receipt.changed[0].startswith("HEAD (") and "untracked.txt" in receipt.changed


@needs_git
def test_git_planshell_dir_is_ignored(repo):
    snap = rc.take_snapshot(repo)
    (repo / ".planshell" / "plans").mkdir(parents=True)
    (repo / ".planshell" / "plans" / "p.md").write_text("# plan\n")
    (repo / ".planshell" / "notes.txt").write_text("not ignored by git, ignored by the receipt\n")
    assert check_after(snap).clean


def check_after(snap: rc.Snapshot) -> rc.Receipt:
    return rc.compare(snap)


@needs_git
def test_git_digest_tracks_contents(repo):
    snap = rc.take_snapshot(repo)
    (repo / "README.md").write_text("one\n")
    first = rc.compare(snap)
    assert rc.compare(snap).digest == first.digest
    (repo / "README.md").write_text("two\n")
    assert rc.compare(snap).digest != first.digest


# --- plain directories ------------------------------------------------------------------


def test_walk_changes(project):
    snap = rc.take_snapshot(project)
    assert snap.kind == "walk" and "src/app/server.py" in snap.entries
    assert rc.compare(snap).clean
    (project / "src" / "app" / "server.py").write_text("changed\n")
    (project / "NEW.md").write_text("new\n")
    (project / "Makefile").unlink()
    (project / ".planshell" / "plans").mkdir(parents=True)
    (project / ".planshell" / "plans" / "x.md").write_text("# x\n")
    (project / "node_modules").mkdir()
    (project / "node_modules" / "dep.js").write_text("skipped contents\n")
    receipt = rc.compare(snap)
    assert receipt.changed == ["Makefile", "NEW.md", "node_modules", "src/app/server.py"]
    assert receipt.summary.startswith("4 paths changed while planning: Makefile, NEW.md")


def test_walk_cap_is_reported(project):
    snap = rc.take_snapshot(project, max_files=3)
    assert snap.capped and len(snap.entries) == 3 and snap.last == ("pyproject.toml",)  # sorted: Makefile, README.md, pyproject.toml, src
    receipt = rc.compare(snap, max_files=3)
    assert receipt.clean and receipt.capped
    assert "capped" in receipt.summary
    # Before the frontier a change is seen; past it (src/...) it is not compared.
    (project / "Makefile").write_text("changed\n")
    (project / "src" / "app" / "server.py").write_text("changed\n")
    assert rc.compare(snap).changed == ["Makefile"]


def test_walk_time_cap(project):
    snap = rc.take_snapshot(project, time_budget=-1)
    assert snap.capped and snap.entries == {}
    assert "capped" in rc.compare(snap).summary


def test_many_changes_are_summarised(project):
    snap = rc.take_snapshot(project)
    for i in range(7):
        (project / f"f{i}.txt").write_text("x")
    receipt = rc.compare(snap)
    assert receipt.summary.endswith("f0.txt, f1.txt, f2.txt, f3.txt, f4.txt and 2 more")


# --- the controller -------------------------------------------------------------------


async def test_review_carries_a_clean_receipt_and_logs_it(project):
    runtime, _, decider, _ = make(
        project, [*write_and_review(), Reply(text="ok")],
        [lambda r: Review(Decision.APPROVE, reviewed_text=r.text)],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    request = decider.requests[0]
    assert isinstance(request.receipt, rc.Receipt) and request.receipt.clean
    assert runtime.plan.mode is Mode.EXECUTE and runtime.plan.receipt() is None
    entries = [json.loads(line) for line in runtime.agent.session.path.read_text().splitlines()]
    logged = [e for e in entries if e["type"] == "receipt"]
    assert len(logged) == 1
    assert logged[0]["clean"] is True and logged[0]["changed"] == []
    assert logged[0]["decision"] == "approve" and logged[0]["plan_path"] == str(request.path)
    assert {"taken_at", "checked_at", "summary", "capped"} <= logged[0].keys()
    runtime.close()


async def test_changes_before_review_are_shown_then_approval_proceeds(project):
    runtime, _, decider, _ = make(
        project, [*write_and_review(), Reply(text="ok")],
        [lambda r: Review(Decision.APPROVE, reviewed_text=r.text)],
    )
    runtime.plan.enter_plan()
    (project / "src" / "app" / "server.py").write_text("edited by someone\n")
    await runtime.agent.submit("plan")
    assert len(decider.requests) == 1
    shown = decider.requests[0].receipt
    assert not shown.clean and shown.changed == ["src/app/server.py"]
    assert runtime.plan.mode is Mode.EXECUTE
    logged = [json.loads(x) for x in runtime.agent.session.path.read_text().splitlines()]
    assert [e["changed"] for e in logged if e["type"] == "receipt"] == [["src/app/server.py"]]
    runtime.close()


async def test_new_changes_during_review_show_the_review_again(project):
    def change_then_approve(request):
        (project / "README.md").write_text("changed while the review was open\n")
        return Review(Decision.APPROVE, reviewed_text=request.text)

    runtime, _, decider, rec = make(
        project, [*write_and_review(), Reply(text="ok")],
        [change_then_approve, lambda r: Review(Decision.APPROVE, reviewed_text=r.text)],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    first, second = decider.requests
    assert first.receipt.clean and not second.receipt.clean
    assert second.receipt.changed == ["README.md"]
    assert "changed while you were reviewing" in second.notice and "README.md" in second.notice
    assert any("README.md" in n.message for n in rec.of(ev.Notice))
    assert runtime.plan.mode is Mode.EXECUTE


async def test_plan_file_writes_are_not_changes(project):
    runtime, _, decider, _ = make(project, [*write_and_review(), Reply(text="ok")], [Review(Decision.KEEP)])
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    assert decider.requests[0].receipt.clean
    assert PLAN in decider.requests[0].text


def test_capabilities_table(project):
    runtime, *_ = make(project)
    text = runtime.plan.capabilities()
    assert "| `edit` | blocked | effects: write |" in text
    assert "| `bash` | allowed | only commands the bash guard proves read-only |" in text
    assert "safe: built-in; destructive: built-in" in text
    assert "**Sandbox**:" in text and "core.fsmonitor=false" in text
    assert "snapshot of the work tree is taken when plan mode starts" in text
    runtime.plan.enter_plan()
    assert "now: no changes outside the plan" in runtime.plan.capabilities()


def test_snapshot_error_is_not_clean(tmp_path, monkeypatch):
    def broken(*_a, **_k):
        raise OSError("disk on fire")

    monkeypatch.setattr(rc, "_walk", broken)
    monkeypatch.setattr(rc, "_git_top", lambda root: None)
    receipt = rc.compare(rc.take_snapshot(tmp_path))
    assert not receipt.clean and "disk on fire" in receipt.summary


def test_git_is_run_hardened(repo, monkeypatch):
    """The snapshot's own git commands go through the overrides (no fsmonitor)."""
    marker = repo.parent / "fsmonitor-ran"
    script = repo.parent / "fsmonitor.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(script))
    check(repo)
    assert not marker.exists()
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, env=dict(os.environ))
    assert marker.exists()  # the repository really is hostile
