"""SVG snapshot of the chat while an approved plan runs: EXECUTE chip and the checklist.

Deterministic: a scripted model, a fixed plan file name, no session files, and
the screenshot is taken after the turn (no spinner, no elapsed time) with the
toasts cleared and the prompt's cursor blink frozen. Update with
``pytest tests/test_ui_plan_snapshots.py --snapshot-update`` and look at the SVG.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.pilot import Pilot

from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.chat import ChatScreen
from tests.test_ui_plan import PLAN

TICK = ("set_plan_steps", {"updates": [{"step": 1, "status": "done", "expected": "Read the server"}]})


def execute_app(project: Path) -> PlanshellApp:
    replies = [
        Reply(text="Step 1: reading `src/app/server.py`.", calls=[TICK]),
        Reply(text="Step 1 is done. Next: **add the cache**."),
    ]
    settings = Settings.model_validate({"plan": {"sandbox": "off"}})
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


async def run_execution(pilot: Pilot) -> None:
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    await _until(pilot, lambda: screen.ready)
    runtime = pilot.app.runtime  # type: ignore[attr-defined]
    path = runtime.store.write("caching.md", PLAN)
    runtime.plan.execute_existing(path)
    prompt = screen.prompt
    prompt.cursor_blink = False
    prompt.set_text("Go ahead with the plan.")
    await pilot.press("enter")
    await pilot.pause(0.05)
    await _until(pilot, lambda: not screen._is_busy() and not screen.transcript.streaming)
    await _until(pilot, lambda: screen.plan_ui.checklist_visible)
    await pilot.pause(0.1)
    pilot.app.clear_notifications()
    await pilot.pause()


def test_execute_with_checklist_snapshot(snap_compare, project: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(execute_app(project), terminal_size=(100, 30), run_before=run_execution)
