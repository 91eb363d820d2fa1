"""A provider that replays scripted replies: the engine's test double.

It speaks the real provider protocol, so the agent loop under test is the
production loop; only the model is replaced.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from planshell.llm.types import (
    Message,
    ProviderError,
    StopReason,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ThinkingBlock,
    ThinkingChunk,
    ToolCall,
    ToolCallReady,
    ToolSpec,
    Usage,
    UsageReport,
)


@dataclass
class Reply:
    """One scripted model reply.

    ``calls`` are ``(name, arguments)`` where arguments is a dict (sent as
    JSON) or a raw string (sent as-is, to test malformed JSON).
    """

    text: str = ""
    calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    thinking: str = ""
    chunk: int = 0  # split text into pieces of this size (0: one piece)
    delay: float = 0.0  # seconds between pieces
    error: ProviderError | None = None
    usage: Usage | None = None
    stop_reason: StopReason | None = None  # default: tool_use with calls, else end_turn
    # After the first piece, wait for this event: a test holds the turn open for as long
    # as it needs (steering, mode changes mid-turn) instead of racing a delay.
    hold: asyncio.Event | None = None


@dataclass
class Request:
    system: str
    messages: list[Message]
    tools: list[str]
    max_output: int | None = None


ReplySource = Reply | Callable[[Request], Reply]


class ScriptedProvider:
    name = "scripted"

    def __init__(self, replies: list[ReplySource], model: str = "script") -> None:
        self.replies = list(replies)
        self.model = model
        self.requests: list[Request] = []
        self._ids = 0

    @property
    def label(self) -> str:
        return f"scripted · {self.model}"

    async def stream(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        max_output: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        request = Request(system, list(messages), [t.name for t in tools], max_output)
        self.requests.append(request)
        if not self.replies:
            raise ProviderError("The script has no more replies.")
        source = self.replies.pop(0)
        reply = source(request) if callable(source) else source
        for index, event in enumerate(self._events(reply)):
            if reply.hold is not None and index == 1:
                await reply.hold.wait()
            if reply.delay:
                await asyncio.sleep(reply.delay)
            else:
                await asyncio.sleep(0)
            yield event
        if reply.error is not None:
            raise reply.error

    def _events(self, reply: Reply) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if reply.thinking:
            out.append(ThinkingChunk(reply.thinking))
        size = reply.chunk or max(len(reply.text), 1)
        out += [TextChunk(reply.text[i : i + size]) for i in range(0, len(reply.text), size)]
        if reply.error is not None:
            return out
        for name, args in reply.calls:
            self._ids += 1
            raw = args if isinstance(args, str) else json.dumps(args)
            out.append(ToolCallReady(ToolCall(f"call_{self._ids}", name, raw)))
        if reply.usage is not None:
            out.append(UsageReport(reply.usage))
        thinking = (ThinkingBlock(reply.thinking, "sig"),) if reply.thinking else ()
        stop: StopReason = reply.stop_reason or ("tool_use" if reply.calls else "end_turn")
        out.append(StreamEnd(stop, thinking))
        return out
