"""Issue 29 end to end in the TUI: the review's approve dialog names the executing model,
and approving switches the requests from the planning model to it.

A real OpenAI-compatible server on 127.0.0.1 (tests/scripted_sse.py) replays the
model's turns; the models each request named are read back from the server's log.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from planshell.config import Settings
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.approve_mode import ApproveModeScreen
from planshell.ui.screens.handoff import HandoffScreen
from planshell.ui.screens.review import ReviewScreen
from tests.plan.contract_scenario import PLAN, SERVER
from tests.scripted_sse import ScriptedServer, SseReply
from tests.ui_helpers import SIZE, read_whole_plan, ready, send, until


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


async def test_approve_says_which_model_runs_the_plan_and_then_it_does(
    project: Path, tmp_path: Path
) -> None:
    replies = [
        SseReply(calls=[("write_plan", {"title": "Rate limit", "content": PLAN, "plan_path": "rl.md"})]),
        SseReply(calls=[("exit_plan_mode", {"plan_path": "rl.md"})]),
        SseReply("Executing now."),
    ]  # fmt: skip
    (project / SERVER).parent.mkdir(parents=True, exist_ok=True)
    (project / SERVER).write_text("def handle():\n    # TODO: rate limiting\n    return 1\n")
    with ScriptedServer(replies, tmp_path / "server") as server:
        settings = Settings.model_validate(
            {
                "provider": "openai",
                "base_url": server.base_url,
                "model": "exec-model",
                "context_window": 8192,
                "plan": {"model": "plan-model", "context_window": 8192},
                "ui": {"start_mode": "plan"},
            }
        )
        app = PlanshellApp(settings, project, persist=False, project_label="~/proj")
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await send(pilot, "Plan a rate limit.")
            await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
            await read_whole_plan(pilot)
            await pilot.press("a")
            await until(pilot, lambda: isinstance(app.screen, ApproveModeScreen))
            dialog = app.screen
            runner = str(dialog.query_one("#runner", Static).render())
            assert "Runs with openai · exec-model" in runner
            assert "planned with openai · plan-model" in runner
            assert dialog.query_one("#choices", OptionList).highlighted == 0
            await pilot.press("enter")  # ask, the focused choice
            await until(pilot, lambda: isinstance(app.screen, HandoffScreen))
            await pilot.press("k")  # keep the conversation
            await until(pilot, lambda: len(server.chat_requests()) == 3)
        models = [r["json"]["model"] for r in server.chat_requests()]
        assert models == ["plan-model", "plan-model", "exec-model"]
