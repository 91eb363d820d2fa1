"""The plan report in the chat (Pilot): completing a plan opens it; d shows the diff, u undoes, Enter closes."""

from __future__ import annotations

from pathlib import Path

from planshell.ui.screens.chat import ChatScreen
from planshell.ui.screens.plan_report import PlanReportScreen
from planshell.ui.screens.undo import UndoScreen
from tests.plan.checkpoint_helpers import state
from tests.ui.plan_helpers import PLAN, SIZE, make_app, runtime, save_plan
from tests.ui_helpers import ready, screen_text, until

SERVER = "src/app/server.py"
HOSTILE_PLAN = PLAN.replace("Read the server", "Read the \x1b]52;c;ZXZpbA==\x07server\x1b[2J")


async def test_completing_a_plan_opens_the_report_and_enter_closes_it(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        plan = runtime(app).plan
        plan.execute_existing(save_plan(project, text=HOSTILE_PLAN))
        plan.undo_keeper.settle()
        server = project / SERVER
        server.write_text(server.read_text().replace("# TODO: rate limiting", "limiter.take()"))
        await plan.complete()
        await until(pilot, lambda: isinstance(app.screen, PlanReportScreen))
        await pilot.pause()
        shown = screen_text(app)
        assert "Finished with gaps" in shown
        assert "step 1 is still open" in shown
        assert "Read the server" in shown  # the escapes are gone, the text stays
        report = app.screen
        assert isinstance(report, PlanReportScreen) and "\x1b" not in report.markdown
        await pilot.press("d")
        await until(pilot, lambda: report.showing_diff)
        await pilot.pause()
        assert "-    limiter.take()" in screen_text(app)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ChatScreen))


async def test_u_in_the_report_runs_the_undo_flow(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        plan = runtime(app).plan
        plan_file = save_plan(project)
        before = state(project)
        plan.execute_existing(plan_file)
        plan.undo_keeper.settle()
        (project / "src/app/limit.py").write_text("limiter = object()\n")
        await plan.complete()
        await until(pilot, lambda: isinstance(app.screen, PlanReportScreen))
        await pilot.press("u")
        await until(pilot, lambda: isinstance(app.screen, UndoScreen))
        await pilot.press("enter")
        await until(pilot, lambda: not (project / "src/app/limit.py").exists())
        after = state(project)
        assert {k: v for k, v in after.items() if ".planshell" not in k} == {
            k: v for k, v in before.items() if ".planshell" not in k
        }
