"""Wire the engine together: settings -> provider, tools, agent, plan mode.

Both front ends (the TUI and ``--print``) build the same runtime, so there is
exactly one place where the pieces are connected.
"""

from __future__ import annotations

import os
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planshell.agent import events as ev
from planshell.agent.loop import Agent, PriceFn
from planshell.agent.prompt import base_prompt
from planshell.agent.session import LoadedSession, SessionLog
from planshell.agents.subagents import TaskTool, profile_problems
from planshell.config import Settings
from planshell.llm.factory import make_provider
from planshell.llm.types import Provider
from planshell.mcp.manager import McpManager, untrusted_servers
from planshell.plan.controller import Mode, PlanController
from planshell.plan.critic import critic_factory
from planshell.plan.decider import Decider
from planshell.plan.fetch_gate import FetchPlanGate
from planshell.plan.phase_models import PhaseModels
from planshell.plan.pins import plan_pins
from planshell.plan.store import PlanStore
from planshell.plan.tools import plan_tools
from planshell.plan.turns import PlanTurnWatch
from planshell.sanitize import plain_line
from planshell.tools.base import ToolContext
from planshell.tools.builtin import builtin_tools
from planshell.tools.fetch import FetchTool
from planshell.tools.registry import ToolRegistry
from planshell.tools.todo import TodoList

if TYPE_CHECKING:
    from planshell.permissions import PermissionController
    from planshell.sandbox.bwrap import WorkspaceExecPolicy


class ProviderSwitchError(Exception):
    """``Runtime.switch_provider`` refused; the message is meant for the user."""


@dataclass(frozen=True)
class ProviderSwitch:
    """A switch that happened: the provider now in use and the one it replaced."""

    old: Provider
    new: Provider

    def close_old(self) -> Coroutine[Any, Any, None] | None:
        """Closing the replaced provider (its ``aclose``), for the caller to run; or None."""
        closer = getattr(self.old, "aclose", None)
        if closer is None or self.old is self.new:
            return None
        result: Coroutine[Any, Any, None] = closer()
        return result


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
    # Files of the project planshell refused to read by itself (AGENTS.md a symlink to
    # /proc/self/environ, a FIFO, ...): every front end shows these, verbose or not.
    read_notices: list[str] = field(default_factory=list)
    plan_turns: PlanTurnWatch | None = None
    # The planning model and the session's (execution) model; see planshell/plan/phase_models.py.
    phases: PhaseModels | None = None
    permissions: PermissionController | None = None
    workspace: WorkspaceExecPolicy | None = None  # how bash runs outside plan mode
    # As loaded (trust-filtered): what /provider switches back to; ``settings`` follows switches.
    start_settings: Settings = field(init=False)
    # What the provider's server says it offers (for /model completion); see load_served_models.
    served_models: list[str] = field(default_factory=list)
    # The MCP servers (issue 27); started by ``start_mcp`` once an event loop runs.
    mcp: McpManager | None = None
    # A new session started in PLAN (ui.start_mode or --plan): the first screen says how to leave.
    started_in_plan: bool = False

    def __post_init__(self) -> None:
        self.start_settings = self.settings

    def start_mcp(self) -> None:
        """Start the MCP servers in the background (never awaited: the first frame is not held)."""
        if self.mcp is not None:
            self.mcp.start()

    async def stop_mcp(self) -> None:
        """Stop the MCP servers (their programs end with them); before ``close``."""
        if self.mcp is not None:
            await self.mcp.stop()

    def close(self) -> None:
        if self.agent.session is not None:
            self.agent.session.close()

    def switch_provider(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> ProviderSwitch:
        """``/provider`` and ``/model``: use another provider or model for this session.

        The settings follow the switch (``switched_settings``: a configured model
        and base URL stay with the provider they were set for), and so do the
        context window and price. Raises ``ProviderSwitchError`` for an unknown
        provider or one that cannot be built; the runtime is unchanged then. The
        replaced provider is left open: ``ProviderSwitch.close_old`` closes it.
        """
        from planshell.config import ConfigError
        from planshell.llm.factory import PROVIDER_CHOICES, switched_settings

        if provider is not None and provider not in PROVIDER_CHOICES:
            raise ProviderSwitchError(
                f"Unknown provider {provider!r}: choose one of {', '.join(PROVIDER_CHOICES)}."
            )
        env = os.environ if environ is None else environ
        settings = switched_settings(
            self.start_settings, self.settings, env, provider=provider, model=model
        )
        try:
            new = make_provider(settings, env)
        except (ConfigError, ValueError) as exc:
            raise ProviderSwitchError(f"Could not switch: {exc}") from exc
        old = self.provider
        self.provider = new
        self.settings = settings
        if self.phases is not None:  # the session's model: in use now unless planning has its own
            self.phases.set_session(new, settings)
        else:
            self.agent.set_provider(new)
            configure_context(self.agent, settings)
        self.served_models = []
        return ProviderSwitch(old, new)

    def switch_plan_model(self, model: str) -> ProviderSwitch:
        """``/model plan NAME``: plan with NAME (the planning provider as configured, else the
        session's). Raises ``ProviderSwitchError`` when it cannot be built; nothing changes then."""
        from planshell.config import ConfigError

        assert self.phases is not None
        old = self.phases.plan_provider if self.phases.split else None
        try:
            new = self.phases.set_plan_model(model)
        except (ConfigError, ValueError) as exc:
            raise ProviderSwitchError(f"Could not switch: {exc}") from exc
        return ProviderSwitch(old if old is not None else new, new)

    def model_label(self) -> str:
        """The active model for the status bar (``plan: …`` while a planning model is in use)."""
        if self.phases is None:
            return self.agent.provider.label
        return self.phases.status_label()

    async def adopt_served_model(self) -> ServedChoice | None:
        """No model chosen and a server of the user's own: use a model it actually serves.

        Without ``--model`` (or ``model`` in a config) an OpenAI-compatible
        provider would send the hosted default (gpt-4.1-mini) to a local server
        and show that model's 1M-token window. When the server lists models and
        the default is not among them, the first it lists is used (servers list
        the loaded or newest first) and its window is then looked up as usual.
        Returns what was chosen, for the front end to say (None: nothing changed).
        Skipped while a turn runs or after the provider changed.
        """
        from planshell.llm.factory import DEFAULT_URLS
        from planshell.llm.models import auth_headers, list_models

        provider = self.agent.provider
        base = str(getattr(provider, "base_url", "") or "").rstrip("/")
        if provider is not self.provider:
            return None  # the planning model is in use: never make it the session's
        if self.settings.model or getattr(provider, "name", "") != "openai" or not base:
            return None
        if base == DEFAULT_URLS["openai"].rstrip("/"):
            return None  # the hosted API: its default model is a real one
        names = await list_models(base, auth_headers(provider), server_order=True)
        if self.agent.provider is not provider or self.agent.busy or not names:
            return None
        if getattr(provider, "model", "") in names:
            return None
        switch = self.switch_provider(model=names[0])
        self.served_models = sorted(names)
        closing = switch.close_old()
        if closing is not None:
            await closing
        return ServedChoice(names[0], len(names), base)

    async def load_served_models(self) -> None:
        """Ask an OpenAI-compatible server which models it offers, into ``served_models``.

        Only for a server of the user's own (the public OpenAI endpoint without a
        key would just refuse); kept only if the provider was not switched meanwhile.
        """
        from planshell.llm.factory import DEFAULT_URLS
        from planshell.llm.models import auth_headers, list_models

        provider = self.agent.provider
        base = getattr(provider, "base_url", "")
        if getattr(provider, "name", "") != "openai" or not base:
            return
        if base.rstrip("/") == DEFAULT_URLS["openai"] and not getattr(provider, "api_key", None):
            return
        names = await list_models(base, auth_headers(provider))
        if self.agent.provider is provider:
            self.served_models = names


@dataclass(frozen=True)
class ServedChoice:
    """The model taken from the server's list because none was chosen (see adopt_served_model)."""

    model: str
    count: int  # how many the server lists
    base_url: str

    def headless_text(self) -> str:
        others = f", the first of {self.count} it lists" if self.count > 1 else ""
        return (
            f"no model was chosen: using '{self.model}'{others} from {self.base_url} "
            "(--model NAME to choose)"
        )

    def tui_text(self) -> str:
        others = f" (the first of {self.count} it lists)" if self.count > 1 else ""
        return (
            f"No model was chosen: using {self.model}{others}, served by {self.base_url}. "
            "/model changes it."
        )


def configure_context(agent: Agent, settings: Settings) -> None:
    """Window lookup, compaction policy and price for the agent's current provider.

    Called again by ``/model`` after a switch: the window and price follow the model.
    """
    from planshell.agent.compaction import CompactionPolicy
    from planshell.llm.factory import DEFAULT_URLS
    from planshell.llm.models import find_window

    compaction = settings.compaction
    agent.compaction = CompactionPolicy(
        compaction.auto, compaction.threshold, compaction.keep_fraction
    )

    async def window() -> int | None:
        return await find_window(agent.provider, settings.context_window, default_urls=DEFAULT_URLS)

    agent.window_source = window
    agent.price = price_of(settings, agent.provider)


def price_of(settings: Settings, provider: Provider) -> PriceFn | None:
    """What a reply of ``provider``'s model costs, from ``settings.prices``; None: no price."""
    from planshell.llm.types import Usage

    price = settings.prices.get(getattr(provider, "model", ""))
    if price is None:
        return None

    def cost(usage: Usage) -> float | None:
        return (usage.input_tokens * price.input + usage.output_tokens * price.output) / 1e6

    return cost


HANDOFF_ASK_FRACTION = 0.25  # ask only when keeping would fill this much of the window
HANDOFF_ASK_TOKENS = 16_000  # ... or this many tokens when the window is unknown


def _offer_handoff(agent: Agent, decider: Decider, root: Path) -> None:
    """On PLAN -> EXECUTE, ask the decider how to carry the context over (remembered).

    Asked before the next model call (the engine never drops context unasked);
    the choice is remembered per project in the user data dir, not the repo.
    """
    from planshell.plan.handoff import remember_handoff, remembered_handoff

    async def choose(tokens: dict[str, int]) -> str:
        chooser = getattr(decider, "choose_handoff", None)
        window = agent.meter.window
        small = window * HANDOFF_ASK_FRACTION if window else HANDOFF_ASK_TOKENS
        if chooser is None or tokens.get("keep", 0) < small:
            return "keep"  # nothing worth dropping: approval goes straight on
        choice = await chooser(tokens, remembered_handoff(root))
        remember_handoff(root, choice)
        return choice if choice in ("keep", "compact", "fresh") else "keep"

    def on_event(event: ev.Event) -> None:
        if (
            isinstance(event, ev.ModeChanged)
            and event.mode is Mode.EXECUTE
            and event.previous is Mode.PLAN
        ):
            agent.ask_handoff(choose)

    agent.subscribe(on_event)


def _approved_text(controller: PlanController) -> str | None:
    """The executing plan's text as approved (the record, not the file): its scope is a fence."""
    approval = controller.approval
    if controller.mode is not Mode.EXECUTE or approval is None:
        return None
    return approval.text


async def _fetch_redirect(
    controller: PlanController, permissions: PermissionController, url: str, first: str
) -> str | None:
    """A redirect to another host is asked about again: in PLAN by the per-domain
    question, elsewhere by the permission rules (a host they do not cover is refused)."""
    if controller.mode is Mode.PLAN:
        return await controller.fetch_gate.check(url, redirect_from=first)
    return permissions.fetch_redirect(url, first)


def _mcp_manager(
    settings: Settings,
    registry: ToolRegistry,
    agent: Agent,
    controller: PlanController,
    root: Path,
) -> McpManager | None:
    """The MCP servers of the config (user's, and a trusted project's); None when none."""
    untrusted = untrusted_servers(settings)
    if not settings.mcp.servers and not untrusted:
        return None
    manager = McpManager(
        settings.mcp,
        registry,
        on_notice=lambda text: agent.emit(ev.Notice(plain_line(text, 300), "warning")),
        on_added=lambda names, offer: controller.mcp_tools_added(names, offer=offer),
        in_plan=lambda: controller.mode is Mode.PLAN,
        plan_names=lambda: controller.plan_mcp,
        on_over_budget=controller.mcp_over_budget,
        untrusted=untrusted,
        root=str(root),
    )

    controller.mcp_offer = manager.plan_offer

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.TurnDone):
            manager.end_turn()

    agent.subscribe(on_event)
    return manager


def build_runtime(
    settings: Settings,
    root: Path,
    decider: Decider,
    *,
    provider: Provider | None = None,
    resume: LoadedSession | None = None,
    persist: bool = True,
    plan: bool = False,
    allow: list[str] | None = None,
) -> Runtime:
    """Build everything; ``resume`` restores history and mode, ``plan`` forces PLAN.

    ``allow`` adds permission rules for this run (``--allow``), after the config's.
    """
    from planshell.permissions import PermissionController
    from planshell.permissions.local_rules import local_rules_path
    from planshell.sandbox.bwrap import (
        WorkspaceExecPolicy,
        plan_exec_policy,
        workspace_exec_policy,
    )
    from planshell.workspace.gitwatch import ProjectWatch

    root = root.resolve()
    provider = provider or make_provider(settings)
    todos = TodoList()
    # fetch is the main agent's only: sub-agents build their registry from builtin_tools.
    fetch = FetchTool(timeout=settings.fetch.timeout, max_bytes=settings.fetch.max_bytes)
    registry = ToolRegistry([*builtin_tools(todos), fetch])
    tools = settings.tools
    ctx = ToolContext(
        root=root,
        allow_outside_root=tools.allow_outside_root,
        read_max_bytes=tools.read_max_bytes,
        bash_timeout=tools.bash_timeout,
        bash_max_output=tools.bash_max_output,
        result_max_chars=tools.result_max_chars,
        # OFF/EXECUTE bash: the workspace-write sandbox, probed before the first command.
        exec_policy=workspace_exec_policy(
            settings.permissions,
            root,
            tuple(settings.plan.env_deny),
            tuple(settings.plan.env_allow),
        ),
        watch=ProjectWatch(root),  # no new .git, no .planshell change, after any write
    )
    session: SessionLog | None = None
    if persist:
        session = SessionLog.reopen(resume.path) if resume else SessionLog.create(root)
    workspace = ctx.exec_policy
    assert isinstance(workspace, WorkspaceExecPolicy)
    read_notices: list[str] = []  # files of the project planshell refused to read
    agent = Agent(
        provider,
        registry,
        ctx,
        base_prompt=base_prompt(root, notices=read_notices),
        session=session,
        max_steps=settings.agent.max_steps,
        max_concurrent=settings.agent.parallel_tasks,
    )
    workspace.on_notice = lambda text: agent.emit(ev.Notice(text, "warning"))
    assert isinstance(ctx.watch, ProjectWatch)
    ctx.watch.on_notice = lambda text: agent.emit(ev.Notice(text, "warning"))
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
    controller.fetch_gate = FetchPlanGate(settings.fetch.allow_domains, decider)
    # The optional critic (plan.critic, or the demo's own) reads each plan before its review.
    controller.reviews.critic = critic_factory(settings, root, lambda: agent.provider)
    for tool in plan_tools(controller):
        registry.register(tool)
    configure_context(agent, settings)
    agent.pin_parts.append(lambda: plan_pins(controller))
    _offer_handoff(agent, decider, root)
    # Added after plan mode's gate: in PLAN that gate decides, this one stands aside.
    permissions = PermissionController(
        agent,
        settings.permissions,
        decider,
        controller.guard,
        in_plan=lambda: controller.mode is Mode.PLAN,
        extra_allow=list(allow or []),
        local_file=local_rules_path(root),
        sandboxed=lambda: workspace.active,
        approved_plan=lambda: _approved_text(controller),
        verification_ready=controller.verification_ready,
        verification_used=controller.use_verification,
        add_to_plan=lambda rel: controller.add_to_plan(rel),
    )
    controller.on_approve_mode = permissions.set_mode
    fetch.redirect_check = lambda url, first: _fetch_redirect(controller, permissions, url, first)
    controller.permission_mode_now = lambda: permissions.mode.value
    controller.reviews.command_check = permissions.command_verdict  # the blast-radius card
    registry.register(TaskTool(agent, controller, settings.agents))
    controller.shape_tools()
    # The checklist is engine state; views learn about it through the event bus.
    todos.subscribe(
        lambda items: agent.emit(ev.TodosChanged(tuple(item.shown() for item in items)))
    )
    runtime = Runtime(
        root,
        settings,
        provider,
        registry,
        todos,
        store,
        agent,
        controller,
        permissions=permissions,
        workspace=workspace,
    )
    runtime.mcp = _mcp_manager(settings, registry, agent, controller, root)
    # Subscribed before _offer_handoff's chooser runs (it runs before the next model call):
    # at approval the execution model is in place, so its window judges the handoff.
    phases = PhaseModels(agent, settings, provider, configure_context)
    agent.subscribe(phases)
    runtime.phases = phases
    # The card estimates execution: priced with the model that will run the plan.
    controller.reviews.execution_price = lambda: price_of(
        phases.session_settings, phases.session_provider
    )
    controller.reviews.runner = phases.runner_line
    runtime.plan_turns = PlanTurnWatch(agent.emit, lambda: controller.mode)
    agent.subscribe(runtime.plan_turns)
    if resume is not None:
        agent.load_history(resume.messages)
        controller.restore(resume.mode)
        runtime.problems += resume.problems
    # ui.start_mode applies to new sessions only: a resumed one keeps its own mode.
    by_config = resume is None and settings.ui.start_mode == "plan"
    if (plan or by_config) and controller.mode is not Mode.PLAN:
        controller.enter_plan()
        runtime.started_in_plan = True
    phases.apply(controller.mode)  # a resumed or start_mode PLAN plans with the planning model
    runtime.read_notices += read_notices
    runtime.problems += controller.guard.warnings + controller.policy.warnings
    runtime.problems += permissions.warnings
    runtime.problems += profile_problems(settings.agents)
    if settings.user_only_warning:  # e.g. a project file's plan.critic, never applied
        runtime.problems.append(settings.user_only_warning)
    return runtime
