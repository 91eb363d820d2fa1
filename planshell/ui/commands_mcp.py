"""``/mcp``: what the MCP servers are doing (planshell.mcp.report). Imported via COMMAND_MODULES."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planshell.ui.commands import command

if TYPE_CHECKING:
    from planshell.ui.host import CommandContext


@command("mcp", "MCP servers: state, tools, annotations, last error")
def _mcp(ctx: CommandContext, arg: str) -> None:
    from planshell.mcp.report import mcp_report
    from planshell.ui.screens.mcp import McpScreen

    runtime = ctx.runtime
    ctx.app.push_screen(McpScreen(mcp_report(runtime.mcp if runtime is not None else None)))
