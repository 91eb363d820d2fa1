"""SVG snapshots of the chat: a short conversation with a tool row and an error row.

Deterministic by construction: a scripted provider, a fixed project label,
no session files, and the screenshot is taken once the turn is over (no
spinner, no elapsed time) with the prompt's cursor blink frozen.
Update with ``pytest tests/test_ui_snapshots.py --snapshot-update`` and look
at the SVGs before committing them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.pilot import Pilot

from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.llm.types import ProviderError, Usage
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.widgets.messages import ErrorRow

ANSWER = """**Widget Service** is a tiny HTTP service.

- `src/app/server.py` handles requests
- `make test` runs the tests"""


def conversation_app(project: Path, theme: str) -> PlanshellApp:
    replies = [
        Reply(text="Let me read the README.", calls=[("read", {"path": "README.md"})]),
        Reply(text=ANSWER, usage=Usage(input_tokens=1180, output_tokens=64)),
        Reply(error=ProviderError("The model provider answered 503 (overloaded).")),
    ]
    settings = Settings.model_validate({"ui": {"theme": theme}})
    return PlanshellApp(
        settings,
        project,
        provider=ScriptedProvider(replies),
        persist=False,
        project_label="~/projects/widgets",
        remember_theme=False,
    )


async def _until(pilot: Pilot, predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out preparing the snapshot"
        await pilot.pause(0.02)


async def run_conversation(pilot: Pilot) -> None:
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    await _until(pilot, lambda: screen.ready)
    prompt = screen.prompt
    prompt.cursor_blink = False
    for text in ("What is this project?", "And the deployment?"):
        prompt.set_text(text)
        await pilot.press("enter")
        await pilot.pause(0.05)
        await _until(pilot, lambda: not screen._is_busy() and not screen.transcript.streaming)
    await _until(pilot, lambda: bool(screen.query(ErrorRow)))
    await pilot.pause(0.1)
    pilot.app.clear_notifications()
    await pilot.pause()


@pytest.mark.parametrize("theme", ["planshell-dark", "planshell-light"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_chat_snapshot(snap_compare, project: Path, theme: str, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    app = conversation_app(project, theme)
    assert snap_compare(app, terminal_size=size, run_before=run_conversation)
