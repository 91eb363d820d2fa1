"""The virtualized transcript: following, resizes, folded pastes, tool-row keys (issue 12/13)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot

from planshell.llm.scripted import Reply
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.widgets.messages import UserMessage
from planshell.ui.widgets.tool_row import ToolRow
from tests.ui_helpers import idle, make_app, ready, send, until

LONG = "\n\n".join(f"Paragraph {i} of a long answer." for i in range(80))


def at_bottom(screen: ChatScreen) -> bool:
    transcript = screen.transcript
    return round(transcript.scroll_y) >= transcript.max_scroll_y


async def scroll_up_while_streaming(pilot: Pilot, screen: ChatScreen) -> None:
    transcript = screen.transcript
    await send(pilot, "long please")
    await until(pilot, lambda: transcript.max_scroll_y > 30)
    await pilot.press("pageup")
    await pilot.pause()
    assert not transcript.following


@pytest.mark.parametrize("how", ["pagedown", "end", "G", "wheel"])
async def test_returning_to_the_bottom_by_any_means_reattaches(project: Path, how: str) -> None:
    """Issue 12 item 2: PgUp then back to the bottom keeps following the stream.

    The reply streams its first half, then holds the turn open until the view is
    back at the bottom; the second half must then be followed to the end.
    """
    more = asyncio.Event()
    app = make_app(project, [Reply(text=LONG, chunk=len(LONG) // 2 + 1, hold=more)])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        transcript = screen.transcript
        await scroll_up_while_streaming(pilot, screen)
        if how == "pagedown":
            while not at_bottom(screen):
                await pilot.press("pagedown")
                await pilot.pause()
        elif how == "wheel":
            while not at_bottom(screen):
                transcript.post_message(
                    events.MouseScrollDown(transcript, 5, 5, 0, 1, 0, False, False, False)
                )
                await pilot.pause()
        else:
            transcript.focus()
            await pilot.press(how)
        await pilot.pause()
        assert transcript.following
        assert screen.busy  # still streaming: the rest of the reply is yet to come
        assert "Paragraph 79" not in transcript.visible_text()
        more.set()
        await idle(pilot, screen)
        await pilot.pause()
        assert at_bottom(screen)
        assert "Paragraph 79" in transcript.visible_text()


async def test_a_view_at_the_bottom_stays_there_across_resizes(project: Path) -> None:
    """Issue 12 item 3: narrowing 120x40 -> 80x24 keeps the end of the reply on screen."""
    app = make_app(project, [Reply(text=LONG)])
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot)
        await send(pilot, "long please")
        await idle(pilot, screen)
        for size in ((80, 24), (50, 20), (120, 40)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            await pilot.pause()
            assert at_bottom(screen), size
            assert "Paragraph 79" in screen.transcript.visible_text(), size


async def test_a_view_scrolled_up_keeps_its_place_across_a_resize(project: Path) -> None:
    app = make_app(project, [Reply(text=LONG)])
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot)
        await send(pilot, "long please")
        await idle(pilot, screen)
        transcript = screen.transcript
        transcript.focus()
        await pilot.press("home")
        for _ in range(3):
            await pilot.press("pagedown")
        await pilot.pause()
        top_line = transcript.visible_text().split("\n")[0:3]
        marker = next(line.strip() for line in top_line if "Paragraph" in line)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert not at_bottom(screen)
        assert marker in transcript.visible_text()


async def test_a_long_paste_is_folded_in_prompt_and_transcript(project: Path) -> None:
    """Issue 12 item 5: a chip in the prompt and in the transcript; the model gets it all."""
    paste = "".join(f"line {i} of the pasted log\n" for i in range(2000))
    app = make_app(project, [Reply(text="Thanks, reading it.")])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        prompt = screen.prompt
        prompt.insert("look at this: ")
        prompt.post_message(events.Paste(paste))
        await pilot.pause()
        assert prompt.text.startswith("look at this: [pasted 2,000 lines, ")
        assert prompt.text.count("\n") == 0
        await pilot.press("enter")
        await idle(pilot, screen)
        runtime = app.runtime
        assert runtime is not None
        assert runtime.agent.messages[0].content == ("look at this: " + paste).strip()
        (message,) = screen.transcript.entries_of(UserMessage)
        assert message.folded
        transcript = screen.transcript
        assert "[pasted 2,000 lines," in transcript.visible_text()
        assert "line 1999" not in transcript.visible_text()
        assert transcript.virtual_size.height < 30  # 2,000 lines are not laid out
        # Enter on the focused message expands it.
        transcript.focus()
        await pilot.press("up")
        assert transcript.cursor_entry is message
        await pilot.press("enter")
        await pilot.pause()
        assert not message.folded
        assert transcript.virtual_size.height > 2000


async def test_tool_rows_name_targets_show_results_and_take_keys(project: Path) -> None:
    """Issue 12 item 6: headline names the file; up/down walk rows; Enter expands any row."""
    replies = [
        Reply(calls=[("read", {"path": "README.md"}), ("read", {"path": "missing.txt"})]),
        Reply(text="Done."),
    ]
    app = make_app(project, replies)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        await send(pilot, "read both")
        await idle(pilot, screen)
        first, second = screen.transcript.entries_of(ToolRow)
        assert first.header_text().startswith("✓ read README.md")
        assert second.header_text().startswith("✗ read missing.txt")
        transcript = screen.transcript
        transcript.focus()
        await pilot.press("up")
        assert transcript.cursor_entry is second
        await pilot.press("up")
        assert transcript.cursor_entry is first
        await pilot.press("enter")
        await pilot.pause()
        assert first.expanded and not second.expanded
        assert "Widget Service" in transcript.visible_text() or any(
            "Widget Service" in transcript.rendered_line(r)
            for r in range(transcript.virtual_size.height)
        )
        await pilot.press("down", "enter")
        await pilot.pause()
        assert second.expanded


def test_one_line_results_are_shown_in_the_headline() -> None:
    row = ToolRow("1", "exit_plan_mode", "exit_plan_mode")
    row.finish("The user approved the plan.", False)
    assert "approved" in row.header_text()
    long = ToolRow("2", "read", "read a.py")
    long.finish("a\nb\nc\n", False)
    assert long.header_text().endswith("· 3 lines  ▸")
