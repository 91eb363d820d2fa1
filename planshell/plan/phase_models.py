"""A model per phase: ``[plan] model/provider`` plans, the session's model executes.

Without ``plan.model``/``plan.provider``/``plan.base_url`` the session's model
serves both phases and nothing here changes a thing. With them, entering PLAN
puts the planning provider on the agent and leaving PLAN (approval, ``/plan
off``, the toggle) puts the session's provider back; the window, compaction and
price follow each switch (``configure``), so the approval handoff is judged
against the execution model's window and each reply is priced with the
model that wrote it.

Credentials: the planning provider is built from its own settings. The
session's ``api_key``, ``headers`` and ``[request]`` fields carry over only
when it is the session's own provider at the session's own URL; otherwise the
planning provider's own key variable applies, so one provider's key is never
sent to another's URL.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from planshell.agent import events as ev
from planshell.config import RequestSettings, Settings
from planshell.llm.factory import choose_provider, make_provider
from planshell.plan.controller import Mode

if TYPE_CHECKING:
    from planshell.agent.loop import Agent
    from planshell.llm.types import Provider

Configure = Callable[["Agent", Settings], None]


def plan_phase_settings(settings: Settings, environ: Mapping[str, str]) -> Settings | None:
    """The settings the planning provider is built from, or None: the session's model plans."""
    plan = settings.plan
    if plan.provider is None and plan.model is None and plan.base_url is None:
        return None
    session = choose_provider(settings, environ)
    provider = plan.provider or session
    same_provider = provider == session
    own = same_provider and plan.base_url in (None, settings.base_url)
    model = plan.model or (settings.model if same_provider else None)
    window = plan.context_window
    if window is None and own and model == settings.model:
        window = settings.context_window
    update: dict[str, object] = {
        "provider": provider,
        "model": model,
        "base_url": plan.base_url or (settings.base_url if same_provider else None),
        "context_window": window,
    }
    if not own:  # another provider or URL: its own key variable, none of the session's secrets
        update |= {"api_key": None, "headers": {}, "request": RequestSettings()}
    return settings.model_copy(update=update)


class PhaseModels:
    """Which provider the agent talks to in each phase (subscribed to ``ModeChanged``)."""

    def __init__(
        self,
        agent: Agent,
        settings: Settings,
        session_provider: Provider,
        configure: Configure,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.agent = agent
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.session_settings = settings
        self.session_provider = session_provider
        self.plan_settings = plan_phase_settings(settings, self.environ)
        self._plan_provider: Provider | None = None
        self._configure = configure
        self.planning = False
        # Providers replaced by a switch, for the front end to close (their pools).
        self.replaced: list[Provider] = []

    @property
    def split(self) -> bool:
        """True when planning has a model of its own."""
        return self.plan_settings is not None

    @property
    def plan_provider(self) -> Provider:
        """The planning provider (built on first use); the session's when there is none."""
        if self.plan_settings is None:
            return self.session_provider
        if self._plan_provider is None:
            self._plan_provider = make_provider(self.plan_settings, self.environ)
        return self._plan_provider

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.ModeChanged):
            self.apply(event.mode)

    def apply(self, mode: Mode) -> None:
        """Put the phase's provider on the agent (nothing happens when it is already there)."""
        self.planning = mode is Mode.PLAN
        target, settings = self.session_provider, self.session_settings
        if self.planning and self.plan_settings is not None:
            try:
                target, settings = self.plan_provider, self.plan_settings
            except Exception as exc:  # a missing key or bad URL: say so, plan with the session's
                self.plan_settings = None
                self.agent.emit(
                    ev.Notice(
                        f"The planning model could not be used ({exc}); the session's model plans.",
                        "warning",
                    )
                )
        if self.agent.provider is target:
            return
        self.agent.set_provider(target)
        self._configure(self.agent, settings)
        demo = getattr(target, "name", "") == "demo"
        self.agent.emit(ev.ModelChanged(target.label, self.planning and self.split, demo))

    def set_session(self, provider: Provider, settings: Settings) -> None:
        """``/model NAME``, ``/provider``: the execution (session) model; in effect now unless
        a planning model is in use."""
        self.session_provider, self.session_settings = provider, settings
        self.apply(Mode.PLAN if self.planning else Mode.OFF)

    def set_plan_model(self, model: str) -> Provider:
        """``/model plan NAME``: plan with NAME from now on (the planning provider as set, else
        the session's). Raises what building it raises; the old planning provider goes to
        ``replaced``."""
        base = self.plan_settings or self.session_settings
        new_settings = base.model_copy(
            update={"model": model, "context_window": base.plan.context_window}
        )
        new = make_provider(new_settings, self.environ)
        if self._plan_provider is not None:
            self.replaced.append(self._plan_provider)
        self.plan_settings, self._plan_provider = new_settings, new
        self.apply(Mode.PLAN if self.planning else Mode.OFF)
        return new

    def status_label(self) -> str:
        """The active model for the status bar: marked ``plan:`` when planning has its own."""
        label = self.agent.provider.label
        return f"plan: {label}" if self.planning and self.split else label

    def runner_line(self) -> str:
        """The approve dialog's "Runs with MODEL (planned with …)"; "" without a planning
        model of its own (one model plans and executes: nothing to say)."""
        if not self.split:
            return ""
        try:
            planner = self.plan_provider.label
        except Exception:  # the planning provider could not be built: the session's planned
            planner = "the session's model"
        return f"Runs with {self.session_provider.label} (planned with {planner})."

    def describe(self) -> str:
        """Both models, for ``/model``."""
        execution = self.session_provider.label
        if not self.split:
            return f"{execution} (plans and executes)"
        assert self.plan_settings is not None
        try:
            planning = self.plan_provider.label
        except Exception as exc:
            planning = f"unavailable ({exc})"
        return f"planning: {planning} · executing: {execution}"
