"""``/mcp``: the MCP servers, their state, tools, annotations and last error.

The page is ``planshell.mcp.report.mcp_report`` (markdown, server text already
made printable); this screen only shows and scrolls it, like ``/plan why``.
"""

from __future__ import annotations

from planshell.ui.screens.plan_why import PlanWhyScreen

__all__ = ["McpScreen"]


class McpScreen(PlanWhyScreen):
    """The /mcp page in the /plan why viewer (same keys: arrows, PgUp/PgDn, Esc)."""
