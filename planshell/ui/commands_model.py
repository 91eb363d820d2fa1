"""``/model`` and ``/provider``: show what is in use, or switch it for this session.

The switch itself is the engine's (``Runtime.switch_provider``, which also
forgets the old server's model list); the handler refuses while a turn runs,
shows the result, and closes the replaced provider in a worker. Imported at
start-up through ``PlanshellApp.COMMAND_MODULES``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planshell.ui.commands import command, idle_runtime

if TYPE_CHECKING:
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
    "Show the model (and what the server offers), or switch it",
    argument="[NAME]",
    complete=_model_names,
)
def _model(ctx: CommandContext, arg: str) -> None:
    switch_provider(ctx, model=arg or None)


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
    runtime = idle_runtime(ctx, "switching models")
    if runtime is None:
        return
    from planshell.runtime import ProviderSwitchError

    try:
        switch = runtime.switch_provider(provider=provider, model=model)
    except ProviderSwitchError as exc:
        ctx.notify(str(exc), severity="error")
        return
    ctx.show_provider()
    ctx.notify(f"Now using {switch.new.label} for this session.", title="Model")
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
    ctx.notify(
        f"Provider and model: {runtime.agent.provider.label}{served}",
        title="Model",
        markup=False,
    )
