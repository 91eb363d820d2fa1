"""What slash commands and plan mode may ask of the screen that hosts them.

Narrow protocols instead of the whole ``ChatScreen``: command handlers and the
plan-mode part of the chat depend on these, the chat screen implements them,
and no import cycle runs through ``ui/`` (attributes and methods go down,
messages come up).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.app import App
    from textual.widget import Widget

    from planshell.agent.events import ModeChanged, NoticeLevel, PlanUpdated, TodosChanged
    from planshell.runtime import Runtime
    from planshell.ui.widgets.checklist import ChecklistPanel
    from planshell.ui.widgets.status import StatusBar
    from planshell.ui.widgets.transcript import Transcript


class CommandContext(Protocol):
    """What a slash-command handler (or completer) may do."""

    @property
    def runtime(self) -> Runtime | None: ...

    def show_help(self) -> None: ...

    async def clear_conversation(self) -> None: ...

    def current_model(self) -> str: ...

    def switch_provider(self, *, model: str | None = None, provider: str | None = None) -> None: ...

    def theme_names(self) -> list[str]: ...

    def switch_theme(self, name: str | None) -> None: ...

    def session_ids(self) -> list[str]: ...

    def pick_session(self, session_id: str | None) -> None: ...

    def retry(self) -> None: ...

    def compact(self, instructions: str) -> None: ...

    def model_names(self) -> list[str]: ...

    async def quit(self) -> None: ...

    async def plan_command(self, arg: str) -> None: ...

    def plan_names(self, arg: str) -> list[str]: ...

    async def init_command(self) -> None: ...

    def toggle_checklist(self) -> None: ...

    def permission_mode(self, arg: str) -> None: ...


class PlanHost(Protocol):
    """What the plan-mode part of the chat uses of its screen."""

    ready: bool

    @property
    def app(self) -> App[Any]: ...

    @property
    def runtime(self) -> Runtime | None: ...

    @property
    def status(self) -> StatusBar: ...

    @property
    def transcript(self) -> Transcript: ...

    @property
    def prompt(self) -> Widget: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def send(self, text: str, *, on_failure: Callable[[Exception], None] | None = None) -> None: ...

    def prefill(self, text: str) -> None: ...

    def refresh_bindings(self) -> None: ...

    def run_worker(self, work: Any, *, group: str = ..., exit_on_error: bool = ...) -> Any: ...

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

    async def plan_event(self, event: ModeChanged | PlanUpdated | TodosChanged) -> None: ...

    def show_notice(self, message: str, level: NoticeLevel) -> None:
        """A plain-text toast for an engine ``Notice`` (the event bus logged it already)."""
        ...
