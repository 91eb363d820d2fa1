"""The provider-neutral conversation and stream vocabulary.

Providers translate these to and from their wire formats; the agent loop and
the session log only ever see these types.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["user", "assistant", "tool"]
StopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "refusal", "pause_turn", "cancelled", "error"
]
"""Why a reply ended. ``refusal``: the model declined (shown to the user as such);
``pause_turn``: the server paused a long turn and the client should ask again to
let it continue (Anthropic)."""


@dataclass
class ToolCall:
    """A request from the model to run one tool.

    ``arguments`` is the raw JSON text as the model produced it: it is parsed
    and validated by the agent loop so that bad JSON becomes an error result.
    """

    id: str
    name: str
    arguments: str


@dataclass
class ThinkingBlock:
    """Reasoning text; Anthropic requires it (with its signature) in history."""

    text: str
    signature: str | None = None
    redacted: str | None = None


@dataclass
class Message:
    """One conversation turn entry.

    ``tool`` messages carry a single tool result for ``tool_call_id``.
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    thinking: list[ThinkingBlock] = field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.thinking:
            data["thinking"] = [
                {"text": t.text, "signature": t.signature, "redacted": t.redacted}
                for t in self.thinking
            ]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
            data["tool_name"] = self.tool_name
            data["is_error"] = self.is_error
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(
            role=data["role"],
            content=data.get("content", ""),
            tool_calls=[ToolCall(**c) for c in data.get("tool_calls", [])],
            thinking=[ThinkingBlock(**t) for t in data.get("thinking", [])],
            tool_call_id=data.get("tool_call_id"),
            tool_name=data.get("tool_name"),
            is_error=bool(data.get("is_error", False)),
        )


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about a tool: its name, purpose and JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


# --- stream events (provider -> agent loop) ---------------------------------


@dataclass(frozen=True)
class TextChunk:
    text: str


@dataclass(frozen=True)
class ThinkingChunk:
    text: str


@dataclass(frozen=True)
class ToolCallReady:
    """A complete tool call; emitted once its arguments have fully arrived."""

    call: ToolCall


@dataclass(frozen=True)
class UsageReport:
    usage: Usage


@dataclass(frozen=True)
class StreamEnd:
    """The reply is complete. ``thinking`` holds whole blocks for history.

    ``incomplete_calls`` are tool calls the reply token limit cut off: their
    arguments are unfinished, so they are never run (nor sent back as history).
    """

    stop_reason: StopReason
    thinking: tuple[ThinkingBlock, ...] = ()
    incomplete_calls: tuple[ToolCall, ...] = ()


StreamEvent = TextChunk | ThinkingChunk | ToolCallReady | UsageReport | StreamEnd


class ProviderError(Exception):
    """A failure with a one-sentence, user-facing message.

    ``retryable`` tells the loop whether retrying the same request could help;
    ``partial`` is True when output had already streamed before the failure;
    ``config`` is True when only a change of settings (URL, key, model) can fix
    it, so no front end offers "retry" as the advice.
    """

    def __init__(
        self, message: str, *, retryable: bool = False, partial: bool = False, config: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.partial = partial
        self.config = config


@runtime_checkable
class Provider(Protocol):
    """Streams one model reply for a conversation.

    Implementations must stop promptly when the consuming task is cancelled
    (close sockets in ``finally``) and raise ``ProviderError`` for failures.
    """

    name: str
    model: str

    @property
    def label(self) -> str:
        """Short human label for the status bar, e.g. ``openai · gpt-4o``."""
        ...

    def stream(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        max_output: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """``max_output`` caps this one reply's tokens (a summary must stay short);
        the configured limit still applies when it is lower."""
        ...
