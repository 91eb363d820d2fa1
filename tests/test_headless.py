"""`planshell -p` against the demo model.

Stdin, the terminal and the import check spawn the real program; the other cases
call the same entry function, ``planshell.cli.main``, in-process (the ``cli``
fixture, tests/cli_helpers.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fresh_python import fresh_python


def test_print_mode_answers_from_the_project(project, cli):
    proc = cli(["-p", "what is in this repo?", "--verbose"], project)
    assert proc.returncode == 0, proc.stderr
    assert "Offline demo model" in proc.stdout and "Widget Service" in proc.stdout
    assert "provider: demo (offline)" in proc.stderr
    assert "→ ls ." in proc.stderr and "→ read README.md" in proc.stderr


def test_plan_print_mode_awaits_approval(project, cli):
    proc = cli(["--plan", "-p", "add rate limiting"], project)
    assert proc.returncode == 3, proc.stderr
    line = proc.stdout.strip().splitlines()[-1]
    assert line.startswith("Plan awaiting approval: .planshell/plans/") and line.endswith(".md")
    plan = project / line.split(": ", 1)[1]
    assert plan.read_text().startswith("# Plan: add rate limiting")
    # Nothing but the plan was written.
    assert sorted(p.name for p in project.iterdir()) == [
        ".planshell",
        "Makefile",
        "README.md",
        "pyproject.toml",
        "src",
    ]


def test_print_needs_a_prompt(project, cli):
    proc = cli(["-p"], project)
    assert proc.returncode == 2 and "needs a prompt" in proc.stderr


def test_continue_without_sessions_is_a_clear_error(project, cli):
    proc = cli(["--continue", "-p", "hi"], project)
    assert proc.returncode == 1 and "no earlier session" in proc.stderr


def test_engine_imports_no_textual():
    code = (
        "import sys\n"
        "import planshell.runtime, planshell.headless, planshell.cli\n"
        "import planshell.llm.demo, planshell.llm.scripted, planshell.plan.tools\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] == 'textual')\n"
        "print(bad)\n"
    )
    assert fresh_python(code).strip() == "[]"


def modules_after_a_print_run(project: Path) -> set[str]:
    """The modules a whole ``planshell -p`` run loaded (demo model, a turn with tool calls)."""
    code = (
        "import contextlib, io, sys\n"
        "from planshell.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    code = main(['-C', {str(project)!r}, '-p', 'what is in this repo?'])\n"
        "assert code == 0 and 'Offline demo model' in out.getvalue(), (code, out.getvalue())\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    return set(fresh_python(code).strip().splitlines()[-1].split())


def test_a_whole_print_run_imports_neither_textual_nor_rich(project):
    """`planshell -p` (a turn with tool calls, piped output) never loads the UI toolkits.

    Rich is for a terminal's rendered answer only; Textual never. Both cost start-up
    time the headless path must not pay (issue 28).
    """
    loaded = modules_after_a_print_run(project)
    assert sorted(m for m in loaded if m.split(".")[0] in ("textual", "rich")) == []


def test_a_print_run_imports_no_review_time_module(project):
    """`planshell -p` builds the whole engine and answers without the modules only a review,
    an executing plan or a settings source would need (issue 28)."""
    late = {
        "pydantic_settings", "markdown_it", "tomllib", "planshell.plan.report",
        "planshell.plan.lint", "planshell.plan.evidence", "planshell.plan.staleness",
        "planshell.plan.capabilities", "planshell.plan.blast_radius",
        "planshell.plan.review_comments", "planshell.plan.amend",
    }  # fmt: skip
    assert sorted(late & modules_after_a_print_run(project)) == []


# --- issue 12, item 13: what -p prints -------------------------------------------------


def test_print_mode_prints_only_the_final_answer(project, cli):
    proc = cli(["-p", "what is in this repo?"], project)
    assert proc.returncode == 0, proc.stderr
    # The demo's first reply ("I'll look around…") comes before its tool calls.
    assert "look around" not in proc.stdout
    assert proc.stdout.lstrip().startswith("*Offline demo model*")
    # Piped: markdown source, not terminal escapes.
    assert "\x1b[" not in proc.stdout and "**Top level**" in proc.stdout


def test_plan_print_mode_never_prints_text_meant_for_the_model(project, cli):
    proc = cli(["--plan", "-p", "add rate limiting"], project)
    assert proc.returncode == 3, proc.stderr
    for words in ("has not approved", "Stop now", "end your turn", "non-interactive run"):
        assert words not in proc.stdout
        assert words not in proc.stderr
    assert (
        f"planshell review {project}/.planshell/plans/" in proc.stderr
    )  # absolute: works from any cwd


def test_prompt_from_stdin(project):
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    proc = subprocess.run(
        [sys.executable, "-m", "planshell", "-p"],
        cwd=project,
        env=env,
        input="what is in this repo?\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Widget Service" in proc.stdout


@pytest.mark.parametrize("prompt", ["   ", "\n\t"])
def test_a_blank_prompt_is_refused(project, prompt, cli):
    proc = cli(["-p", prompt], project)
    assert proc.returncode == 2 and "needs a prompt" in proc.stderr
    assert not (project / ".planshell").exists()


def test_a_terminal_gets_rendered_markdown(project):
    """stdout on a pty: Rich renders the answer (bullets, no ** markers)."""
    import pty

    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env.update(COLUMNS="100", TERM="xterm-256color")
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "planshell", "-p", "what is in this repo?"],
            cwd=project,
            env=env,
            stdout=follower,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        assert proc.wait(timeout=60) == 0
    finally:
        os.close(leader)
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert "Top level" in screen
    assert "**Top level**" not in screen and "•" in screen


async def test_headless_errors_do_not_advise_slash_commands(project):
    import io

    from planshell.config import Settings
    from planshell.headless import run_print
    from planshell.llm.scripted import Reply, ScriptedProvider
    from planshell.llm.types import ProviderError
    from planshell.plan.decider import HeadlessDecider
    from planshell.runtime import build_runtime

    decider = HeadlessDecider()
    provider = ScriptedProvider(
        [Reply(text="half", error=ProviderError("The stream was cut off.", partial=True))]
    )
    runtime = build_runtime(Settings(), project, decider, provider=provider, persist=False)
    out, err = io.StringIO(), io.StringIO()
    code = await run_print(runtime, decider, "go", out=out, err=err)
    assert code == 1
    assert "The stream was cut off." in err.getvalue()
    assert "/retry" not in err.getvalue() and "run the same command again" in err.getvalue().lower()
    assert out.getvalue() == ""


@pytest.mark.parametrize(
    ("usage", "expected"),
    [((3400, 690), "context window is full"), ((100, 50), "token limit (max_tokens)")],
)
async def test_an_answer_cut_off_says_why_on_stderr(project, usage, expected):
    """llama-server is sent no max_tokens: its model writes until the window is full."""
    import io

    from planshell.config import Settings
    from planshell.headless import run_print
    from planshell.llm.scripted import Reply, ScriptedProvider
    from planshell.llm.types import Usage
    from planshell.plan.decider import HeadlessDecider
    from planshell.runtime import build_runtime

    decider = HeadlessDecider()
    reply = Reply(text="It is possible", usage=Usage(*usage), stop_reason="max_tokens")
    runtime = build_runtime(
        Settings(context_window=4096),
        project,
        decider,
        provider=ScriptedProvider([reply]),
        persist=False,
    )
    out, err = io.StringIO(), io.StringIO()
    code = await run_print(runtime, decider, "go", out=out, err=err)
    assert code == 0 and "It is possible" in out.getvalue()
    assert "warning: " in err.getvalue() and expected in err.getvalue()


async def test_redirected_output_is_the_markdown_source_as_the_readme_says(project, tmp_path):
    """``planshell -p … > out.txt``: the answer's markdown as written, no escapes, no wrapping.

    Markdown is the better default for a file or a pipe (it keeps code blocks and links,
    and any markdown viewer renders it); the README must say so, not "plain text".
    """
    from tests.cli_helpers import run_planshell
    from tests.paths import REPO

    out = tmp_path / "out.txt"
    code, text, err = await run_planshell(["-p", "what is in this repo?"], project, stdout_file=out)
    assert code == 0, err
    assert "**Top level**" in text and "*Offline demo model*" in text
    assert "\x1b" not in text and "•" not in text
    readme = " ".join(REPO.joinpath("README.md").read_text().split())
    assert "the markdown source when piped or redirected" in readme
    assert "plain text when piped" not in readme


def test_print_mode_does_not_pace_the_demo_model(isolated_env):
    """The demo streams slowly for the TUI's sake; -p shows no stream, so it is not paced."""
    from planshell.cli import headless_provider
    from planshell.config import Settings
    from planshell.llm.demo import DemoProvider

    provider = headless_provider(Settings())
    assert isinstance(provider, DemoProvider) and provider.chunk_delay == 0
    assert DemoProvider().chunk_delay > 0  # the TUI's demo still streams visibly
