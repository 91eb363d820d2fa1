"""The conversation's slash commands: ``/clear``, ``/retry``, ``/compact`` and ``/resume``.

Each handler does its whole job through the generic ``CommandContext``; the
engine does the work (``Agent.reset``, ``retry``, ``compact``,
``PlanshellApp.restart_runtime``), the handler only decides and shows.
Imported at start-up through ``PlanshellApp.COMMAND_MODULES``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from planshell.ui.commands import command, idle_runtime

if TYPE_CHECKING:
    from planshell.ui.host import CommandContext

log = logging.getLogger(__name__)


@command("clear", "Start a new conversation (the old one stays in /resume)")
async def _clear(ctx: CommandContext, arg: str) -> None:
    runtime = idle_runtime(ctx, "clearing")
    if runtime is None:
        return
    agent = runtime.agent
    session = None
    if agent.session is not None:
        from planshell.agent.session import SessionLog

        agent.session.close()
        session = SessionLog.create(runtime.root)
    agent.reset(session)
    await ctx.transcript.clear_entries()
    ctx.status.set_context(0, agent.meter.window, agent.cost)
    ctx.transcript.add_note("New conversation. (/resume brings back earlier ones.)")


@command("retry", "Regenerate the last reply (or ask again after an error)")
def _retry(ctx: CommandContext, arg: str) -> None:
    runtime = idle_runtime(ctx, "retrying")
    if runtime is None:
        return
    if not runtime.agent.messages:
        ctx.notify("Nothing to retry yet.")
        return
    ctx.run_turn(runtime.agent.retry, failed="The retry failed unexpectedly")


@command(
    "compact",
    "Summarise the older conversation now (the plan and mode are kept)",
    argument="[WHAT TO KEEP]",
)
def _compact(ctx: CommandContext, arg: str) -> None:
    """Summarise the older conversation now (Esc cancels it like a turn)."""
    runtime = idle_runtime(ctx, "compacting")
    if runtime is None:
        return
    if not runtime.agent.messages:
        ctx.notify("Nothing to compact yet.")
        return
    agent = runtime.agent

    async def compact() -> None:
        await agent.compact(arg)

    ctx.run_turn(compact, failed="Compaction failed unexpectedly")


def _session_ids(ctx: CommandContext, arg: str) -> list[str]:
    from planshell.agent.session import list_sessions

    return [p.stem for p in list_sessions(ctx.app.root)][:20]


@command(
    "resume",
    "Pick an earlier conversation of this project to continue",
    argument="[ID]",
    complete=_session_ids,
)
def _resume(ctx: CommandContext, arg: str) -> None:
    runtime = idle_runtime(ctx, "resuming another conversation")
    if runtime is None:
        return
    from planshell.agent.session import SessionNotFound, find_session, list_sessions

    if arg:
        try:
            path = find_session(runtime.root, arg)
        except SessionNotFound as exc:
            ctx.notify(str(exc), severity="error")
            return
        ctx.run_worker(resume_session(ctx, path), group="command", exit_on_error=False)
        return
    from planshell.ui.screens.resume import ResumeScreen

    current = runtime.agent.session.path if runtime.agent.session is not None else None

    def chosen(path: Path | None) -> None:
        if path is not None:
            ctx.run_worker(resume_session(ctx, path), group="command", exit_on_error=False)

    ctx.app.push_screen(ResumeScreen(list_sessions(runtime.root), current), chosen)


async def resume_session(ctx: CommandContext, path: Path) -> None:
    """Load the conversation at ``path`` into a new runtime and show it in place of this one."""
    from planshell.agent.session import SessionLog

    try:
        loaded = SessionLog.load(path)
    except OSError as exc:
        ctx.notify(f"Cannot read {path.name}: {exc.strerror}", severity="error")
        return
    try:
        runtime = await ctx.app.restart_runtime(loaded)
    except Exception as exc:
        log.error("could not resume %s", path, exc_info=exc)
        ctx.app.notify(f"Could not resume: {exc}", severity="error", logged=True)
        return
    await ctx.transcript.clear_entries()
    await ctx.attach_runtime(runtime, loaded)
