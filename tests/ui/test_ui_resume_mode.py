"""``--continue`` of a PLAN session shows PLAN from the first frame, not ``OFF starting…`` (issue 26.23)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from planshell.agent.session import SessionLog
from planshell.agent.session_peek import peek_resumed_mode
from planshell.llm.types import Message
from tests.ui.plan_helpers import chip_text
from tests.ui.resume_helpers import held_resume
from tests.ui_helpers import SIZE, ready, screen_text

pytestmark = pytest.mark.usefixtures("isolated_env")


def write_session(project: Path, *modes: str) -> Path:
    log = SessionLog.create(project)
    log.append_message(Message("user", "earlier"))
    for mode in modes:
        log.append({"type": "mode", "mode": mode, "plan_path": None, "saved_tools": None})
        log.append_message(Message("user", f"in {mode}"))
    log.close()
    return log.path


def test_the_peek_reads_the_mode_the_full_load_restores(project: Path) -> None:
    assert peek_resumed_mode(project, None) is None  # no session yet
    older = write_session(project, "plan", "off")
    newest = write_session(project, "off", "plan")
    assert SessionLog.load(newest).mode == {
        "type": "mode",
        "mode": "plan",
        "plan_path": None,
        "saved_tools": None,
    }
    assert peek_resumed_mode(project, None) in ("plan", "off")  # same second: either is newest
    assert peek_resumed_mode(project, newest.stem) == "plan"
    assert peek_resumed_mode(project, older.stem) == "off"
    assert peek_resumed_mode(project, "no-such-session") is None


def test_the_peek_ignores_what_is_not_a_mode(project: Path) -> None:
    """A user message that quotes a mode entry is not one; a broken line is no crash."""
    log = SessionLog.create(project)
    log.append({"type": "mode", "mode": "plan", "plan_path": None, "saved_tools": None})
    log.append_message(Message("user", '{"type": "mode", "mode": "execute"}'))
    log.close()
    with log.path.open("a") as fh:
        fh.write('{"type": "mode", "mode": "exec')
    assert peek_resumed_mode(project, None) == "plan"
    assert peek_resumed_mode(project, None) == SessionLog.load(log.path).mode["mode"]  # type: ignore[index]


def test_the_cli_hands_the_peeked_mode_to_the_tui(project: Path) -> None:
    from planshell.cli import resume_mode_hint

    write_session(project, "plan")
    args = argparse.Namespace(continue_=True, resume=None)
    assert resume_mode_hint(args, project) == "plan"
    assert resume_mode_hint(argparse.Namespace(continue_=False, resume=None), project) is None


async def test_the_first_frame_of_a_resumed_plan_session_shows_plan(project: Path) -> None:
    path = write_session(project, "plan")
    app, gate = held_resume(project, path, mode_hint=peek_resumed_mode(project, None))
    async with app.run_test(size=SIZE) as pilot:
        try:
            await pilot.pause()
            assert chip_text(app).startswith("PLAN")
            assert " OFF " not in screen_text(app)
        finally:
            gate.set()
        await ready(pilot)
        assert chip_text(app).startswith("PLAN")
