"""ui.start_mode = "plan": the first screen says plan mode is on and how to leave it (issue 29)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.agent.session import SessionLog
from planshell.config import Settings
from planshell.llm.scripted import ScriptedProvider
from planshell.llm.types import Message
from planshell.ui.app import PlanshellApp
from tests.ui.plan_helpers import chip_text
from tests.ui_helpers import SIZE, ready, screen_text

pytestmark = pytest.mark.usefixtures("isolated_env")


def _app(project: Path, settings: Settings, resume: object = None) -> PlanshellApp:
    def load() -> tuple[Settings, Path, object]:
        return settings, project, resume

    return PlanshellApp(None, project, loader=load, provider=ScriptedProvider([]), persist=False)


async def test_the_first_screen_says_plan_mode_is_on_and_how_to_leave(project: Path) -> None:
    app = _app(project, Settings(ui={"start_mode": "plan"}))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert chip_text(app).startswith("PLAN")
        text = " ".join(screen_text(app).split())
        assert "Plan mode is on" in text
        assert "/plan off or F2 leaves it" in text


async def test_no_such_line_when_starting_off(project: Path) -> None:
    app = _app(project, Settings())
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert chip_text(app).startswith("OFF")
        assert "Plan mode is on" not in screen_text(app)


async def test_a_resumed_off_session_stays_off_and_says_nothing(project: Path) -> None:
    log = SessionLog.create(project)
    log.append_message(Message("user", "earlier"))
    log.close()
    app = _app(project, Settings(ui={"start_mode": "plan"}), SessionLog.load(log.path))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert chip_text(app).startswith("OFF")
        assert "Plan mode is on" not in screen_text(app)
