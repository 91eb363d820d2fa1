"""``/model`` and ``/provider``: show what is in use, or switch it for this session.

A bare ``/model`` opens a picker of the server's models (``ModelPickerScreen``):
the current one marked, typing filters, Enter switches, Esc cancels.

The switch itself is the engine's (``Runtime.switch_provider``, which also
forgets the old server's model list); the handler refuses while a turn runs,
shows the result, and closes the replaced provider in a worker. Imported at
start-up through ``PlanshellApp.COMMAND_MODULES``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from planshell.ui.commands import command, idle_runtime

if TYPE_CHECKING:
    from planshell.runtime import ProviderSwitch, Runtime
    from planshell.ui.host import CommandContext

SERVED_SHOWN = 12  # server model names listed by a bare /model


def _model_names(ctx: CommandContext, arg: str) -> list[str]:
    from planshell.llm.factory import DEFAULT_MODELS

    runtime = ctx.runtime
    served = runtime.served_models if runtime is not None else []
    names = list(dict.fromkeys([*served, *DEFAULT_MODELS.values()]))
    current = getattr(runtime.agent.provider, "model", "") if runtime is not None else ""
    if current and current not in names:
        names.insert(0, current)
    return names


@command(
    "model",
    "Pick a model, switch to NAME, or plan with NAME (/model plan NAME)",
    argument="[plan] [NAME]",
    complete=_model_names,
)
async def _model(ctx: CommandContext, arg: str) -> None:
    word, _, rest = arg.partition(" ")
    if word == "plan":
        switch_plan_model(ctx, rest.strip())
    elif arg:
        switch_provider(ctx, model=arg)
    else:
        await pick_model(ctx)


def switch_plan_model(ctx: CommandContext, name: str) -> None:
    """``/model plan NAME``: the model used while in PLAN; ``/model plan``: show both."""
    if not name:
        _show(ctx)
        return
    _switch(
        ctx,
        lambda runtime: runtime.switch_plan_model(name),
        lambda runtime, switch: (
            f"Planning with {switch.new.label}; {runtime.provider.label} executes."
        ),
    )


async def pick_model(ctx: CommandContext) -> None:
    """The picker: the names known so far at once, the server asked again meanwhile."""
    runtime = idle_runtime(ctx, "switching models")
    if runtime is None:
        return
    from planshell.ui.screens.model_picker import ModelPickerScreen
    from planshell.ui.screens.results import wait_for_answer

    provider = runtime.provider  # the session's (executing) model: /model plan NAME plans
    current = str(getattr(provider, "model", "") or "")
    lists = getattr(provider, "name", "") == "openai" and bool(getattr(provider, "base_url", ""))

    async def refresh() -> list[str]:
        await runtime.load_served_models()
        return list(runtime.served_models)

    picker = ModelPickerScreen(
        runtime.served_models,
        current,
        provider.label,
        refresh=refresh if lists else None,
        note="" if lists else "This provider does not list its models: /model NAME switches.",
    )
    chosen = await wait_for_answer(ctx.app, picker)
    if chosen is None:
        return
    if chosen == current and runtime.provider is provider:
        ctx.notify(f"Already using {provider.label}.", title="Model", markup=False)
        return
    switch_provider(ctx, model=chosen)


def _provider_names(ctx: CommandContext, arg: str) -> list[str]:
    from planshell.llm.factory import PROVIDER_CHOICES

    return list(PROVIDER_CHOICES)


@command(
    "provider",
    "Show the provider, or switch it for this session",
    argument="[NAME]",
    complete=_provider_names,
)
def _provider(ctx: CommandContext, arg: str) -> None:
    switch_provider(ctx, provider=arg or None)


def switch_provider(
    ctx: CommandContext, *, model: str | None = None, provider: str | None = None
) -> None:
    """Both commands: neither given shows the provider and model; else the engine switches."""
    if model is None and provider is None:
        _show(ctx)
        return
    _switch(ctx, lambda runtime: runtime.switch_provider(provider=provider, model=model), _now)


def _now(runtime: Runtime, switch: ProviderSwitch) -> str:
    phases = runtime.phases
    if phases is not None and phases.split and phases.planning:
        return f"{switch.new.label} will execute; {phases.plan_provider.label} plans."
    return f"Now using {switch.new.label} for this session."


def _switch(
    ctx: CommandContext,
    switch_in: Callable[[Runtime], ProviderSwitch],
    note: Callable[[Runtime, ProviderSwitch], str],
) -> None:
    """One switch (the session's or the planning model): refused while a turn runs; the
    engine's error, or the result and the replaced provider closed in a worker."""
    runtime = idle_runtime(ctx, "switching models")
    if runtime is None:
        return
    from planshell.runtime import ProviderSwitchError

    try:
        switch = switch_in(runtime)
    except ProviderSwitchError as exc:
        ctx.notify(str(exc), severity="error", markup=False)
        return
    ctx.show_provider()
    ctx.notify(note(runtime, switch), title="Model", markup=False)
    closing = switch.close_old()
    if closing is not None:
        ctx.run_worker(closing, group="close-provider", exit_on_error=False)


def _show(ctx: CommandContext) -> None:
    runtime = ctx.runtime
    if runtime is None:
        ctx.notify("Still starting up.")
        return
    served = ""
    names = runtime.served_models
    if names:
        shown = ", ".join(names[:SERVED_SHOWN])
        more = len(names) - SERVED_SHOWN
        served = f"\nThe server offers: {shown}" + (f" and {more} more" if more > 0 else "")
    phases = runtime.phases
    if phases is not None and phases.split:
        # Both, and which is in use: /model NAME changes the executing one, /model plan NAME
        # the planning one.
        active = "planning" if phases.planning else "executing"
        text = f"Models: {phases.describe()} (now {active}){served}"
    else:
        text = f"Provider and model: {runtime.agent.provider.label}{served}"
    text += "\n/model NAME switches the session's model; /model plan NAME the planning one."
    ctx.notify(text, title="Model", markup=False)
