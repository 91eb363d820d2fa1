"""The ``task`` tool: a sub-agent with a fresh context, read-only in plan mode.

The child is an ordinary ``Agent`` on the parent's provider with its own
history, system prompt (its profile's, plus the project's AGENTS.md) and tool
registry. What it may do is decided here, once, when it is built, never by its
prompt:

* its registry holds only the built-in tools, so it never sees a plan tool
  (it cannot enter, leave or review a plan, nor write one) nor ``task`` itself
  (no recursion), and it holds no reference to the controller: it cannot change
  the parent's mode;
* when the parent is in PLAN, or the profile is read-only (``explore``), it is
  built with plan mode's rules: the tool list ``PlanPolicy.offered`` gives, the
  same gate (``PlanPolicy.check`` with the same bash guard) and the plan exec
  policy (sandbox, scrubbed environment, git hardening). That set is kept until
  the child finishes, even if a person leaves PLAN meanwhile;
* a child built with every tool still follows the parent into PLAN: while the
  parent is in PLAN its calls go through the same gate (tightening is always safe).

That is why ``task`` honestly declares only ``read``: plan mode offers it, and in
plan mode whatever it starts cannot write.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from planshell.agent import events as ev
from planshell.agent.events import Mode
from planshell.agent.loop import Agent, Gate
from planshell.agent.prompt import base_prompt
from planshell.llm.types import ToolSpec
from planshell.plan.policy import PlanPolicy
from planshell.sandbox.bwrap import WorkspaceExecPolicy
from planshell.sanitize import strip_terminal_controls
from planshell.tools.base import (
    Effect,
    Tool,
    ToolArgs,
    ToolContext,
    ToolData,
    ToolError,
    ToolResult,
    args_schema,
    current_progress,
)
from planshell.tools.builtin import builtin_tools
from planshell.tools.registry import ToolRegistry
from planshell.tools.todo import TodoList

if TYPE_CHECKING:
    from planshell.config import AgentProfile
    from planshell.plan.controller import PlanController

EXPLORE_PROMPT = """\
You are an exploration sub-agent of planshell, started by another agent to answer one question
about the user's repository. You have a fresh context: the task you are given is all you know.
- Search and read efficiently: grep and find to locate, read for the relevant parts only.
- You cannot change anything; do not try.
- Reply with a concise, self-contained report: what you found, with file paths and line
  numbers, and what you could not find. The other agent sees only your final reply."""

GENERAL_PROMPT = """\
You are a sub-agent of planshell, started by another agent to carry out one self-contained task
in the user's repository. You have a fresh context: the task you are given is all you know.
- Read before you change; keep changes small and within the task.
- Reply with a concise, self-contained report: what you did and found (file paths, commands
  run and their outcome). The other agent sees only your final reply."""

READ_ONLY_NOTE = """\
## Read-only
You run under plan mode's rules: only read-only tools and read-only shell commands are allowed,
and the system enforces it. Do not try to change files; report what should change instead."""

PROGRESS_MAX_CHARS = 160


@dataclass(frozen=True)
class Profile:
    """What a sub-agent is: its instructions and tools (None: every built-in tool)."""

    name: str
    description: str
    system_prompt: str
    tools: tuple[str, ...] | None
    read_only: bool


BUILTIN: dict[str, Profile] = {
    "explore": Profile(
        "explore",
        "read-only, default",
        EXPLORE_PROMPT,
        ("read", "ls", "find", "grep", "bash"),
        read_only=True,
    ),
    "general": Profile(
        "general",
        "all tools",
        GENERAL_PROMPT,
        None,
        read_only=False,
    ),
}


def profiles(configured: dict[str, AgentProfile]) -> dict[str, Profile]:
    """The built-in profiles and the configured ones (which cannot replace a built-in)."""
    out = dict(BUILTIN)
    for name, entry in configured.items():
        if name in out:
            continue  # config validation refuses it; never let it widen a built-in
        out[name] = Profile(
            name,
            entry.description or "a configured profile",
            entry.system_prompt or GENERAL_PROMPT,
            tuple(entry.tools) if entry.tools is not None else None,
            entry.read_only,
        )
    return out


def profile_problems(configured: dict[str, AgentProfile]) -> list[str]:
    """Tool names in configured profiles that no sub-agent can get (said once at start-up)."""
    known = {tool.name for tool in builtin_tools(TodoList())}
    problems = []
    for name, entry in configured.items():
        for tool in entry.tools or []:
            if tool not in known:
                problems.append(
                    f"agents.{name}.tools: {tool!r} is not a tool a sub-agent can have; ignored"
                )
    return problems


class TaskArgs(ToolArgs):
    description: str = Field(description="A few words for the user.")
    prompt: str
    agent: str = "explore"


@dataclass
class _Outcome:
    errors: list[str] = dataclasses.field(default_factory=list)
    cancelled: bool = False
    tool_calls: int = 0


class TaskTool(Tool[TaskArgs]):
    name = "task"
    description = "Run a sub-agent on one task; prompt is all it knows. Returns its report."
    Args = TaskArgs
    # Honest only because every child started in PLAN is built read-only (see the module doc).
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.READ})
    concurrent: ClassVar[bool] = True
    more_hint = "ask the sub-agent for a shorter report"

    def __init__(
        self,
        parent: Agent,
        controller: PlanController,
        configured: dict[str, AgentProfile] | None = None,
    ) -> None:
        self.parent = parent
        self.controller = controller
        self.profiles = profiles(configured or {})
        self.tokens_used = 0  # by every sub-agent of this session

    def spec(self) -> ToolSpec:
        names = ", ".join(f"{p.name} ({p.description})" for p in self.profiles.values())
        return ToolSpec(
            self.name,
            f"{self.description} Calls in one reply run in parallel. agent: {names}.",
            args_schema(self.Args),
        )

    def headline(self, args: TaskArgs) -> str:
        return f"task {args.agent}: {args.description}"

    # --- building the child ---------------------------------------------------

    def build(self, profile: Profile) -> tuple[Agent, bool]:
        """The child agent and whether it is read-only; its tool set is fixed here."""
        controller = self.controller
        read_only = profile.read_only or controller.mode is Mode.PLAN
        registry = ToolRegistry(builtin_tools(TodoList()))  # its own list; no plan tools, no task
        names = [n for n in registry.names() if profile.tools is None or n in profile.tools]
        # Its own policy object over the same guard and settings (the parent's keeps its warnings).
        policy = PlanPolicy(controller.guard, controller.policy.allowed_tools)
        if read_only:
            offered = set(policy.offered(registry))
            names = [n for n in names if n in offered]
        registry.set_active(names)
        exec_policy = controller.plan_exec_policy if read_only else self.parent.ctx.exec_policy
        if isinstance(exec_policy, WorkspaceExecPolicy):
            # No permission gate asks for a sub-agent's sandbox=false: it stays inside.
            exec_policy = exec_policy.sealed()
        ctx = dataclasses.replace(self.parent.ctx, exec_policy=exec_policy)
        identity = profile.system_prompt
        notices: list[str] = []
        prompt = base_prompt(ctx.root, identity=identity, notices=notices)
        for notice in notices:  # AGENTS.md refused (it may have changed since start-up)
            self.parent.emit(ev.Notice(notice, "warning"))
        if read_only:
            prompt += "\n\n" + READ_ONLY_NOTE
        child = Agent(
            self.parent.provider,
            registry,
            ctx,
            base_prompt=prompt,
            max_steps=self.parent.max_steps,
            max_concurrent=1,
        )
        # The receipt's barrier first: no call of a sub-agent runs before the snapshot either.
        child.gates.append(controller.barrier)
        child.gates.append(_plan_gate(policy, registry, None if read_only else controller))
        if not read_only:
            # The parent's other gates (the permission prompt outside plan mode) judge the
            # child's calls too: a sub-agent never writes or runs what its parent would ask about.
            mine = (controller.gate, controller.barrier)
            child.gates.extend(g for g in self.parent.gates if g not in mine)
        return child, read_only

    # --- running it -----------------------------------------------------------

    async def run(self, args: TaskArgs, ctx: ToolContext) -> ToolResult:
        profile = self.profiles.get(args.agent)
        if profile is None:
            raise ToolError(
                f"There is no sub-agent profile {args.agent!r}; use one of: "
                f"{', '.join(self.profiles)}."
            )
        if profile.read_only or self.controller.mode is Mode.PLAN:
            # The one-off sandbox probe, off the event loop (build() reads it again, cached).
            await asyncio.to_thread(lambda: self.controller.plan_exec_policy)
        child, read_only = self.build(profile)
        outcome = _Outcome()
        child.subscribe(self._watcher(outcome, current_progress()))
        try:
            await child.submit(args.prompt)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a child's failure is the parent's tool result, never a crash
            return ToolResult(
                f"The sub-agent failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True
            )
        if outcome.cancelled:
            # The parent's turn was cancelled (the child swallowed it to end cleanly).
            raise asyncio.CancelledError
        answer = _final_answer(child)
        data: ToolData = {
            "agent": profile.name,
            "read_only": read_only,
            "tool_calls": outcome.tool_calls,
        }
        if outcome.errors:
            last = f"\n\nIts last reply:\n{answer}" if answer else ""
            return ToolResult(
                f"The sub-agent stopped with an error: {outcome.errors[-1]}{last}",
                is_error=True,
                data=data,
            )
        if not answer:
            return ToolResult("The sub-agent finished without a reply.", is_error=True, data=data)
        return ToolResult(answer, data=data)

    def _watcher(
        self, outcome: _Outcome, progress: Callable[[str], None]
    ) -> Callable[[ev.Event], None]:
        def watch(event: ev.Event) -> None:
            match event:
                case ev.ToolStarted(headline=headline):
                    outcome.tool_calls += 1
                    progress(_one_line(headline))
                case ev.ToolFinished(is_error=True, name=name, content=content):
                    first = next((ln for ln in content.splitlines() if ln.strip()), "failed")
                    progress(_one_line(f"✗ {name}: {first}"))
                case ev.UsageUpdated(usage=usage):
                    self.tokens_used += usage.input_tokens + usage.output_tokens
                    self.parent.emit(ev.SubagentUsage(usage, self.tokens_used))
                case ev.ErrorEvent(message=message):
                    outcome.errors.append(message)
                case ev.TurnDone(cancelled=cancelled):
                    outcome.cancelled = cancelled
                case _:
                    pass

        return watch


def _plan_gate(policy: PlanPolicy, registry: ToolRegistry, follow: PlanController | None) -> Gate:
    """Plan mode's gate over the child's registry: always, or (``follow``) while it is in PLAN."""

    def gate(tool: Tool, args: ToolArgs) -> str | None:
        if follow is not None and follow.mode is not Mode.PLAN:
            return None
        return policy.check(registry, tool, args)

    return gate


def _final_answer(child: Agent) -> str:
    return next(
        (
            m.content.strip()
            for m in reversed(child.messages)
            if m.role == "assistant" and m.content.strip()
        ),
        "",
    )


def _one_line(text: str) -> str:
    line = " ".join(strip_terminal_controls(text).split())
    return line if len(line) <= PROGRESS_MAX_CHARS else line[: PROGRESS_MAX_CHARS - 1] + "…"
