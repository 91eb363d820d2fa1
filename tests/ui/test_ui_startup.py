"""Start-up: the prompt works before the engine is built, and nothing typed early is lost or
acts on a half-built engine (issue 28).

The loader is held on a ``threading.Event`` (it runs in a thread), so "not ready yet" lasts
exactly as long as the test wants, with no timing involved.
"""

from __future__ import annotations

import threading
from pathlib import Path

from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.approval import ApprovalScreen
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.widgets.messages import UserMessage
from tests.engine_helpers import HANG_GUARD
from tests.fresh_python import fresh_python
from tests.ui_helpers import SIZE, idle, send, until


def held_app(
    project: Path, provider: ScriptedProvider, settings: Settings | None = None
) -> tuple[PlanshellApp, threading.Event]:
    """An app whose settings load (and so the engine build) waits for the returned event."""
    gate = threading.Event()

    def load() -> tuple[Settings, Path, None]:
        gate.wait(HANG_GUARD)
        return settings or Settings(), project, None

    app = PlanshellApp(None, project, loader=load, provider=provider, persist=False)
    return app, gate


async def first_frame(app: PlanshellApp) -> ChatScreen:
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    return screen


async def test_a_message_sent_before_the_engine_exists_is_sent_once_when_it_is_ready(
    project: Path,
) -> None:
    provider = ScriptedProvider([Reply(text="ok")])
    app, gate = held_app(project, provider)
    async with app.run_test(size=SIZE) as pilot:
        try:
            screen = await first_frame(app)
            assert screen.prompt.has_focus  # usable from the first frame
            await send(pilot, "early bird")
            await pilot.pause()
            # Queued, not sent: there is no engine to send it to yet.
            assert app.runtime is None and not screen.ready
            assert provider.requests == []
            assert screen.prompt.text == ""  # taken, not left half-typed
        finally:
            gate.set()
        await until(pilot, lambda: screen.ready)
        await idle(pilot, screen)
        assert [u.text for u in screen.transcript.entries_of(UserMessage)] == ["early bird"]
        assert len(provider.requests) == 1
        assert "early bird" in str(provider.requests[0].messages[-1])


async def test_a_key_typed_before_the_engine_exists_approves_nothing(project: Path) -> None:
    """``y`` typed while the engine builds is prompt text, never the answer to the approval
    that the queued message's turn asks for later."""
    provider = ScriptedProvider([Reply(calls=[("bash", {"command": "touch made"})]), Reply("ok")])
    settings = Settings.model_validate({"permissions": {"mode": "ask"}})
    app, gate = held_app(project, provider, settings)
    async with app.run_test(size=SIZE) as pilot:
        try:
            screen = await first_frame(app)
            await send(pilot, "make it")
            await pilot.press("y")
            assert app.runtime is None
        finally:
            gate.set()
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen)  # still asking
        assert not (project / "made").exists()
        assert screen.prompt.text == "y"  # where it was typed
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        await idle(pilot, screen)
    assert not (project / "made").exists()


def test_what_runs_before_the_first_frame_imports_no_engine(project: Path) -> None:
    """The app (its module, its ``__init__``: themes and the peek at the configured theme)
    and the command modules its ``on_mount`` imports stay clear of the engine and pydantic:
    those load in the threads that load the settings and build the runtime (issue 28)."""
    (project / ".planshell").mkdir()
    (project / ".planshell" / "config.toml").write_text('[ui]\ntheme = "nord"\n')
    code = (
        "import importlib, sys\n"
        "from pathlib import Path\n"
        "import planshell.cli, planshell.ui.app\n"
        "def load():\n"
        "    raise AssertionError('the loader runs after the first frame')\n"
        f"app = planshell.ui.app.PlanshellApp(None, Path({str(project)!r}), loader=load)\n"
        "assert app.theme == 'nord', app.theme\n"
        "for name in planshell.ui.app.PlanshellApp.COMMAND_MODULES:\n"
        "    importlib.import_module(name)\n"
        "heavy = ('pydantic', 'httpx', 'planshell.runtime', 'planshell.agent.events',\n"
        "         'planshell.agent.loop', 'planshell.tools.base', 'planshell.llm.http',\n"
        "         'planshell.plan.controller', 'planshell.config', 'markdown_it')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    assert fresh_python(code).strip() == "[]"
