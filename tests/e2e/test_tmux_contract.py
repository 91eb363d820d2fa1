"""Issue 24's "done when" in a real terminal: a scripted model over HTTP, a person at the keys.

planshell runs in tmux against tests/sse_server.py (started as a subprocess by
tests/scripted_sse.py), which streams the replies below in the OpenAI format:
the model writes a plan and asks for review; the person approves with "accept
edits inside the plan's scope" (`a`, then `2`); the model edits a planned file,
then tries to create an unplanned one (the question "Unplanned file …" comes up
and Esc denies it: the file never appears), ticks a step it did nothing for,
runs the Verification command and calls plan_complete. The plan report lists
all of that; `u` opens the undo flow and Enter puts every file back, byte for
byte (sha256 of every file before and after). The same scenario runs under
Pilot with the in-process provider in tests/ui/test_ui_plan_contract.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plan.checkpoint_helpers import outside_plans
from tests.plan.contract_scenario import CHECK, SERVER, TURNS, UNPLANNED
from tests.scripted_sse import ScriptedServer, SseReply
from tests.tmux_harness import TmuxPane, start_planshell

pytestmark = pytest.mark.tmux

# The edit and the unplanned write report usage: the report's token count is their sum.
USAGE = {2: (1000, 20), 3: (1100, 10)}
REPLIES = [SseReply(text, calls=calls, usage=USAGE.get(n)) for n, (text, calls) in enumerate(TURNS)]


def tool_results(server: ScriptedServer) -> list[str]:
    """The tool results the model was sent in its last request."""
    [*_, last] = server.chat_requests()
    return [m["content"] for m in last["json"]["messages"] if m["role"] == "tool"]


def status_line(screen: str) -> str:
    """The status bar: the line above the footer."""
    lines = [line for line in screen.splitlines() if line.strip()]
    return lines[-2] if len(lines) >= 2 else ""


def approve_in_scope(pane: TmuxPane) -> None:
    """The review's `a`, then "Accept edits inside the plan's scope" (2), each once it works."""
    pane.wait_until(lambda s: "Review plan" in s and "a approve" in s, what="the review's keys")
    pane.read_whole_plan()
    pane.keys("a")
    screen = pane.wait_for("Enter chooses · 1-2 choose by number")
    assert "Accept edits inside the plan's scope" in screen
    pane.keys("2")


def test_approve_in_scope_deny_unplanned_report_then_undo(project: Path, tmp_path: Path) -> None:
    before = outside_plans(project)
    with ScriptedServer(REPLIES, tmp_path / "model") as server:
        args = ("--plan", "--provider", "openai", "--base-url", server.base_url)
        # The window is configured so planshell never asks the server for it (one
        # request per scripted reply).
        env = {"PLANSHELL_CONTEXT_WINDOW": "200000"}
        with start_planshell(
            project, tmp_path / "home", *args, "--model", "scripted", size=(110, 50), env=env
        ) as pane:
            pane.wait_until(
                lambda s: status_line(s).lstrip().startswith("PLAN"), what="the PLAN chip"
            )
            pane.type("rate limit the handler")
            pane.keys("Enter")
            approve_in_scope(pane)

            # The planned edit runs without a question; the unplanned write asks.
            screen = pane.wait_for(f"Unplanned file {UNPLANNED}")
            assert "+CACHE = {}" in screen  # the write it would make, as a diff
            assert "limiter.take()" in (project / SERVER).read_text()
            pane.keys("Escape")  # deny: safe, so it acts at once
            pane.wait_gone(f"Unplanned file {UNPLANNED}")

            # plan_complete opens the report: every step, the check, the files.
            screen = pane.wait_until(
                lambda s: "Plan report:" in s and "u undo it" in s, what="the report, ready"
            )
            assert not (project / UNPLANNED).exists()
            assert "Complete: 3/3 steps closed, every check passed." in screen
            assert "⚠ Decide the bucket size" in screen
            assert "ticked without evidence" in screen
            assert f"✓ {CHECK}: exit 0" in screen
            files = screen.split("Changed, planned (1)")[1]
            assert SERVER in files.split("Run")[0]
            assert "Changed, not planned" not in screen  # denied: never changed
            assert UNPLANNED not in screen
            assert "2130 tokens" in screen  # the two replies that reported usage
            assert any(r.startswith("The user denied this.") for r in tool_results(server))

            # u: the undo flow shows what it will restore; Enter restores it.
            pane.keys("u")
            screen = pane.wait_for("Enter undo (restore")
            assert "limiter.take()" in screen
            pane.keys("Enter")
            pane.wait_for("Undid the last plan")
            assert outside_plans(project) == before

            pane.wait_until(lambda s: "working" not in s, what="the turn to end")
            pane.type("/quit")
            pane.keys("Enter")
            assert pane.wait_exit() == 0
        requests = server.chat_requests()
    # One request per reply: nothing was retried or asked twice, and the script ran out
    # exactly at its end.
    assert len(requests) == len(REPLIES)
    assert json.dumps(requests[0]["json"]["messages"]).count("rate limit the handler") == 1
