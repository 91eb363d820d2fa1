"""A resuming app whose start-up load is held: the first frames before the session loads."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from planshell.agent.session import SessionLog
from planshell.config import Settings
from planshell.llm.scripted import ScriptedProvider
from planshell.ui.app import PlanshellApp


def held_resume(
    project: Path, session: Path, **kwargs: Any
) -> tuple[PlanshellApp, threading.Event]:
    """An app resuming ``session``; its loader (the slow part of start-up) waits until the
    returned event is set, so a test can check what shows before the session has loaded."""
    gate = threading.Event()

    def load() -> tuple[Settings, Path, SessionLog]:
        gate.wait(timeout=30)  # a hang guard, not a speed budget
        return Settings(), project, SessionLog.load(session)

    app = PlanshellApp(
        None, project, loader=load, provider=ScriptedProvider([]), persist=False, **kwargs
    )
    return app, gate
