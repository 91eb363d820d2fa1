"""The environment plan-mode bash runs with: no secrets, fixed locale, clean PATH.

The end-to-end tests run ``printenv`` through the plan-mode gate and exec path,
with the real bubblewrap sandbox and without it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planshell.config import Settings
from planshell.llm.factory import KEY_VARS
from planshell.llm.scripted import Reply
from planshell.plan.gitsafe import git_shim_dir
from planshell.plan.planenv import clean_path, denied, is_secret_name, plan_environment, utf8_locale
from tests.test_plan_mode import make
from tests.test_sandbox import needs_bwrap

MODES = [
    pytest.param("required", marks=[needs_bwrap, pytest.mark.bwrap], id="sandboxed"),
    pytest.param("off", id="guarded"),
]

SECRETS = {
    "OPENAI_API_KEY": "sk-openai-secret-1",
    "ANTHROPIC_API_KEY": "sk-ant-secret-2",
    "GITHUB_TOKEN": "ghp_secret3",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-4",
    "PGPASSWORD": "pg-secret-5",
    "MYSQL_PWD": "mysql-secret-6",
    "SSH_AUTH_SOCK": "/run/user/0/agent-secret-7",
    "HTTPS_PROXY": "http://alice:proxy-secret-8@proxy.example:3128",
    "CORP_INTERNAL": "corp-secret-9",  # only hidden through plan.env_deny
}


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "openai_api_key", "HF_TOKEN", "CI_JOB_TOKEN", "DB_PASS", "MYSQL_PWD",
     "SIGNING_KEY", "NPM_CONFIG__AUTH", "SESSION_COOKIE", "PGPASSWORD", "MY_CREDENTIALS",
     "AWS_ACCESS_KEY_ID", "GPG_PASSPHRASE", "CLIENT_SECRET"],
)
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["PATH", "HOME", "PWD", "OLDPWD", "LANG", "TERM", "USER", "EDITOR", "KEYMAP"])
def test_ordinary_names_are_kept(name):
    assert not denied(name, "/usr/bin")


def test_provider_key_vars_are_denied_by_name():
    for name in KEY_VARS.values():
        assert denied(name, "x")


def test_values_with_a_url_password_are_denied():
    assert denied("ALL_PROXY", "socks5://bob:hunter2@127.0.0.1:1080")
    assert not denied("ALL_PROXY", "socks5://127.0.0.1:1080")
    assert not denied("HOMEPAGE", "https://example.com/a:b@c")  # '@' after the path is no userinfo


def test_env_deny_globs_are_case_insensitive():
    assert denied("CORP_INTERNAL", "x", ["corp_*"])
    assert denied("EXACT", "x", ["exact"])
    assert not denied("OTHER", "x", ["corp_*"])


def test_clean_path_drops_relative_empty_and_project_entries(tmp_path):
    root = tmp_path / "proj"
    (root / "bin").mkdir(parents=True)
    path = os.pathsep.join(["", "bin", ".", "/usr/bin", str(root / "bin"), "/usr/bin", str(root), "/bin"])
    assert clean_path(path, root) == ["/usr/bin", "/bin"]


def test_locale_exists_here():
    # C.UTF-8 ships with glibc >= 2.35 and Debian/Ubuntu; otherwise the fallback is C.
    assert utf8_locale() in ("C.UTF-8", "C.utf8", "C")
    env = plan_environment({"PATH": "/usr/bin", "LANG": "de_DE.UTF-8", "LANGUAGE": "de"}, Path("/nonexistent"))
    assert env.env["LC_ALL"] == utf8_locale() and "LANGUAGE" not in env.env


@pytest.mark.parametrize("mode", MODES)
async def test_secrets_are_not_visible_to_printenv(project, monkeypatch, mode):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PLANSHELL_TEST_VISIBLE", "still-here")
    inside = project / "tools"
    inside.mkdir()
    (inside / "ls").write_text("#!/bin/sh\necho REPO-LS-RAN\n")
    (inside / "ls").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join(["bin", "", str(inside), os.environ["PATH"]]))
    settings = Settings.model_validate({"plan": {"sandbox": mode, "env_deny": ["corp_*"]}})
    commands = ["printenv", "printenv PATH", "ls"]
    runtime, *_ = make(
        project, [Reply(calls=[("bash", {"command": c}) for c in commands]), Reply(text="ok")],
        settings=settings,
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("look")
    runtime.close()
    everything, path, listing = (m.content for m in runtime.agent.messages if m.role == "tool")
    for name, value in SECRETS.items():
        assert value not in everything, name
        assert f"{name}=" not in everything
    assert "PLANSHELL_TEST_VISIBLE=still-here" in everything
    assert f"LC_ALL={utf8_locale()}" in everything
    entries = path.splitlines()[0].split(os.pathsep)
    assert entries[0] == str(git_shim_dir())
    assert all(os.path.isabs(e) for e in entries) and str(inside) not in entries
    assert "REPO-LS-RAN" not in listing and "README.md" in listing
