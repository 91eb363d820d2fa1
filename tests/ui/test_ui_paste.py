"""Pastes: CR, CRLF and LF all mean a line break; lines are counted and folded alike (issue 26.1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from planshell.llm.scripted import Reply
from planshell.ui.widgets.messages import paste_chip
from planshell.ui.widgets.prompt import PASTE_FOLD_LINES
from tests.ui_helpers import idle, make_app, ready

NEWLINES = {"CR": "\r", "CRLF": "\r\n", "LF": "\n"}


def lines_of(count: int, width: int = 60) -> list[str]:
    return [f"line {i} of the pasted log".ljust(width, ".") for i in range(count)]


@pytest.mark.parametrize("newline", NEWLINES.values(), ids=NEWLINES.keys())
def test_the_chip_counts_lines_whatever_the_line_break(newline: str) -> None:
    text = newline.join(lines_of(42)) + newline
    assert paste_chip(text).startswith("[pasted 42 lines, ")
    assert paste_chip(newline.join(lines_of(42))).startswith("[pasted 42 lines, ")


@pytest.mark.parametrize("newline", NEWLINES.values(), ids=NEWLINES.keys())
async def test_a_long_paste_reaches_the_model_with_its_line_breaks(
    project: Path, newline: str
) -> None:
    """A terminal sends CR for each newline: the chip says 42 lines and the model gets 42 lines."""
    rows = lines_of(42)
    app = make_app(project, [Reply(text="Read it.")])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        app.post_message(events.Paste(newline.join(rows) + newline))
        await pilot.pause()
        assert screen.prompt.text.startswith("[pasted 42 lines, ")
        await pilot.press("enter")
        await idle(pilot, screen)
        assert app.runtime is not None
        assert app.runtime.agent.messages[0].content == "\n".join(rows)
        assert "[pasted 42 lines," in screen.transcript.visible_text()


@pytest.mark.parametrize("newline", NEWLINES.values(), ids=NEWLINES.keys())
async def test_a_short_paste_over_the_line_limit_folds(project: Path, newline: str) -> None:
    """Twelve short lines fold (more than PASTE_FOLD_LINES), whatever the line break."""
    rows = [f"row {i}" for i in range(PASTE_FOLD_LINES + 4)]
    app = make_app(project, [])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        app.post_message(events.Paste(newline.join(rows)))
        await pilot.pause()
        assert screen.prompt.text == f"[pasted {len(rows)} lines, 73 B]"


@pytest.mark.parametrize("newline", NEWLINES.values(), ids=NEWLINES.keys())
async def test_an_unfolded_paste_keeps_its_line_breaks_as_lf(project: Path, newline: str) -> None:
    rows = ["first", "second", "third"]
    app = make_app(project, [])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        app.post_message(events.Paste(newline.join(rows) + newline))
        await pilot.pause()
        assert screen.prompt.text == "first\nsecond\nthird\n"
        assert "\r" not in screen.prompt.document.text


async def test_exactly_the_fold_limit_stays_unfolded(project: Path) -> None:
    rows = [f"row {i}" for i in range(PASTE_FOLD_LINES)]
    app = make_app(project, [])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(pilot)
        app.post_message(events.Paste("\r".join(rows) + "\r"))
        await pilot.pause()
        assert screen.prompt.text == "\n".join(rows) + "\n"
