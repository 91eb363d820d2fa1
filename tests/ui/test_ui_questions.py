"""The questions dialog (/init, ask_questions): keys typed fast land in the field they follow (issue 26.11)."""

from __future__ import annotations

from typing import Any

import pytest
from textual import events
from textual.app import App
from textual.pilot import Pilot

from planshell.ui.screens.questions import QuestionsScreen
from tests.ui_helpers import until

UNANSWERED: Any = object()
QUESTIONS = ["Which test command?", "Which port?", "Anything else?"]


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.answer: Any = UNANSWERED

    def ask(self) -> None:
        self.push_screen(QuestionsScreen(QUESTIONS), callback=self._answered)

    def _answered(self, answer: list[str] | None) -> None:
        self.answer = answer


def burst(pilot: Pilot, keys: list[str]) -> None:
    """Every key queued at once, as a terminal delivers fast typing: nothing runs between them."""
    app = pilot.app
    driver = app._driver
    assert driver is not None
    for key in keys:
        char = key if len(key) == 1 else None
        event = events.Key(key, char)
        event.set_sender(app)
        driver.send_message(event)


TYPED = ["p", "y", "tab", "8", "0", "enter", "n", "o"]


@pytest.mark.parametrize("how", ["pilot", "burst"])
async def test_keys_after_tab_or_enter_go_to_the_next_field(how: str) -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        app.ask()
        await until(pilot, lambda: isinstance(app.screen, QuestionsScreen))
        await pilot.pause()
        if how == "pilot":
            await pilot.press(*TYPED)
        else:
            burst(pilot, TYPED)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, QuestionsScreen)
        await pilot.pause()
        await pilot.pause()
        assert screen.answers == ["py", "80", "no"]
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.answer is not UNANSWERED)
    assert app.answer == ["py", "80", "no"]


async def test_shift_tab_goes_back_and_enter_in_the_last_field_sends() -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        app.ask()
        await until(pilot, lambda: isinstance(app.screen, QuestionsScreen))
        await pilot.pause()
        burst(pilot, ["tab", "tab", "z", "shift+tab", "y", "shift+tab", "x", "tab", "tab"])
        await pilot.pause()
        burst(pilot, ["enter"])
        await until(pilot, lambda: app.answer is not UNANSWERED)
    assert app.answer == ["x", "y", "z"]
