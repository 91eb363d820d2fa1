"""The chat screen's side of context: /retry and its spinner, /compact, the status readout."""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual.widgets import Static

from planshell.llm.scripted import Reply
from planshell.llm.types import Message, ToolCall
from planshell.ui.widgets.status import StatusBar, format_context
from planshell.ui.widgets.summary import SummaryRow
from tests.ui_helpers import SIZE, idle, make_app, ready, send, until


def activity_text(screen) -> str:
    widget = screen.status.query_one("#activity", Static)
    rendered = widget.render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


async def test_retry_regenerates_and_the_spinner_stops_when_it_ends(project):
    app = make_app(project, [Reply(text="first answer"), Reply(text="second answer", delay=0.5)])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "hello")
        await idle(pilot, screen)
        await send(pilot, "/retry")
        # The spinner follows the retried turn (set when /retry starts it) ...
        await until(pilot, lambda: "working" in activity_text(screen))
        await idle(pilot, screen)
        # ... and stops when it ends (it used to freeze at "working 0s").
        await until(pilot, lambda: activity_text(screen) == "")
        assert not screen.status.query_one("#activity").has_class("-busy")
        contents = [m.content for m in screen.runtime.agent.messages]
        assert contents == ["hello", "second answer"]


async def test_compact_shows_a_collapsed_summary_row(project):
    app = make_app(project, [Reply(text="SUMMARY TEXT")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        history = []
        for i in range(6):
            history += [
                Message("user", f"q{i} " + "u" * 3000),
                Message("assistant", "", tool_calls=[ToolCall(f"c{i}", "read", "{}")]),
                Message("tool", "r" * 3000, tool_call_id=f"c{i}", tool_name="read"),
                Message("assistant", f"a{i}"),
            ]
        screen.runtime.agent.load_history(history)
        await send(pilot, "/compact the file names")
        await until(pilot, lambda: bool(screen.transcript.entries_of(SummaryRow)))
        (row,) = screen.transcript.entries_of(SummaryRow)
        assert row.collapsed and "compacted" in row.title
        await idle(pilot, screen)
        assert activity_text(screen) == ""


async def test_status_bar_warns_past_80_percent(project):
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        bar: StatusBar = screen.status
        bar.set_context(700, 1000, None)
        tokens = bar.query_one("#tokens")
        assert not tokens.has_class("-warning")
        bar.set_context(850, 1000, 0.0123)
        assert tokens.has_class("-warning")
        assert format_context(850, 1000, 0.0123) == "850 / 1.0k ctx · $0.012"
        assert format_context(12_300, None) == "12.3k ctx"


async def test_an_answer_stopped_by_a_full_window_says_so(project):
    from planshell.config import Settings
    from planshell.llm.scripted import ScriptedProvider
    from planshell.llm.types import Usage
    from planshell.ui.app import PlanshellApp
    from planshell.ui.widgets.messages import NoteRow

    full = Reply(text="It is possible", usage=Usage(3400, 690), stop_reason="max_tokens")
    app = PlanshellApp(
        Settings(context_window=4096),
        project,
        provider=ScriptedProvider([full]),
        project_label="~/proj",
        persist=False,
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "hello")
        await idle(pilot, screen)
        notes = [n.message for n in screen.transcript.entries_of(NoteRow)]
        assert any("context window is full" in n for n in notes)
        assert not any("(max_tokens)" in n for n in notes)  # not blamed on max_tokens


async def test_the_spinner_rests_under_a_dialog_and_goes_on_after_it(project):
    """Under a dialog the spinner is hidden: ticking it only redrew the dimmed background."""
    from planshell.ui.screens.confirm import ConfirmScreen

    release = asyncio.Event()
    app = make_app(project, [Reply(text="a long answer " * 20, chunk=8, hold=release)])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "hello")
        await until(pilot, lambda: "working" in activity_text(screen))
        dialog = ConfirmScreen("Anything?", yes="Yes", no="No")
        app.push_screen(dialog)
        await until(pilot, lambda: app.screen is dialog)
        resting = activity_text(screen)
        await asyncio.sleep(0.35)  # a spinner that ticked would have moved 3 frames by now
        await pilot.pause()
        assert activity_text(screen) == resting
        dialog.dismiss(False)
        await until(pilot, lambda: app.screen is screen)
        await until(pilot, lambda: activity_text(screen) not in ("", resting))
        assert "working" in activity_text(screen)
        release.set()
        await idle(pilot, screen)
        await until(pilot, lambda: activity_text(screen) == "")
