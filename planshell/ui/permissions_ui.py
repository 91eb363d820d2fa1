"""The permission mode in the chat: status bar, ``/mode`` and the shift+tab cycle.

shift+tab cycles normal (``ask``) -> ``accept-edits`` -> plan mode -> back to
``ask``. ``auto`` is never reached by cycling, only chosen with ``/mode auto``
(or config / ``--permission-mode``); from ``auto`` the key goes back to ``ask``.
Plan mode is entered and left the way its own key does (plan_ui), so every
rule about PLAN (a person leaves it, an open review freezes it) still holds.
The ``/mode`` command is registered here (``PlanshellApp.COMMAND_MODULES``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planshell.ui.commands import Subcommand, command

if TYPE_CHECKING:
    from planshell.runtime import Runtime
    from planshell.ui.host import CommandContext

MODES = ("ask", "accept-edits", "auto")
CYCLE_KEYS = "shift+tab"
CYCLE_BINDING_ID = "cycle-mode"


def where(runtime: Runtime) -> str:
    """ "plan" in PLAN, else the permission mode."""
    if runtime.plan.mode.value == "plan":
        return "plan"
    return runtime.permissions.mode.value if runtime.permissions is not None else "ask"


def show(screen: CommandContext, runtime: Runtime | None) -> None:
    """The status bar's permission marker (hidden in PLAN: plan mode's gate decides there)."""
    if runtime is None or runtime.permissions is None:
        screen.status.set_permission_mode(None)
        return
    now = where(runtime)
    screen.status.set_permission_mode(
        None if now == "plan" else now, sandbox=now != "plan" and sandboxed(runtime)
    )


def sandboxed(runtime: Runtime) -> bool:
    """Whether bash outside plan mode is known to run in the workspace sandbox.

    Known after the first command (the bwrap probe runs then, never at start-up);
    until then nothing is claimed.
    """
    return runtime.workspace is not None and runtime.workspace.known_active is True


def sandbox_line(runtime: Runtime) -> str:
    """One line on how bash runs outside plan mode, for ``/mode``."""
    policy = runtime.workspace
    if policy is None or policy.setting == "off":
        return 'Commands run without a sandbox (permissions.sandbox = "off").'
    if policy.known_active is None:
        return "Commands run in the workspace sandbox when bubblewrap works (checked at the first command)."
    if not policy.known_active:
        return policy.notice or "Commands run without the workspace sandbox."
    net = "network allowed" if policy.network else "no network"
    return (
        f"Commands run in the workspace sandbox: project writable (not .git), the rest "
        f"read-only, {net}; a re-run outside it asks unless in auto."
    )


async def cycle(screen: CommandContext) -> None:
    runtime = screen.runtime
    if runtime is None or runtime.permissions is None:
        return
    now = where(runtime)
    if now == "ask":
        runtime.permissions.set_mode("accept-edits")
    elif now == "accept-edits":
        await screen.plan_ui.command("on")
    elif now == "plan":
        await screen.plan_ui.command("off")
        if where(runtime) != "plan":
            runtime.permissions.set_mode("ask")
    else:  # auto: back to the safe end of the cycle
        runtime.permissions.set_mode("ask")
    show(screen, runtime)


def _mode_names(ctx: CommandContext, arg: str) -> list[str]:
    return list(MODES)


@command(
    "mode",
    "Show or set the permission mode: ask, accept-edits, auto",
    argument="[MODE]",
    complete=_mode_names,
    key=CYCLE_KEYS,
    subcommands=(
        Subcommand("ask", "Permission mode ask: file changes and unproven commands ask first"),
        Subcommand(
            "accept-edits", "Permission mode accept-edits: edits inside the project run unasked"
        ),
        Subcommand("auto", "Permission mode auto: nothing asks"),
    ),
)
def mode_command(screen: CommandContext, arg: str) -> None:
    """``/mode``: show the mode; ``/mode ask|accept-edits|auto``: switch."""
    runtime = screen.runtime
    if runtime is None or runtime.permissions is None:
        screen.notify("The engine is not running yet.", severity="warning", timeout=3)
        return
    wanted = arg.strip().lower()
    if not wanted:
        screen.notify(
            f"Permission mode: {runtime.permissions.mode.value} "
            f"(choose with /mode {'|'.join(MODES)}; shift+tab cycles ask, accept-edits, plan). "
            + sandbox_line(runtime),
            timeout=5,
            markup=False,
        )
        return
    if wanted not in MODES:
        screen.notify(
            f"Unknown mode {wanted!r}: use {', '.join(MODES)}.",
            severity="error",
            markup=False,
            timeout=4,
        )
        return
    runtime.permissions.set_mode(wanted)
    if wanted == "auto":
        screen.notify(
            "Auto mode: nothing asks before it runs (deny rules still apply).",
            severity="warning",
            timeout=5,
        )
    show(screen, runtime)
