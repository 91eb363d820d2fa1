"""The agent loop: stream a reply, run its tool calls, repeat until done.

It owns the conversation and emits events; it knows nothing of plan mode
beyond two hooks that plan mode plugs into: *gates* (may this call run?) and
*prompt parts* (text added to the system prompt on every model call).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass, field

from pydantic import ValidationError

from planshell.agent import events as ev
from planshell.agent.session import SessionLog
from planshell.llm.types import (
    Message,
    Provider,
    ProviderError,
    StreamEnd,
    TextChunk,
    ThinkingBlock,
    ThinkingChunk,
    ToolCall,
    ToolCallReady,
    UsageReport,
)
from planshell.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from planshell.tools.registry import ToolRegistry

Gate = Callable[[Tool, ToolArgs], str | None]
"""Returns a refusal message for the model, or None to let the call run."""

PromptPart = Callable[[], str | None]

CANCELLED_RESULT = "Cancelled by the user before the tool finished."


@dataclass
class _Reply:
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    thinking: list[ThinkingBlock] = field(default_factory=list)
    stop_reason: str = "end_turn"


class Agent:
    """Runs requests against a provider with a tool registry.

    Use ``await submit(text)``; while a request runs, ``submit`` queues the text
    as a steering message for the next model call. ``cancel()`` stops the
    stream or tool in flight and leaves the history consistent.
    """

    def __init__(
        self,
        provider: Provider,
        registry: ToolRegistry,
        ctx: ToolContext,
        *,
        base_prompt: str = "",
        session: SessionLog | None = None,
        max_steps: int = 100,
        bus: ev.EventBus | None = None,
    ) -> None:
        self.provider = provider
        self.registry = registry
        self.ctx = ctx
        self.base_prompt = base_prompt
        self.session = session
        self.max_steps = max_steps
        self.bus = bus or ev.EventBus()
        self.messages: list[Message] = []
        self.gates: list[Gate] = []
        self.prompt_parts: list[PromptPart] = []
        self.context_tokens = 0
        self._steering: list[str] = []
        self._task: asyncio.Task[None] | None = None

    # --- public API ---------------------------------------------------------

    def subscribe(self, callback: ev.Subscriber) -> Callable[[], None]:
        return self.bus.subscribe(callback)

    def emit(self, event: ev.Event) -> None:
        self.bus.emit(event)

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    async def submit(self, text: str) -> None:
        """Run a request to completion, or queue it as steering if one runs."""
        if self.busy:
            self._steering.append(text)
            self.emit(ev.SteeringQueued(text))
            return
        await self._start(text)

    async def retry(self) -> None:
        """Ask the model again from the current history (after an error)."""
        if self.busy or not self.messages:
            return
        await self._start(None)

    def cancel(self) -> bool:
        """Stop the running request; returns False when nothing was running."""
        if not self.busy:
            return False
        assert self._task is not None
        self._task.cancel()
        return True

    async def stop(self, timeout: float = 5.0) -> None:
        """Cancel the running request and wait until it has recorded its end.

        A cancelled turn appends the results of its unfinished tool calls to
        the session before it returns: callers that close the session (quitting)
        wait here so the JSONL file ends on whole records. ``timeout`` bounds
        the wait for a tool that ignores cancellation.
        """
        task = self._task
        if task is None or task.done():
            return
        task.cancel()
        await asyncio.wait({task}, timeout=timeout)

    def load_history(self, messages: list[Message]) -> None:
        self.messages = list(messages)

    def reset(self, session: SessionLog | None = None) -> None:
        """Start an empty conversation (``/clear``)."""
        self.messages.clear()
        self._steering.clear()
        self.context_tokens = 0
        if session is not None:
            self.session = session

    def system_prompt(self) -> str:
        parts = [self.base_prompt]
        for part in self.prompt_parts:
            text = part()
            if text:
                parts.append(text)
        return "\n\n".join(p for p in parts if p)

    # --- the loop -------------------------------------------------------------

    async def _start(self, text: str | None) -> None:
        self._task = asyncio.create_task(self._run(text))
        try:
            await self._task
        finally:
            self._task = None

    def _record(self, message: Message) -> None:
        self.messages.append(message)
        if self.session is not None:
            self.session.append_message(message)

    def _deliver_steering(self) -> None:
        while self._steering:
            text = self._steering.pop(0)
            self._record(Message("user", text))
            self.emit(ev.SteeringDelivered(text))

    async def _run(self, text: str | None) -> None:
        if text is not None:
            self.emit(ev.TurnStarted(text))
            self._record(Message("user", text))
        steps = 0
        stop = "end_turn"
        pending: list[ToolCall] = []
        try:
            while True:
                self._deliver_steering()
                if steps >= self.max_steps:
                    self.emit(
                        ev.ErrorEvent(
                            f"Stopped after {self.max_steps} model calls in one request "
                            "(agent.max_steps).",
                            remedy="continue",
                        )
                    )
                    stop = "max_steps"
                    break
                steps += 1
                reply = await self._stream_reply()
                if reply is None:
                    self.emit(ev.TurnDone("error"))
                    return
                stop = reply.stop_reason
                self._record(
                    Message("assistant", reply.text, tool_calls=reply.calls, thinking=reply.thinking)
                )
                self.emit(ev.AssistantDone(reply.text))
                if not reply.calls:
                    if self._steering:
                        continue
                    break
                pending = list(reply.calls)
                while pending:
                    call = pending[0]
                    result = await self._run_tool(call)
                    pending.pop(0)
                    self._record(_tool_message(call, result))
        except asyncio.CancelledError:
            for call in pending:
                self._record(_tool_message(call, ToolResult(CANCELLED_RESULT, is_error=True)))
                self.emit(ev.ToolFinished(call.id, call.name, CANCELLED_RESULT, True))
            self.emit(ev.TurnDone("cancelled", cancelled=True))
            return
        self.emit(ev.TurnDone(stop))

    async def _stream_reply(self) -> _Reply | None:
        reply = _Reply()
        try:
            stream = self.provider.stream(self.system_prompt(), self.messages, self.registry.specs())
            async with aclosing(stream):  # type: ignore[type-var]
                async for event in stream:
                    if isinstance(event, TextChunk):
                        reply.text += event.text
                        self.emit(ev.TextDelta(event.text))
                    elif isinstance(event, ThinkingChunk):
                        self.emit(ev.ThinkingDelta(event.text))
                    elif isinstance(event, ToolCallReady):
                        reply.calls.append(event.call)
                    elif isinstance(event, UsageReport):
                        usage = event.usage
                        self.context_tokens = usage.input_tokens + usage.output_tokens
                        self.emit(ev.UsageUpdated(usage, self.context_tokens))
                    elif isinstance(event, StreamEnd):
                        reply.stop_reason = event.stop_reason
                        reply.thinking = list(event.thinking)
        except asyncio.CancelledError:
            if reply.text:
                # Keep what the user already saw, so the history matches the screen.
                self._record(Message("assistant", reply.text + "\n\n[interrupted by the user]"))
            raise
        except ProviderError as exc:
            self.emit(ev.ErrorEvent(exc.message.rstrip(), remedy="retry", partial=exc.partial))
            return None
        except Exception as exc:  # a provider bug must not kill the app
            self.emit(ev.ErrorEvent(f"The model provider failed unexpectedly: {exc!r}."))
            return None
        return reply

    async def _run_tool(self, call: ToolCall) -> ToolResult:
        tool = self.registry.get(call.name)
        if tool is None or not self.registry.is_active(call.name):
            available = ", ".join(self.registry.active) or "none"
            what = "is not a known tool" if tool is None else "is not available in this mode"
            return self._refuse(call, f"{call.name!r} {what}. Available tools: {available}.")
        args = self._parse_args(tool, call)
        if isinstance(args, str):
            return self._refuse(call, args)
        for gate in self.gates:
            refusal = gate(tool, args)
            if refusal:
                return self._refuse(call, refusal, headline=tool.headline(args))
        self.emit(ev.ToolStarted(call.id, call.name, tool.headline(args), args.model_dump()))
        try:
            result = await tool.run(args, self.ctx)
        except ToolError as exc:
            result = ToolResult(str(exc), is_error=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            result = ToolResult(f"{call.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        self.emit(ev.ToolFinished(call.id, call.name, result.content, result.is_error, result.data))
        return result

    def _parse_args(self, tool: Tool, call: ToolCall) -> ToolArgs | str:
        try:
            raw = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as exc:
            snippet = call.arguments[:200]
            return (
                f"The arguments for {tool.name} are not valid JSON ({exc.msg} at position "
                f"{exc.pos}): {snippet!r}. Send one JSON object that matches the tool's schema."
            )
        if not isinstance(raw, dict):
            return f"The arguments for {tool.name} must be a JSON object, not {type(raw).__name__}."
        try:
            return tool.Args.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}"
                for e in exc.errors()
            )
            return f"Invalid arguments for {tool.name}: {problems}."

    def _refuse(self, call: ToolCall, message: str, headline: str | None = None) -> ToolResult:
        self.emit(ev.ToolStarted(call.id, call.name, headline or call.name, {}))
        self.emit(ev.ToolFinished(call.id, call.name, message, True))
        return ToolResult(message, is_error=True)


def _tool_message(call: ToolCall, result: ToolResult) -> Message:
    return Message(
        "tool",
        result.content,
        tool_call_id=call.id,
        tool_name=call.name,
        is_error=result.is_error,
    )
