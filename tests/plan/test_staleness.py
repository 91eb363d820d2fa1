"""Staleness: HEAD and the cited files' hashes recorded when a plan is written (plan/staleness.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from planshell.agent import events as ev
from planshell.llm.scripted import Reply
from planshell.plan.decider import Decision, Review
from planshell.plan.staleness import (
    MAX_HASH_BYTES,
    CitedRecord,
    check_cited,
    cited_diffs,
    record_cited,
)
from planshell.plan.store import PlanStore
from tests.engine_helpers import make_runtime, write_and_review
from tests.plan.checkpoint_helpers import GIT_ENV

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

PLAN = """# Plan: Touch two files

## Context
`src/a.py` and `src/b.py` hold the code; `docs/` is prose; `src/new.py` is new.

## Steps
- [ ] Change `src/a.py`
- [ ] Change `src/b.py`

## Verification
```sh
pytest -q
```
"""


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "src" / "b.py").write_text("b = 1\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


@needs_git
def test_record_has_head_and_the_existing_cited_files(repo: Path):
    record = record_cited(repo, PLAN)
    assert record.head == git(repo, "rev-parse", "HEAD").strip()
    assert [f.path for f in record.files] == ["src/a.py", "src/b.py"]  # new.py does not exist
    assert all(f.sha256 and f.blob for f in record.files)
    assert record.files[0].blob == git(repo, "hash-object", "src/a.py").strip()
    assert CitedRecord.from_json(record.to_json()) == record


@needs_git
def test_a_changed_cited_file_is_stale_with_its_diff(repo: Path):
    record = record_cited(repo, PLAN)
    assert not check_cited(repo, record).stale
    (repo / "src" / "b.py").write_text("b = 2\n")
    staleness = check_cited(repo, record)
    assert staleness.changed == ("src/b.py",)
    assert (
        staleness.summary == f"written at {record.head[:7]}; 1 cited file changed since: src/b.py"
    )
    diff = cited_diffs(repo, record, staleness)
    assert "-b = 1" in diff and "+b = 2" in diff


@needs_git
def test_content_git_never_saw_gets_a_note_not_a_diff(repo: Path):
    (repo / "src" / "a.py").write_text("uncommitted\n")
    record = record_cited(repo, PLAN)
    (repo / "src" / "a.py").write_text("changed again\n")
    staleness = check_cited(repo, record)
    text = cited_diffs(repo, record, staleness)
    assert "src/a.py: changed since the plan was written" in text and "no diff" in text


def test_without_git_the_summary_still_counts(tmp_path: Path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a\n")
    (tmp_path / "src" / "b.py").write_text("b\n")
    record = record_cited(tmp_path, PLAN)
    assert record.head is None
    (tmp_path / "src" / "a.py").unlink()
    (tmp_path / "src" / "b.py").write_text("bb\n")
    staleness = check_cited(tmp_path, record)
    assert staleness.summary == "written earlier; 2 cited files changed since: src/a.py, src/b.py"
    text = cited_diffs(tmp_path, record, staleness)
    assert "src/a.py: missing" in text


def test_a_symlink_is_not_followed_and_a_huge_file_not_read(tmp_path: Path):
    (tmp_path / "src").mkdir()
    secret = tmp_path.parent / "outside-secret.txt"
    secret.write_text("secret\n")
    (tmp_path / "src" / "a.py").symlink_to(secret)
    with open(tmp_path / "src" / "b.py", "wb") as handle:
        handle.truncate(MAX_HASH_BYTES + 1)  # sparse: a read of it would take the cap
    record = record_cited(tmp_path, PLAN)
    by_path = {f.path: f for f in record.files}
    assert by_path["src/a.py"].sha256 is None and "symlink" in by_path["src/a.py"].note
    assert by_path["src/b.py"].sha256 is None and "not hashed" in by_path["src/b.py"].note
    secret.write_text("changed\n")
    assert not check_cited(tmp_path, record).stale  # nothing hashed, nothing compared


def test_hashing_stops_at_the_budget(tmp_path: Path, monkeypatch):
    from planshell.plan import staleness

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_bytes(b"a" * 600)
    (tmp_path / "src" / "b.py").write_bytes(b"b" * 600)
    monkeypatch.setattr(staleness, "MAX_HASH_TOTAL", 1000)
    record = record_cited(tmp_path, PLAN)
    assert record.files[0].sha256 is not None
    assert record.files[1].sha256 is None and "budget" in record.files[1].note


def test_a_fifo_does_not_hang(tmp_path: Path):
    (tmp_path / "src").mkdir()
    os.mkfifo(tmp_path / "src" / "a.py")
    record = record_cited(tmp_path, PLAN)
    assert record.files[0].sha256 is None and "regular" in record.files[0].note


def test_a_forged_record_cannot_point_outside(tmp_path: Path):
    forged = '{"head": null, "files": [{"path": "../../etc/passwd", "sha256": "' + "0" * 64 + '"}]}'
    assert CitedRecord.from_json(forged) is None
    assert CitedRecord.from_json("not json") is None
    absolute = forged.replace("../../etc/passwd", "/etc/passwd")
    assert CitedRecord.from_json(absolute) is None


@needs_git
def test_a_forged_blob_id_shows_no_foreign_content(repo: Path):
    record = record_cited(repo, PLAN)
    # a record whose blob id names some other object: the diff must not show it
    (repo / "other.txt").write_text("PRIVATE OBJECT\n")
    git(repo, "add", "other.txt")
    blob = git(repo, "hash-object", "other.txt").strip()
    forged = CitedRecord(
        record.head, tuple(f.__class__(f.path, f.sha256, blob, f.note) for f in record.files)
    )
    (repo / "src" / "a.py").write_text("a = 2\n")
    text = cited_diffs(repo, forged, check_cited(repo, forged))
    assert "PRIVATE OBJECT" not in text and "no diff" in text


@needs_git
async def test_write_plan_records_and_review_and_execution_warn(repo: Path):
    (repo / "src" / "a.py").write_text("a = 1\n")

    runtime, _, decider, recorder = make_runtime(
        repo,
        [*write_and_review(content=PLAN), Reply(text="ok")],
        [lambda request: Review(Decision.APPROVE, reviewed_text=request.text)],
    )
    runtime.plan.enter_plan()
    original = runtime.plan.record_cited  # the file changes right after the plan is recorded

    async def record_then_change(path):
        await original(path)
        (repo / "src" / "a.py").write_text("a = 99\n")

    runtime.plan.record_cited = record_then_change  # type: ignore[method-assign]
    await runtime.agent.submit("plan")
    request = decider.requests[0]
    store = PlanStore(repo)
    assert store.read_cited(request.path) is not None
    assert request.staleness is not None and request.staleness.changed == ("src/a.py",)
    assert "+a = 99" in request.stale_diff
    notices = [e.message for e in recorder.events if isinstance(e, ev.Notice)]
    assert any("1 cited file changed since: src/a.py" in text for text in notices)
    store.delete(request.path)
    assert not store.cited_path(request.path).exists()
    runtime.close()


@needs_git
async def test_executing_a_saved_plan_warns_without_a_review(repo: Path):
    runtime, _, _, recorder = make_runtime(repo)
    store = PlanStore(repo)
    path = store.write(store.plans_dir / "touch.md", PLAN)
    await runtime.plan.record_cited(path)
    (repo / "src" / "b.py").write_text("b = 2\n")
    runtime.plan.execute_existing(path)
    notices = [e.message for e in recorder.events if isinstance(e, ev.Notice)]
    assert any("1 cited file changed since: src/b.py" in text for text in notices)
    runtime.close()


@needs_git
def test_a_forged_blob_id_naming_a_huge_object_is_not_read(repo: Path, monkeypatch):
    from planshell.plan import staleness

    record = record_cited(repo, PLAN)
    (repo / "big.bin").write_bytes(b"x" * 5000)
    git(repo, "add", "big.bin")
    blob = git(repo, "hash-object", "big.bin").strip()
    forged = CitedRecord(
        record.head, tuple(f.__class__(f.path, f.sha256, blob, f.note) for f in record.files)
    )
    calls: list[list[str]] = []
    real_git = staleness._git
    monkeypatch.setattr(
        staleness, "_git", lambda root, args: calls.append(args) or real_git(root, args)
    )
    monkeypatch.setattr(staleness, "MAX_HASH_BYTES", 1000)
    assert staleness._earlier(repo, forged.files[0]) is None
    assert ["cat-file", "blob", blob] not in calls  # its size was asked, its content never read
