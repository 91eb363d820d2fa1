"""The chat app under a permission mode: start it, send a prompt, wait for the turn to end."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from planshell.config import Settings
from planshell.llm.scripted import Reply
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.chat import ChatScreen
from tests.ui_helpers import ready_for_snapshot, snapshot_app, until


def permission_app(project: Path, replies: list[Reply], mode: str = "ask") -> PlanshellApp:
    """The snapshot chat app with the permission mode MODE and scripted REPLIES."""
    settings = Settings.model_validate({"permissions": {"mode": mode}})
    return snapshot_app(project, replies, settings)


async def send_prompt(pilot: Pilot, text: str = "go") -> ChatScreen:
    """Wait for the chat, send TEXT; the chat screen."""
    screen = await ready_for_snapshot(pilot)
    screen.prompt.set_text(text)
    await pilot.press("enter")
    return screen


async def until_turn_done(pilot: Pilot, chat: ChatScreen) -> None:
    """Wait until the chat is on top again and its turn is over."""
    await until(pilot, lambda: pilot.app.screen is chat and not chat.busy)
