"""Esc in the review (keep planning) shows the person what happened, not the engine's words.

A real app on the offline demo provider: the demo writes a plan and asks for review.
exit_plan_mode's result stays written for the model ("… Stay in plan mode; wait for
the user's next message"); the transcript, the demo's reply included, says "kept
planning" in the person's terms (issue 26, item 22).
"""

from __future__ import annotations

from pathlib import Path

from planshell.ui.screens.chat import ChatScreen
from planshell.ui.screens.review import ReviewScreen
from tests.ui_helpers import demo_app, idle, ready, screen_text, send, until


async def test_esc_in_the_review_shows_the_person_facing_line(project: Path) -> None:
    app = demo_app(project, plan=True)
    async with app.run_test(size=(110, 36)) as pilot:
        chat = await ready(pilot)
        await send(pilot, "add rate limiting to the request handler")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ChatScreen))
        await idle(pilot, chat)
        shown = screen_text(app)
        assert "Stay in plan mode" not in shown and "has not approved" not in shown, shown
        assert "kept planning" in shown.lower(), shown
        assert "Tell me what to change" in shown, shown
        assert app.runtime.plan.mode.value == "plan"
