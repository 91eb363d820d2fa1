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
from planshell.sandbox.env import clean_path, denied, is_secret_name, plan_environment, utf8_locale
from planshell.sandbox.gitsafe import git_shim_dir
from tests.engine_helpers import make_runtime
from tests.paths import REPO
from tests.sandbox_helpers import needs_bwrap

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
    "GITHUB_PAT": "github_pat_secret10",
    "SENTRY_DSN": "https://sentrykey11@o1.ingest.sentry.io/1",
    "UPLOAD_URL": "https://uploadkey12@uploads.example/v1",  # caught by its value only
    "HTTP_AUTHORIZATION": "Bearer secret13",
    "DJANGO_SESSION_ID": "session-secret14",
}
# Kept although the built-in rules would drop them: the user listed them in plan.env_allow.
ALLOWED = {"BUILD_CACHE_TOKEN": "allowed-token-1", "GRAFANA_DSN": "https://k@grafana.example/2"}
ENV_SETTINGS = {"env_deny": ["corp_*"], "env_allow": ["build_cache_token", "GRAFANA_*"]}


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "openai_api_key",
        "HF_TOKEN",
        "CI_JOB_TOKEN",
        "DB_PASS",
        "MYSQL_PWD",
        "SIGNING_KEY",
        "NPM_CONFIG__AUTH",
        "SESSION_COOKIE",
        "PGPASSWORD",
        "MY_CREDENTIALS",
        "AWS_ACCESS_KEY_ID",
        "GPG_PASSPHRASE",
        "CLIENT_SECRET",
        "GITHUB_PAT",
        "gitlab_pat",
        "SENTRY_DSN",
        "HTTP_AUTHORIZATION",
        "OAUTH_CLIENT_ID",
        "XAUTHORITY",
        "MYAUTH",
        "DJANGO_SESSION_ID",
        "DBUS_SESSION_BUS_ADDRESS",
        "COOKIEJAR",
        "VAULT_PASSWD",
    ],
)
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "PATH",
        "HOME",
        "PWD",
        "OLDPWD",
        "LANG",
        "TERM",
        "USER",
        "EDITOR",
        "KEYMAP",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "PATTERN",
        "DSNAME",
        "SHLVL",
    ],
)
def test_ordinary_names_are_kept(name):
    assert not denied(name, "/usr/bin")


def test_provider_key_vars_are_denied_by_name():
    for name in KEY_VARS.values():
        assert denied(name, "x")


def test_values_with_a_url_password_are_denied():
    assert denied("ALL_PROXY", "socks5://bob:hunter2@127.0.0.1:1080")
    assert not denied("ALL_PROXY", "socks5://127.0.0.1:1080")
    assert not denied("HOMEPAGE", "https://example.com/a:b@c")  # '@' after the path is no userinfo
    assert not denied("SEARCH", "https://example.com?q=a@b")  # nor in the query


def test_values_with_a_bare_key_as_userinfo_are_denied():
    assert denied("ERROR_REPORTING", "https://0123abcd@o1.ingest.sentry.io/42")
    assert denied("REMOTE", "git clone https://ghp_abc@github.com/o/r.git")  # anywhere in the value


def test_env_allow_keeps_what_the_rules_drop_and_env_deny_still_wins():
    assert not denied("BUILD_CACHE_TOKEN", "x", allow=["build_cache_*"])
    assert not denied("GRAFANA_URL", "https://k@grafana.example", allow=["GRAFANA_URL"])
    assert denied("BUILD_CACHE_TOKEN", "x", ["BUILD_*"], ["build_cache_*"])
    assert denied("OTHER_TOKEN", "x", allow=["build_cache_*"])


def test_env_deny_globs_are_case_insensitive():
    assert denied("CORP_INTERNAL", "x", ["corp_*"])
    assert denied("EXACT", "x", ["exact"])
    assert not denied("OTHER", "x", ["corp_*"])


def test_clean_path_drops_relative_empty_and_project_entries(tmp_path):
    root = tmp_path / "proj"
    (root / "bin").mkdir(parents=True)
    path = os.pathsep.join(
        ["", "bin", ".", "/usr/bin", str(root / "bin"), "/usr/bin", str(root), "/bin"]
    )
    assert clean_path(path, root) == ["/usr/bin", "/bin"]


def test_locale_exists_here():
    # C.UTF-8 ships with glibc >= 2.35 and Debian/Ubuntu; otherwise the fallback is C.
    assert utf8_locale() in ("C.UTF-8", "C.utf8", "C")
    env = plan_environment(
        {"PATH": "/usr/bin", "LANG": "de_DE.UTF-8", "LANGUAGE": "de"}, Path("/nonexistent")
    )
    assert env.env["LC_ALL"] == utf8_locale() and "LANGUAGE" not in env.env


@pytest.mark.parametrize("mode", MODES)
async def test_secrets_are_not_visible_to_printenv(project, monkeypatch, mode):
    for name, value in {**SECRETS, **ALLOWED}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PLANSHELL_TEST_VISIBLE", "still-here")
    inside = project / "tools"
    inside.mkdir()
    (inside / "ls").write_text("#!/bin/sh\necho REPO-LS-RAN\n")
    (inside / "ls").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join(["bin", "", str(inside), os.environ["PATH"]]))
    settings = Settings.model_validate({"plan": {"sandbox": mode, **ENV_SETTINGS}})
    commands = ["printenv", "printenv PATH", "ls"]
    runtime, *_ = make_runtime(
        project,
        [Reply(calls=[("bash", {"command": c}) for c in commands]), Reply(text="ok")],
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
    for name, value in ALLOWED.items():
        assert f"{name}={value}" in everything
    assert f"LC_ALL={utf8_locale()}" in everything
    entries = path.splitlines()[0].split(os.pathsep)
    assert entries[0] == str(git_shim_dir())
    assert all(os.path.isabs(e) for e in entries) and str(inside) not in entries
    assert "REPO-LS-RAN" not in listing and "README.md" in listing


@pytest.mark.parametrize("mode", MODES)
async def test_a_plan_mode_sub_agent_sees_no_secrets_either(project, monkeypatch, mode):
    """The ``task`` tool's child runs bash through the same plan-mode environment."""
    from tests.subagent_helpers import router_runtime, tool_results

    for name, value in {**SECRETS, **ALLOWED}.items():
        monkeypatch.setenv(name, value)
    settings = Settings.model_validate({"plan": {"sandbox": mode, **ENV_SETTINGS}})
    runtime, router = router_runtime(
        project,
        {
            "look": [
                Reply(
                    calls=[
                        ("task", {"agent": "general", "prompt": "env please", "description": "env"})
                    ]
                ),
                Reply(text="done"),
            ],
            "env please": [Reply(calls=[("bash", {"command": "env | sort"})]), Reply(text="ok")],
        },
        plan=True,
        settings=settings,
    )
    await runtime.agent.submit("look")
    runtime.close()
    (result,) = tool_results(router.requests("env please")[1])
    assert "PATH=" in result.content
    for name, value in SECRETS.items():
        assert value not in result.content, name
    for name, value in ALLOWED.items():
        assert f"{name}={value}" in result.content


@pytest.mark.parametrize(
    "sandbox", [pytest.param("workspace-write", marks=needs_bwrap, id="sandboxed")]
)
def test_the_workspace_sandbox_uses_the_same_rules_and_env_allow(project, monkeypatch, sandbox):
    """Outside plan mode the workspace sandbox scrubs too, with the same allow list."""
    import asyncio

    from planshell.config import PermissionsSettings
    from planshell.sandbox.bwrap import workspace_exec_policy
    from planshell.tools.base import ToolContext
    from planshell.tools.shell import BashArgs, BashTool

    for name, value in {**SECRETS, **ALLOWED}.items():
        monkeypatch.setenv(name, value)
    policy = workspace_exec_policy(
        PermissionsSettings(sandbox=sandbox),
        project,
        tuple(ENV_SETTINGS["env_deny"]),
        tuple(ENV_SETTINGS["env_allow"]),
    )
    ctx = ToolContext(root=project, exec_policy=policy)
    result = asyncio.run(BashTool().run(BashArgs(command="env"), ctx))
    for name, value in SECRETS.items():
        assert value not in result.content, name
    for name, value in ALLOWED.items():
        assert f"{name}={value}" in result.content


# --- planshell's own environment, read through /proc (no sandbox to hide it) ---------------

_PEEK = """
import subprocess, sys
sys.path.insert(0, {repo!r})
if sys.argv[1] == "hide":
    from planshell.sandbox.env import hide_own_environment
    assert hide_own_environment()
out = subprocess.run(["bash", "-c", "cat /proc/$PPID/environ"], capture_output=True, text=True)
print(out.stdout.replace("\\0", "\\n"))
"""


def _peek(step: str) -> str:
    """A child process holding a secret runs bash, which reads the child's /proc environ.

    As root every process may read every other's (CAP_SYS_PTRACE), so the child runs
    as ``nobody`` then: the case that matters is a user running planshell as themselves.
    """
    import shutil
    import subprocess
    import sys

    repo = str(REPO)
    argv = [sys.executable, "-c", _PEEK.format(repo=repo), step]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: cannot test as an ordinary user")
        argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    env = {"PATH": os.environ["PATH"], "OPENAI_API_KEY": "sk-in-planshells-own-env"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30, cwd="/")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_commands_cannot_read_planshells_own_environment_through_proc():
    assert "sk-in-planshells-own-env" in _peek("plain")  # the hole, without the hardening
    assert "sk-in-planshells-own-env" not in _peek("hide")


def test_the_planshell_program_hides_its_environment():
    import subprocess
    import sys

    code = (
        "import ctypes, sys\n"
        "from planshell.cli import main\n"
        "sys.argv = ['planshell', 'check-command', 'ls']\n"
        "main()\n"
        "print('dumpable', ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))\n"  # PR_GET_DUMPABLE
    )
    repo = str(REPO)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": repo},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "dumpable 0"
