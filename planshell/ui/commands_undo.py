"""``/undo``: put the project back as the last plan's execution found it.

The engine decides and does the work (``PlanController.undo_preview``/``undo``,
which refuse in plan mode: it is read-only, and ``/undo`` is a person's command,
never a tool). The handler reads the tree in a thread, shows the diff
(``UndoScreen``), asks before overwriting files edited by hand after the plan
(default: keep them), and notes the result in the transcript. Imported at
start-up through ``PlanshellApp.COMMAND_MODULES``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from planshell.sanitize import plain_line
from planshell.text import plural
from planshell.ui.commands import command, idle_runtime

if TYPE_CHECKING:
    from planshell.plan.controller import PlanController
    from planshell.ui.host import CommandContext

HAND_EDITS_SHOWN = 8


@command("undo", "Undo the last executed plan (shows the diff first; asks about your own edits)")
def _undo(ctx: CommandContext, arg: str) -> None:
    runtime = idle_runtime(ctx, "undoing a plan")
    if runtime is None:
        return
    ctx.run_worker(undo_last_plan(ctx, runtime.plan), group="command", exit_on_error=False)


async def undo_last_plan(ctx: CommandContext, plan: PlanController) -> None:
    """Preview, confirm, ask about hand edits, apply: each step can stop with nothing written."""
    # Here, not at the top: this module is imported before the first frame, and the
    # undo keeper pulls in the engine (events, tools, pydantic: ~0.1 s).
    from planshell.plan.undo_keeper import UndoRefused
    from planshell.ui.screens.confirm import ConfirmScreen
    from planshell.ui.screens.results import wait_for_answer
    from planshell.ui.screens.undo import UndoScreen

    try:
        preview = await asyncio.to_thread(plan.undo_preview)
    except UndoRefused as exc:
        ctx.transcript.add_note(str(exc), kind="warning")
        return
    if not preview.changes:
        ctx.transcript.add_note("Nothing to undo: the project already matches the last checkpoint.")
        return
    if not await wait_for_answer(ctx.app, UndoScreen(preview)):
        ctx.transcript.add_note("Undo cancelled: nothing was written.")
        return
    overwrite = False
    hand = preview.hand_edited
    if hand:
        names = "\n".join(plain_line(name, 120) for name in hand[:HAND_EDITS_SHOWN])
        more = (
            f"\n… and {len(hand) - HAND_EDITS_SHOWN} more" if len(hand) > HAND_EDITS_SHOWN else ""
        )
        answer = await wait_for_answer(
            ctx.app,
            ConfirmScreen(
                f"{plural(len(hand), 'file')} changed after the plan finished. Overwrite them too?",
                detail=names + more,
                yes="Overwrite",
                no="Keep my edits",
                default=False,
            ),
        )
        overwrite = bool(answer)
    try:
        problems = await asyncio.to_thread(plan.undo, overwrite, preview)
    except UndoRefused as exc:
        ctx.transcript.add_note(str(exc), kind="warning")
        return
    done = len(preview.changes) - (0 if overwrite else len(hand))
    text = f"Undid the last plan: {plural(done, 'file')} put back as its execution found them."
    if hand and not overwrite:
        text += f" Kept your edits to {plural(len(hand), 'file')}."
    if preview.commits:
        verb = "stays" if len(preview.commits) == 1 else "stay"
        text += f" {plural(len(preview.commits), 'commit')} made during the plan {verb} (HEAD not moved)."
    if problems:
        text += " Not restored: " + plain_line("; ".join(problems), 800)
    ctx.transcript.add_note(text, kind="warning" if problems else "info")
