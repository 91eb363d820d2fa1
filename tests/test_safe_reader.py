"""Files planshell opens by itself are untrusted: the safe reader of ``fsutil``.

A cloned repository chooses what ``AGENTS.md``, a plan, ``.planshell/config.toml``
or a ``.gitignore`` is: a symlink to ``/proc/self/environ`` (the API keys go
into the first request), to ``/dev/zero`` (memory runs out), a FIFO (start-up
hangs), a link out through a symlinked folder, a 10 GB file. Every test here
uses the real thing: real symlinks, ``os.mkfifo``, the real ``/dev/zero``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from planshell.agent.prompt import AGENTS_MAX_BYTES, base_prompt
from planshell.fsutil import ReadRefused, read_project_file, read_user_file
from planshell.plan.store import PlanStore, PlanStoreError
from planshell.tools.ignore import IgnoreRules

REPO = Path(__file__).resolve().parent.parent
SECRET = "sk-planshell-test-secret-XYZ"


def _limited(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a child with 1 GiB of address space: an unbounded read dies, not the box."""
    prelude = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )


# --- AGENTS.md ---------------------------------------------------------------------


def test_agents_md_symlink_to_proc_environ_is_not_in_the_prompt(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_SECRET", SECRET)
    (tmp_path / "AGENTS.md").symlink_to("/proc/self/environ")
    notices: list[str] = []
    prompt = base_prompt(tmp_path, notices=notices)
    assert SECRET not in prompt and "FAKE_SECRET" not in prompt
    assert "Project instructions" not in prompt
    assert notices == ["AGENTS.md is a symlink to /proc/self/environ; not read"]


def test_agents_md_through_dotdot_into_proc_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_SECRET", SECRET)
    depth = "../" * len(tmp_path.parts)
    (tmp_path / "AGENTS.md").symlink_to(f"{depth}proc/self/environ")
    notices: list[str] = []
    assert SECRET not in base_prompt(tmp_path, notices=notices)
    assert len(notices) == 1 and "not read" in notices[0]


def test_agents_md_symlink_to_dev_zero_is_refused_without_reading(tmp_path):
    (tmp_path / "AGENTS.md").symlink_to("/dev/zero")
    done = _limited(
        """
        from pathlib import Path
        from planshell.agent.prompt import base_prompt
        notices = []
        prompt = base_prompt(Path.cwd(), notices=notices)
        print(len(prompt) < 5000, notices)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "True ['AGENTS.md is a symlink to /dev/zero; not read']"


def test_agents_md_fifo_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "AGENTS.md")
    notices: list[str] = []
    prompt = base_prompt(tmp_path, notices=notices)
    assert "Project instructions" not in prompt
    assert notices == ["AGENTS.md is a FIFO, not a regular file; not read"]


def test_agents_md_through_a_symlinked_folder_out_of_the_project(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "AGENTS.md").write_text("instructions from outside the project\n")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "docs").symlink_to(outside)
    (root / "AGENTS.md").symlink_to("docs/AGENTS.md")
    notices: list[str] = []
    assert "from outside" not in base_prompt(root, notices=notices)
    assert notices and "outside the project" in notices[0]


def test_agents_md_symlink_inside_the_project_is_read(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "agents.md").write_text("Run make lint.\n")
    (tmp_path / "AGENTS.md").symlink_to("docs/agents.md")
    notices: list[str] = []
    assert "Run make lint." in base_prompt(tmp_path, notices=notices)
    assert notices == []


def test_huge_agents_md_is_capped_without_reading_it_whole(tmp_path):
    """A 10 GB sparse file: read whole it would not fit the child's 1 GiB address space."""
    with open(tmp_path / "AGENTS.md", "wb") as handle:
        handle.write(b"Top rule.\n")
        handle.truncate(10 * 1024**3)
    done = _limited(
        """
        from pathlib import Path
        from planshell.agent.prompt import base_prompt
        prompt = base_prompt(Path.cwd())
        print("Top rule." in prompt, "truncated at" in prompt, len(prompt) < 40_000)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True", "True"]
    assert AGENTS_MAX_BYTES < 40_000


# --- the reader itself ---------------------------------------------------------------


def test_reader_refuses_devices_sockets_and_directories(tmp_path):
    import socket

    (tmp_path / "null").symlink_to("/dev/null")
    (tmp_path / "dir").mkdir()
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    try:
        for name, reason in (("null", "pseudo"), ("dir", "not-regular"), ("sock", "not-regular")):
            with pytest.raises(ReadRefused) as refused:
                read_project_file(tmp_path, Path(name), 100)
            assert refused.value.reason == reason, name
    finally:
        sock.close()


def test_reader_caps_without_truncate_and_passes_missing_through(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(ReadRefused) as refused:
        read_project_file(tmp_path, Path("big"), 100)
    assert refused.value.reason == "too-large"
    assert read_project_file(tmp_path, Path("big"), 100, truncate=True) == b"x" * 101
    with pytest.raises(FileNotFoundError):
        read_project_file(tmp_path, Path("missing"), 100)
    with pytest.raises(ReadRefused, match="outside the project"):
        read_project_file(tmp_path / "sub", tmp_path / "big", 100)


def test_reader_names_a_hostile_link_target_harmlessly(tmp_path):
    (tmp_path / "AGENTS.md").symlink_to("/proc/self/\x1b]52;c;aGk=\x07environ")
    with pytest.raises(ReadRefused) as refused:
        read_project_file(tmp_path, Path("AGENTS.md"), 100)
    assert "\x1b" not in str(refused.value) and "\\x1b" in str(refused.value)


def test_user_file_reader_follows_links_but_not_into_the_kernel(tmp_path):
    (tmp_path / "real.toml").write_text("a = 1\n")
    (tmp_path / "link.toml").symlink_to(tmp_path / "real.toml")
    assert read_user_file(tmp_path / "link.toml", 100) == b"a = 1\n"
    (tmp_path / "env").symlink_to("/proc/self/environ")
    with pytest.raises(ReadRefused, match="symlink to /proc/self/environ"):
        read_user_file(tmp_path / "env", 100)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ReadRefused, match="FIFO"):
        read_user_file(tmp_path / "fifo", 100)


# --- plans ---------------------------------------------------------------------------


def test_plan_file_symlinked_out_of_the_plans_dir_is_refused(tmp_path):
    store = PlanStore(tmp_path)
    store.ensure_dir()
    (tmp_path / "secret.md").write_text("not a plan\n")
    (store.plans_dir / "evil.md").symlink_to(tmp_path / "secret.md")
    (store.plans_dir / "env.md").symlink_to("/proc/self/environ")
    for name in ("evil.md", "env.md"):
        with pytest.raises(PlanStoreError, match="symlink"):
            store.read(name)


# A plan that is a FIFO: tests/plan/test_plan_store.py::test_a_fifo_named_like_a_plan_is_refused_not_waited_on


# --- ignore files --------------------------------------------------------------------


def test_ignore_files_that_are_fifos_or_devices_are_skipped(tmp_path):
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / ".gitignore")
    (tmp_path / ".ignore").symlink_to("/dev/zero")
    (tmp_path / ".git" / "info").mkdir()
    os.mkfifo(tmp_path / ".git" / "info" / "exclude")
    rules = IgnoreRules(tmp_path).rules(tmp_path)
    assert rules.specs == (None, None, None, None)


def test_gitdir_pointer_cannot_lead_the_reader_into_proc(tmp_path):
    (tmp_path / ".git").write_text("gitdir: sub\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "commondir").symlink_to("/proc/self/environ")
    assert IgnoreRules(tmp_path).rules(tmp_path).specs[-1] is None


def test_gitignore_linked_out_of_the_project_is_not_used(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "patterns").write_text("*.py\n")
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".gitignore").symlink_to(outside / "patterns")
    rules = IgnoreRules(root)
    assert not rules.ignored(rules.chain(root), root / "a.py", False)


# --- the read tool: its own containment, same promise ---------------------------------


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink", "symlinked-folder"])
async def test_read_tool_never_shows_the_environment(tmp_path, monkeypatch, how):
    from planshell.tools.base import ToolContext, ToolError
    from planshell.tools.read import ReadTool

    monkeypatch.setenv("FAKE_SECRET", SECRET)
    root = tmp_path / "project"
    root.mkdir()
    (root / "link").symlink_to("/proc/self/environ")
    (root / "procdir").symlink_to("/proc/self")
    path = {
        "absolute": "/proc/self/environ",
        "dotdot": "../" * len(root.parts) + "proc/self/environ",
        "symlink": "link",
        "symlinked-folder": "procdir/environ",
    }[how]
    tool = ReadTool()
    # Refused as a process file (planshell.procfs), whatever way leads there.
    with pytest.raises(ToolError, match="process file") as refused:
        await tool.run(tool.Args(path=path), ToolContext(root=root))
    assert SECRET not in str(refused.value)


# --- end to end: the first request, and the notice in both front ends ------------------


async def test_first_request_has_no_environment_and_headless_says_why(tmp_path, monkeypatch):
    import io

    from planshell.config import Settings
    from planshell.headless import run_print
    from planshell.llm.scripted import Reply, ScriptedProvider
    from planshell.plan.decider import HeadlessDecider
    from planshell.runtime import build_runtime

    monkeypatch.setenv("FAKE_SECRET", SECRET)
    (tmp_path / "AGENTS.md").symlink_to("/proc/self/environ")
    decider = HeadlessDecider()
    provider = ScriptedProvider([Reply(text="hello")])
    runtime = build_runtime(Settings(), tmp_path, decider, provider=provider, persist=False)
    assert runtime.read_notices == ["AGENTS.md is a symlink to /proc/self/environ; not read"]
    out, err = io.StringIO(), io.StringIO()
    assert await run_print(runtime, decider, "hi", out=out, err=err) == 0  # not verbose
    assert "warning: AGENTS.md is a symlink to /proc/self/environ; not read" in err.getvalue()
    assert provider.requests and SECRET not in provider.requests[0].system
    assert all(SECRET not in str(m) for m in provider.requests[0].messages)


async def test_the_tui_shows_the_notice(tmp_path, monkeypatch):
    from tests.ui_helpers import SIZE, make_app, ready, until

    monkeypatch.setenv("FAKE_SECRET", SECRET)
    (tmp_path / "AGENTS.md").symlink_to("/dev/zero")
    app = make_app(tmp_path, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await until(
            pilot,
            lambda: any(
                "AGENTS.md is a symlink to /dev/zero; not read" in str(n.message)
                for n in app.toasts
            ),
        )
        assert app.runtime is not None and SECRET not in app.runtime.agent.base_prompt


async def test_a_sub_agent_re_reading_agents_md_warns(tmp_path):
    from planshell.agent import events as ev
    from planshell.llm.scripted import Reply
    from tests.engine_helpers import Recorder
    from tests.subagent_helpers import router_runtime

    (tmp_path / "AGENTS.md").write_text("fine at start\n")
    runtime, router = router_runtime(
        tmp_path,
        {
            "go": [
                Reply(
                    calls=[("task", {"agent": "explore", "prompt": "look", "description": "look"})]
                ),
                Reply(text="done"),
            ],
            "look": [Reply(text="looked")],
        },
    )
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    (tmp_path / "AGENTS.md").unlink()  # swapped after start-up
    os.mkfifo(tmp_path / "AGENTS.md")
    await runtime.agent.submit("go")
    runtime.close()
    notices = [e.message for e in recorder.of(ev.Notice)]
    assert "AGENTS.md is a FIFO, not a regular file; not read" in notices
    assert "fine at start" not in router.requests("look")[0].system
