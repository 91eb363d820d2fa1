"""SVG snapshots of plan execution: the chat while a plan runs (EXECUTE chip and the
checklist), and the plan report a completed plan opens.

Deterministic: a scripted model, a fixed plan file name, no session files, and
the screenshot is taken after the turn (no spinner, no elapsed time) with the
toasts cleared and the prompt's cursor blink frozen. The report is built from a
fixed run record with its time, tokens and cost given (a real run measures the
time on the clock), and shows no absolute path. Update with
``pytest tests/ui/test_ui_plan_snapshots.py --snapshot-update`` and look at the SVG.
"""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from planshell.config import Settings
from planshell.llm.scripted import Reply
from planshell.plan.evidence import Evidence, RunRecord
from planshell.plan.report import build_report, render_markdown
from planshell.plan.scope import plan_scope
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.plan_report import PlanReportScreen
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


REPORTED_PLAN = """# Plan: Rate limit the handler

## Steps

- [ ] Call the limiter from `src/app/server.py`
- [ ] Decide the bucket size
- [ ] Document it in `docs/limits.md`
- [ ] Add `src/app/limiter.py`

## Verification

```sh
grep -q limiter src/app/server.py
pytest -q tests/test_limits.py
```
"""


def report_markdown() -> str:
    """A report with every kind of line: evidence, ⚠ without evidence, a skip, an open step,
    a passed and a failed check, the three file lists, a commit and the run line."""
    record = RunRecord.seed("rl.md", REPORTED_PLAN)
    first = record.steps[0]
    first.add(Evidence("edit", "src/app/server.py"))
    first.add(Evidence("command", "grep -q limiter src/app/server.py", 0))
    first.add(Evidence("command", "pytest -q tests/test_limits.py", 1))
    first.add(Evidence("edit", "setup.cfg"))
    record.tick(1, "done")
    record.tick(2, "done")  # nothing recorded: ticked without evidence
    record.tick(3, "skipped", "the README already says it")
    report = build_report(
        REPORTED_PLAN,
        record,
        plan_scope(REPORTED_PLAN),
        commits=["1a2b3c4 limit the handler"],
        seconds=135,
        tokens=2130,
        cost=0.0123,
    )
    return render_markdown(report)


async def open_report(pilot: Pilot) -> None:
    await ready_for_snapshot(pilot)
    screen = PlanReportScreen(report_markdown())
    await pilot.app.push_screen(screen)
    await until(pilot, lambda: pilot.app.screen is screen and screen.keys_ready)
    await clear_toasts(pilot)


def test_plan_report_snapshot(snap_compare, project: Path) -> None:  # type: ignore[no-untyped-def]
    app = snapshot_app(project, [], Settings())
    assert snap_compare(app, terminal_size=(100, 60), run_before=open_report)
