"""What slash commands and plan mode may ask of the screen that hosts them.

Narrow protocols instead of the whole ``ChatScreen``: command handlers and the
plan-mode part of the chat depend on these, the chat screen implements them,
and no import cycle runs through ``ui/`` (attributes and methods go down,
messages come up).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.app import App
    from textual.widget import Widget

    from planshell.agent.events import (
        ModeChanged,
        NoticeLevel,
        PlanReported,
        PlanUpdated,
        TodosChanged,
    )
    from planshell.agent.session import LoadedSession
    from planshell.runtime import Runtime
    from planshell.ui.app import PlanshellApp
    from planshell.ui.plan_ui import PlanModeUI
    from planshell.ui.widgets.checklist import ChecklistPanel
    from planshell.ui.widgets.status import StatusBar
    from planshell.ui.widgets.transcript import Transcript


class ScreenHost(Protocol):
    """What the chat screen offers every part that works in it: engine, rows, status, input."""

    ready: bool  # the engine is up and the first frame's pending input was sent

    @property
    def runtime(self) -> Runtime | None: ...

    @property
    def transcript(self) -> Transcript: ...

    @property
    def status(self) -> StatusBar: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def send(self, text: str, *, on_failure: Callable[[Exception], None] | None = None) -> None:
        """Submit a request as the user would (or steer the running turn)."""
        ...

    def prefill(self, text: str) -> None:
        """Put ``text`` in the prompt for the user to finish."""
        ...

    def run_worker(self, work: Any, *, group: str = ..., exit_on_error: bool = ...) -> Any: ...


class CommandContext(ScreenHost, Protocol):
    """What a slash-command handler (or completer) may use of the screen it runs in.

    Generic on purpose: nothing here belongs to one command, so a new command
    is one decorated function (``ui/commands.py``) and changes neither this
    protocol nor the chat screen. The app gives app-wide actions (help, theme,
    quit, push_screen, restart_runtime); engine work stays in engine methods.
    """

    @property
    def app(self) -> PlanshellApp: ...

    @property
    def plan_ui(self) -> PlanModeUI:
        """Plan mode's part of the screen (shared by /plan, /todos and their keys)."""
        ...

    def run_turn(self, work: Callable[[], Awaitable[object]], *, failed: str) -> None:
        """Run engine work like a turn: the spinner runs and Esc stops it; an unexpected
        error becomes a transcript row starting with ``failed``."""
        ...

    def show_provider(self) -> None:
        """The runtime's provider changed: status bar, context window and model list follow."""
        ...

    async def attach_runtime(self, runtime: Runtime, resumed: LoadedSession | None = None) -> None:
        """Show a (new) runtime: its events, its resumed history and its start-up notices."""
        ...


class PlanHost(ScreenHost, Protocol):
    """What the plan-mode part of the chat uses of its screen."""

    @property
    def app(self) -> App[Any]: ...

    @property
    def prompt(self) -> Widget: ...

    def refresh_bindings(self) -> None: ...

    async def checklist_panel(self, *, create: bool = False) -> ChecklistPanel | None:
        """The checklist panel; mounted on first use when ``create`` (off the first frame)."""
        ...


class EventHost(Protocol):
    """What the engine-event renderer (``ui/event_renderer.py``) uses of its screen."""

    @property
    def status(self) -> StatusBar: ...

    @property
    def transcript(self) -> Transcript: ...

    def work_started(self) -> None: ...

    def tick(self) -> None: ...

    def show_permission_mode(self) -> None: ...

    async def plan_event(
        self, event: ModeChanged | PlanUpdated | TodosChanged | PlanReported
    ) -> None: ...

    def show_notice(self, message: str, level: NoticeLevel) -> None:
        """A plain-text toast for an engine ``Notice`` (the event bus logged it already)."""
        ...
