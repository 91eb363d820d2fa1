"""TodoList state and the todo_write tool."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from planshell.tools.base import Effect, ToolContext, ToolError
from planshell.tools.todo import TodoItem, TodoList, TodoStatus, TodoWriteArgs, TodoWriteTool


def test_render_checklist() -> None:
    todos = TodoList(
        [
            TodoItem("Read the code", TodoStatus.COMPLETED),
            TodoItem("Write tests", TodoStatus.IN_PROGRESS, active_form="Writing tests"),
            TodoItem("Ship it"),
        ]
    )
    assert todos.render() == "[x] Read the code\n[~] Write tests\n[ ] Ship it"
    assert TodoList().render() == "(no todos)"


def test_subscribers_see_every_change_until_unsubscribed() -> None:
    todos = TodoList()
    seen: list[list[TodoItem]] = []
    unsubscribe = todos.subscribe(seen.append)
    todos.replace([TodoItem("a"), TodoItem("b")])
    todos.set_status(1, TodoStatus.COMPLETED)
    assert [[(i.content, i.status) for i in items] for items in seen] == [
        [("a", "pending"), ("b", "pending")],
        [("a", "pending"), ("b", "completed")],
    ]
    unsubscribe()
    unsubscribe()  # harmless twice
    todos.replace([])
    assert len(seen) == 2


def test_items_is_a_copy_and_bad_index_is_refused() -> None:
    todos = TodoList([TodoItem("a")])
    todos.items.clear()
    assert len(todos.items) == 1
    with pytest.raises(IndexError, match="no todo item 3"):
        todos.set_status(3, TodoStatus.COMPLETED)


async def test_todo_write_replaces_and_renders(tmp_path: Path) -> None:
    todos = TodoList([TodoItem("old")])
    tool = TodoWriteTool(todos)
    args = TodoWriteArgs.model_validate(
        {
            "todos": [
                {"content": "Plan", "status": "completed"},
                {"content": "Build", "status": "in_progress"},
            ]
        }
    )
    result = await tool.run(args, ToolContext(root=tmp_path))
    assert result.content == "[x] Plan\n[~] Build"
    assert [i.content for i in todos.items] == ["Plan", "Build"]
    assert tool.headline(args) == "todo_write 1/2 done"


async def test_todo_write_allows_one_in_progress_only(tmp_path: Path) -> None:
    todos = TodoList([TodoItem("keep")])
    args = TodoWriteArgs.model_validate(
        {
            "todos": [
                {"content": "A", "status": "in_progress"},
                {"content": "B", "status": "in_progress"},
            ]
        }
    )
    with pytest.raises(ToolError, match=r"2 tasks are in_progress \(A; B\); mark only the one"):
        await TodoWriteTool(todos).run(args, ToolContext(root=tmp_path))
    assert [i.content for i in todos.items] == ["keep"]


def test_todo_args_are_validated() -> None:
    with pytest.raises(ValidationError):
        TodoWriteArgs.model_validate({"todos": [{"content": "x", "status": "done"}]})
    with pytest.raises(ValidationError):
        TodoWriteArgs.model_validate({"todos": [{"content": "", "status": "pending"}]})


def test_todo_write_is_read_only() -> None:
    tool = TodoWriteTool(TodoList())
    assert tool.effects == {Effect.READ}
    assert tool.read_only
