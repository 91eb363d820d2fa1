"""SVG snapshot of the chat while an approved plan runs: EXECUTE chip and the checklist.

Deterministic: a scripted model, a fixed plan file name, no session files, and
the screenshot is taken after the turn (no spinner, no elapsed time) with the
toasts cleared and the prompt's cursor blink frozen. Update with
``pytest tests/ui/test_ui_plan_snapshots.py --snapshot-update`` and look at the SVG.
"""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from planshell.config import Settings
from planshell.llm.scripted import Reply
from planshell.ui.app import PlanshellApp
from tests.ui.plan_helpers import PLAN
from tests.ui_helpers import (
    clear_toasts,
    ready_for_snapshot,
    send_and_settle,
    snapshot_app,
    until,
)

TICK = (
    "set_plan_steps",
    {"updates": [{"step": 1, "status": "done", "expected": "Read the server"}]},
)


def execute_app(project: Path) -> PlanshellApp:
    replies = [
        Reply(text="Step 1: reading `src/app/server.py`.", calls=[TICK]),
        Reply(text="Step 1 is done. Next: **add the cache**."),
    ]
    return snapshot_app(project, replies, Settings.model_validate({"plan": {"sandbox": "off"}}))


async def run_execution(pilot: Pilot) -> None:
    screen = await ready_for_snapshot(pilot)
    runtime = pilot.app.runtime  # type: ignore[attr-defined]
    path = runtime.store.write("caching.md", PLAN)
    runtime.plan.execute_existing(path)
    await send_and_settle(pilot, screen, "Go ahead with the plan.")
    await until(pilot, lambda: screen.checklist_visible)
    await clear_toasts(pilot)


def test_execute_with_checklist_snapshot(snap_compare, project: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(execute_app(project), terminal_size=(100, 30), run_before=run_execution)
