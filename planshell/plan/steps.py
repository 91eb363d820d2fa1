"""The execute phase's checklist: the approved plan's steps as todos, and ticking them.

Pure over text and the todo list: the controller decides when a tick may
happen (EXECUTE, the file still holds the approval) and writes the result.
"""

from __future__ import annotations

from planshell.plan.document import parse_plan, set_step_checked, verification_text
from planshell.tools.base import ToolError
from planshell.tools.todo import TodoItem, TodoList, TodoStatus

# (step number from 1, done, the step's text as the model expects it or "")
StepUpdate = tuple[int, bool, str]


def checklist(text: str) -> list[TodoItem]:
    """The todos an approved plan starts with: its steps, then one for its verification."""
    doc = parse_plan(text)
    items = [
        TodoItem(s.text, TodoStatus.COMPLETED if s.done else TodoStatus.PENDING) for s in doc.steps
    ]
    verify = verification_text(doc)
    if verify:
        first = next(
            (ln.strip() for ln in verify.splitlines() if ln.strip() and not ln.startswith("```")),
            "",
        )
        items.append(TodoItem(f"Verification: {first or 'run the checks'}", TodoStatus.PENDING))
    return items


def tick_steps(text: str, updates: list[StepUpdate]) -> str:
    """``text`` with the steps ticked or unticked; ToolError (nothing ticked) on a mismatch.

    Every update is checked before any is applied: a step that does not exist,
    or whose text is not what the model expected, means the plan changed.
    """
    doc = parse_plan(text)
    for number, _done, expected in updates:
        if not 1 <= number <= len(doc.steps):
            raise ToolError(f"Step {number} does not exist; the plan has {len(doc.steps)} steps.")
        actual = doc.steps[number - 1].text
        if expected and _norm(expected) != _norm(actual):
            raise ToolError(
                f"Step {number} is {actual!r}, not {expected!r}: the plan changed. "
                "Re-read the plan and retry; nothing was ticked."
            )
    for number, done, _ in updates:
        text = set_step_checked(text, number, done)
    return text


def tick_todos(todos: TodoList, updates: list[StepUpdate]) -> None:
    """Mirror the ticks in the checklist (steps come first in it, one todo each)."""
    for number, done, _ in updates:
        if number - 1 < len(todos.items):
            status = TodoStatus.COMPLETED if done else TodoStatus.PENDING
            todos.set_status(number - 1, status)


def _norm(text: str) -> str:
    return " ".join(text.split()).strip().lower()
