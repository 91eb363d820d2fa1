"""The tools every session starts with."""

from __future__ import annotations

from typing import Any

from planshell.tools.base import Tool
from planshell.tools.edit import EditTool, WriteTool
from planshell.tools.find import FindTool
from planshell.tools.grep import GrepTool
from planshell.tools.ls import LsTool
from planshell.tools.read import ReadTool
from planshell.tools.shell import BashTool
from planshell.tools.todo import TodoList, TodoWriteTool


def builtin_tools(todos: TodoList) -> list[Tool[Any]]:
    """All built-in tools: looking around first, then changing, then running."""
    return [
        ReadTool(),
        LsTool(),
        FindTool(),
        GrepTool(),
        EditTool(),
        WriteTool(),
        BashTool(),
        TodoWriteTool(todos),
    ]
