"""Plan-mode bash in the bubblewrap sandbox, the git shim, and plan.sandbox modes.

The kernel tests need a working bubblewrap and skip (saying why) without one.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
from pathlib import Path

import pytest

from planshell.config import PlanSettings, Settings
from planshell.llm.scripted import Reply
from planshell.plan.controller import Mode
from planshell.sandbox import bwrap
from planshell.sandbox.gitsafe import git_shim_dir, plan_git_env
from planshell.tools.base import ExecPolicy
from tests.engine_helpers import HANG_GUARD, make_runtime
from tests.sandbox_helpers import git, needs_bwrap, needs_git, run, sandboxed


def tree_state(root: Path) -> dict[str, bytes]:
    """Every file under root (including .git) with its contents."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


# --- the kernel sandbox -----------------------------------------------------------


@needs_bwrap
@pytest.mark.bwrap
@pytest.mark.parametrize(
    "command",
    [
        "touch x",
        "echo hi > x",
        "rm README.md",
        "git commit --allow-empty -m x",
        "python3 -c \"open('x','w')\"",
    ],
)
async def test_writes_fail_read_only(repo, command):
    before = tree_state(repo)
    head = git(repo, "rev-parse", "HEAD")
    result = await run(sandboxed(repo), repo, command)
    assert result.is_error, result.content
    assert "Read-only file system" in result.content
    assert tree_state(repo) == before
    assert git(repo, "rev-parse", "HEAD") == head


@needs_bwrap
@pytest.mark.bwrap
async def test_tmp_is_private_and_vanishes(repo):
    name = f"planshell-sandbox-{os.getpid()}"
    result = await run(
        sandboxed(repo), repo, f"echo inside > /tmp/{name} && cat /tmp/{name} && echo $TMPDIR"
    )
    assert not result.is_error, result.content
    assert result.content.splitlines()[:2] == ["inside", "/tmp"]
    assert not Path("/tmp", name).exists()


@needs_bwrap
@pytest.mark.bwrap
async def test_network_is_unreachable(repo):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(5)
        port = listener.getsockname()[1]
        probe = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('connected')\""
        outside = await run(ExecPolicy(), repo, probe)
        assert "connected" in outside.content
        listener.accept()[0].close()
        inside = await run(sandboxed(repo), repo, probe)
        assert inside.is_error and "connected" not in inside.content
        assert "Connection refused" in inside.content or "unreachable" in inside.content
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()


@needs_bwrap
@pytest.mark.bwrap
async def test_read_only_commands_match_outside(repo):
    (repo / "README.md").write_text("# Repo\n\nchanged\n")
    command = "ls -l && cat README.md && git log --oneline && git status --short && git diff"
    guarded = ExecPolicy(extra_env=plan_git_env())
    outside = await run(guarded, repo, command)
    inside = await run(sandboxed(repo), repo, command)
    assert not inside.is_error, inside.content
    assert inside.content == outside.content
    assert "+changed" in inside.content


def _pids_running(marker: str) -> list[int]:
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if cmdline.startswith("sleep ") and marker in cmdline and state not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids


async def _until(predicate, within: float = HANG_GUARD) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while loop.time() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return predicate()


@needs_bwrap
@pytest.mark.bwrap
async def test_cancel_kills_the_whole_sandbox(repo):
    marker = f"{4000 + os.getpid() % 1000}.5"  # a unique sleep length to find our processes
    policy = sandboxed(repo)
    assert "--new-session" in policy.wrap and "--unshare-pid" in policy.wrap
    task = asyncio.create_task(run(policy, repo, f"sleep {marker} & sleep {marker}; echo done"))
    assert await _until(lambda: len(_pids_running(marker)) == 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _until(lambda: not _pids_running(marker)), _pids_running(marker)
    # A background job outliving its command is stopped too.
    result = await run(policy, repo, f"sleep {marker} & echo started")
    assert result.content.startswith("started")
    assert await _until(lambda: not _pids_running(marker)), _pids_running(marker)


# --- a hostile repository -----------------------------------------------------------


@pytest.fixture
def hostile(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose config runs programs from "read-only" git commands."""
    evil = tmp_path / "evil"
    evil.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    script = evil / "run.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$0 $*" >> {repo}/MARKER-inside\n'
        f'echo "$0 $*" >> {outside}/MARKER-outside\n'
        "cat\n"
    )
    script.chmod(0o755)
    (repo / ".gitattributes").write_text("*.dat filter=evil diff=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")
    for key in ("core.fsmonitor", "diff.external", "filter.evil.clean", "diff.evil.textconv"):
        git(repo, "config", key, str(script))
    (repo / "README.md").write_text("# Repo\n\nhello\nchanged by the user\n")
    (repo / "b.dat").write_text("x\ny\n")
    return repo, outside


def markers(repo: Path, outside: Path) -> list[Path]:
    return [*repo.glob("MARKER-*"), *outside.glob("MARKER-*")]


@needs_git
@pytest.mark.parametrize(
    "mode",
    [
        pytest.param("required", marks=[needs_bwrap, pytest.mark.bwrap], id="sandboxed"),
        pytest.param("off", id="guarded"),
    ],
)
async def test_hostile_repo_runs_nothing(hostile, mode):
    repo, outside = hostile
    commands = [
        "git status",
        "git diff",
        "git --no-pager -C . diff b.dat",
        "git log -p -1",
        "git blame b.dat",
    ]
    runtime, *_ = make_runtime(
        repo,
        [Reply(calls=[("bash", {"command": c}) for c in commands]), Reply(text="ok")],
        settings=Settings.model_validate({"plan": {"sandbox": mode}}),
    )
    runtime.plan.enter_plan()
    assert runtime.agent.ctx.exec_policy.label == ("sandboxed" if mode == "required" else "guarded")
    await runtime.agent.submit("look around")
    results = [m for m in runtime.agent.messages if m.role == "tool"]
    assert [r.is_error for r in results] == [False] * len(commands), [r.content for r in results]
    status, diff, dat_diff = (r.content for r in results[:3])
    assert "README.md" in status and "b.dat" in status
    assert "+changed by the user" in diff and "diff --git a/README.md b/README.md" in diff
    assert "+y" in dat_diff
    assert markers(repo, outside) == []
    receipt = runtime.plan.receipt()
    assert receipt is not None and receipt.clean, receipt
    runtime.close()
    # The fixture is really hostile: plain git runs the configured program.
    git(repo, "diff")
    assert markers(repo, outside)


@needs_git
def test_shim_inserts_the_flags(tmp_path, repo):
    shim = git_shim_dir()
    assert shim is not None
    text = (shim / "git").read_text()
    real = subprocess.run(
        ["bash", "-c", "command -v git"],
        capture_output=True,
        text=True,
        env={**os.environ, **plan_git_env()},
        check=True,
    ).stdout.strip()
    assert real == str(shim / "git")
    assert (
        'diff|log|show|whatchanged|diff-tree|diff-files|diff-index) set -- "$sub" --no-ext-diff --no-textconv'
        in text
    )
    # The shim passes the global options through: -C selects the repository.
    out = subprocess.run(
        [str(shim / "git"), "--no-pager", "-C", str(repo), "log", "--oneline"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, **plan_git_env()},
    )
    assert out.returncode == 0 and "init" in out.stdout


# --- plan.sandbox modes and the lazy probe ----------------------------------------------


async def test_required_without_bwrap_refuses(project, monkeypatch):
    monkeypatch.setattr(bwrap, "find_bwrap", lambda: None)
    runtime, *_ = make_runtime(
        project,
        [Reply(calls=[("bash", {"command": "cat README.md"})]), Reply(text="ok")],
        settings=Settings.model_validate({"plan": {"sandbox": "required"}}),
    )
    runtime.plan.enter_plan()
    policy = runtime.agent.ctx.exec_policy
    assert policy.label == "refused" and policy.refusal
    await runtime.agent.submit("read")
    result = next(m for m in runtime.agent.messages if m.role == "tool")
    assert result.is_error
    assert 'requires the bubblewrap sandbox (plan.sandbox = "required")' in result.content
    assert "not installed" in result.content and "apt install bubblewrap" in result.content
    assert "Widget Service" not in result.content  # nothing ran
    table = runtime.plan.capabilities()
    assert "refused" in table and "apt install bubblewrap" in table
    runtime.plan.leave()
    assert runtime.agent.ctx.exec_policy.refusal is None  # OFF is unchanged


def test_auto_without_bwrap_is_guarded(project, monkeypatch):
    monkeypatch.setattr(bwrap, "find_bwrap", lambda: None)
    policy = bwrap.plan_exec_policy(PlanSettings(sandbox="auto"), project)
    assert policy.label == "guarded" and policy.wrap == [] and policy.refusal is None
    assert policy.status is not None and "apt install bubblewrap" in policy.status.how
    assert "GIT_CONFIG_COUNT" in policy.extra_env


def test_off_never_sandboxes(project, monkeypatch):
    monkeypatch.setattr(bwrap, "find_bwrap", lambda: pytest.fail("probed with sandbox off"))
    policy = bwrap.plan_exec_policy(PlanSettings(sandbox="off"), project)
    assert policy.label == "guarded" and policy.wrap == []


def test_probe_is_lazy_and_once(project, monkeypatch):
    calls: list[int] = []

    def fake_find() -> None:
        calls.append(1)

    monkeypatch.setattr(bwrap, "find_bwrap", fake_find)
    runtime, *_ = make_runtime(project)
    assert calls == []  # start-up does not probe
    runtime.plan.enter_plan()
    assert calls == [1] and runtime.plan.mode is Mode.PLAN
    runtime.plan.leave()
    assert (
        runtime.agent.ctx.exec_policy.wrap == [] and runtime.agent.ctx.exec_policy.extra_env == {}
    )
    runtime.plan.enter_plan()
    assert calls == [1]


@needs_bwrap
@pytest.mark.bwrap
def test_sandbox_binds_project_under_tmp(repo):
    policy = sandboxed(repo)
    wrap = policy.wrap
    assert wrap[:3] == [wrap[0], "--ro-bind", "/"] and wrap[-3:] == [
        "--chdir",
        str(repo.resolve()),
        "--",
    ]
    binds = [wrap[i + 1] for i, a in enumerate(wrap) if a == "--ro-bind" and wrap[i + 1] != "/"]
    if repo.resolve().is_relative_to("/tmp"):
        assert str(repo.resolve()) in binds
    assert policy.extra_env["TMPDIR"] == "/tmp"


@pytest.mark.parametrize(("mode", "state"), [("auto", "guarded"), ("required", "refused")])
def test_bwrap_that_cannot_start(tmp_path, monkeypatch, mode, state):
    """A bwrap that fails its probe (e.g. user namespaces disabled) is not used."""
    fake = tmp_path / f"bwrap-{mode}"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(bwrap, "find_bwrap", lambda: str(fake))
    policy = bwrap.plan_exec_policy(PlanSettings(sandbox=mode), tmp_path)
    assert policy.label == state and policy.wrap == []
    assert (
        policy.status is not None
        and "setting up uid map: Permission denied" in policy.status.reason
    )
    assert (policy.refusal is not None) is (mode == "required")
