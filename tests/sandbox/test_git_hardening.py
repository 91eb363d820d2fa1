"""Git in plan mode never runs a repository's program and never changes ``.git``.

A hostile superproject and its submodule configure every program git can be
made to start from a "read-only" command; the commands run through the
plan-mode exec path (real git, and the real bubblewrap sandbox or none). The
program announces itself on stderr (merged into the tool output, so it is seen
even inside the sandbox) and appends to marker files (seen without it).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from planshell.config import PlanSettings
from planshell.sandbox import bwrap
from planshell.sandbox.gitsafe import git_shim_dir
from tests.sandbox_helpers import git, needs_bwrap, needs_git, run

pytestmark = needs_git

MODES = [
    pytest.param("required", marks=[needs_bwrap, pytest.mark.bwrap], id="sandboxed"),
    pytest.param("off", id="guarded"),
]
RAN = "EVIL-PROGRAM-RAN"
COMMANDS = [
    "git status",
    "git status --ignore-submodules=none",
    "git diff",
    "git diff --stat",
    "git diff --submodule=diff --ignore-submodules=none",
    "git log -p -2",
    "git log -p -1 --submodule=diff",
    "git show",
    "git show --submodule=diff --ignore-submodules=none HEAD",
    "git describe --dirty --always",
    "git blame a.dat",
    "git -C sub diff",
    "git -C sub status",
]


def _setup_git(root: Path) -> None:
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "T")


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """A superproject and a submodule whose configs name a program everywhere they can."""
    outside = tmp_path / "outside"
    outside.mkdir()
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho {RAN} "$0 $*" >&2\necho "$*" >> {outside}/MARKER\ncat\n')
    script.chmod(0o755)
    evil = str(script)

    sub_src = tmp_path / "sub-src"
    sub_src.mkdir()
    git(sub_src, "init", "-q")
    _setup_git(sub_src)
    (sub_src / "s.dat").write_text("s\n")
    (sub_src / ".gitattributes").write_text("*.dat filter=subfilter diff=subdiff\n")
    git(sub_src, "add", "-A")
    git(sub_src, "commit", "-qm", "sub")

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    _setup_git(root)
    (root / "a.dat").write_text("a\n")
    (root / "README.md").write_text("hello\n")
    (root / ".gitattributes").write_text("*.dat filter=evil diff=evil\n* filter=inc\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub_src), "sub")
    git(root, "config", "-f", ".gitmodules", "submodule.sub.ignore", "none")
    git(root, "add", ".gitmodules")
    git(root, "commit", "-qm", "two")

    for key in (
        "core.fsmonitor",
        "diff.external",
        "filter.evil.clean",
        "filter.evil.smudge",
        "filter.evil.process",
        "diff.evil.textconv",
        "diff.evil.command",
        "core.pager",
        "pager.diff",
        "core.hooksPath",
    ):
        git(root, "config", key, evil if key != "core.hooksPath" else str(tmp_path))
    (tmp_path / "post-index-change").write_text(f"#!/bin/sh\n{evil}\n")
    (tmp_path / "post-index-change").chmod(0o755)
    git(root, "config", "diff.submodule", "diff")
    git(root, "config", "status.submoduleSummary", "true")
    # A filter driver defined only in an included file.
    (tmp_path / "included.cfg").write_text(f'[filter "inc"]\n\tclean = {evil}\n\trequired = true\n')
    git(root, "config", "include.path", str(tmp_path / "included.cfg"))
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "attributes").write_text("README.md filter=infoattr\n")
    git(root, "config", "filter.infoattr.clean", evil)

    sub = root / "sub"
    for key in (
        "core.fsmonitor",
        "diff.external",
        "filter.subfilter.clean",
        "filter.subfilter.process",
        "diff.subdiff.textconv",
        "diff.subdiff.command",
    ):
        git(sub, "config", key, evil)

    # Changes in both, with stat data the index does not know.
    (root / "a.dat").write_text("a\nchanged\n")
    (root / "README.md").write_text("hello\nchanged\n")
    (sub / "s.dat").write_text("s\nchanged\n")
    return root, outside


def _hostile_really_runs(root: Path, outside: Path) -> None:
    """Plain git on the fixture runs the program: the tests below can fail."""
    done = subprocess.run(["git", "diff"], cwd=root, capture_output=True, text=True, check=False)
    assert RAN in done.stderr and (outside / "MARKER").exists()
    (outside / "MARKER").unlink()
    done = subprocess.run(
        ["git", "-C", "sub", "status"], cwd=root, capture_output=True, text=True, check=False
    )
    assert (outside / "MARKER").exists()
    (outside / "MARKER").unlink()


@pytest.mark.parametrize("mode", MODES)
async def test_no_repository_program_runs(hostile, mode):
    root, outside = hostile
    policy = bwrap.plan_exec_policy(PlanSettings(sandbox=mode), root)
    assert policy.label == ("sandboxed" if mode == "required" else "guarded")
    results = {c: await run(policy, root, c) for c in COMMANDS}
    for command, result in results.items():
        assert RAN not in result.content, (command, result.content)
        assert "exit code 0" in result.content, (command, result.content)
    assert not (outside / "MARKER").exists()
    assert "+changed" in results["git diff"].content
    assert "a.dat" in results["git diff --stat"].content
    assert "sub" in results["git status --ignore-submodules=none"].content
    assert "+changed" in results["git -C sub diff"].content
    _hostile_really_runs(root, outside)


def git_dir_state(root: Path) -> dict[str, str]:
    """sha256 of every file under .git (submodule git dirs included), and each file's mtime."""
    state = {}
    for path in sorted((root / ".git").rglob("*")):
        if path.is_file() and not path.is_symlink():
            stat = path.stat()
            state[str(path.relative_to(root))] = (
                f"{hashlib.sha256(path.read_bytes()).hexdigest()} {stat.st_mtime_ns}"
            )
    return state


def _stale_stat(root: Path) -> None:
    """Give tracked files new mtimes, so a stat refresh would rewrite the index."""
    for name in (
        "a.dat",
        "README.md",
        ".gitattributes",
        ".gitmodules",
        "sub/s.dat",
        "sub/.gitattributes",
    ):
        stamp = (root / name).stat().st_mtime - 3600
        os.utime(root / name, (stamp, stamp))


INDEX_COMMANDS = [
    "git diff",
    "git diff --stat",
    "git describe --dirty --always",
    "git status",
    "git diff --ignore-submodules=none",
    "git status --ignore-submodules=none",
]


@pytest.mark.parametrize("mode", MODES)
async def test_git_dir_is_byte_for_byte_unchanged(hostile, mode):
    root, _ = hostile
    policy = bwrap.plan_exec_policy(PlanSettings(sandbox=mode), root)
    for command in INDEX_COMMANDS:
        _stale_stat(root)
        before = git_dir_state(root)
        result = await run(policy, root, command)
        assert "exit code 0" in result.content, result.content
        assert git_dir_state(root) == before, command
    # The check can fail: plain git (even with GIT_OPTIONAL_LOCKS=0) rewrites the index.
    _stale_stat(root)
    before = git_dir_state(root)
    subprocess.run(
        [
            "git",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
            "--no-pager",
            "diff",
            "--no-ext-diff",
            "--stat",
        ],
        cwd=root,
        env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        capture_output=True,
        check=True,
    )
    assert git_dir_state(root) != before


def test_private_index_copies_are_removed(hostile):
    root, _ = hostile
    shim = git_shim_dir()
    assert shim is not None
    policy = bwrap.plan_exec_policy(PlanSettings(sandbox="off"), root)
    done = subprocess.run(
        ["bash", "-c", "git diff --stat && git status --short"],
        cwd=root,
        env=policy.environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert list((shim / "tmp").iterdir()) == []


def test_child_gits_go_through_the_shim(hostile):
    """git starts submodule gits through GIT_EXEC_PATH, which leads back to the shim."""
    root, _ = hostile
    shim = git_shim_dir()
    assert shim is not None
    policy = bwrap.plan_exec_policy(PlanSettings(sandbox="off"), root)
    env = policy.environment()
    assert env["GIT_EXEC_PATH"] == str(shim / "exec-path")
    assert (shim / "exec-path" / "git").resolve() == (shim / "git").resolve()
    log = root.parent / "trace"
    done = subprocess.run(
        ["bash", "-c", "git status --ignore-submodules=none"],
        cwd=root,
        env={**env, "GIT_TRACE": str(log)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [ln.split("trace: ", 1)[1] for ln in log.read_text().splitlines() if "trace: " in ln]
    child = next(
        i
        for i, ln in enumerate(lines)
        if ln.startswith("run_command: cd sub;") and ln.endswith("git status --porcelain=2")
    )
    # ... and in the child, the shim ran first: it read the submodule's filters, copied its index.
    assert lines[child + 1].startswith(
        "built-in: git config --null --name-only --get-regexp '^filter"
    )
    assert lines[child + 2] == "built-in: git rev-parse --path-format=absolute --git-path index"
    assert lines[child + 3] == "built-in: git status --porcelain=2"
