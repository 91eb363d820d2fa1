"""SVG snapshots of the chat: a short conversation with a tool row and an error row.

Deterministic by construction: a scripted provider, a fixed project label,
no session files, and the screenshot is taken once the turn is over (no
spinner, no elapsed time) with the prompt's cursor blink frozen.
Update with ``pytest tests/ui/test_ui_snapshots.py --snapshot-update`` and look
at the SVGs before committing them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from planshell.config import Settings
from planshell.llm.scripted import Reply
from planshell.llm.types import ProviderError, Usage
from planshell.ui.app import PlanshellApp
from planshell.ui.widgets.messages import ErrorRow
from tests.ui.samples import ANSWER
from tests.ui_helpers import (
    clear_toasts,
    ready_for_snapshot,
    send_and_settle,
    settled,
    snapshot_app,
    until,
)


def conversation_app(project: Path, theme: str) -> PlanshellApp:
    replies = [
        Reply(text="Let me read the README.", calls=[("read", {"path": "README.md"})]),
        Reply(text=ANSWER, usage=Usage(input_tokens=1180, output_tokens=64)),
        Reply(error=ProviderError("The model provider answered 503 (overloaded).")),
    ]
    return snapshot_app(project, replies, Settings.model_validate({"ui": {"theme": theme}}))


async def run_conversation(pilot: Pilot) -> None:
    screen = await ready_for_snapshot(pilot)
    for text in ("What is this project?", "And the deployment?"):
        await send_and_settle(pilot, screen, text)
    await until(pilot, lambda: bool(screen.transcript.entries_of(ErrorRow)))
    await clear_toasts(pilot)


@pytest.mark.parametrize("theme", ["planshell-dark", "planshell-light"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_chat_snapshot(snap_compare, project: Path, theme: str, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    app = conversation_app(project, theme)
    assert snap_compare(app, terminal_size=size, run_before=run_conversation)


async def _toggle_plan(pilot: Pilot) -> None:
    await ready_for_snapshot(pilot)
    await pilot.press("f2")
    await until(pilot, lambda: bool(pilot.app.screen.query("Toast")))
    await pilot.pause(0.3)  # the toast's fade-in


def test_mode_toast_hides_neither_status_bar_nor_prompt(snap_compare, project: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 12, item 11: the mode toast sits at the transcript's top right."""
    # sandbox off: the same toast whether or not this machine has bubblewrap
    app = snapshot_app(project, [], Settings.model_validate({"plan": {"sandbox": "off"}}))
    assert snap_compare(app, terminal_size=(80, 24), run_before=_toggle_plan)


async def test_mode_toast_does_not_cover_the_status_bar(project: Path) -> None:
    app = snapshot_app(project, [], Settings())
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        screen = await ready_for_snapshot(pilot)
        await pilot.press("f2")
        await until(pilot, lambda: bool(screen.query("Toast")))
        await pilot.pause()
        toast = screen.query_one("Toast").region
        for widget in (screen.status, screen.prompt, screen.query_one("#footer")):
            assert not toast.overlaps(widget.region), (toast, widget, widget.region)


MARKDOWN_ANSWER = """## Result

The handler in `server.py` reads the *request*; see [the docs](https://example.com/docs).

```python
def handler(request):
    return dispatch(parse(request), retries=3)
```

| step | file | status |
|---|---|---|
| 1 | `src/a.py` | done |
| 2 | `src/b.py` | todo |"""


def transcript_app(project: Path, theme: str) -> PlanshellApp:
    replies = [
        Reply(
            text="Reading two files.",
            calls=[("read", {"path": "README.md"}), ("read", {"path": "missing.txt"})],
        ),
        Reply(text=MARKDOWN_ANSWER, usage=Usage(input_tokens=900, output_tokens=80)),
    ]
    return snapshot_app(project, replies, Settings.model_validate({"ui": {"theme": theme}}))


async def run_transcript(pilot: Pilot) -> None:
    """A folded paste, a collapsed and an expanded tool row, text, code and a table."""
    from textual import events

    from planshell.ui.widgets.tool_row import ToolRow

    screen = await ready_for_snapshot(pilot)
    paste = "".join(f"log line {i}\n" for i in range(40))
    screen.prompt.insert("what failed? ")
    screen.prompt.post_message(events.Paste(paste))
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause(0.05)
    await until(pilot, lambda: settled(screen))
    first, _ = screen.transcript.entries_of(ToolRow)
    first.toggle()
    screen.transcript.follow()
    await clear_toasts(pilot)


@pytest.mark.parametrize("theme", ["planshell-dark", "planshell-light"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_transcript_snapshot(
    snap_compare, project: Path, theme: str, size: tuple[int, int]
) -> None:  # type: ignore[no-untyped-def]
    app = transcript_app(project, theme)
    assert snap_compare(app, terminal_size=size, run_before=run_transcript)
