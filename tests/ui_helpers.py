"""Shared Pilot helpers for the chat-app tests and snapshots."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Callable
from pathlib import Path

from rich.cells import cell_len
from textual.app import App
from textual.pilot import Pilot

from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.chat import ChatScreen
from tests.engine_helpers import HANG_GUARD

SIZE = (100, 30)  # the chat tests' terminal


def make_app(project: Path, replies: list[Reply], **kwargs: object) -> PlanshellApp:
    """A chat app on the scripted provider, persisting nothing unless asked."""
    kwargs.setdefault("persist", False)
    return PlanshellApp(
        Settings(),
        project,
        provider=ScriptedProvider(replies),
        project_label="~/proj",
        **kwargs,  # type: ignore[arg-type]
    )


def demo_app(project: Path, **kwargs: object) -> PlanshellApp:
    """A chat app on the offline demo model, unpaced, persisting nothing."""
    from planshell.llm.demo import DemoProvider

    return PlanshellApp(
        Settings(),
        project,
        provider=DemoProvider(chunk_delay=0),
        persist=False,
        project_label="~/proj",
        **kwargs,  # type: ignore[arg-type]
    )


async def ready(pilot: Pilot) -> ChatScreen:
    """The chat screen, once it says it is ready for input."""
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    await until(pilot, lambda: screen.ready)
    return screen


async def send(pilot: Pilot, text: str) -> None:
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    screen.prompt.set_text(text)
    await pilot.press("enter")


def settled(screen: ChatScreen) -> bool:
    """Nothing runs and nothing streams: the turn is over."""
    return not screen.busy and not screen.transcript.streaming


async def idle(pilot: Pilot, screen: ChatScreen) -> None:
    await until(pilot, lambda: settled(screen))
    await pilot.pause()


async def until(pilot: Pilot, predicate: Callable[[], bool], timeout: float = HANG_GUARD) -> None:
    """Let the app run until ``predicate`` holds, then until its pending messages are done.

    The app runs on this loop, so a plain sleep between checks is enough for it to make
    progress; ``pilot.pause`` on every check would also force a screen refresh and post a
    callback to every widget, 50 times a second, for nothing. ``timeout`` only guards
    against a hang on a busy machine; it is no speed budget.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"the UI did not get there within {timeout:g} s (hang guard)")
        await asyncio.sleep(0.01)
    await pilot.pause()


async def read_whole_plan(pilot: Pilot) -> None:
    """Page the current screen's plan view from top to bottom, so every section counts as seen
    (the review asks "Not viewed: … — approve anyway?" otherwise), then back to the top."""
    from planshell.ui.widgets.plan_view import PlanView

    view = pilot.app.screen.query_one(PlanView)
    await pilot.pause()
    view.action_top()
    for _ in range(10_000):
        if view.coverage.complete:
            break
        view.action_page(1)
        await pilot.pause()
    assert view.coverage.complete, view.unseen_titles()
    view.action_top()
    await pilot.pause()


def snapshot_app(project: Path, replies: list[Reply], settings: Settings) -> PlanshellApp:
    """A chat app with nothing that varies between runs (label, sessions, theme file)."""
    return PlanshellApp(
        settings,
        project,
        provider=ScriptedProvider(replies),
        persist=False,
        project_label="~/projects/widgets",
        remember_theme=False,
    )


async def ready_for_snapshot(pilot: Pilot) -> ChatScreen:
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    await until(pilot, lambda: screen.ready)
    screen.prompt.cursor_blink = False
    return screen


async def send_and_settle(pilot: Pilot, screen: ChatScreen, text: str) -> None:
    """Send ``text`` and wait until the turn is over (no spinner, nothing streaming)."""
    screen.prompt.set_text(text)
    await pilot.press("enter")
    await pilot.pause(0.05)
    await until(pilot, lambda: settled(screen))


async def clear_toasts(pilot: Pilot) -> None:
    await pilot.pause(0.1)
    pilot.app.clear_notifications()
    await pilot.pause()


_SVG_TEXT = re.compile(
    r'<text [^>]*?x="([\d.]+)" y="([\d.]+)" textLength="([\d.]+)"[^>]*>(.*?)</text>'
)


def screen_text(app: App[object]) -> str:
    """What the terminal shows, as text: the rows of the app's own screenshot.

    The SVG draws each run of text at its cell (x / cell width); blank cells are only
    background, so the row is rebuilt cell by cell.
    """
    rows: dict[float, dict[int, str]] = {}
    for x, y, length, raw in _SVG_TEXT.findall(app.export_screenshot()):
        text = html.unescape(raw).replace("\xa0", " ")
        cells = cell_len(text)
        if not cells:
            continue
        cell = round(float(x) / (float(length) / cells))
        row = rows.setdefault(float(y), {})
        for char in text:
            row[cell] = char
            if cell_len(char) == 2:
                row[cell + 1] = ""  # the wide character's second cell
            cell += cell_len(char)
    lines = []
    for _, row in sorted(rows.items()):
        width = max(row) + 1
        lines.append("".join(row.get(column, " ") for column in range(width)).rstrip())
    return "\n".join(lines)
