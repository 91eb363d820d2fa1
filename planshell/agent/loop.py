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
from planshell.tools.base import (
    Tool,
    ToolArgs,
    ToolContext,
    ToolError,
    ToolResult,
    progress_to,
)
from planshell.tools.registry import ToolRegistry

Gate = Callable[[Tool, ToolArgs], str | None]
"""Returns a refusal message for the model, or None to let the call run."""

PromptPart = Callable[[], str | None]

CANCELLED_RESULT = "Cancelled by the user before the tool finished."
REFUSAL_NOTICE = "The model declined this request (a refusal); rephrase it or ask something else."


def _cut_off_message(calls: list[ToolCall]) -> str:
    names = ", ".join(sorted({call.name for call in calls}))
    return (
        f"The reply token limit (max_tokens) cut off the model's call to {names} before its "
        "arguments were complete, so it was not run; raise max_tokens in the settings or ask "
        "for a smaller step."
    )


@dataclass
class _Reply:
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    thinking: list[ThinkingBlock] = field(default_factory=list)
    stop_reason: str = "end_turn"
    incomplete: list[ToolCall] = field(default_factory=list)  # cut off by max_tokens


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
        max_concurrent: int = 3,
    ) -> None:
        self.provider = provider
        self.registry = registry
        self.ctx = ctx
        self.base_prompt = base_prompt
        self.session = session
        self.max_steps = max_steps
        self.max_concurrent = max(1, max_concurrent)  # concurrent tool calls at once
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
        budget_raised = False
        pending: list[ToolCall] = []
        finished: dict[int, ToolResult] = {}  # id(call) -> result, for the batch in flight
        try:
            while True:
                self._deliver_steering()
                if steps >= self.max_steps:
                    self.emit(
                        ev.ErrorEvent(
                            f"Stopped after {self.max_steps} model calls in one request "
                            "(agent.max_steps); send a message to continue."
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
                if reply.incomplete and not budget_raised:
                    budget_raised = True
                    if self._ask_again_with_larger_budget(reply):
                        self.emit(ev.AssistantDone(reply.text))
                        continue
                self._record(
                    Message("assistant", reply.text, tool_calls=reply.calls, thinking=reply.thinking)
                )
                self.emit(ev.AssistantDone(reply.text))
                if reply.incomplete:
                    self.emit(ev.ErrorEvent(_cut_off_message(reply.incomplete)))
                    break
                if stop == "refusal":
                    self.emit(ev.Notice(REFUSAL_NOTICE, "warning"))
                if not reply.calls:
                    if self._steering or stop == "pause_turn":
                        continue  # pause_turn: the server asks us to let it go on
                    break
                pending = list(reply.calls)
                while pending:
                    batch = self._next_batch(pending)
                    finished.clear()
                    await self._run_batch(batch, finished)
                    for call in batch:
                        pending.pop(0)
                        self._record(_tool_message(call, finished[id(call)]))
        except asyncio.CancelledError:
            for call in pending:
                result = finished.get(id(call))
                if result is None:  # still running (or not started) when cancelled
                    result = ToolResult(CANCELLED_RESULT, is_error=True)
                    self.emit(ev.ToolFinished(call.id, call.name, CANCELLED_RESULT, True))
                self._record(_tool_message(call, result))
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
                        reply.incomplete = list(event.incomplete_calls)
        except asyncio.CancelledError:
            if reply.text:
                # Keep what the user already saw, so the history matches the screen.
                self._record(Message("assistant", reply.text + "\n\n[interrupted by the user]"))
            raise
        except ProviderError as exc:
            note = (
                " The partial reply was discarded; send /retry to ask again."
                if exc.partial
                else " Send /retry to try again."
            )
            self.emit(ev.ErrorEvent(exc.message.rstrip() + note))
            return None
        except Exception as exc:  # a provider bug must not kill the app
            self.emit(ev.ErrorEvent(f"The model provider failed unexpectedly: {exc!r}."))
            return None
        return reply

    def _ask_again_with_larger_budget(self, reply: _Reply) -> bool:
        """Once per turn: raise the provider's reply token limit and ask again."""
        raise_budget = getattr(self.provider, "raise_output_budget", None)
        budget = raise_budget() if callable(raise_budget) else None
        if not isinstance(budget, int):
            return False
        names = ", ".join(sorted({call.name for call in reply.incomplete}))
        self.emit(
            ev.Notice(
                f"The reply token limit cut off a call to {names}, so it was not run; "
                f"asking again once with max_tokens={budget}.",
                "warning",
            )
        )
        return True

    def _next_batch(self, pending: list[ToolCall]) -> list[ToolCall]:
        """The leading run of calls to concurrency-safe tools, else the first call alone."""
        batch: list[ToolCall] = []
        for call in pending:
            tool = self.registry.get(call.name)
            if tool is None or not tool.concurrent:
                break
            batch.append(call)
        return batch or pending[:1]

    async def _run_batch(self, calls: list[ToolCall], finished: dict[int, ToolResult]) -> None:
        """Run ``calls`` (at most ``max_concurrent`` at once); results land in ``finished``."""
        if len(calls) == 1:
            finished[id(calls[0])] = await self._run_tool(calls[0])
            return
        limit = asyncio.Semaphore(self.max_concurrent)

        async def one(call: ToolCall) -> None:
            async with limit:
                finished[id(call)] = await self._run_tool(call)

        # A TaskGroup: cancelling the turn cancels every call in the batch.
        async with asyncio.TaskGroup() as group:
            for call in calls:
                group.create_task(one(call))

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
            with progress_to(lambda line: self.emit(ev.ToolProgress(call.id, line))):
                result = await tool.run(args, self.ctx)
        except ToolError as exc:
            result = ToolResult(str(exc), is_error=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            result = ToolResult(f"{call.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        result = tool.capped(result, self.ctx)
        self.emit(ev.ToolFinished(call.id, call.name, result.content, result.is_error, result.data))
        return result

    def _parse_args(self, tool: Tool, call: ToolCall) -> ToolArgs | str:
        try:
            # strict=False: raw control characters inside strings (llama.cpp grammars
            # emit literal newlines and tabs) are what the model meant.
            raw = json.loads(call.arguments, strict=False) if call.arguments.strip() else {}
        except json.JSONDecodeError as exc:
            snippet = call.arguments[:200]
            return (
                # json's own wording may already end in "at" ("Invalid control character at").
                f"The arguments for {tool.name} are not valid JSON "
                f"({exc.msg.removesuffix(' at')} at position {exc.pos}): {snippet!r}. "
                "Send one JSON object that matches the tool's schema."
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
