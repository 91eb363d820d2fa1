"""Tests for planshell.plan.store (the plans directory fence) and planshell.fsutil."""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path

import pytest

from planshell.fsutil import atomic_write_text, is_binary
from planshell.plan.store import (
    MAX_PLAN_BYTES,
    PlanInfo,
    PlanStore,
    PlanStoreError,
    find_project_root,
    slugify,
)

NOW = datetime(2025, 3, 4, 9, 7)
PLAN = "# Plan: Add caching\n\n## Steps\n- [x] measure\n- [ ] cache\n- [ ] test\n"


@pytest.fixture
def store(tmp_path: Path) -> PlanStore:
    root = tmp_path / "project"
    root.mkdir()
    return PlanStore(root)


def _touch(path: Path, mtime: float, data: bytes | str = PLAN) -> Path:
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    return path


# ------------------------------------------------------------- project root


def test_find_project_root_git_dir(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_project_root(deep) == tmp_path.resolve()


def test_find_project_root_git_file_for_worktrees(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("gitdir: /elsewhere/.git/worktrees/x\n")
    (tmp_path / "src").mkdir()
    assert find_project_root(tmp_path / "src") == tmp_path.resolve()


def test_find_project_root_without_git(tmp_path: Path) -> None:
    start = tmp_path / "not-a-repo"
    start.mkdir()
    assert find_project_root(start) == start.resolve()


def test_plans_dir_location(store: PlanStore) -> None:
    assert store.plans_dir == store.root / ".planshell" / "plans"
    assert PlanStore.MAX_PLAN_BYTES == MAX_PLAN_BYTES == 256 * 1024


# ----------------------------------------------------------------- directory


def test_ensure_dir_creates_gitignore(store: PlanStore) -> None:
    store.ensure_dir()
    assert store.plans_dir.is_dir()
    assert (store.plans_dir / ".gitignore").read_text().strip() == "*"
    store.ensure_dir()  # idempotent


def test_ensure_dir_keeps_existing_gitignore(store: PlanStore) -> None:
    store.plans_dir.mkdir(parents=True)
    (store.plans_dir / ".gitignore").write_text("custom\n")
    store.ensure_dir()
    assert (store.plans_dir / ".gitignore").read_text() == "custom\n"


def test_write_creates_dir_and_gitignore(store: PlanStore) -> None:
    path = store.write("first", PLAN)
    assert path == store.plans_dir / "first.md"
    assert path.read_text() == PLAN
    assert (store.plans_dir / ".gitignore").read_text() == "*\n"


# -------------------------------------------------------------------- naming


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Fix the Auth bug!!", "fix-the-auth-bug"),
        ("  --Hello__World--  ", "hello-world"),
        ("Café Crème", "cafe-creme"),
        ("日本語", ""),
        ("a" * 60, "a" * 48),
        ("x" * 47 + " tail", "x" * 47),  # no trailing dash after truncation
        # cut at a word boundary, never mid-word (issue 12, item 16)
        (
            "add pagination to the widget list and a search box too",
            "add-pagination-to-the-widget-list-and-a-search",
        ),
    ],
)
def test_slugify(text: str, slug: str) -> None:
    assert slugify(text) == slug


def test_new_path_format(store: PlanStore) -> None:
    assert store.new_path(now=NOW) == store.plans_dir / "2025-03-04-0907-plan.md"
    assert store.new_path("Speed up the CI", NOW).name == "2025-03-04-0907-speed-up-the-ci.md"
    assert store.new_path("my-plan.md", NOW).name == "2025-03-04-0907-my-plan.md"
    assert store.new_path("日本語", NOW).name == "2025-03-04-0907-plan.md"
    long = store.new_path("word " * 40, NOW).stem
    assert len(long) <= len("2025-03-04-0907-") + 48 and long.endswith("-word")  # whole words
    assert not store.plans_dir.exists()  # naming creates nothing


def test_new_path_uses_current_time(store: PlanStore) -> None:
    before = datetime.now().strftime("%Y-%m-%d")
    assert store.new_path().name.startswith(before[:7])


def test_new_path_avoids_collisions(store: PlanStore) -> None:
    first = store.write(store.new_path("idea", NOW), PLAN)
    second = store.write(store.new_path("idea", NOW), PLAN)
    third = store.write(store.new_path("idea", NOW), PLAN)
    assert [p.name for p in (first, second, third)] == [
        "2025-03-04-0907-idea.md",
        "2025-03-04-0907-idea-2.md",
        "2025-03-04-0907-idea-3.md",
    ]


# --------------------------------------------------------------- containment


@pytest.mark.parametrize(
    "given",
    ["foo", "foo.md", "./foo.md", ".planshell/plans/foo.md", "../plans/foo.md", "x/../foo.md"],
)
def test_resolve_accepts_plan_names(store: PlanStore, given: str) -> None:
    assert store.resolve(given) == store.plans_dir / "foo.md"


def test_resolve_accepts_absolute_inside(store: PlanStore) -> None:
    inside = store.plans_dir / "foo.md"
    assert store.resolve(inside) == inside
    assert store.resolve(str(inside)) == inside


def test_resolve_accepts_absolute_path_through_symlinked_checkout(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real, target_is_directory=True)
    store = PlanStore(alias)
    assert store.root == real.resolve()
    given = alias / ".planshell" / "plans" / "foo.md"
    assert store.resolve(given) == real.resolve() / ".planshell" / "plans" / "foo.md"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("../escape.md", "outside the plans directory"),
        ("../../escape.md", "outside the plans directory"),
        ("../../../../../../etc/passwd.md", "outside the plans directory"),
        ("..", "outside the plans directory"),
        ("/etc/passwd", "outside the plans directory"),
        ("/tmp/plan.md", "outside the plans directory"),
        (".planshell/other.md", "outside the plans directory"),
        ("sub/plan.md", "subdirectory"),
        (".planshell/plans/sub/plan.md", "subdirectory"),
        (".hidden.md", "hidden"),
        (".gitignore", "hidden"),
        ("notes.txt", "end"),
        ("plan.md.bak", "end"),
        ("", "no plan path"),
        ("bad\x00name.md", "NUL"),
    ],
)
def test_resolve_refusals(store: PlanStore, given: str, message: str) -> None:
    with pytest.raises(PlanStoreError, match=message):
        store.resolve(given)


def test_write_refuses_outside_and_writes_nothing(store: PlanStore, tmp_path: Path) -> None:
    with pytest.raises(PlanStoreError):
        store.write("../../evil.md", "x")
    with pytest.raises(PlanStoreError):
        store.write(tmp_path / "evil.md", "x")
    assert not (tmp_path / "evil.md").exists()
    assert not (store.root / ".planshell" / "evil.md").exists()


def test_symlinked_plan_file_refused(store: PlanStore, tmp_path: Path) -> None:
    store.ensure_dir()
    secret = tmp_path / "secret.md"
    secret.write_text("do not touch\n")
    (store.plans_dir / "link.md").symlink_to(secret)
    with pytest.raises(PlanStoreError, match="symlink"):
        store.resolve("link.md")
    with pytest.raises(PlanStoreError, match="symlink"):
        store.write("link.md", "overwritten")
    with pytest.raises(PlanStoreError, match="symlink"):
        store.read("link.md")
    assert secret.read_text() == "do not touch\n"
    assert not store.exists("link.md")


@pytest.mark.parametrize("component", [".planshell", ".planshell/plans"])
def test_symlinked_plans_dir_component_refused(
    store: PlanStore, tmp_path: Path, component: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "plans").mkdir(parents=True)
    link = store.root / component
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere if component == ".planshell" else elsewhere / "plans")
    with pytest.raises(PlanStoreError, match="symlink"):
        store.write("plan", PLAN)
    with pytest.raises(PlanStoreError, match="symlink"):
        store.ensure_dir()
    assert list(elsewhere.rglob("*")) == [elsewhere / "plans"]
    assert store.list() == []  # listing never crashes
    assert store.newest() is None


def test_plans_dir_that_is_a_file_refused(store: PlanStore) -> None:
    store.plans_dir.parent.mkdir()
    store.plans_dir.write_text("not a dir")
    with pytest.raises(PlanStoreError, match="not a directory"):
        store.write("plan", PLAN)
    assert store.list() == []


def test_directory_named_like_a_plan_refused(store: PlanStore) -> None:
    (store.plans_dir / "dir.md").mkdir(parents=True)
    with pytest.raises(PlanStoreError, match="directory"):
        store.write("dir.md", PLAN)


# ------------------------------------------------------------------ size cap


def test_exactly_256_kib_is_accepted(store: PlanStore) -> None:
    text = "# Plan: big\n" + "x" * (MAX_PLAN_BYTES - len("# Plan: big\n"))
    assert len(text.encode()) == MAX_PLAN_BYTES
    path = store.write("big", text)
    assert store.read(path) == text


def test_one_byte_over_is_refused(store: PlanStore) -> None:
    text = "x" * (MAX_PLAN_BYTES + 1)
    with pytest.raises(PlanStoreError, match="256 KiB") as caught:
        store.write("big", text)
    assert str(MAX_PLAN_BYTES + 1) in str(caught.value)
    assert not store.exists("big")


def test_cap_counts_utf8_bytes_not_characters(store: PlanStore) -> None:
    text = "日" * (MAX_PLAN_BYTES // 3 + 1)  # fewer chars than the cap, more bytes
    assert len(text) < MAX_PLAN_BYTES < len(text.encode())
    with pytest.raises(PlanStoreError, match="cap"):
        store.write("wide", text)


def test_surrogates_refused(store: PlanStore) -> None:
    with pytest.raises(PlanStoreError, match="Unicode"):
        store.write("bad", "lone \udcff")


# ---------------------------------------------------------------------- read


def test_read_round_trip_and_bom(store: PlanStore) -> None:
    store.write("a", PLAN)
    assert store.read("a") == PLAN
    assert store.read("a.md") == PLAN
    store.ensure_dir()
    (store.plans_dir / "bom.md").write_bytes(b"\xef\xbb\xbf# Plan: bom\n")
    assert store.read("bom") == "# Plan: bom\n"


def test_read_refusals(store: PlanStore) -> None:
    store.ensure_dir()
    (store.plans_dir / "bin.md").write_bytes(b"# Plan\x00\x01\x02")
    (store.plans_dir / "latin.md").write_bytes(b"# Plan: caf\xe9\n")
    (store.plans_dir / "huge.md").write_bytes(b"x" * (MAX_PLAN_BYTES + 1))
    with pytest.raises(PlanStoreError, match="binary"):
        store.read("bin")
    with pytest.raises(PlanStoreError, match="not valid UTF-8"):
        store.read("latin")
    with pytest.raises(PlanStoreError, match="cap"):
        store.read("huge")
    with pytest.raises(PlanStoreError, match=r"no plan named missing\.md"):
        store.read("missing")


def test_read_reports_late_invalid_utf8(store: PlanStore) -> None:
    store.ensure_dir()
    (store.plans_dir / "late.md").write_bytes(b"a" * 9000 + b"\xff\n")
    with pytest.raises(PlanStoreError, match="not valid UTF-8"):
        store.read("late")


# ------------------------------------------------------------ delete, exists


def test_delete_and_exists(store: PlanStore) -> None:
    store.write("gone", PLAN)
    assert store.exists("gone")
    assert store.exists(".planshell/plans/gone.md")
    store.delete("gone.md")
    assert not store.exists("gone")
    with pytest.raises(PlanStoreError, match="no plan named"):
        store.delete("gone")
    assert not store.exists("../../etc/passwd")


# ------------------------------------------------------------------- listing


def test_list_empty_when_no_dir(store: PlanStore) -> None:
    assert store.list() == []
    assert store.newest() is None
    assert store.find_by_name("anything") is None


def test_list_newest_first_with_details(store: PlanStore) -> None:
    store.ensure_dir()
    _touch(store.plans_dir / "2025-01-01-1000-old.md", 1_000, "# Plan: Old\n- [x] a\n")
    _touch(store.plans_dir / "2025-01-02-1000-new.md", 3_000, PLAN)
    _touch(store.plans_dir / "2025-01-01-1200-mid.md", 2_000, "no heading here\n")
    infos = store.list()
    assert [i.name for i in infos] == [
        "2025-01-02-1000-new.md",
        "2025-01-01-1200-mid.md",
        "2025-01-01-1000-old.md",
    ]
    assert infos[0] == PlanInfo(
        path=store.plans_dir / "2025-01-02-1000-new.md",
        name="2025-01-02-1000-new.md",
        title="Add caching",
        modified=3_000,
        done=1,
        total=3,
        problem=None,
    )
    assert infos[1].title == "no heading here"
    assert (infos[2].done, infos[2].total) == (1, 1)


def test_list_includes_broken_plans_with_a_problem(store: PlanStore, tmp_path: Path) -> None:
    store.ensure_dir()
    plans = store.plans_dir
    _touch(plans / "good.md", 100)
    _touch(plans / "binary.md", 500, b"\x89PNG\r\n\x1a\n\x00\x00")
    _touch(plans / "huge.md", 400, b"x" * (MAX_PLAN_BYTES + 1))
    _touch(plans / "latin.md", 300, b"caf\xe9 " * 3000)
    outside = _touch(tmp_path / "outside.md", 50)
    (plans / "link.md").symlink_to(outside)
    os.utime(plans / "link.md", (200, 200), follow_symlinks=False)
    (plans / "folder.md").mkdir()
    os.utime(plans / "folder.md", (150, 150))
    # Ignored entirely: dotfiles and non-markdown files.
    _touch(plans / ".hidden.md", 900)
    _touch(plans / "notes.txt", 900)

    infos = store.list()
    assert [i.name for i in infos] == [
        "binary.md",
        "huge.md",
        "latin.md",
        "link.md",
        "folder.md",
        "good.md",
    ]
    problems = {i.name: i.problem for i in infos}
    assert problems["good.md"] is None
    assert "binary" in (problems["binary.md"] or "")
    assert "too large" in (problems["huge.md"] or "")
    assert problems["latin.md"]
    assert "symlink" in (problems["link.md"] or "")
    assert "directory" in (problems["folder.md"] or "")
    broken = [i for i in infos if i.problem]
    assert all(i.title == i.path.stem and i.total == 0 for i in broken)


def test_find_by_name(store: PlanStore) -> None:
    store.ensure_dir()
    plans = store.plans_dir
    _touch(plans / "2025-01-01-1000-fix-auth.md", 100)
    _touch(plans / "2025-02-01-1000-fix-auth.md", 200)
    _touch(plans / "2025-03-01-1000-other.md", 300)
    _touch(plans / "handmade.md", 50)
    assert store.find_by_name("fix-auth") == plans / "2025-02-01-1000-fix-auth.md"
    assert store.find_by_name("Fix Auth") == plans / "2025-02-01-1000-fix-auth.md"
    assert store.find_by_name("2025-01-01-1000-fix-auth") == plans / "2025-01-01-1000-fix-auth.md"
    assert (
        store.find_by_name("2025-01-01-1000-fix-auth.md") == plans / "2025-01-01-1000-fix-auth.md"
    )
    assert store.find_by_name("handmade") == plans / "handmade.md"
    assert store.find_by_name("fix") is None
    assert store.find_by_name("") is None


def test_newest_skips_links_and_dirs(store: PlanStore, tmp_path: Path) -> None:
    store.ensure_dir()
    _touch(store.plans_dir / "real.md", 100)
    (store.plans_dir / "link.md").symlink_to(_touch(tmp_path / "x.md", 100))
    (store.plans_dir / "dir.md").mkdir()
    assert store.newest() == store.plans_dir / "real.md"


# -------------------------------------------------------------------- fsutil


def _temp_leftovers(directory: Path) -> list[str]:
    return [name for name in os.listdir(directory) if name.startswith(".")]


def test_atomic_write_creates_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    atomic_write_text(target, "one\n")
    assert target.read_text() == "one\n"
    atomic_write_text(target, "two\r\nlines 日本\n")
    assert target.read_bytes() == "two\r\nlines 日本\n".encode()  # no newline translation
    assert _temp_leftovers(tmp_path) == []


def test_crash_between_write_and_rename_keeps_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "plan.md"
    target.write_text("old content\n")

    def crash(src: object, dst: object) -> None:
        assert Path(str(src)).read_text() == "new content that must not appear\n"
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        atomic_write_text(target, "new content that must not appear\n")
    assert target.read_text() == "old content\n"
    assert sorted(os.listdir(tmp_path)) == ["plan.md"]


def test_store_write_crash_keeps_old_plan(
    store: PlanStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = store.write("keep", PLAN)

    def crash(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(PlanStoreError, match="No space left"):
        store.write("keep", "# replaced\n")
    assert path.read_text() == PLAN
    assert sorted(os.listdir(store.plans_dir)) == [".gitignore", "keep.md"]


def test_failure_while_writing_cleans_up(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "bad \udcff surrogate")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_bad_encoding_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(LookupError):
        atomic_write_text(tmp_path / "f.txt", "x", encoding="no-such-codec")
    assert os.listdir(tmp_path) == []


def test_atomic_write_preserves_mode(tmp_path: Path) -> None:
    target = tmp_path / "script.sh"
    target.write_text("#!/bin/sh\n")
    target.chmod(0o751)
    atomic_write_text(target, "#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert target.read_text().endswith("echo hi\n")


def test_new_file_gets_umask_mode_not_mkstemp_0600(tmp_path: Path) -> None:
    target = tmp_path / "new.txt"
    atomic_write_text(target, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_atomic_write_encoding(tmp_path: Path) -> None:
    target = tmp_path / "latin.txt"
    atomic_write_text(target, "café", encoding="latin-1")
    assert target.read_bytes() == b"caf\xe9"


@pytest.mark.parametrize(
    ("data", "binary"),
    [
        (b"", False),
        (b"plain ascii\n", False),
        ("日本語 ✅".encode(), False),
        (b"abc\x00def", True),
        (b"\x89PNG\r\n\x1a\n\x00\x00", True),
        (b"caf\xe9 latin-1", True),
        (b"\xff\xfe", True),
    ],
)
def test_is_binary(data: bytes, binary: bool) -> None:
    assert is_binary(data) is binary


def test_is_binary_allows_truncated_trailing_multibyte() -> None:
    encoded = ("a" * 8190 + "日").encode()  # "日" is 3 bytes, straddling 8 KiB
    assert not is_binary(encoded)
    assert not is_binary("日".encode()[:2])  # a prefix cut mid-character
    assert is_binary("日".encode()[:2] + b"x")  # ...but not in the middle


def test_is_binary_only_samples_first_8k() -> None:
    assert not is_binary(b"a" * 8192 + b"\x00")
    assert is_binary(b"a" * 8191 + b"\x00")


def test_a_fifo_named_like_a_plan_is_refused_not_waited_on(tmp_path):
    store = PlanStore(tmp_path)
    store.ensure_dir()
    os.mkfifo(store.plans_dir / "pipe.md")
    with pytest.raises(PlanStoreError, match="not a regular file"):
        store.read("pipe.md")
