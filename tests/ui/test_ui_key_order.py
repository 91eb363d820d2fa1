"""Keys that arrive together take effect in the order they were typed (ui/widgets/key_order.py).

A terminal delivers a burst of keys at once when the typist is fast or the app was
busy (loading a long session, a frame): Textual ran a text field's bindings only
after the key bubbled up to the App, so a backspace landed after the text typed
behind it. The burst is posted to the App the way its driver posts keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import TextArea

from planshell.ui.keygrace import KeyGrace
from planshell.ui.widgets.feedback_area import FeedbackArea
from planshell.ui.widgets.key_order import KeysInOrder
from tests.ui_helpers import SIZE, make_app, until


def burst(app: App, keys: list[str]) -> None:
    """Post ``keys`` to the app in one go, as the driver does for bytes read together."""
    for key in keys:
        character = key if len(key) == 1 else None
        app.post_message(events.Key(key, character))


async def test_a_burst_with_backspaces_edits_the_prompt_in_order(tmp_path: Path) -> None:
    app = make_app(tmp_path, [])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.screen.ready)
        burst(app, ["a", "b", "backspace", "backspace", "x", "y", "left", "backspace", "z"])
        await until(pilot, lambda: "z" in app.screen.prompt.text)  # the last key, typed text
        await pilot.pause()  # a binding Textual ran late would land here
        assert app.screen.prompt.text == "zy"


async def test_a_burst_in_the_refine_editor_keeps_its_order(tmp_path: Path) -> None:
    class Editor(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield FeedbackArea()

    app = Editor()
    async with app.run_test(size=SIZE) as pilot:
        area = app.query_one(FeedbackArea)
        area.focus()
        await pilot.pause()
        burst(app, ["o", "k", "backspace", "backspace", "n", "o"])
        await until(pilot, lambda: "n" in area.text)
        await pilot.pause()
        assert area.text == "no"


async def test_a_fields_own_decision_typed_before_a_decision_screen_was_ready_stays_held(
    tmp_path: Path,
) -> None:
    """Key grace still sees the keys a field runs early: its own ``submit`` is held until the
    screen is ready, while its editing keys work at once."""

    class Field(KeysInOrder, TextArea):
        BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+s", "submit")]
        submitted = 0

        def action_submit(self) -> None:
            self.submitted += 1

    class Decision(KeyGrace, Screen[None]):
        GRACE = 30.0  # never ends in this test: every key counts as typed too early
        GUARDED_ACTIONS = frozenset({"approve"})

        def compose(self) -> ComposeResult:
            yield Field("xy")

    class Host(App[None]):
        async def on_mount(self) -> None:
            await self.push_screen(Decision())

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        field = app.screen.query_one(Field)
        field.focus()
        field.move_cursor((0, 2))
        await pilot.pause()
        burst(app, ["ctrl+s", "backspace", "z"])
        await until(pilot, lambda: "z" in field.text)
        await pilot.pause()
        assert field.text == "xz"
        assert field.submitted == 0
