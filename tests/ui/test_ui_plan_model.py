"""``/model plan NAME``: plan with one model, execute with another (issue 29), in the chat TUI.

Against a real loopback OpenAI-compatible server; the status bar shows which model is active.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.plan.controller import Mode
from tests.sse_server import SSEServer
from tests.ui.model_helpers import openai_app, serve_models
from tests.ui.plan_helpers import toasts
from tests.ui_helpers import SIZE, ready, send, until


@pytest.fixture
def server(sse_server: SSEServer, monkeypatch: pytest.MonkeyPatch) -> SSEServer:
    serve_models(sse_server, monkeypatch, ["exec-model", "plan-model"])
    return sse_server


async def test_model_plan_name_plans_with_it_and_the_status_bar_says_which(
    project: Path, server: SSEServer
) -> None:
    app = openai_app(project, server, "exec-model")
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        runtime = app.runtime
        assert runtime is not None

        def shown() -> str:
            return str(screen.query_one("#provider").render())

        await send(pilot, "/model plan plan-model")
        await until(pilot, lambda: runtime.phases is not None and runtime.phases.split)
        # Not planning yet: the session's model is still the one in use.
        assert runtime.agent.provider.model == "exec-model"
        assert "openai · exec-model" in shown() and "plan:" not in shown()
        assert any("Planning with openai · plan-model" in t for t in toasts(app))

        await send(pilot, "/plan on")
        await until(pilot, lambda: runtime.plan.mode is Mode.PLAN)
        await until(pilot, lambda: "plan: openai · plan-model" in shown())
        assert runtime.agent.provider.model == "plan-model"

        await send(pilot, "/model plan")  # shows both
        await until(pilot, lambda: any("Models: planning" in t for t in toasts(app)))
        both = next(t for t in toasts(app) if "Models: planning" in t)
        assert "planning: openai · plan-model · executing: openai · exec-model" in both

        # /model NAME while planning changes the executing model, not the planning one.
        await send(pilot, "/model other-exec")
        await until(pilot, lambda: runtime.provider.model == "other-exec")
        assert runtime.agent.provider.model == "plan-model"

        await send(pilot, "/plan off")
        await until(pilot, lambda: runtime.plan.mode is Mode.OFF)
        await until(pilot, lambda: "openai · other-exec" in shown())
        assert "plan:" not in shown() and runtime.agent.provider.model == "other-exec"
