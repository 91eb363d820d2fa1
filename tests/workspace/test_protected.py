"""Protected paths and no new ``.git`` in the project (issue 21.3, 22.2).

An attacker's aim here is a command that *the user* runs later, outside any
sandbox: a ``core.fsmonitor`` in some ``.git/config`` runs on the next plain
``git status``. So the tests end the way the attack would: a real ``git
status`` in the project, and the marker file the fsmonitor would touch must
not exist. Everything runs through the real runtime (gate, bash tool, file
tools, the workspace sandbox when bubblewrap works), with real git.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from planshell.agent import events as ev
from planshell.config import Settings, user_config_path
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.plan.decider import ApprovalChoice, ApprovalDecision, HeadlessDecider
from planshell.runtime import Runtime, build_runtime
from planshell.sandbox.bwrap import bwrap_command
from planshell.workspace.protected import creates_repository, protection, readonly_binds
from tests.engine_helpers import Recorder, ScriptedDecider
from tests.sandbox_helpers import needs_bwrap

YES = ApprovalDecision(ApprovalChoice.ONCE)


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


@pytest.fixture
def repo(project: Path) -> Path:
    assert _git(project, "init", "-q").returncode == 0
    return project


def _runtime(
    root: Path, calls: list[tuple[str, dict[str, object]]], mode: str, decider: object | None = None
) -> tuple[Runtime, Recorder]:
    settings = Settings()
    settings.permissions.mode = mode  # type: ignore[assignment]
    replies = [Reply(calls=[call]) for call in calls] + [Reply("done")]
    runtime = build_runtime(
        settings,
        root,
        decider or ScriptedDecider(),
        provider=ScriptedProvider(replies),  # type: ignore[arg-type]
        persist=False,
    )
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    return runtime, recorder


def _results(runtime: Runtime) -> list[str]:
    return [m.content for m in runtime.agent.messages if m.role == "tool"]


def _user_git_status_runs_nothing(where: Path, marker: Path) -> None:
    """What the user would do next: a plain ``git status``; the planted fsmonitor must not run."""
    _git(where, "status")
    assert not marker.exists(), f"git status in {where} ran the planted command"


def _plant(marker: Path) -> str:
    return f"touch {marker}; exit 1"


# --- the rule ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "kind"),
    [
        (".git/config", "git-config"),
        (".GIT/config", "git-config"),  # a case-insensitive file system sees .git
        (".git/hooks/post-checkout", "git-hook"),
        (".git/refs/heads/main", "git-dir"),
        ("vendor/x/.git/config", "git-config"),
        ("vendor/x/.git", "git-entry"),
        ("src/../.git/config", "git-config"),
        (".gitmodules", "gitmodules"),
        ("sub/.GitModules", "gitmodules"),
        (".planshell/config.toml", "planshell"),
        (".PlanShell/config.toml", "planshell"),
    ],
)
def test_the_rule_by_name(repo: Path, rel: str, kind: str) -> None:
    found = protection(repo, (repo / rel).resolve(), rel)
    assert found is not None and found.kind == kind


def test_plans_and_ordinary_files_are_not_protected(repo: Path) -> None:
    for rel in (".planshell/plans/p.md", "src/app/server.py", "git/config", "x.git/config"):
        assert protection(repo, (repo / rel).resolve(), rel) is None, rel


def test_symlinks_and_gitdir_targets_are_followed(repo: Path) -> None:
    (repo / "link").symlink_to(".git")
    assert protection(repo, (repo / "link/config").resolve(), "link/config") is not None
    # A submodule-style pointer to a git directory under another name: judged as git does.
    evil = repo / "evilgit"
    assert _git(repo, "init", "-q", "--bare", str(evil)).returncode == 0
    assert protection(repo, (evil / "config").resolve(), "evilgit/config") is not None
    assert protection(repo, (evil / "hooks/x").resolve(), "evilgit/hooks/x").kind == "git-hook"  # type: ignore[union-attr]


def test_the_user_config_folder_is_protected(repo: Path) -> None:
    target = user_config_path()
    assert protection(repo, target, str(target)) is not None
    assert protection(repo, target.parent / "trusted-projects.json", None) is not None


@pytest.mark.parametrize(
    ("command", "creates"),
    [
        ("git init nested", "git init"),
        ("git -C vendor -c core.x=1 clone https://x/y", "git clone"),
        ("env A=1 nice -n 5 git init x", "git init"),
        ("timeout 5 git submodule update --init", "git submodule update"),
        ("git submodule --quiet add ../x sub", "git submodule add"),
        ("git worktree add ../wt", "git worktree add"),
        ("/usr/bin/git init-db", "git init-db"),
        ("git status", None),
        ("git submodule status", None),
        ("git commit -m init", None),
        ("echo git init", None),
    ],
)
def test_commands_that_create_repositories(command: str, creates: str | None) -> None:
    from planshell.shell.segments import split_command

    words = split_command(command).segments[0].words
    assert creates_repository(words) == creates


# --- file tools -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["accept-edits", "auto"])
async def test_accept_edits_and_auto_never_write_git_config(repo: Path, mode: str) -> None:
    """The reported attack: edit .git/config and write a hook without asking (headless: denied)."""
    marker = repo.parent / "fsmonitor-ran"
    config = repo / ".git" / "config"
    before = config.read_text()
    runtime, recorder = _runtime(
        repo,
        [
            (
                "edit",
                {
                    "path": ".git/config",
                    "old_string": "[core]",
                    "new_string": f'[core]\n\tfsmonitor = "{_plant(marker)}"',
                },
            ),
            (
                "write",
                {"path": ".GIT/hooks/post-checkout", "content": f"#!/bin/sh\ntouch {marker}\n"},
            ),
            (
                "edit",
                {"path": "src/../.git/config", "old_string": "[core]", "new_string": "[core]\n"},
            ),
        ],
        mode,
        HeadlessDecider(),
    )
    await runtime.agent.submit("go")
    assert config.read_text() == before
    assert not (repo / ".git/hooks/post-checkout").exists()
    results = _results(runtime)
    assert len(results) == 3
    assert all(r.startswith("Not run:") for r in results), results
    assert "can make git run commands" in results[0] and "core.fsmonitor" in results[0]
    assert "git hook" in results[1]
    assert any("core.fsmonitor" in n.message for n in recorder.of(ev.Notice))
    _user_git_status_runs_nothing(repo, marker)


async def test_ask_mode_asks_with_the_warning_and_offers_no_rule(repo: Path) -> None:
    decider = ScriptedDecider(approvals=[YES, YES])
    runtime, _ = _runtime(
        repo,
        [
            (
                "edit",
                {"path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tx = 1"},
            ),
            ("edit", {"path": "README.md", "old_string": "Run it.", "new_string": "Run it now."}),
        ],
        "ask",
        decider,
    )
    await runtime.agent.submit("go")
    protected, ordinary = decider.approval_requests
    assert "can make git run commands (core.fsmonitor" in protected.warning
    assert protected.session_rules == () and protected.project_rules == ()
    assert ordinary.warning == "" and ordinary.session_rules == ("edit",)
    # The person said yes after the warning: the change stays (the watch reports, keeps it).
    assert "x = 1" in (repo / ".git/config").read_text()
    assert "you approved" in _results(runtime)[0]


async def test_a_dot_git_file_made_by_the_write_tool_does_not_survive(
    repo: Path, tmp_path: Path
) -> None:
    """Past the gate (a case the rule did not know): the watch moves the new pointer aside."""
    marker = tmp_path / "fsmonitor-ran"
    evil = repo / "evilgit"
    assert _git(repo, "init", "-q", "--bare", str(evil)).returncode == 0
    _git(evil, "config", "core.fsmonitor", _plant(marker))
    calls = [("write", {"path": "vendor/.git", "content": "gitdir: ../evilgit\n"})]
    runtime, recorder = _runtime(repo, calls, "auto")
    assert runtime.permissions is not None
    runtime.agent.gates.remove(runtime.permissions.gate)  # as if the rule had missed this path
    await runtime.agent.submit("go")
    assert not os.path.lexists(repo / "vendor/.git")
    result = _results(runtime)[0]
    assert "new .git file vendor/.git: moved to" in result
    assert any("vendor/.git" in n.message for n in recorder.of(ev.Notice))
    _user_git_status_runs_nothing(repo / "vendor", marker)


# --- bash -------------------------------------------------------------------------------


async def test_nested_git_init_in_auto_mode_is_moved_aside(repo: Path, tmp_path: Path) -> None:
    """A script hides git init from the classifier; the watch still moves the repository aside."""
    marker = tmp_path / "fsmonitor-ran"
    (repo / "mk.sh").write_text(
        f'git init -q nested && git -C nested config core.fsmonitor "{_plant(marker)}"\n'
    )
    runtime, recorder = _runtime(repo, [("bash", {"command": "sh mk.sh"})], "auto")
    await runtime.agent.submit("go")
    assert (repo / "nested").is_dir() and not os.path.lexists(repo / "nested/.git")
    result = _results(runtime)[0]
    assert "new git repository nested/.git: moved to" in result and "undid" in result
    notices = [n.message for n in recorder.of(ev.Notice) if "nested/.git" in n.message]
    assert notices
    moved = Path(result.split("moved to ")[1].split()[0])
    assert (moved / "config").is_file() and "quarantine" in moved.parts
    _user_git_status_runs_nothing(repo / "nested", marker)
    _user_git_status_runs_nothing(repo, marker)


async def test_a_rewritten_submodule_pointer_is_restored(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "fsmonitor-ran"
    sub = repo / "sub"
    sub.mkdir()
    pointer_dir = repo / ".git" / "modules" / "sub"
    pointer_dir.parent.mkdir()
    assert (
        _git(repo, "init", "-q", "--separate-git-dir", str(pointer_dir), str(sub)).returncode == 0
    )
    pointer = (sub / ".git").read_text()
    # A repository the attacker built earlier (not named .git, so no scan finds it) ...
    assert _git(repo, "init", "-q", "--bare", "evilgit").returncode == 0
    _git(repo / "evilgit", "config", "core.fsmonitor", _plant(marker))
    command = "printf 'gitdir: ../evilgit\\n' > sub/.git"  # ... and the pointer moved onto it
    # Outside the sandbox (auto runs sandbox=false unasked), where no bind protects the pointer.
    runtime, _ = _runtime(repo, [("bash", {"command": command, "sandbox": False})], "auto")
    await runtime.agent.submit("go")
    assert (sub / ".git").read_text() == pointer
    assert "changed .git pointer sub/.git: restored" in _results(runtime)[0]
    _user_git_status_runs_nothing(sub, marker)


@pytest.mark.parametrize("mode", ["auto", "accept-edits", "ask"])
@pytest.mark.parametrize(
    "command",
    [
        "git init -q nested",
        "bash -c 'git init -q nested'",
        "env -i git init -q nested",
        "true && {git,init,-q,nested}",
        "echo nested | xargs git init -q",
        'sh -c "timeout 5 git -C . init -q nested"',
    ],
)
async def test_creating_a_repository_asks_in_every_mode(
    repo: Path, mode: str, command: str
) -> None:
    decider = ScriptedDecider(approvals=[ApprovalDecision(ApprovalChoice.DENY, "no")])
    runtime, _ = _runtime(repo, [("bash", {"command": command})], mode, decider)
    await runtime.agent.submit("go")
    (request,) = decider.approval_requests
    assert "creates a git repository" in request.why and "core.fsmonitor" in request.warning
    assert request.session_rules == () and request.project_rules == ()
    assert not (repo / "nested").exists()


async def test_an_approved_git_init_keeps_its_repository(repo: Path) -> None:
    decider = ScriptedDecider(approvals=[YES])
    runtime, _ = _runtime(repo, [("bash", {"command": "git init -q nested"})], "auto", decider)
    await runtime.agent.submit("go")
    assert (repo / "nested/.git").is_dir()
    assert "kept: nested/.git created (you approved it)" in _results(runtime)[0]


async def test_headless_denies_git_clone_and_says_why(repo: Path) -> None:
    runtime, _ = _runtime(
        repo, [("bash", {"command": "git clone ../x y"})], "auto", HeadlessDecider()
    )
    await runtime.agent.submit("go")
    result = _results(runtime)[0]
    assert result.startswith("Not run:") and "creates a git repository" in result


async def test_planshell_settings_changed_by_bash_are_restored(repo: Path) -> None:
    config = repo / ".planshell" / "config.toml"
    config.parent.mkdir()
    config.write_text('[permissions]\ndeny = ["bash(git push *)"]\n')
    (repo / ".planshell/plans").mkdir()
    command = (
        "bash -c \"echo '' > .planshell/config.toml; echo x > .planshell/extra.toml; "
        'echo plan > .planshell/plans/p.md"'
    )
    # Outside the sandbox (which binds .planshell read-only): the watch undoes it.
    runtime, _ = _runtime(repo, [("bash", {"command": command, "sandbox": False})], "auto")
    await runtime.agent.submit("go")
    assert config.read_text() == '[permissions]\ndeny = ["bash(git push *)"]\n'
    assert not (repo / ".planshell/extra.toml").exists()
    assert (repo / ".planshell/plans/p.md").read_text() == "plan\n"  # the plans are the agent's
    result = _results(runtime)[0]
    assert "changed .planshell/config.toml: restored" in result
    assert "new file .planshell/extra.toml: moved to" in result


async def test_a_command_that_changes_nothing_says_nothing(repo: Path) -> None:
    runtime, recorder = _runtime(repo, [("bash", {"command": "echo hi > out.txt"})], "auto")
    await runtime.agent.submit("go")
    assert "[planshell]" not in _results(runtime)[0]
    assert not [n for n in recorder.of(ev.Notice) if "[planshell]" in n.message]


def test_node_modules_is_not_skipped(repo: Path) -> None:
    """Deep folders count: a second scan sees a .git made deep inside node_modules."""
    from planshell.workspace.gitwatch import ProjectWatch

    deep = repo / "node_modules" / "a" / "b"
    deep.mkdir(parents=True)
    watch = ProjectWatch(repo, quarantine_dir=lambda: repo.parent / "q")
    before = watch.state()
    assert _git(deep, "init", "-q").returncode == 0
    lines = watch.settle(before, watch.state(before.gitdirs), "")
    assert any("node_modules/a/b/.git" in line for line in lines)
    assert not (deep / ".git").exists()


# --- the workspace sandbox ----------------------------------------------------------------


def test_nested_repositories_are_bound_read_only(repo: Path) -> None:
    nested = repo / "vendor" / "x"
    nested.mkdir(parents=True)
    assert _git(nested, "init", "-q").returncode == 0
    (repo / ".gitmodules").write_text("")
    binds = readonly_binds(repo)
    assert {repo / ".git", nested / ".git", repo / ".gitmodules"} <= set(binds)
    argv = bwrap_command("bwrap", repo, writable=True)
    assert str(nested / ".git") in argv


@needs_bwrap
async def test_in_the_sandbox_a_nested_repository_cannot_be_changed(repo: Path) -> None:
    nested = repo / "vendor" / "x"
    nested.mkdir(parents=True)
    assert _git(nested, "init", "-q").returncode == 0
    config = (nested / ".git/config").read_text()
    runtime, _ = _runtime(
        repo, [("bash", {"command": "git -C vendor/x config core.fsmonitor 'touch m'"})], "auto"
    )
    await runtime.agent.submit("go")
    result = _results(runtime)[0]
    assert "exit code 0" not in result, result
    assert (nested / ".git/config").read_text() == config


async def test_a_cancelled_command_is_checked_too(repo: Path) -> None:
    """The turn is cancelled while the command still runs: what it made is moved aside anyway."""
    import asyncio

    from tests.engine_helpers import finishes, wait_for

    (repo / "late.sh").write_text("git init -q late && sleep 60\n")  # hidden from the classifier
    runtime, recorder = _runtime(repo, [("bash", {"command": "sh late.sh"})], "auto")
    turn = asyncio.ensure_future(runtime.agent.submit("go"))
    await wait_for(lambda: (repo / "late" / ".git" / "HEAD").exists())
    runtime.agent.cancel()
    await finishes(turn, "the cancelled turn")
    assert not os.path.lexists(repo / "late" / ".git")
    assert any("late/.git" in n.message for n in recorder.of(ev.Notice))
