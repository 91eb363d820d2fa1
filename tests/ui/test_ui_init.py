"""/init shows as ``/init`` in the transcript; the model still gets the whole request (issue 26.21)."""

from __future__ import annotations

from pathlib import Path

from planshell.llm.types import Message
from planshell.plan.init import INIT_REQUEST
from planshell.ui.screens.questions import QuestionsScreen
from planshell.ui.widgets.messages import UserMessage
from planshell.ui.widgets.resumed import resumed_entries
from tests.ui_helpers import SIZE, demo_app, ready, until


async def test_init_shows_the_command_not_the_internal_request(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("test:\n\tpytest\n")
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.prompt.set_text("/init")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, QuestionsScreen))
        (message,) = screen.transcript.entries_of(UserMessage)
        assert message.shown_text() == "/init"
        assert "Explore read-only" not in screen.transcript.visible_text()
        assert app.runtime is not None
        assert app.runtime.agent.messages[0].content == INIT_REQUEST


def test_a_resumed_init_shows_the_command() -> None:
    entries = list(resumed_entries([Message(role="user", content=INIT_REQUEST)], None, None))
    (message,) = [e for e in entries if isinstance(e, UserMessage)]
    assert message.shown_text() == "/init"
