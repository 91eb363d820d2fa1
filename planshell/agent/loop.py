"""The agent loop: stream a reply, run its tool calls, repeat until done.

It owns the conversation and emits events; it knows nothing of plan mode
beyond the hooks that plan mode plugs into: *gates* (may this call run?),
*prompt parts* (text added to the system prompt on every model call),
*call checks* (may the turn go on to the next model call?) and *result hooks*
(a tool that ran has finished: plan mode files its work under the current step).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field

from pydantic import ValidationError

from planshell.agent import compaction as cp
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
    Usage,
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

Gate = Callable[[Tool, ToolArgs], str | Awaitable[str | None] | None]
"""Returns a refusal message for the model, or None to let the call run.

A gate may be async (the approval gate waits for a person). Gates run in order
and the first refusal wins, so plan mode's gate (added first) decides in PLAN.
"""

PromptPart = Callable[[], str | None]
ResultHook = Callable[[Tool, ToolArgs, ToolResult], None]
"""Told about every call that ran (not refused), with its final result; returns nothing."""
CallCheck = Callable[[], Awaitable[str | None]]
"""Runs before every model call; a returned reason ends the turn there (stop "paused").

Plan mode uses it to stop executing a plan whose file no longer holds the approved text.
"""
WindowSource = Callable[[], Awaitable[int | None]]
"""Finds the model's context window (settings, the server, a table); None: unknown."""
PriceFn = Callable[[Usage], float | None]
"""The cost of one reply's usage, or None when no price is configured."""

CANCELLED_RESULT = "Cancelled by the user before the tool finished."
REFUSAL_NOTICE = "The model declined this request (a refusal); rephrase it or ask something else."
UNANSWERED_MARK = "[no reply: the user interrupted before the model answered]"
INTERRUPTED_MARK = "[interrupted by the user]"


def _cut_off_message(calls: list[ToolCall]) -> str:
    names = ", ".join(sorted({call.name for call in calls}))
    return (
        f"The reply token limit (max_tokens) cut off the model's call to {names} before its "
        "arguments were complete, so it was not run; raise max_tokens in the settings or ask "
        "for a smaller step."
    )


@dataclass
class _Reply:
    # Deltas are kept as parts and joined on demand: ``text += delta`` on an attribute
    # copies the whole reply every time (quadratic; 100,000 deltas of a long answer).
    parts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    thinking: list[ThinkingBlock] = field(default_factory=list)
    stop_reason: str = "end_turn"
    incomplete: list[ToolCall] = field(default_factory=list)  # cut off by max_tokens
    usage: Usage | None = None

    @property
    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


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
        self.call_checks: list[CallCheck] = []
        self.result_hooks: list[ResultHook] = []
        self.context_tokens = 0
        self._steering: list[str] = []
        self._task: asyncio.Task[None] | None = None
        # Context accounting and compaction (planshell/agent/compaction.py).
        self.pin_parts: list[PromptPart] = []  # live state re-injected after a compaction
        self.meter = cp.ContextMeter()
        self.compaction = cp.CompactionPolicy()
        self.window_source: WindowSource | None = None
        self.price: PriceFn | None = None
        self.cost: float | None = None
        # Input + output tokens of every reply so far (as the provider reported them):
        # the plan report subtracts the value at approval to show what execution used.
        self.tokens_used: int = 0
        self._window_checked = False
        self._overflowed = False
        self._pending_handoff: str | None = None
        self._handoff_chooser: Callable[[dict[str, int]], Awaitable[str]] | None = None
        self._compacted_len: int | None = None  # history length right after a compaction
        self._last_system = base_prompt  # the system prompt of the last model call

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
        """Regenerate the reply to the last request: its previous reply is dropped first.

        After an error there is no reply to drop and the request is simply sent
        again; after a finished or interrupted turn the assistant messages and tool
        results since the last user message are taken out (the session log records
        the rewind), so the retry replaces the reply instead of adding a second one.
        Files a dropped tool call changed stay changed.
        """
        if self.busy or not self.messages:
            return
        dropped = self._drop_last_reply()
        self.emit(ev.RetryStarted(dropped))
        await self._start(None)

    def _drop_last_reply(self) -> int:
        last_user = next(
            (i for i in range(len(self.messages) - 1, -1, -1) if self.messages[i].role == "user"),
            None,
        )
        if last_user is None:
            return 0
        dropped = len(self.messages) - last_user - 1
        if dropped:
            del self.messages[last_user + 1 :]
            self.meter.history_replaced()
            if self.session is not None:
                self.session.append_rewind(len(self.messages))
        return dropped

    async def compact(self, instructions: str = "") -> bool:
        """``/compact``: summarise the older history now (Esc cancels; nothing changes then)."""
        if self.busy or not self.messages:
            return False
        done = False

        async def run() -> None:
            nonlocal done
            try:
                done = await self._compact_now("manual", instructions)
            except asyncio.CancelledError:
                self.emit(ev.Notice("Compaction cancelled: the conversation is unchanged."))

        self._task = asyncio.create_task(run())
        try:
            await self._task
        finally:
            self._task = None
        return done

    def request_handoff(self, choice: str) -> None:
        """After approval: "compact" or "fresh", applied before the next model call."""
        self._pending_handoff = choice if choice in ("compact", "fresh") else None

    def ask_handoff(self, chooser: Callable[[dict[str, int]], Awaitable[str]]) -> None:
        """A plan was approved: before the next model call, ``chooser`` picks the handoff."""
        self._handoff_chooser = chooser

    def handoff_estimates(self) -> dict[str, int]:
        """Tokens each approval handoff would leave in the context (for the choice)."""
        system, tools = self._last_system, self.registry.specs()
        keep = self.meter.used(system, self.messages, tools)
        fresh = self._fixed_tokens()
        _, recent = cp.split_history(self.messages, self._keep_estimate(fresh))
        summary = min(400, self.compaction.summary_tokens(self.meter.window, fresh))
        compact = fresh + self.meter.scaled(cp.messages_tokens(recent)) + summary
        return {"keep": keep, "compact": min(compact, keep), "fresh": min(fresh, keep)}

    def context_used(self) -> int:
        """Tokens in the context now (the last system prompt sent stands for the next)."""
        return self.meter.used(self._last_system, self.messages, self.registry.specs())

    def set_provider(self, provider: Provider) -> None:
        """``/model``: later calls go to ``provider``; its window is looked up again."""
        self.provider = provider
        self.meter = cp.ContextMeter()
        self._window_checked = False

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
        self.meter.history_replaced()

    def reset(self, session: SessionLog | None = None) -> None:
        """Start an empty conversation (``/clear``)."""
        self.messages.clear()
        self._steering.clear()
        self.context_tokens = 0
        self.meter.history_replaced()
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
        overflow_tried = False
        finished: dict[int, ToolResult] = {}  # id(call) -> result, for the batch in flight
        try:
            while True:
                if await self._paused_by_check():
                    stop = "paused"
                    break
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
                if not self._window_checked and (
                    len(self.messages) > 1
                    or cp.messages_tokens(self.messages) >= cp.EARLY_WINDOW_TOKENS
                ):
                    # A resumed conversation (or a long paste): know the window before
                    # sending, so it is compacted first rather than rejected. A short
                    # new conversation never waits for the lookup.
                    await self._ensure_window()
                await self._before_call()
                reply = await self._stream_reply(overflow_ok=not overflow_tried)
                # A new conversation's window is looked up after its first call, so
                # that call never waits (a resumed one was looked up above).
                await self._ensure_window()
                if reply is None:
                    if self._overflowed and not overflow_tried:
                        # Once per request: compact and send again, so an oversized
                        # history never leaves the conversation stuck.
                        overflow_tried = True
                        await self._compact_now("overflow")
                        continue
                    self.emit(ev.TurnDone("error"))
                    return
                stop = reply.stop_reason
                if reply.incomplete and not budget_raised:
                    budget_raised = True
                    if self._ask_again_with_larger_budget(reply):
                        self.emit(ev.AssistantDone(reply.text))
                        continue
                self._record(
                    Message(
                        "assistant", reply.text, tool_calls=reply.calls, thinking=reply.thinking
                    )
                )
                self._after_reply(reply)
                if stop == "max_tokens" and self._window_was_full(reply):
                    stop = "context_full"
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

    async def _paused_by_check(self) -> bool:
        """Whether a call check ends the turn before the next model call (it says why itself)."""
        for check in self.call_checks:
            if await check():
                return True
        return False

    async def _stream_reply(self, *, overflow_ok: bool = False) -> _Reply | None:
        reply = _Reply()
        self._overflowed = False
        try:
            self._last_system = self.system_prompt()
            stream = self.provider.stream(self._last_system, self.messages, self.registry.specs())
            async with aclosing(stream):  # type: ignore[type-var]
                async for event in stream:
                    if isinstance(event, TextChunk):
                        reply.parts.append(event.text)
                        self.emit(ev.TextDelta(event.text))
                    elif isinstance(event, ThinkingChunk):
                        self.emit(ev.ThinkingDelta(event.text))
                    elif isinstance(event, ToolCallReady):
                        reply.calls.append(event.call)
                    elif isinstance(event, UsageReport):
                        usage = event.usage
                        reply.usage = usage
                        self.context_tokens = usage.input_tokens + usage.output_tokens
                        self.emit(ev.UsageUpdated(usage, self.context_tokens))
                    elif isinstance(event, StreamEnd):
                        reply.stop_reason = event.stop_reason
                        reply.thinking = list(event.thinking)
                        reply.incomplete = list(event.incomplete_calls)
        except asyncio.CancelledError:
            if reply.text:
                # Keep what the user already saw, so the history matches the screen.
                self._record(Message("assistant", reply.text + "\n\n" + INTERRUPTED_MARK))
            elif self.messages and self.messages[-1].role == "user":
                # Esc before the first token: mark the request as unanswered, so the
                # next turn does not silently answer it too (/retry asks it again).
                self._record(Message("assistant", UNANSWERED_MARK))
            raise
        except ProviderError as exc:
            if overflow_ok and not self._window_checked:
                # The first call failed before its window lookup: a server that answers
                # an overflow with an empty stream (llama-cpp-python) is judged by size.
                await self._ensure_window()
            if overflow_ok and self._is_overflow(exc):
                self._overflowed = True
                self.emit(
                    ev.Notice(
                        "The conversation is too long for the model's context window: "
                        "compacting it and sending again.",
                        "warning",
                    )
                )
                return None
            # A settings problem (bad URL, rejected key) is not cured by asking again.
            remedy = "" if exc.config else "retry"
            self.emit(ev.ErrorEvent(exc.message.rstrip(), remedy=remedy, partial=exc.partial))
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

    # --- context accounting and compaction ----------------------------------------

    async def _ensure_window(self) -> None:
        """Look the context window up once per provider (short timeouts; None: unknown).

        Done after the first model call (or before a compaction), so the first
        request of a session never waits for the server's lookups.
        """
        if self._window_checked:
            return
        self._window_checked = True
        if self.window_source is not None:
            try:
                self.meter.window = await self.window_source()
            except asyncio.CancelledError:
                self._window_checked = False
                raise
            except Exception:  # a lookup problem must never stop a request
                self.meter.window = None
        self._emit_context()

    def _emit_context(self) -> None:
        used = self.context_used()
        self.emit(ev.ContextUpdated(used, self.meter.window, self.cost))

    def _after_reply(self, reply: _Reply) -> None:
        if reply.usage is not None:
            sent = cp.request_tokens(self._last_system, self.messages[:-1], self.registry.specs())
            self.meter.calibrate(reply.usage.input_tokens, sent)
            total = reply.usage.input_tokens + reply.usage.output_tokens
            self.meter.note_usage(total, len(self.messages))
            self.tokens_used += total
            if self.price is not None:
                cost = self.price(reply.usage)
                if cost is not None:
                    self.cost = (self.cost or 0.0) + cost
        self._emit_context()

    def _window_was_full(self, reply: _Reply) -> bool:
        """A reply stopped by the limit because prompt and answer filled the window
        (servers that are sent no max_tokens write until then: llama.cpp)."""
        window = self.meter.window
        if window is None:
            return False
        if reply.usage is not None:
            used = reply.usage.input_tokens + reply.usage.output_tokens
        else:
            used = self.context_used()
        return used >= window * 0.97

    def _is_overflow(self, exc: ProviderError) -> bool:
        # Here, not at the top: llm.http imports httpx (~45 ms), which the demo model and
        # the first frame never need.
        from planshell.llm.http import is_context_length_error

        if is_context_length_error(exc.message):
            return True
        window = self.meter.window
        # Servers that answer an overflow with an empty or cut stream: judge by size.
        return window is not None and self.context_used() >= window

    async def _before_call(self) -> None:
        """Apply an approval handoff, or compact when the context is nearly full."""
        chooser, self._handoff_chooser = self._handoff_chooser, None
        if chooser is not None:
            self.request_handoff(await chooser(self.handoff_estimates()))
        handoff, self._pending_handoff = self._pending_handoff, None
        if handoff == "fresh":
            self._replace_history(
                [
                    cp.compacted_block(
                        "(Started fresh after the plan was approved.)",
                        self._pins(),
                        cp.latest_request(self.messages),
                        self.compaction.request_chars(self.meter.window),
                    )
                ],
                "",
                "handoff",
                replaced=len(self.messages),
            )
            return
        if handoff == "compact":
            await self._compact_now("handoff")
            return
        window = self.meter.window
        if not self.compaction.auto or window is None:
            return
        if len(self.messages) == self._compacted_len:
            return  # nothing new since the last compaction: another one cannot help
        if self.context_used() >= window * self.compaction.threshold:
            await self._compact_now("auto")
            if self.context_used() >= window * self.compaction.threshold:
                self.emit(self._still_full(window))

    def _fixed_tokens(self) -> int:
        """What a compacted request carries whatever the history: the system prompt,
        the tools and the pinned state (with the user's latest request)."""
        pins = cp.compacted_block(
            "",
            self._pins(),
            cp.latest_request(self.messages),
            self.compaction.request_chars(self.meter.window),
        )
        return self.meter.scaled(
            cp.request_tokens(self._last_system, [pins], self.registry.specs())
        )

    def _keep_estimate(self, fixed: int) -> int:
        """The verbatim recent part's budget in estimated tokens (what split and shrink count)."""
        keep = self.compaction.keep_tokens(self.meter.window, fixed)
        return int(keep / self.meter.scale)

    def _still_full(self, window: int) -> ev.Notice:
        """Says what fills the context, so the user knows what could make room."""
        scaled = self.meter.scaled
        base = scaled(cp.request_tokens(self._last_system, [], self.registry.specs()))
        head = (
            self.messages[:1] if self.messages and cp.is_compacted_block(self.messages[0]) else []
        )
        return ev.Notice(
            f"The context is still nearly full after compacting ({self.context_used():,} of "
            f"{window:,} tokens: system prompt and tools {base:,}, summary and pinned state "
            f"{scaled(cp.messages_tokens(head)):,}, recent messages "
            f"{scaled(cp.messages_tokens(self.messages[len(head) :])):,}).",
            "warning",
        )

    def _pins(self) -> list[str]:
        pins = []
        for part in self.pin_parts:
            text = part()
            if text:
                pins.append(text)
        return pins

    async def _compact_now(self, reason: str, instructions: str = "") -> bool:
        """Summarise the older history with the model; keep the recent part verbatim.

        The new history is applied in one step at the end: a cancelled or failed
        summary leaves the conversation as it was (a failed one still shrinks it,
        so an overflow cannot repeat forever).
        """
        await self._ensure_window()
        window = self.meter.window
        fixed = self._fixed_tokens()
        keep = self._keep_estimate(fixed)
        budget = self.compaction.summary_tokens(window, fixed)
        older, recent = cp.split_history(self.messages, keep)
        request = cp.latest_request(self.messages)
        notes: list[str] = []
        summary = ""
        if older:
            try:
                written = await cp.summarise(
                    self.provider,
                    older,
                    instructions,
                    int(self.compaction.chunk_tokens(window) / self.meter.scale),
                    budget,
                )
                summary = written.text
                if written.cut:
                    notes.append(
                        f"The summary reached its length limit ({budget:,} tokens) and was cut."
                    )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                text = exc.message if isinstance(exc, ProviderError) else repr(exc)
                notes.append(
                    f"The model could not write a summary ({text}); older messages were dropped."
                )
        recent, elided = cp.shrink(recent, keep)
        if elided:
            notes.append(f"{elided} long message(s) in the recent part were shortened.")
        if not older and not elided:
            self.emit(ev.Notice("Nothing to compact yet: the conversation is already short."))
            return False
        block = cp.compacted_block(
            summary, self._pins(), request, self.compaction.request_chars(window)
        )
        self._replace_history([block, *recent], summary, reason, replaced=len(older), notes=notes)
        return True

    def _replace_history(
        self,
        messages: list[Message],
        summary: str,
        reason: str,
        *,
        replaced: int,
        notes: list[str] | None = None,
    ) -> None:
        system, tools = self._last_system, self.registry.specs()
        before = self.meter.used(system, self.messages, tools)
        self.messages = messages
        self._compacted_len = len(messages)
        self.meter.history_replaced()
        after = self.meter.used(system, self.messages, tools)
        self.context_tokens = after
        if self.session is not None:
            self.session.append_history(self.messages, reason=reason, summary=summary)
        self.emit(ev.Compacted(summary, reason, before, after, replaced))
        for note in notes or []:
            self.emit(ev.Notice(note, "warning"))
        self._emit_context()

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
            if inspect.isawaitable(refusal):
                refusal = await refusal
            if refusal:
                return self._refuse(call, refusal, headline=tool.headline(args))
        self.emit(ev.ToolStarted(call.id, call.name, tool.headline(args), args.model_dump()))
        # A call that may write is checked before and after (ctx.watch: no new .git, ...).
        watch = None if tool.read_only else self.ctx.watch
        token = await asyncio.to_thread(watch.start, tool.name, args) if watch is not None else None
        try:
            with progress_to(lambda line: self.emit(ev.ToolProgress(call.id, line))):
                result = await tool.run(args, self.ctx)
        except ToolError as exc:
            result = ToolResult(str(exc), is_error=True)
        except asyncio.CancelledError:
            if watch is not None and (note := watch.finish(token)):
                watch.announce(note)  # a cancelled command may have changed things too
            # A call that started may have reached its server: the hooks hear of it too
            # (plan mode's review names every MCP tool called while planning).
            self._tell_hooks(
                tool, args, ToolResult(f"{call.name} was cancelled before it finished.", True)
            )
            raise
        except Exception as exc:
            result = ToolResult(f"{call.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        result = tool.capped(result, self.ctx)
        note = await asyncio.to_thread(watch.finish, token) if watch is not None else ""
        if note:  # after capping: the note is never cut off
            assert watch is not None
            watch.announce(note)
            data = {**result.data, "protected_change": True}
            result = ToolResult(f"{result.content}\n\n{note}", result.is_error, data)
        self._tell_hooks(tool, args, result)
        self.emit(ev.ToolFinished(call.id, call.name, result.content, result.is_error, result.data))
        return result

    def _tell_hooks(self, tool: Tool, args: ToolArgs, result: ToolResult) -> None:
        for hook in self.result_hooks:
            hook(tool, args, result)

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
