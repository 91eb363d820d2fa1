"""Typed events the engine emits; the UI and headless mode subscribe to them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from planshell.llm.types import Usage
from planshell.tools.base import ToolData

log = logging.getLogger(__name__)


class Mode(StrEnum):
    """Plan mode's states; defined here because events carry them to every front end."""

    OFF = "off"
    PLAN = "plan"
    EXECUTE = "execute"


@dataclass(frozen=True)
class TurnStarted:
    text: str


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class AssistantDone:
    """One model reply finished streaming (more may follow in the same turn)."""

    text: str


@dataclass(frozen=True)
class ToolStarted:
    call_id: str
    name: str
    headline: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolFinished:
    call_id: str
    name: str
    content: str
    is_error: bool
    data: ToolData = field(default_factory=dict)


@dataclass(frozen=True)
class ToolProgress:
    """A running tool's one-line progress (a sub-agent's tool call), under its row."""

    call_id: str
    line: str


@dataclass(frozen=True)
class SubagentUsage:
    """Tokens a sub-agent used; ``total`` is every sub-agent's use in this session."""

    usage: Usage
    total: int


@dataclass(frozen=True)
class UsageUpdated:
    usage: Usage
    context_tokens: int


@dataclass(frozen=True)
class ErrorEvent:
    """A problem the user should see. ``message`` names it without advice.

    ``remedy`` says what helps ("retry": ask the model again; "continue": send
    another message), so each front end words it for its own keys: the TUI
    says "Send /retry", a headless run says to run the command again.
    """

    message: str
    remedy: str = ""  # "", "retry" or "continue"
    partial: bool = False  # a partial reply was discarded

    def interactive_text(self) -> str:
        """The message with the TUI's advice (slash commands, typing a message)."""
        if self.remedy == "retry":
            advice = (
                "The partial reply was discarded; send /retry to ask again."
                if self.partial
                else "Send /retry to try again."
            )
        elif self.remedy == "continue":
            advice = "Send a message to continue."
        else:
            return self.message
        return f"{self.message.rstrip()} {advice}"


@dataclass(frozen=True)
class SteeringQueued:
    text: str


@dataclass(frozen=True)
class SteeringDelivered:
    text: str


@dataclass(frozen=True)
class TurnDone:
    """``stop_reason`` is the provider's, or ``context_full``: the reply stopped at
    the token limit because the context window was full, not because of max_tokens."""

    stop_reason: str
    cancelled: bool = False

    @property
    def cut_off_note(self) -> str | None:
        """What to tell the user about an answer that stopped early (one wording for
        every view)."""
        if self.cancelled:
            return None
        if self.stop_reason == "context_full":
            return (
                "The reply stopped because the model's context window is full; the next "
                "request compacts the conversation first."
            )
        if self.stop_reason == "max_tokens":
            return "The reply hit the model's token limit (max_tokens)."
        return None


@dataclass(frozen=True)
class ModeChanged:
    mode: Mode
    previous: Mode
    plan_path: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class PlanUpdated:
    """The plan file or its step progress changed (written, refined, ticked)."""

    path: str
    title: str
    done: int
    total: int


@dataclass(frozen=True)
class PlanReported:
    """A plan completed: its report (markdown, model- and repo-authored: sanitise to show)."""

    path: str
    markdown: str
    complete: bool


@dataclass(frozen=True)
class TodosChanged:
    items: tuple[tuple[str, str], ...]  # (content, status)


# The same three words as Textual's notification severities, so a view passes them on.
NoticeLevel = Literal["information", "warning", "error"]


@dataclass(frozen=True)
class RetryStarted:
    """``/retry`` started a new reply for the last request (no new user message)."""

    dropped: int = 0  # messages of the previous reply taken out of the history


@dataclass(frozen=True)
class ContextUpdated:
    """How full the context window is, and what the session cost so far (if priced)."""

    used: int
    window: int | None = None
    cost: float | None = None


@dataclass(frozen=True)
class Compacted:
    """The older history was replaced by a summary; the mode and plan were not touched."""

    summary: str
    reason: str  # "manual" | "auto" | "overflow" | "handoff"
    before_tokens: int
    after_tokens: int
    replaced: int


@dataclass(frozen=True)
class Notice:
    message: str
    level: NoticeLevel = "information"


@dataclass(frozen=True)
class PermissionModeChanged:
    """The approval mode outside plan mode: "ask", "accept-edits" or "auto"."""

    mode: str
    previous: str


@dataclass(frozen=True)
class ModelChanged:
    """The agent now talks to another model (a phase switch: planning <-> executing)."""

    label: str
    planning: bool  # the planning model of its own (``[plan] model``) is now in use
    demo: bool = False  # the offline demo model


Event = (
    TurnStarted
    | TextDelta
    | ThinkingDelta
    | AssistantDone
    | ToolStarted
    | ToolFinished
    | ToolProgress
    | UsageUpdated
    | SubagentUsage
    | ErrorEvent
    | SteeringQueued
    | SteeringDelivered
    | TurnDone
    | ModeChanged
    | PlanUpdated
    | TodosChanged
    | PlanReported
    | Notice
    | RetryStarted
    | ContextUpdated
    | Compacted
    | PermissionModeChanged
    | ModelChanged
)

Subscriber = Callable[[Event], None]


class EventBus:
    """Synchronous fan-out; a failing subscriber is logged, never fatal.

    The bus is also where the engine's user-facing problems (``ErrorEvent``,
    warning and error ``Notice``) reach the log file, in the TUI and headless
    alike. The first subscriber failure is surfaced once as a ``Notice`` that
    points at the log: in a full-screen app a traceback nobody sees is lost.
    """

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._failure_reported = False

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def emit(self, event: Event) -> None:
        _log_shown(event)
        failed: Exception | None = None
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception as exc:  # a broken view must not break the engine
                log.exception("event subscriber %r failed on %s", callback, type(event).__name__)
                failed = failed or exc
        if failed is not None and not self._failure_reported:
            self._failure_reported = True  # before emitting: the same view may fail again
            from planshell.logs import where_logged

            self.emit(
                Notice(
                    f"A view failed ({type(failed).__name__}) and may be out of date; "
                    f"details in {where_logged()}.",
                    "error",
                )
            )


def _log_shown(event: Event) -> None:
    """Log what the user is told went wrong (the bus sees it before any view)."""
    if isinstance(event, ErrorEvent):
        log.error("shown to the user: %s", event.message)
    elif isinstance(event, Notice) and event.level in ("warning", "error"):
        log.log(
            logging.ERROR if event.level == "error" else logging.WARNING,
            "notice shown to the user: %s",
            event.message,
        )
