"""End and ctrl+End from the prompt go to the bottom and follow; G stays the transcript's (issue 26.3)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.pilot import Pilot

from planshell.llm.scripted import Reply
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.screens.help import HelpScreen
from tests.ui_helpers import idle, make_app, ready, send, until

LONG = "\n\n".join(f"Paragraph {i} of a long answer." for i in range(80))


def at_bottom(screen: ChatScreen) -> bool:
    transcript = screen.transcript
    return round(transcript.scroll_y) >= transcript.max_scroll_y


async def scrolled_up_mid_stream(pilot: Pilot, screen: ChatScreen) -> None:
    await send(pilot, "long please")
    await until(pilot, lambda: screen.transcript.max_scroll_y > 30)
    await pilot.press("pageup")
    await pilot.pause()
    assert not screen.transcript.following
    assert screen.prompt.has_focus


@pytest.mark.parametrize("key", ["end", "ctrl+end"])
@pytest.mark.parametrize("draft", ["", "a draft"])
async def test_end_from_the_prompt_goes_to_the_bottom_and_follows(
    project: Path, key: str, draft: str
) -> None:
    more = asyncio.Event()
    app = make_app(project, [Reply(text=LONG, chunk=len(LONG) // 2 + 1, hold=more)])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        await scrolled_up_mid_stream(pilot, screen)
        screen.prompt.insert(draft)  # the cursor is at its end
        await pilot.press(key)
        await pilot.pause()
        assert screen.transcript.following
        assert screen.prompt.text == draft
        more.set()
        await idle(pilot, screen)
        assert at_bottom(screen)
        assert "Paragraph 79" in screen.transcript.visible_text()


async def test_end_inside_a_draft_moves_the_cursor_not_the_transcript(project: Path) -> None:
    app = make_app(project, [Reply(text=LONG)])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        await send(pilot, "long please")
        await idle(pilot, screen)
        await pilot.press("pageup")
        await pilot.pause()
        prompt = screen.prompt
        prompt.insert("first line\nsecond")
        prompt.move_cursor((0, 3))
        await pilot.press("end")
        assert prompt.cursor_location == (0, len("first line"))
        assert not screen.transcript.following
        await pilot.press("ctrl+end")
        assert prompt.cursor_location == (1, len("second"))
        assert not screen.transcript.following
        await pilot.press("end")  # now at the end of the draft
        await pilot.pause()
        assert screen.transcript.following
        assert at_bottom(screen)


async def test_g_is_typed_in_the_prompt_and_goes_to_the_bottom_from_the_transcript(
    project: Path,
) -> None:
    app = make_app(project, [Reply(text=LONG)])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        await send(pilot, "long please")
        await idle(pilot, screen)
        await pilot.press("pageup")
        await pilot.press("G")
        await pilot.pause()
        assert screen.prompt.text == "G"
        assert not screen.transcript.following
        screen.transcript.focus()
        await pilot.press("G")
        await pilot.pause()
        assert screen.transcript.following


async def test_help_names_end_from_the_prompt_and_g_in_the_transcript(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        keys = dict(app.screen.keys)  # type: ignore[attr-defined]
        assert "bottom" in keys["end"].lower()
        assert "ctrl+end" in keys["end"]
        assert "transcript" in keys["G"].lower()
