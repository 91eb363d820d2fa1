"""Wire the engine together: settings -> provider, tools, agent, plan mode.

Both front ends (the TUI and ``--print``) build the same runtime, so there is
exactly one place where the pieces are connected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from planshell.agent import events as ev
from planshell.agent.loop import Agent
from planshell.agent.prompt import base_prompt
from planshell.agent.session import LoadedSession, SessionLog
from planshell.config import Settings
from planshell.llm.factory import make_provider
from planshell.llm.types import Provider
from planshell.plan.controller import Mode, PlanController
from planshell.plan.decider import Decider
from planshell.plan.store import PlanStore
from planshell.plan.subagents import TaskTool, profile_problems
from planshell.plan.tools import plan_tools
from planshell.plan.turns import PlanTurnWatch
from planshell.tools.base import ToolContext
from planshell.tools.builtin import builtin_tools
from planshell.tools.registry import ToolRegistry
from planshell.tools.todo import TodoList


@dataclass
class Runtime:
    root: Path
    settings: Settings
    provider: Provider
    registry: ToolRegistry
    todos: TodoList
    store: PlanStore
    agent: Agent
    plan: PlanController
    problems: list[str] = field(default_factory=list)
    plan_turns: PlanTurnWatch | None = None

    def close(self) -> None:
        if self.agent.session is not None:
            self.agent.session.close()


def build_runtime(
    settings: Settings,
    root: Path,
    decider: Decider,
    *,
    provider: Provider | None = None,
    resume: LoadedSession | None = None,
    persist: bool = True,
    plan: bool = False,
) -> Runtime:
    """Build everything; ``resume`` restores history and mode, ``plan`` forces PLAN."""
    from planshell.plan.sandbox import plan_exec_policy

    root = root.resolve()
    provider = provider or make_provider(settings)
    todos = TodoList()
    registry = ToolRegistry(builtin_tools(todos))
    tools = settings.tools
    ctx = ToolContext(
        root=root,
        allow_outside_root=tools.allow_outside_root,
        read_max_bytes=tools.read_max_bytes,
        bash_timeout=tools.bash_timeout,
        bash_max_output=tools.bash_max_output,
        result_max_chars=tools.result_max_chars,
    )
    session: SessionLog | None = None
    if persist:
        session = SessionLog.reopen(resume.path) if resume else SessionLog.create(root)
    agent = Agent(
        provider,
        registry,
        ctx,
        base_prompt=base_prompt(root),
        session=session,
        max_steps=settings.agent.max_steps,
        max_concurrent=settings.agent.parallel_tasks,
    )
    store = PlanStore(root)
    controller = PlanController(
        agent,
        store,
        settings.plan,
        todos,
        decider,
        # A factory: the sandbox probe runs on first entering PLAN, never at start-up.
        plan_exec_policy=lambda: plan_exec_policy(settings.plan, root),
    )
    for tool in plan_tools(controller):
        registry.register(tool)
    registry.register(TaskTool(agent, controller, settings.agents))
    controller.shape_tools()
    # The checklist is engine state; views learn about it through the event bus.
    todos.subscribe(
        lambda items: agent.emit(
            ev.TodosChanged(tuple((item.content, item.status.value) for item in items))
        )
    )
    runtime = Runtime(root, settings, provider, registry, todos, store, agent, controller)
    runtime.plan_turns = PlanTurnWatch(agent.emit, lambda: controller.mode)
    agent.subscribe(runtime.plan_turns)
    if resume is not None:
        agent.load_history(resume.messages)
        controller.restore(resume.mode)
        runtime.problems += resume.problems
    if plan and controller.mode is not Mode.PLAN:
        controller.enter_plan()
    runtime.problems += controller.guard.warnings + controller.policy.warnings
    runtime.problems += profile_problems(settings.agents)
    return runtime
