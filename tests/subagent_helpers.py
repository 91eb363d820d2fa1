"""A provider that routes each request to a script by its conversation's first message.

The parent and its sub-agents share one provider (as in planshell); the parent's
first message is the user's request, a child's is its task prompt, so each gets
its own script and the tests stay deterministic however the calls interleave.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from planshell.config import Settings
from planshell.llm.scripted import ReplySource, ScriptedProvider
from planshell.llm.types import Message, StreamEvent, ToolSpec
from planshell.plan.decider import Decider, HeadlessDecider
from planshell.runtime import Runtime, build_runtime


class Router:
    name = "router"
    label = "router"

    def __init__(
        self, scripts: dict[str, list[ReplySource]], waits: dict[str, str] | None = None
    ) -> None:
        self.scripts = {key: ScriptedProvider(replies) for key, replies in scripts.items()}
        self.log: list[str] = []  # "start KEY" / "end KEY" per request, in order
        self.cancelled: list[str] = []
        # KEY -> log entry its first request waits for: a proof of concurrency that
        # needs no clock (run one after the other, it would wait forever: the hang guard fails).
        self.waits = dict(waits or {})

    async def stream(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        max_output: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        key = messages[0].content if messages else ""
        self.log.append(f"start {key}")
        awaited = self.waits.pop(key, None)
        if awaited is not None:
            from tests.engine_helpers import wait_for

            await wait_for(lambda: awaited in self.log)
        try:
            async for event in self.scripts[key].stream(
                system, messages, tools, max_output=max_output
            ):
                yield event
        except asyncio.CancelledError:
            self.cancelled.append(key)
            raise
        self.log.append(f"end {key}")

    def requests(self, key: str) -> list:
        return self.scripts[key].requests


def router_runtime(
    root: Path,
    scripts: dict[str, list[ReplySource]],
    *,
    plan: bool = False,
    settings: Settings | None = None,
    decider: Decider | None = None,
    waits: dict[str, str] | None = None,
) -> tuple[Runtime, Router]:
    router = Router(scripts, waits)
    runtime = build_runtime(
        settings or Settings(),
        root,
        decider or HeadlessDecider(),
        provider=router,
        persist=False,
        plan=plan,
    )
    return runtime, router


def tool_results(request) -> list[Message]:  # type: ignore[no-untyped-def]
    return [m for m in request.messages if m.role == "tool"]
