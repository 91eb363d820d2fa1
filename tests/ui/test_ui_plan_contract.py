"""Issue 24's "done when", end to end in the chat (Pilot): approve in scope, execute, audit, undo.

The real app, tools, gates, checkpoint and report; only the model is scripted and the
person is the Pilot's keys.
"""

from __future__ import annotations

from pathlib import Path

from planshell.llm.scripted import Reply
from planshell.plan.controller import Mode
from planshell.ui.screens.approval import ApprovalScreen
from planshell.ui.screens.approve_mode import ApproveModeScreen
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.screens.plan_report import PlanReportScreen
from planshell.ui.screens.review import ReviewScreen
from planshell.ui.screens.undo import UndoScreen
from planshell.ui.widgets.messages import NoteRow
from tests.plan.checkpoint_helpers import outside_plans
from tests.plan.contract_scenario import CHECK, SERVER, TURNS, UNPLANNED
from tests.ui.plan_helpers import SIZE, make_app, runtime
from tests.ui_helpers import ready, screen_text, send, until

REPLIES = [Reply(text=text, calls=list(calls)) for text, calls in TURNS]


def tool_results(app) -> list[str]:
    return [m.content for m in runtime(app).agent.messages if m.role == "tool"]


async def test_approve_in_scope_then_the_report_then_undo_restores_every_byte(
    project: Path,
) -> None:
    app = make_app(project, REPLIES, plan=True)
    async with app.run_test(size=SIZE) as pilot:
        chat = await ready(pilot)
        before = outside_plans(project)
        await send(pilot, "rate limit the handler")

        # The review, then `a` and 2: accept edits inside the plan's scope.
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ApproveModeScreen))
        await pilot.press("2")
        await until(pilot, lambda: runtime(app).plan.mode is Mode.EXECUTE)

        # The planned edit runs without a question; the unplanned write asks, and Esc denies.
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert "limiter.take()" in (project / SERVER).read_text()
        asked = app.screen
        assert f"Unplanned file {UNPLANNED}" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is not asked)
        assert not (project / UNPLANNED).exists()
        assert any(r.startswith("The user denied this.") for r in tool_results(app))

        # plan_complete opens the report.
        await until(pilot, lambda: isinstance(app.screen, PlanReportScreen))
        report = app.screen
        assert isinstance(report, PlanReportScreen)
        await pilot.pause()
        text = report.markdown
        assert "**Complete**: 3/3 steps closed, every check passed." in text
        assert "2. ⚠ Decide the bucket size" in text
        assert "ticked without evidence" in text
        assert f"`{SERVER}`" in text.split("**Changed, planned** (1)")[1].split("**")[0]
        assert f"✓ `{CHECK}`: exit 0" in text
        assert UNPLANNED not in text  # denied: never changed, never planned
        assert "Changed, not planned" not in text
        shown = screen_text(app)
        assert "Decide the bucket size" in shown and "⚠" in shown

        # u: the /undo flow; Enter undoes.
        await pilot.press("u")
        await until(pilot, lambda: isinstance(app.screen, UndoScreen))
        await pilot.press("enter")
        await until(
            pilot,
            lambda: any(
                n.message.startswith("Undid the last plan")
                for n in chat.transcript.entries_of(NoteRow)
            ),
        )
        await until(pilot, lambda: isinstance(app.screen, ChatScreen))
        assert outside_plans(project) == before
