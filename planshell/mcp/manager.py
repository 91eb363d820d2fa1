"""All configured MCP servers, kept in step with the tool registry.

Tools arrive inactive and are offered through ``on_added`` (the plan
controller's ``mcp_tools_added``: in plan mode they wait for the next entry).
When the MCP schemas would exceed ``mcp.max_schema_chars``, none is offered up
front and ``mcp_search`` finds them and activates them for the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from planshell.config.mcp import McpSettings
from planshell.mcp.client import McpServer, ServerState
from planshell.mcp.tools import McpSearchTool, McpTool, schema_chars
from planshell.tools.registry import ToolRegistry


class McpManager:
    def __init__(
        self,
        settings: McpSettings,
        registry: ToolRegistry,
        *,
        on_notice: Callable[[str], None],
        on_added: Callable[[list[str], bool], None],
        in_plan: Callable[[], bool],
        plan_names: Callable[[], frozenset[str]],
        untrusted: list[str] = (),  # type: ignore[assignment]
        root: str | None = None,
        on_over_budget: Callable[[], None] | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self._notice = on_notice
        self._on_added = on_added
        self._in_plan = in_plan
        self._plan_names = plan_names
        # The controller's mcp_over_budget (it knows plan mode's fixed set); None: demote here.
        self._on_over = on_over_budget
        self.servers: dict[str, McpServer] = {}
        self.listed: list[ServerState] = []  # not started: untrusted project, disabled
        self.turn_tools: set[str] = set()  # activated by mcp_search for this turn
        for name, cfg in settings.servers.items():
            server = McpServer(name, cfg, on_tools=self._sync, on_notice=on_notice, root=root)
            if cfg.enabled:
                self.servers[name] = server
            else:
                server.info.state = "disabled"
                self.listed.append(server.info)
        for name in untrusted:
            from planshell.config.mcp import McpServerConfig

            placeholder = McpServerConfig(command="(untrusted)")
            self.listed.append(
                ServerState(name, placeholder, "untrusted", "project config not trusted")
            )
        self.search = McpSearchTool(self._hidden, self._activate)

    def start(self) -> None:
        """Start every server in the background (call inside the running event loop)."""
        for server in self.servers.values():
            server.start()

    async def stop(self) -> None:
        await asyncio.gather(*(s.stop() for s in self.servers.values()))

    def states(self) -> list[ServerState]:
        return [s.info for s in self.servers.values()] + self.listed

    def tools(self) -> list[McpTool]:
        return [t for s in self.servers.values() for t in s.info.tools]

    def over_budget(self) -> bool:
        return schema_chars(self.tools()) > self.settings.max_schema_chars

    def end_turn(self) -> None:
        """Tools mcp_search activated stay for one turn only."""
        if self.turn_tools:
            active = [n for n in self.registry.active if n not in self.turn_tools]
            self.turn_tools.clear()
            self.registry.set_active(active)

    def _sync(self, server: McpServer) -> None:
        """A server's tool list (re)arrived: replace, drop and add registry entries."""
        fresh = {t.name: t for t in server.info.tools}
        for tool in self.registry.all():
            if isinstance(tool, McpTool) and tool.server == server.name and tool.name not in fresh:
                self.registry.unregister(tool.name)
        added: list[str] = []
        for name, tool in fresh.items():
            existing = self.registry.get(name)
            if existing is None:
                self.registry.register(tool, active=False)
                added.append(name)
            elif isinstance(existing, McpTool):
                self.registry.replace(tool)  # new hints count at the next check
            else:
                server.info.skipped.append(name)  # never shadows a built-in
        over = self.over_budget()
        if over and not self.registry.is_active(self.search.name):
            # Registered already by a plan-mode entry (plan_offer) it may still be inactive:
            # offer it now (in PLAN, the controller keeps it for when plan mode is left).
            self._register_search()
            self._on_added([self.search.name], True)
        if added:
            self._on_added(added, not over)
            if over:  # the ones offered before the budget ran out go back behind mcp_search
                if self._on_over is not None:
                    self._on_over()
                else:
                    self.registry.set_active(
                        [n for n in self.registry.active if not n.startswith("mcp__")]
                    )

    def plan_offer(self, allowed: list[str]) -> list[str]:
        """What plan mode offers up front of its MCP tools ``allowed`` (fixed at entry).

        The same budget as outside plan mode, over the tools plan mode allows: all
        of them when their schemas fit ``max_schema_chars``, else ``mcp_search``
        alone (it lists and activates only ``allowed``: see ``_hidden``/``_activate``).
        """
        tools = [t for t in self.tools() if t.name in set(allowed)]
        if schema_chars(tools) <= self.settings.max_schema_chars:
            return [t.name for t in tools]
        self._register_search()
        return [self.search.name]

    def _register_search(self) -> None:
        if self.registry.get(self.search.name) is None:
            self.registry.register(self.search, active=False)

    def _hidden(self) -> list[McpTool]:
        """mcp_search's candidates: in plan mode only the tools plan mode allows."""
        hidden = [t for t in self.tools() if not self.registry.is_active(t.name)]
        if self._in_plan():
            allowed = self._plan_names()
            hidden = [t for t in hidden if t.name in allowed]
        return hidden

    def _activate(self, names: list[str]) -> list[str]:
        """Activate ``names`` for the turn; in plan mode only the tools plan mode allows."""
        if self._in_plan():
            allowed = self._plan_names()
            names = [n for n in names if n in allowed]
        known = [n for n in names if self.registry.get(n) is not None]
        new = [n for n in known if not self.registry.is_active(n)]
        self.turn_tools.update(new)
        self.registry.set_active([*self.registry.active, *new])
        return known


def untrusted_servers(settings: Any) -> list[str]:
    """Server names an untrusted project config defines (listed, never started)."""
    project = getattr(settings, "untrusted_project", None)
    if project is None:
        return []
    section = project.file.data.get("mcp")
    servers = section.get("servers") if isinstance(section, dict) else None
    return [str(n) for n in servers] if isinstance(servers, dict) else []
