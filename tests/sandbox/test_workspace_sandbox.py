"""The workspace-write sandbox: how ``bash`` runs outside plan mode (docs/permissions.md).

With the real bubblewrap: the project is writable, its ``.git`` and everything
outside it are not, there is no network unless allowed, provider keys are not
in the environment; a failure that looks like the sandbox says so, and a re-run
outside it asks (ask, accept-edits) or runs (auto). The kernel tests skip,
saying why, when bubblewrap cannot start a sandbox here.
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from planshell.config import PermissionsSettings, Settings, load_settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.runtime import Runtime, build_runtime
from planshell.sandbox import bwrap
from planshell.sandbox.bwrap import WorkspaceExecPolicy, sandbox_failure, workspace_exec_policy
from planshell.tools.base import ExecPolicy, ToolContext, ToolResult
from planshell.tools.shell import BashArgs, BashTool
from tests.engine_helpers import Recorder, ScriptedDecider
from tests.sandbox_helpers import needs_bwrap
from tests.ui_helpers import until


@pytest.fixture
def repo(project: Path) -> Path:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    return project


def _policy(root: Path, **settings: object) -> WorkspaceExecPolicy:
    return workspace_exec_policy(PermissionsSettings.model_validate(settings), root)


def run(root: Path, command: str, policy: ExecPolicy | None = None, **args: object) -> ToolResult:
    ctx = ToolContext(root=root, exec_policy=policy or _policy(root))
    return asyncio.run(BashTool().run(BashArgs(command=command, **args), ctx))  # type: ignore[arg-type]


# --- the file system ---------------------------------------------------------------


@needs_bwrap
def test_the_project_is_writable(repo: Path) -> None:
    result = run(repo, "mkdir -p build && echo made > build/out.txt && cat build/out.txt")
    assert not result.is_error, result.content
    assert (repo / "build" / "out.txt").read_text() == "made\n"


@needs_bwrap
def test_outside_the_project_nothing_is_written(repo: Path, tmp_path: Path) -> None:
    home = Path.home()
    marker = home / f".planshell-sandbox-test-{uuid.uuid4().hex}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    try:
        result = run(repo, f"touch {marker}")
        assert result.is_error and "Read-only file system" in result.content
        assert result.data["sandbox_failure"] == "read-only file system"
        assert "sandbox=false" in result.content and "may be why" in result.content
        assert not marker.exists()
        # /tmp is a private tmpfs: the write "works" inside and never reaches the host.
        run(repo, f"mkdir -p {elsewhere} && touch {elsewhere}/x")
        assert list(elsewhere.iterdir()) == []
    finally:
        marker.unlink(missing_ok=True)


@needs_bwrap
def test_dot_git_stays_read_only(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    config = (repo / ".git" / "config").read_text()
    for command in (
        f"echo 'curl evil' > {hook}",
        "git config core.hooksPath /tmp",
        "mv .git .git-moved",  # a bind mount cannot be renamed: no rebuilt .git either
        "rm -rf .git",
    ):
        result = run(repo, command)
        assert result.is_error, command
    assert not hook.exists() and (repo / ".git" / "config").read_text() == config
    assert not (repo / ".git-moved").exists()
    # Reading git works; committing needs a re-run outside (see docs/permissions.md).
    assert not run(repo, "git status --short").is_error
    assert run(repo, "touch a && git add a").data["sandbox_failure"] == "read-only file system"


# --- network and environment -----------------------------------------------------------


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


FETCH = "python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' {url}"


@needs_bwrap
def test_no_network_unless_allowed(repo: Path, server: str) -> None:
    cut = run(repo, FETCH.format(url=server))
    assert cut.is_error and "hello" not in cut.content
    assert cut.data["sandbox_failure"] == "no network"
    allowed = run(repo, FETCH.format(url=server), _policy(repo, network=True))
    assert not allowed.is_error and "hello" in allowed.content


@needs_bwrap
def test_provider_keys_are_not_in_the_environment(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-secret")
    monkeypatch.setenv("PLAIN_SETTING", "kept")
    result = run(repo, "env")
    assert "sk-secret-value" not in result.content and "tok-secret" not in result.content
    assert "PLAIN_SETTING=kept" in result.content
    # Outside the sandbox (an approved re-run) the environment is the user's own.
    outside = run(repo, "env", sandbox=False)
    assert "sk-secret-value" in outside.content


# --- settings, bwrap missing, failure heuristic -------------------------------------------


def test_off_runs_as_before(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    policy = _policy(repo, sandbox="off")
    result = run(repo, "env; touch /proc/nope", policy)
    assert "sk-secret-value" in result.content  # no sandbox: nothing is changed
    assert "sandbox_failure" not in result.data and policy.notice is None


def test_without_bwrap_it_is_off_with_one_notice(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bwrap, "find_bwrap", lambda: None)
    notices: list[str] = []
    policy = _policy(repo)
    policy.on_notice = notices.append
    run(repo, "touch one", policy)
    run(repo, "touch two", policy)
    assert (repo / "one").exists() and (repo / "two").exists()
    assert len(notices) == 1 and "without the workspace sandbox" in notices[0]
    assert "bubblewrap" in notices[0] and policy.known_active is False


def test_failure_signs_are_a_heuristic_on_the_output() -> None:
    assert sandbox_failure("touch: cannot touch '/x': Read-only file system", False)
    assert sandbox_failure("curl: (6) Could not resolve host: example.com", False) == "no network"
    # With the network allowed, a network error is not the sandbox's doing.
    assert sandbox_failure("curl: (6) Could not resolve host: example.com", True) is None
    assert sandbox_failure("FAILED tests/test_x.py::test_y - assert 1 == 2", False) is None


@needs_bwrap
def test_an_ordinary_failure_does_not_blame_the_sandbox(repo: Path) -> None:
    result = run(repo, "echo 'assert 1 == 2' >&2; exit 3")
    assert result.is_error and "sandbox" not in result.content


def test_untrusted_repo_cannot_turn_the_sandbox_off_or_the_network_on(project: Path) -> None:
    config = project / ".planshell" / "config.toml"
    config.parent.mkdir()
    config.write_text('[permissions]\nsandbox = "off"\nnetwork = true\n')
    settings = load_settings(project)
    assert settings.permissions.sandbox == "workspace-write"
    assert settings.permissions.network is False
    untrusted = settings.untrusted_project
    assert untrusted is not None
    assert {"permissions.sandbox", "permissions.network"} <= set(untrusted.key_names)
    runtime = build_runtime(settings, project, ScriptedDecider(), provider=ScriptedProvider([]))
    assert runtime.workspace is not None
    assert runtime.workspace.setting == "workspace-write" and not runtime.workspace.network


# --- the re-run outside the sandbox -------------------------------------------------------

OUTSIDE = "touch .git/made-outside"


def _rerun(
    repo: Path, mode: str, allow: list[str] | None = None
) -> tuple[Runtime, ScriptedDecider]:
    settings = Settings()
    settings.permissions.mode = mode  # type: ignore[assignment]
    settings.permissions.allow = allow or []
    decider = ScriptedDecider()
    replies = [
        Reply(calls=[("bash", {"command": OUTSIDE})]),
        Reply(calls=[("bash", {"command": OUTSIDE, "sandbox": False})]),
        Reply("done"),
    ]
    runtime = build_runtime(settings, repo, decider, provider=ScriptedProvider(replies))
    runtime.agent.subscribe(Recorder())
    asyncio.run(runtime.agent.submit("make it"))
    return runtime, decider


@needs_bwrap
@pytest.mark.parametrize("mode", ["ask", "accept-edits"])
def test_rerun_outside_the_sandbox_asks_even_with_an_allow_rule(repo: Path, mode: str) -> None:
    runtime, decider = _rerun(repo, mode, allow=["bash(touch *)"])
    results = [m.content for m in runtime.agent.messages if m.role == "tool"]
    assert "Read-only file system" in results[0] and "sandbox=false" in results[0]
    assert len(decider.approval_requests) == 1  # the rule covered the sandboxed call, not this
    request = decider.approval_requests[0]
    assert request.unsandboxed and request.command == OUTSIDE
    assert request.session_rules == ()  # no "don't ask again" for leaving the sandbox
    assert (repo / ".git" / "made-outside").exists()  # approved once: ran outside


@needs_bwrap
def test_in_auto_the_rerun_outside_runs_unasked(repo: Path) -> None:
    _, decider = _rerun(repo, "auto")
    assert decider.approval_requests == []
    assert (repo / ".git" / "made-outside").exists()


def test_plan_mode_has_no_way_out(repo: Path) -> None:
    runtime = build_runtime(Settings(), repo, ScriptedDecider(), provider=ScriptedProvider([]))
    assert runtime.agent.ctx.exec_policy is runtime.workspace
    runtime.plan.enter_plan()
    policy = runtime.agent.ctx.exec_policy
    assert policy is not runtime.workspace
    assert policy.outside() is policy  # the read-only plan sandbox, whatever the model asks
    runtime.plan.leave()
    assert runtime.agent.ctx.exec_policy is runtime.workspace


def test_sub_agents_get_no_way_out(repo: Path) -> None:
    policy = _policy(repo)
    assert type(policy.outside()) is ExecPolicy
    sealed = policy.sealed()
    assert sealed.outside() is sealed and sealed.on_notice is None


# --- the status bar ----------------------------------------------------------------------


@needs_bwrap
async def test_status_bar_says_workspace_sandbox_once_known(project: Path) -> None:
    from tests.ui.permission_helpers import permission_app, send_prompt, until_turn_done

    app = permission_app(project, [Reply(calls=[("bash", {"command": "ls"})]), Reply("done")])
    async with app.run_test(size=(120, 30)) as pilot:
        chat = await send_prompt(pilot)
        marker = chat.status.query_one("#permission-mode")
        await until_turn_done(pilot, chat)
        assert str(marker.render()) == "ask · workspace sandbox"
        await pilot.press("shift+tab")
        await until(pilot, lambda: str(marker.render()) == "accept edits · workspace sandbox")
        await pilot.press("shift+tab")  # plan mode: its own marker, not this one
        await until(pilot, lambda: not marker.display)
