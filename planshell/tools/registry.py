"""All known tools, and the subset currently offered to the model."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from planshell.llm.types import ToolSpec
from planshell.tools.base import Tool


class ToolRegistry:
    """Holds every tool and an *active set*: the names the model is offered.

    Plan mode swaps the active set and later restores it; the registry itself
    has no notion of modes.
    """

    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        self._active: list[str] = []
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool[Any], *, active: bool = True) -> None:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        if active:
            self._active.append(tool.name)

    def replace(self, tool: Tool[Any]) -> None:
        """Swap the object behind a registered name, keeping whether it is active."""
        if tool.name not in self._tools:
            raise KeyError(tool.name)
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        """Drop a tool (an MCP server's tool that went away); unknown names are ignored."""
        self._tools.pop(name, None)
        self._active = [n for n in self._active if n != name]

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def all(self) -> list[Tool[Any]]:
        return list(self._tools.values())

    def names(self) -> list[str]:
        return list(self._tools)

    @property
    def active(self) -> tuple[str, ...]:
        return tuple(self._active)

    def is_active(self, name: str) -> bool:
        return name in self._active

    def set_active(self, names: Iterable[str]) -> tuple[str, ...]:
        """Replace the active set; return the previous one so it can be restored."""
        wanted = list(dict.fromkeys(names))
        unknown = [n for n in wanted if n not in self._tools]
        if unknown:
            raise KeyError(f"unknown tools: {', '.join(unknown)}")
        previous = tuple(self._active)
        self._active = wanted
        return previous

    def specs(self) -> list[ToolSpec]:
        return [self._tools[n].spec() for n in self._active]
