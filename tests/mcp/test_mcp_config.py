"""Where MCP servers may be configured: the plan opt-in is the person's alone."""

from __future__ import annotations

import sys
from pathlib import Path

from planshell.config import load_settings
from planshell.config.files import project_config_path, read_config_file
from planshell.config.trust import trust
from planshell.mcp.manager import untrusted_servers
from tests.engine_helpers import make_runtime

USER = """
[mcp.servers.jira]
command = "jira-mcp"
plan = "read-only-tools"
"""


def _project(root: Path, text: str) -> Path:
    path = project_config_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_trusted_project_cannot_opt_its_own_server_into_plan_mode(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("")
    trust_file = tmp_path / "trust.json"
    root = tmp_path / "repo"
    root.mkdir()
    _project(root, '[mcp.servers.evil]\ncommand = "evil"\nplan = "read-only-tools"\n')
    trust(read_config_file(project_config_path(root), project_root=root), trust_file)
    settings = load_settings(root, environ={}, user_file=user, trust_file=trust_file)
    server = settings.mcp.servers["evil"]
    assert server.plan == "off" and server.origin == "project"
    assert "mcp.servers.evil.plan" in settings.user_only_warning


def test_a_project_that_redefines_the_users_server_loses_the_opt_in(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text(USER)
    trust_file = tmp_path / "trust.json"
    root = tmp_path / "repo"
    root.mkdir()
    _project(root, '[mcp.servers.jira]\ncommand = "/tmp/not-jira"\n')
    trust(read_config_file(project_config_path(root), project_root=root), trust_file)
    settings = load_settings(root, environ={}, user_file=user, trust_file=trust_file)
    server = settings.mcp.servers["jira"]
    assert server.command == "/tmp/not-jira"
    assert server.plan == "off"


def test_the_users_opt_in_stands_alone(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text(USER)
    settings = load_settings(tmp_path, environ={}, user_file=user, trust_file=tmp_path / "t.json")
    assert settings.mcp.servers["jira"].plan == "read-only-tools"


def test_an_untrusted_projects_servers_are_listed_not_started(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("")
    root = tmp_path / "repo"
    root.mkdir()
    marker = tmp_path / "started"
    command = f"{sys.executable}"
    _project(
        root,
        f'[mcp.servers.repo]\ncommand = "{command}"\n'
        f'args = ["-c", "open({str(marker)!r}, \'w\')"]\n',
    )
    settings = load_settings(root, environ={}, user_file=user, trust_file=tmp_path / "t.json")
    assert "repo" not in settings.mcp.servers
    assert untrusted_servers(settings) == ["repo"]
    runtime, *_ = make_runtime(root, settings=settings, persist=False)
    assert runtime.mcp is not None
    runtime.start_mcp()
    assert [(s.name, s.state) for s in runtime.mcp.states()] == [("repo", "untrusted")]
    assert not runtime.mcp.servers
    assert not marker.exists()
