"""Small real tools and a recorder shared by the engine tests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import Field

from planshell.agent import events as ev
from planshell.agent.loop import Agent
from planshell.config import Settings
from planshell.llm.scripted import Reply, ReplySource, Request, ScriptedProvider
from planshell.runtime import build_runtime
from planshell.tools.base import Effect, Tool, ToolArgs, ToolContext, ToolError, ToolResult
from planshell.tools.registry import ToolRegistry

T = TypeVar("T")


class EchoArgs(ToolArgs):
    text: str = Field(description="what to echo")


class EchoTool(Tool[EchoArgs]):
    name = "echo"
    description = "Echo text back."
    Args = EchoArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.READ})

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def run(self, args: EchoArgs, ctx: ToolContext) -> ToolResult:
        self.calls.append(args.text)
        if args.text == "fail":
            raise ToolError("echo refuses to say fail")
        if args.text == "crash":
            raise RuntimeError("boom")
        return ToolResult(f"echo: {args.text}")


class SleepArgs(ToolArgs):
    seconds: float = 10.0


class SleepTool(Tool[SleepArgs]):
    name = "sleep"
    description = "Sleep."
    Args = SleepArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.READ})

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.finished = False

    async def run(self, args: SleepArgs, ctx: ToolContext) -> ToolResult:
        self.started.set()
        await asyncio.sleep(args.seconds)
        self.finished = True
        return ToolResult("slept")


class Recorder:
    def __init__(self) -> None:
        self.events: list[ev.Event] = []

    def __call__(self, event: ev.Event) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


def make_agent(
    root: Path, replies: list[Reply], tools: list[Tool[Any]] | None = None
) -> tuple[Agent, ScriptedProvider, Recorder]:
    provider = ScriptedProvider(replies)
    registry = ToolRegistry(tools if tools is not None else [EchoTool(), SleepTool()])
    agent = Agent(provider, registry, ToolContext(root=root))
    recorder = Recorder()
    agent.subscribe(recorder)
    return agent, provider, recorder


# The plan the plan-mode tests write unless they bring their own.
RATE_LIMIT_PLAN = """# Plan: Add rate limiting

## Goal

Limit requests.

## Steps

- [ ] Read `src/app/server.py`
- [ ] Add a token bucket
- [ ] Test it

## Verification

```sh
make test
```
"""


def saved_plan_path(request: Request) -> str:
    """The plan path in the latest "Plan saved: <path>" tool result the model was sent."""
    for message in reversed(request.messages):
        if message.role == "tool" and message.content.startswith("Plan saved: "):
            return message.content.split()[2]
    raise AssertionError("no plan saved yet")


def write_and_review(
    title: str = "Add rate limiting", content: str = RATE_LIMIT_PLAN
) -> list[ReplySource]:
    """The model writes ``content`` as the plan, then asks for the review of the file it saved."""
    return [
        Reply(calls=[("write_plan", {"title": title, "content": content})]),
        lambda req: Reply(calls=[("exit_plan_mode", {"plan_path": saved_plan_path(req)})]),
    ]


# Seconds a test waits for something that should happen at once. Only a guard
# against a hang on a busy CI machine, never a speed budget (speed is in bench/).
HANG_GUARD = 30.0


async def wait_for(predicate, timeout: float = HANG_GUARD) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"condition not reached within {timeout:g} s (hang guard)")
        await asyncio.sleep(0.005)


async def finishes(awaitable: Awaitable[T], what: str, timeout: float = HANG_GUARD) -> T:
    """Await ``awaitable``; a hang fails the test with ``what`` rather than stalling it."""
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except TimeoutError:
        raise AssertionError(f"{what}: still running after {timeout:g} s (hang guard)") from None


class ScriptedDecider:
    """Answers reviews from a list; each entry is a Review or a function of the request."""

    def __init__(
        self,
        reviews=(),
        confirm: bool = True,
        leave: bool = False,
        approvals=(),
        amendments=(),
        fetches=(),
    ) -> None:
        self.reviews = list(reviews)
        self.fetches = list(fetches)  # plan-mode fetch answers (True fetches); none left: no
        self.fetch_requests: list = []
        self.amendments = list(amendments)  # True/False or a function of the request
        self.amendment_requests: list = []
        self.approvals = list(approvals)  # ApprovalDecision or a function of the request
        self.approval_requests: list = []
        self.confirm = confirm
        self.leave = leave
        self.requests: list = []
        self.confirm_reasons: list[str] = []
        self.leave_reasons: list[str] = []

    async def confirm_enter_plan(self, reason: str) -> bool:
        self.confirm_reasons.append(reason)
        return self.confirm

    async def confirm_leave_plan(self, reason: str) -> bool:
        self.leave_reasons.append(reason)
        return self.leave

    async def review_plan(self, request):
        from planshell.plan.decider import Decision, Review

        self.requests.append(request)
        if not self.reviews:
            return Review(Decision.KEEP)
        item = self.reviews.pop(0)
        return item(request) if callable(item) else item

    async def review_amendment(self, request):
        """Amendments: from ``amendments`` (True approves), else declined by the person."""
        from planshell.plan.decider import AmendmentAnswer

        self.amendment_requests.append(request)
        item = self.amendments.pop(0) if self.amendments else False
        return AmendmentAnswer(bool(item(request) if callable(item) else item))

    async def approve_fetch(self, request) -> bool:
        """Plan-mode fetches to unlisted domains: from ``fetches``, else refused."""
        self.fetch_requests.append(request)
        return bool(self.fetches.pop(0)) if self.fetches else False

    async def approve_tool(self, request):
        """Tool approvals outside plan mode: from ``approvals``, else "yes, once"."""
        from planshell.plan.decider import ApprovalChoice, ApprovalDecision

        self.approval_requests.append(request)
        if not self.approvals:
            return ApprovalDecision(ApprovalChoice.ONCE)
        item = self.approvals.pop(0)
        return item(request) if callable(item) else item


def make_runtime(project: Path, replies=(), reviews=(), settings: Settings | None = None, **kw):
    """A runtime on PROJECT with scripted replies and reviews: (runtime, provider, decider, recorder)."""
    decider = ScriptedDecider(reviews)
    provider = ScriptedProvider(list(replies))
    runtime = build_runtime(settings or Settings(), project, decider, provider=provider, **kw)
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    return runtime, provider, decider, recorder


class HeldSnapshot:
    """The real ``take_snapshot``, held back until the test sets ``release`` (calls counted).

    Patched in as ``planshell.plan.controller.take_snapshot``: it stands in for the
    slow scan of a big repository, with no clock involved.
    """

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0

    def __call__(self, root: Path, **options: Any) -> Any:
        from planshell.plan.receipt import take_snapshot

        self.calls += 1
        self.entered.set()
        self.release.wait(HANG_GUARD)  # only a guard against a hang: the test releases it
        return take_snapshot(root, **options)
