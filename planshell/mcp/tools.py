"""MCP server tools as planshell Tools: names, schemas, descriptions and results made safe.

Everything a server sends is untrusted: names are sanitised and capped,
descriptions stripped of terminal controls and capped, schemas size-checked,
results sanitised and capped. An MCP tool is never ``read_only`` (its effects
always include NETWORK and WRITE), so outside plan mode it goes through the
permission gate; ``plan_permitted`` is true only when the server says
``readOnlyHint: true`` AND the person opted the server in for planning.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from planshell.llm.types import ToolSpec
from planshell.sanitize import strip_terminal_controls
from planshell.tools.base import Effect, Tool, ToolArgs, ToolContext, ToolError, ToolResult

PREFIX = "mcp__"
NAME_MAX = 64  # what the providers accept for a function name
DESCRIPTION_MAX = 600
SCHEMA_MAX_CHARS = 4_000  # one tool's input schema, as JSON
RESULT_MAX = 20_000
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

#: Calls a server tool by its server-side name: (tool name, arguments) -> (text, is_error).
Caller = Callable[[str, dict[str, Any]], Awaitable[tuple[str, bool]]]


@dataclass(frozen=True)
class Hints:
    """A tool's annotations as the server states them (claims, not facts)."""

    read_only: bool = False
    destructive: bool | None = None
    open_world: bool | None = None

    def describe(self) -> str:
        parts = ["readOnlyHint" if self.read_only else "may write"]
        if self.destructive:
            parts.append("destructiveHint")
        if self.open_world is not False:
            parts.append("openWorldHint")
        return ", ".join(parts)


def sanitize_part(raw: str) -> str:
    """A name part in [A-Za-z0-9_-]; never empty."""
    return _UNSAFE.sub("_", raw)[:NAME_MAX] or "_"


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """``mcp__<server>__<tool>`` sanitised, capped at NAME_MAX and unique among ``taken``."""
    base = f"{PREFIX}{sanitize_part(server)}__{sanitize_part(tool)}"[:NAME_MAX]
    name, n = base, 2
    while name in taken:
        suffix = f"_{n}"
        name, n = base[: NAME_MAX - len(suffix)] + suffix, n + 1
    return name


def clean_text(text: str, limit: int) -> str:
    """Server text made printable (no terminal controls) and capped."""
    text = strip_terminal_controls(text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clean_schema(schema: Any) -> dict[str, Any] | None:
    """The input schema when it is an object schema within SCHEMA_MAX_CHARS, else None."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return None
    lean = {k: v for k, v in schema.items() if k not in ("title", "$schema")}
    props = lean.get("properties")
    if isinstance(props, dict):
        lean["properties"] = {
            k: ({kk: vv for kk, vv in v.items() if kk != "title"} if isinstance(v, dict) else v)
            for k, v in props.items()
        }
    try:
        text = json.dumps(lean)
    except (TypeError, ValueError):
        return None
    return lean if len(text) <= SCHEMA_MAX_CHARS else None


class McpArgs(ToolArgs):
    """Any JSON object: the server validates its own arguments."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool[McpArgs]):
    """One server tool. Never read-only for the permission gate (see the module doc)."""

    Args = McpArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.WRITE, Effect.NETWORK})
    description: ClassVar[str] = "An MCP server tool."
    name: ClassVar[str] = "mcp"
    concurrent: ClassVar[bool] = False
    is_mcp: ClassVar[bool] = True

    def __init__(
        self,
        *,
        name: str,
        server: str,
        remote_name: str,
        description: str,
        schema: dict[str, Any],
        hints: Hints,
        plan_opt_in: bool,
        call: Caller,
    ) -> None:
        self.name = name  # type: ignore[misc]
        self.description = description  # type: ignore[misc]
        self.server = server
        self.remote_name = remote_name
        self.schema = schema
        self.hints = hints
        self.plan_opt_in = plan_opt_in
        self._call = call

    @property
    def plan_permitted(self) -> bool:
        """Both the server's readOnlyHint and the person's opt-in for this server."""
        return self.hints.read_only and self.plan_opt_in

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.schema)

    def headline(self, args: McpArgs) -> str:
        shown = json.dumps(args.model_dump(), ensure_ascii=True)
        return f"{self.name} {clean_text(shown, 160)}"

    async def run(self, args: McpArgs, ctx: ToolContext) -> ToolResult:
        text, is_error = await self._call(self.remote_name, args.model_dump())
        content = clean_text(text, RESULT_MAX) or "(no text content)"
        if is_error:
            raise ToolError(f"{self.name} reported an error: {content}")
        return ToolResult(content, data={"mcp_server": self.server})


def schema_chars(tools: list[McpTool]) -> int:
    """What the tools' specs cost in the request, as JSON characters."""
    return sum(len(json.dumps([t.name, t.description, t.schema])) for t in tools)


class McpSearchArgs(ToolArgs):
    query: str = Field(description="Words to look for in MCP tool names and descriptions.")


class McpSearchTool(Tool[McpSearchArgs]):
    """Finds MCP tools that did not fit the tool list and offers them for this turn.

    Read-only itself; what it activates is decided by ``activate`` (the runtime
    passes a function that, in plan mode, activates only plan-permitted tools
    that were there when plan mode was entered).
    """

    name: ClassVar[str] = "mcp_search"
    description: ClassVar[str] = (
        "Search the tools of connected MCP servers that are not in your tool list yet; "
        "matching tools become available for this turn."
    )
    Args = McpSearchArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.READ})

    def __init__(
        self,
        candidates: Callable[[], list[McpTool]],
        activate: Callable[[list[str]], list[str]],
    ) -> None:
        self._candidates = candidates
        self._activate = activate

    async def run(self, args: McpSearchArgs, ctx: ToolContext) -> ToolResult:
        words = [w.lower() for w in args.query.split() if w]
        found = [
            t
            for t in self._candidates()
            if not words or any(w in f"{t.name} {t.description}".lower() for w in words)
        ][:10]
        if not found:
            return ToolResult(f"No MCP tool matches {clean_text(args.query, 80)!r}.")
        active = set(self._activate([t.name for t in found]))
        lines = [
            f"- {t.name}: {clean_text(t.description, 160)}"
            + ("" if t.name in active else " (not available in this mode)")
            for t in found
        ]
        return ToolResult("MCP tools now available for this turn:\n" + "\n".join(lines))
