"""One diagnostics path: the log file, what reaches it (and what never does), `planshell doctor`."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from planshell import logs
from planshell.agent import events as ev
from planshell.config import load_settings
from planshell.llm.openai_compat import OpenAICompatProvider
from planshell.llm.scripted import Reply
from planshell.logs import LEVEL_ENV, level_from, log_path, redact, reset_logging, setup_logging
from tests.engine_helpers import make_agent
from tests.sse_server import Response, SSEServer

RECORD_START = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ ")


@pytest.fixture
def log_file() -> Iterator[Path]:
    """File logging set up as the CLI does it, torn down after the test."""
    setup_logging(environ={})
    yield log_path()
    reset_logging()


def _read(path: Path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return path.read_text(encoding="utf-8") if path.exists() else ""


# --- the file and its level ---------------------------------------------------------


def test_log_file_lives_under_the_data_dir_and_logs_warnings_not_info(log_file: Path) -> None:
    assert log_file == Path(os.environ["PLANSHELL_DATA_DIR"]) / "logs" / "planshell.log"
    assert logs.current_log_file() == log_file
    assert not log_file.parent.exists()  # created on the first record, not at start-up
    logging.getLogger("planshell.test").info("routine detail")
    logging.getLogger("planshell.test").warning("something odd")
    text = _read(log_file)
    assert "something odd" in text and "routine detail" not in text


def test_level_comes_from_debug_then_the_environment() -> None:
    assert level_from({}) == (logging.WARNING, None)
    assert level_from({LEVEL_ENV: "info"}) == (logging.INFO, None)
    assert level_from({LEVEL_ENV: "ERROR"}, debug=True) == (logging.DEBUG, None)
    level, problem = level_from({LEVEL_ENV: "loud"})
    assert level == logging.WARNING and problem is not None and "loud" in problem


def test_debug_logs_planshell_detail_and_the_file_rotates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logs, "MAX_BYTES", 2_000)
    setup_logging(debug=True, environ={})
    path = log_path()
    try:
        for i in range(60):
            logging.getLogger("planshell.test").debug("detail %d %s", i, "x" * 80)
        assert "detail 59" in _read(path)
        rotated = sorted(path.parent.glob("planshell.log.*"))
        assert [p.name for p in rotated] == [
            f"planshell.log.{n}" for n in range(1, logs.BACKUP_COUNT + 1)
        ]
    finally:
        reset_logging()


def test_log_level_variable_is_not_mistaken_for_a_setting(tmp_path: Path) -> None:
    # Every other PLANSHELL_* variable is a setting; an unknown one is a config error.
    load_settings(tmp_path, environ={LEVEL_ENV: "DEBUG"}, user_file=tmp_path / "none.toml")


# --- what never reaches the file --------------------------------------------------------


def test_model_text_cannot_forge_a_record_or_reach_the_terminal(log_file: Path) -> None:
    hostile = (
        "ok\n2025-01-01 00:00:00,000 ERROR planshell forged record\x1b]52;c;cGF5bG9hZA==\x07\x1b[2J"
    )
    logging.getLogger("planshell.test").error("model said: %s", hostile)
    text = _read(log_file)
    assert "\x1b" not in text and "\x07" not in text
    starts = [line for line in text.splitlines() if RECORD_START.match(line)]
    assert len(starts) == 1 and "model said: ok" in starts[0]
    assert "\n    2025-01-01 00:00:00,000 ERROR planshell forged record" in text


def test_secrets_are_masked_by_shape_and_by_registration() -> None:
    logs.register_secret("opaque-1234567890")
    logs.register_headers({"X-Portkey-Auth": "Bearer proxy-secret-000111"})
    logs.register_environ_secrets({"MISTRAL_API_KEY": "mst-abcdefghijkl", "HOME": "/home/someone"})
    text = redact(
        "Authorization: Bearer abcdefghij12345 | {'x-api-key': 'zzzzzzzzzzzz'} | "
        "sk-ant-api03-abcdefghijklmnop | opaque-1234567890 | proxy-secret-000111 | "
        "mst-abcdefghijkl | /home/someone"
    )
    for secret in ("abcdefghij12345", "zzzzzzzzzzzz", "sk-ant-api03", "opaque-1234567890",
                   "proxy-secret-000111", "mst-abcdefghijkl"):  # fmt: skip
        assert secret not in text
    assert text.count(logs.REDACTED) == 6 and "/home/someone" in text


async def test_a_request_error_echoing_the_key_is_logged_without_it(
    sse_server: SSEServer, project: Path, log_file: Path
) -> None:
    key = "live-key-9f8e7d6c5b4a"  # no well-known shape: only registration can catch it
    sse_server.add(Response.json(401, {"error": {"message": f"Incorrect API key provided: {key}"}}))
    provider = OpenAICompatProvider(model="m", base_url=f"{sse_server.url}/v1", api_key=key)
    agent, _, recorder = make_agent(project, [])
    agent.provider = provider
    await agent.submit("hi")
    await provider.aclose()
    assert sse_server.requests[0].headers["authorization"] == f"Bearer {key}"
    shown = recorder.of(ev.ErrorEvent)
    assert shown and key in shown[0].message  # the user sees the server's words as sent
    text = _read(log_file)
    assert "The API key was rejected" in text and "HTTP 401" in text
    assert key not in text


# --- the event bus --------------------------------------------------------------------


async def test_a_failing_view_is_logged_with_traceback_surfaced_once_and_the_session_continues(
    project: Path, log_file: Path
) -> None:
    agent, _, recorder = make_agent(
        project, [Reply(text="first answer"), Reply(text="second answer")]
    )

    def broken_view(event: ev.Event) -> None:
        if isinstance(event, ev.TextDelta):
            raise ValueError("the view's render broke")

    agent.subscribe(broken_view)
    await agent.submit("one")
    await agent.submit("two")

    done = recorder.of(ev.TurnDone)
    assert [d.stop_reason for d in done] == ["end_turn", "end_turn"]
    assert [m.content for m in agent.messages if m.role == "assistant"] == [
        "first answer",
        "second answer",
    ]
    notices = [n for n in recorder.of(ev.Notice) if "A view failed" in n.message]
    assert len(notices) == 1
    assert notices[0].level == "error" and str(log_file) in notices[0].message
    text = _read(log_file)
    assert text.count("Traceback (most recent call last)") == 2  # both failures, in full
    assert "ValueError: the view's render broke" in text and "broken_view" in text


def test_engine_errors_and_warnings_are_logged_where_they_are_emitted(log_file: Path) -> None:
    bus = ev.EventBus()
    bus.emit(ev.ErrorEvent("The model provider failed"))
    bus.emit(ev.Notice("plan mode stays on", "warning"))
    bus.emit(ev.Notice("all good", "information"))
    text = _read(log_file)
    assert "ERROR planshell.agent.events" in text and "The model provider failed" in text
    assert "WARNING planshell.agent.events" in text and "plan mode stays on" in text
    assert "all good" not in text


# --- the TUI ---------------------------------------------------------------------------


async def test_tui_toasts_are_logged_once(project: Path, log_file: Path) -> None:
    from planshell.config import Settings
    from tests.ui_helpers import ready_for_snapshot, snapshot_app, until

    app = snapshot_app(project, [], Settings())
    async with app.run_test() as pilot:
        screen = await ready_for_snapshot(pilot)
        app.notify("Could not remember the theme: disk full", severity="warning")
        app.notify("just so you know")
        assert app.runtime is not None
        app.runtime.agent.emit(ev.Notice("The agent asked to leave plan mode", "warning"))
        await until(pilot, lambda: len(app.toasts) >= 3)
        del screen
    text = _read(log_file)
    assert text.count("Could not remember the theme: disk full") == 1
    assert text.count("The agent asked to leave plan mode") == 1  # the bus logged it, not the toast
    assert "just so you know" not in text


# --- the CLI ----------------------------------------------------------------------------


def _planshell(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env={**os.environ, **(env or {})},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_print_mode_logs_to_the_file_and_debug_raises_the_level(project: Path, cli) -> None:
    """``main`` in-process (the ``cli`` fixture): the same set-up as the real program."""
    path = log_path()
    done = cli(["-p", "what is in this repo?"], project)
    assert done.returncode == 0, done.stderr
    assert "starting" not in (path.read_text() if path.exists() else "")
    done = cli(["--debug", "-p", "what is in this repo?"], project)
    assert done.returncode == 0, done.stderr
    assert "planshell" in path.read_text() and "starting (headless)" in path.read_text()


def test_doctor_reports_every_section_without_textual_or_the_key(project: Path) -> None:
    key = "sk-doctor-0123456789abcdef"
    (project / ".planshell").mkdir()
    # The project file is the repository's: hostile text must come out inert.
    (project / ".planshell" / "config.toml").write_text(
        'provider = "openai"\nmodel = "m\\u001b[2Jx"\nbase_url = "http://127.0.0.1:9/v1"\n'
        '[headers]\nx-team = "t"\n'
    )
    done = _planshell(
        "-X", "importtime", "-m", "planshell", "doctor", cwd=project,
        env={"OPENAI_API_KEY": key, "PLANSHELL_PLAN__SANDBOX": "off", "PLANSHELL_MODEL": "m\x1b[2Jx"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for section in ("versions", "config", "provider", "external tools", "sandbox (plan mode)",
                    "log", "tool schema (sent with every request)"):  # fmt: skip
        assert f"\n{section}\n" in out, section
    for package in ("planshell", "python", "textual", "httpx", "pydantic", "bashlex"):
        assert re.search(rf"^  {package} +\S", out, re.MULTILINE), package
    assert re.search(r"project file +.*\.planshell/config\.toml \(found\)", out)
    assert re.search(r"user file +.* \(not found\)", out)
    # Untrusted: the repository's provider settings are listed as ignored, not used.
    ignored = re.search(r"ignored project keys +(.*)", out)
    assert ignored and {"provider", "model", "base_url"} <= set(
        ignored.group(1).replace(",", " ").split()
    )
    assert re.search(r"provider +openai", out) and "http://127.0.0.1:9/v1" not in out
    assert "from OPENAI_API_KEY (value not shown)" in out and key not in out
    assert "\x1b" not in out and re.search(r"^  model +mx$", out, re.MULTILINE)
    assert re.search(r"^  git +/\S+ \(git version", out, re.MULTILINE)
    assert re.search(r"^  (bubblewrap|ripgrep) +", out, re.MULTILINE)
    # ripgrep is a dependency (its wheel ships rg): doctor finds it as the grep tool does.
    assert re.search(r"^  ripgrep +/\S+/rg \(ripgrep \d", out, re.MULTILINE)
    assert re.search(r"self-test +`ls` ran without a sandbox", out)
    assert str(log_path()) in out
    normal = re.search(r"normal mode +(\d+) tools, [\d,]+ chars, ~([\d,]+) tokens", out)
    plan = re.search(r"plan mode +(\d+) tools, [\d,]+ chars, ~([\d,]+) tokens", out)
    assert normal and plan and int(normal.group(1)) > 0 and int(plan.group(1)) > 0
    # Each mode is measured with its own tool list (the budgets are in test_tool_schema_size.py).
    assert plan.group(2) != normal.group(2)
    # -X importtime lists every module imported, on stderr.
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "planshell.runtime" in imported and "textual" not in imported


def test_doctor_runs_the_real_sandbox_when_bubblewrap_works(project: Path, cli) -> None:
    from planshell.sandbox.bwrap import sandbox_status

    if sandbox_status("auto").state != "sandboxed":
        pytest.skip("bubblewrap cannot start a sandbox on this machine")
    done = cli(["doctor"], project)
    assert done.returncode == 0, done.stderr
    assert re.search(r"state +sandboxed: ", done.stdout)
    assert "self-test     ok: `ls` ran in the sandbox and the project is read-only" in done.stdout


def test_doctor_survives_a_broken_config(project: Path, cli) -> None:
    (project / ".planshell").mkdir()
    (project / ".planshell" / "config.toml").write_text("plan = [not toml\n")
    done = cli(["doctor", "-C", str(project)], project.parent)
    assert done.returncode == 0, done.stderr
    # The same sentence -p and the TUI give: the repository's file is ignored, planshell starts.
    assert "project file ignored: config error in" in done.stdout
    assert "ignores that file until it is fixed" in done.stdout
    assert "\ntool schema (sent with every request)\n" in done.stdout


def test_doctor_says_a_broken_user_file_stops_start_up(project: Path, cli, isolated_env) -> None:
    user = isolated_env / "config" / "planshell" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("model = [not toml\n")
    done = cli(["doctor", "-C", str(project)], project.parent)
    assert done.returncode == 0, done.stderr
    assert "INVALID, planshell will not start until it is fixed" in done.stdout
    started = cli(["-p", "hi", "-C", str(project)], project.parent)
    assert started.returncode == 1 and "invalid TOML" in started.stderr


def test_print_mode_starts_past_a_broken_project_file_and_says_why(project: Path, cli) -> None:
    (project / ".planshell").mkdir()
    (project / ".planshell" / "config.toml").write_text("plan = [not toml\n")
    done = cli(["-p", "what is here?"], project)
    assert done.returncode == 0, done.stderr
    assert "Offline demo model" in done.stdout
    assert "warning: config error in" in done.stderr and "invalid TOML" in done.stderr
    assert "ignores that file until it is fixed" in done.stderr
