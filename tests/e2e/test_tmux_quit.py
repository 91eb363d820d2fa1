"""Quitting while a turn runs, in a real terminal: no traceback, exit 0, a valid session file.

The turn is cancelled and the chat stops rendering engine events before its
widgets are torn down (issue 12, item 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.scripted_sse import ScriptedServer, SseReply
from tests.tmux_harness import start_planshell

pytestmark = pytest.mark.tmux


def _check_session(home: Path, *, expect_calls: bool | None) -> None:
    """Whole JSONL records, and every tool call the model made has its result."""
    from planshell.agent.session import SessionLog

    files = list((home / "data").glob("projects/*/sessions/*.jsonl"))
    assert len(files) == 1, files
    for line in files[0].read_text().splitlines():
        json.loads(line)
    loaded = SessionLog.load(files[0])
    assert loaded.problems == []
    calls = {c.id for m in loaded.messages for c in m.tool_calls}
    answered = {m.tool_call_id for m in loaded.messages if m.tool_call_id is not None}
    assert calls == answered
    if expect_calls is not None:
        assert bool(calls) == expect_calls


@pytest.mark.parametrize("how", ["ctrl+q", "/quit"])
def test_quit_while_the_review_is_open(project: Path, tmp_path: Path, how: str) -> None:
    home = tmp_path / "home"
    with start_planshell(project, home, "--plan", size=(120, 40)) as pane:
        pane.wait_for("demo (offline)")
        pane.type("add pagination to the widget list")
        pane.keys("Enter")
        pane.wait_until(lambda s: "Review plan" in s and "a approve" in s, what="the review")
        if how == "ctrl+q":
            pane.keys("C-q")  # the turn still waits for the decision: quitting asks first
            pane.wait_for("Quit (y)")  # the letter shows once y works (key grace)
            pane.keys("y")
        else:
            # Esc is "keep planning": the turn ends with the plan kept, so nothing runs
            # and /quit quits without asking (waiting for that end keeps it no race).
            pane.keys("Escape")
            pane.wait_for("kept planning")
            pane.wait_until(lambda s: "working" not in s, what="the turn to end")
            pane.type("/quit")
            pane.keys("Enter")
        status = pane.wait_exit()
        screen = pane.capture()
        assert "Traceback" not in screen and "Error" not in screen, screen
        assert status == 0, screen
    _check_session(home, expect_calls=True)  # exit_plan_mode's call got a "cancelled" result


def test_quit_during_a_streamed_reply(project: Path, tmp_path: Path) -> None:
    """The model's reply is held open (its file never appears), so the turn is surely running
    when ctrl+q arrives; a turn that ends first drops the question (issue 26 item 2)."""
    home = tmp_path / "home"
    held = [SseReply("Looking", wait_for_file="never")]
    with ScriptedServer(held, tmp_path / "model") as server:
        args = ("--provider", "openai", "--base-url", server.base_url, "--model", "scripted")
        env = {"PLANSHELL_CONTEXT_WINDOW": "200000"}
        with start_planshell(project, home, *args, size=(120, 40), env=env) as pane:
            pane.wait_for("scripted")
            pane.type("what does the server do?")
            pane.keys("Enter")
            pane.wait_for("working")
            pane.keys("C-q")
            pane.wait_for("Quit (y)")  # the letter shows once y works (key grace)
            pane.keys("y")
            status = pane.wait_exit()
            screen = pane.capture()
            assert "Traceback" not in screen, screen
            assert status == 0, screen
    _check_session(home, expect_calls=None)  # quit may land before the first call
