"""The TUI side of sub-agents (progress under the task row, tokens) and the questions dialog."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, Static

from planshell.config import Settings
from planshell.llm.scripted import Reply
from planshell.llm.types import Usage
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.questions import QuestionsScreen
from planshell.ui.widgets.tool_row import ToolRow
from tests.subagent_helpers import Router
from tests.ui_helpers import SIZE, demo_app, ready, settled, until


async def test_subagent_progress_streams_into_a_collapsible_row(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    router = Router(
        {
            "survey": [
                Reply(calls=[("task", {"description": "find x", "prompt": "P"})]),
                Reply("done"),
            ],
            "P": [
                Reply(calls=[("ls", {"path": "."}), ("grep", {"pattern": "x ="})]),
                Reply("x is in a.py", usage=Usage(1200, 300)),
            ],
        }
    )
    app = PlanshellApp(Settings(), tmp_path, provider=router, persist=False, project_label="~/p")
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.prompt.set_text("survey")
        await pilot.press("enter")
        await until(pilot, lambda: settled(screen))
        row = next(r for r in screen.transcript.tool_rows if r.tool_name == "task")
        assert not row.expanded and row.progress_title().startswith("2 steps · grep")
        assert row.progress[0] == "ls ." and any("grep x =" in p for p in row.progress)
        # Only the task's row has progress; the child's rows are not the parent's rows.
        assert [r.tool_name for r in screen.transcript.tool_rows] == ["task"]
        # its own status segment since issue 26 item 17 (dropped whole when narrow)
        assert "+1.5k sub-agents" in str(screen.status.query_one("#subagents", Static).content)
        assert row.toggle() and row.expanded
        assert "↳ ls ." in row.plain()


async def test_progress_for_an_unknown_call_is_ignored(tmp_path: Path) -> None:
    app = PlanshellApp(Settings(), tmp_path, provider=Router({}), persist=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.transcript.tool_progress("nope", "ls .")
        row = screen.transcript.tool_started("c1", "task", "task explore: x")
        screen.transcript.tool_progress("c1", "read \x1b[2Ja.py\x1b]0;title\x07")
        await pilot.pause()
        assert isinstance(row, ToolRow) and len(row.progress) == 1
        shown = row.progress[0]
        assert "\x1b" not in shown and "\x07" not in shown and "read" in shown


async def _questions(pilot: Pilot, after: QuestionsScreen | None = None) -> QuestionsScreen:
    """The dialog on screen: a new one, not ``after`` (which may still be leaving)."""

    def shown() -> bool:
        screen = pilot.app.screen
        return isinstance(screen, QuestionsScreen) and screen is not after and screen.is_mounted

    await until(pilot, shown)
    screen = pilot.app.screen
    assert isinstance(screen, QuestionsScreen)
    return screen


async def test_questions_dialog_answers_and_skips(tmp_path: Path) -> None:
    app = PlanshellApp(Settings(), tmp_path, provider=Router({}), persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        asked = asyncio.ensure_future(
            app.decider.ask_questions(
                ["What is it \x1b]52;c;aGk=\x07for?", "How to verify?", "Rules?"]
            )
        )
        dialog = await _questions(pilot)
        shown = [str(s.content) for s in dialog.query(".question").results(Static)]
        assert shown == ["1. What is it for?", "2. How to verify?", "3. Rules?"]
        await until(pilot, lambda: isinstance(app.focused, Input))  # the first answer field
        await pilot.press(*"a tool")
        await pilot.press("enter")  # next field
        await pilot.press(*"make test")
        await pilot.press("enter", "enter")  # the third stays empty; enter there sends
        assert await asyncio.wait_for(asked, 30) == ["a tool", "make test", ""]

        skipped = asyncio.ensure_future(app.decider.ask_questions(["Anything?"]))
        second = await _questions(pilot, after=dialog)
        await until(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press(*"ignored")
        await pilot.press("escape")
        assert await asyncio.wait_for(skipped, 30) is None

        clicked = asyncio.ensure_future(app.decider.ask_questions(["Anything?"]))
        third = await _questions(pilot, after=second)
        await until(pilot, lambda: third.query_one("#skip").region.area > 0)
        await pilot.click("#skip")
        assert await asyncio.wait_for(clicked, 30) is None


async def test_init_command_asks_in_one_dialog_then_shows_the_plan(tmp_path: Path) -> None:
    from planshell.ui.screens.review import ReviewScreen

    (tmp_path / "Makefile").write_text("test:\n\tpytest\n")
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.prompt.set_text("/init")
        await pilot.press("enter")
        dialog = await _questions(pilot)
        await until(pilot, lambda: isinstance(app.focused, Input))
        assert app.runtime is not None and app.runtime.plan.mode.value == "plan"
        assert len(dialog.query(Input)) == 4
        await pilot.press(*"Widgets for dashboards")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        review = app.screen
        assert isinstance(review, ReviewScreen)
        assert "Widgets for dashboards" in review.request.text
        assert "`make test` (Makefile target `test`)" in review.request.text
        assert not (tmp_path / "AGENTS.md").exists()
