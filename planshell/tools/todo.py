"""The agent's todo list and the ``todo_write`` tool that lets the model keep it.

``TodoList`` is plain observable state: the UI subscribes to it and redraws,
the tool replaces it. It knows nothing about Textual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import StrEnum

from pydantic import Field

from planshell.tools.base import Effect, Tool, ToolArgs, ToolContext, ToolError, ToolResult


class TodoStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


_MARKS = {TodoStatus.COMPLETED: "[x]", TodoStatus.IN_PROGRESS: "[~]", TodoStatus.PENDING: "[ ]"}


@dataclass(frozen=True)
class TodoItem:
    """One task. Frozen, so a list handed to a subscriber is a true snapshot."""

    content: str
    status: TodoStatus = TodoStatus.PENDING
    active_form: str | None = None  # "Running tests" for a spinner while in progress
    # A plan step's evidence state: "unverified" (ticked done, no recorded work) or "skipped".
    note: str = ""

    def shown(self) -> tuple[str, str]:
        """``(content, status)`` for views: a noted completed step shows its note as status."""
        if self.note and self.status is TodoStatus.COMPLETED:
            return self.content, self.note
        return self.content, self.status.value


TodoListener = Callable[[list[TodoItem]], None]


class TodoList:
    """An ordered list of todo items that tells subscribers about every change."""

    def __init__(self, items: Iterable[TodoItem] = ()) -> None:
        self._items = list(items)
        self._listeners: list[TodoListener] = []

    @property
    def items(self) -> list[TodoItem]:
        """A copy, so callers cannot change the list behind the subscribers' backs."""
        return list(self._items)

    def replace(self, items: Iterable[TodoItem]) -> None:
        self._items = list(items)
        self._notify()

    def set_status(self, index: int, status: TodoStatus) -> None:
        if not 0 <= index < len(self._items):
            raise IndexError(f"no todo item {index}; the list has {len(self._items)} items")
        self._items[index] = replace(self._items[index], status=status)
        self._notify()

    def subscribe(self, callback: TodoListener) -> Callable[[], None]:
        """Call ``callback(items)`` after each change; returns an unsubscribe function."""
        self._listeners.append(callback)

        def unsubscribe() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unsubscribe

    def render(self) -> str:
        if not self._items:
            return "(no todos)"
        return "\n".join(f"{_MARKS[item.status]} {item.content}" for item in self._items)

    def _notify(self) -> None:
        for callback in list(self._listeners):
            callback(self.items)


class TodoEntry(ToolArgs):
    content: str = Field(min_length=1, description="The task.")
    status: TodoStatus = Field(description="Its state.")


class TodoWriteArgs(ToolArgs):
    todos: list[TodoEntry] = Field(description="The whole list; replaces the previous one.")


class TodoWriteTool(Tool[TodoWriteArgs]):
    """Replace the agent's todo list.

    Its effects are only ``READ``: it changes nothing outside the agent's own
    in-memory state (no files, processes or network), so it is as safe as a
    read and stays available in plan mode, where tracking steps is useful.
    """

    name = "todo_write"
    description = (
        "Track multi-step work in a todo list the user sees: one task in_progress at a "
        "time, each completed when done."
    )
    Args = TodoWriteArgs
    effects = frozenset({Effect.READ})

    def __init__(self, todos: TodoList) -> None:
        self.todos = todos

    def headline(self, args: TodoWriteArgs) -> str:
        done = sum(t.status is TodoStatus.COMPLETED for t in args.todos)
        return f"todo_write {done}/{len(args.todos)} done"

    async def run(self, args: TodoWriteArgs, ctx: ToolContext) -> ToolResult:
        active = [t.content for t in args.todos if t.status is TodoStatus.IN_PROGRESS]
        if len(active) > 1:
            raise ToolError(
                f"{len(active)} tasks are in_progress ({'; '.join(active)}); mark only the one "
                "you are working on now as in_progress and the others pending or completed."
            )
        self.todos.replace(TodoItem(t.content, t.status) for t in args.todos)
        return ToolResult(self.todos.render(), data={"count": len(args.todos)})
