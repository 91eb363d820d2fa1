"""``/undo`` in the chat (Pilot): the diff first, then the restore; refused in plan mode; nothing to undo."""

from __future__ import annotations

from pathlib import Path

from planshell.ui.app import PlanshellApp
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.screens.confirm import ConfirmScreen
from planshell.ui.screens.plan_report import PlanReportScreen
from planshell.ui.screens.undo import UndoScreen
from planshell.ui.widgets.messages import NoteRow
from tests.plan.checkpoint_helpers import outside_plans
from tests.ui.plan_helpers import SIZE, make_app, runtime, save_plan
from tests.ui_helpers import ready, screen_text, send, until

SERVER = "src/app/server.py"


def notes(screen: ChatScreen) -> list[str]:
    return [n.message for n in screen.transcript.entries_of(NoteRow)]


async def run_a_plan(app: PlanshellApp, project: Path) -> dict[str, str]:
    """Approve a saved plan, change files as its execution would, complete it; the state before."""
    plan = runtime(app).plan
    plan_file = save_plan(project)
    before = outside_plans(project)
    plan.execute_existing(plan_file)
    plan.undo_keeper.settle()  # what the first tool call of the plan waits for
    server = project / SERVER
    server.write_text(server.read_text().replace("# TODO: rate limiting", "limiter.take()"))
    (project / "src/app/limit.py").write_text("limiter = object()\n")
    await plan.complete()
    return before


async def close_report(pilot, app: PlanshellApp) -> None:
    """Completing the plan opened its report: Enter closes it."""
    await until(pilot, lambda: isinstance(app.screen, PlanReportScreen))
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, ChatScreen))


async def test_undo_shows_the_diff_then_restores(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        before = await run_a_plan(app, project)
        await close_report(pilot, app)
        await send(pilot, "/undo")
        await until(pilot, lambda: isinstance(app.screen, UndoScreen))
        await pilot.pause()
        shown = screen_text(app)
        assert "1 to delete, 1 to restore." in shown
        assert "-    limiter.take()" in shown and "+    # TODO: rate limiting" in shown
        assert outside_plans(project) != before  # nothing written before the answer
        await pilot.press("enter")
        await until(pilot, lambda: any(n.startswith("Undid the last plan") for n in notes(screen)))
        assert outside_plans(project) == before
        assert "2 files put back" in notes(screen)[-1]


async def test_undo_keeps_hand_edits_by_default(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await run_a_plan(app, project)
        await close_report(pilot, app)
        (project / "src/app/limit.py").write_text("mine now\n")
        await send(pilot, "/undo")
        await until(pilot, lambda: isinstance(app.screen, UndoScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "src/app/limit.py" in screen_text(app)
        await pilot.press("enter")  # the focused default: keep my edits
        await until(pilot, lambda: any(n.startswith("Undid the last plan") for n in notes(screen)))
        assert (project / "src/app/limit.py").read_text() == "mine now\n"
        assert "# TODO: rate limiting" in (project / SERVER).read_text()
        assert "Kept your edits to 1 file." in notes(screen)[-1]


async def test_undo_without_a_plan_says_so(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/undo")
        await until(pilot, lambda: any(n.startswith("Nothing to undo") for n in notes(screen)))
        assert isinstance(app.screen, ChatScreen)


async def test_undo_in_plan_mode_refuses_and_writes_nothing(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await run_a_plan(app, project)
        await close_report(pilot, app)
        runtime(app).plan.enter_plan()
        after_plan = outside_plans(project)
        await send(pilot, "/undo")
        await until(pilot, lambda: any("Plan mode is read-only" in n for n in notes(screen)))
        assert isinstance(app.screen, ChatScreen)  # no diff, no question
        assert outside_plans(project) == after_plan
