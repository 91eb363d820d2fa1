"""What plan mode pins into a compacted conversation, read from live state every time.

The agent calls this after each compaction (``Agent.pin_parts``). It reads the
controller, the plan file and the checklist as they are *now*; nothing here is
taken from the summary the model wrote. The mode and any approval stay in the
controller: this text only tells the model about them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planshell.agent.events import Mode
from planshell.plan.store import PlanStoreError
from planshell.tools.todo import TodoStatus

if TYPE_CHECKING:
    from planshell.plan.controller import PlanController

_MARKS = {TodoStatus.COMPLETED: "[x]", TodoStatus.IN_PROGRESS: "[~]", TodoStatus.PENDING: "[ ]"}


def plan_pins(controller: PlanController) -> str | None:
    """Mode, plan (full text in PLAN; in EXECUTE the system prompt carries it) and checklist."""
    mode = controller.mode
    path = controller.plan_path
    shown = controller.agent.ctx.display(path) if path is not None else None
    lines: list[str] = []
    if mode is Mode.PLAN:
        lines.append(
            "Mode: PLAN (read-only). No plan has been approved in this mode: only the user "
            "approves, in planshell's review after you call exit_plan_mode."
        )
        if path is not None:
            try:
                text = controller.store.read(path)
            except PlanStoreError as exc:
                text = f"(the plan file could not be read: {exc})"
            lines.append(f"The plan file so far ({shown}), exactly as saved:\n\n{text}")
        else:
            lines.append("No plan file has been written yet.")
    elif mode is Mode.EXECUTE:
        lines.append(
            f"Mode: EXECUTE. The user approved {shown}; its full text is in the system prompt."
        )
    else:
        lines.append("Mode: normal (plan mode is off).")
    items = controller.todos.items
    if items:
        lines.append("Checklist:\n" + "\n".join(f"- {_MARKS[i.status]} {i.content}" for i in items))
    return "\n\n".join(lines)
