"""What ``/mcp`` shows: servers, state, tools, annotations, last error (markdown).

Every server-given string (names, descriptions, errors) is untrusted: cut to
one printable line and escaped for a markdown table cell.
"""

from __future__ import annotations

from planshell.mcp.manager import McpManager
from planshell.sanitize import plain_line


def _cell(text: str, limit: int = 120) -> str:
    return plain_line(text, limit).replace("\\", "\\\\").replace("|", "\\|").replace("`", "'")


def mcp_report(manager: McpManager | None) -> str:
    """The /mcp page; says how to add a server when there is none."""
    if manager is None or not manager.states():
        return (
            "# MCP servers\n\nNo MCP server is configured. Add one under `[mcp.servers.NAME]` "
            "in your config (see docs/mcp.md)."
        )
    lines = [
        "# MCP servers",
        "",
        "| server | transport | state | plan mode | last error |",
        "|---|---|---|---|---|",
    ]
    for info in manager.states():
        plan = "read-only tools" if info.config.plan == "read-only-tools" else "nothing"
        if info.config.origin == "project":
            plan += " (project config)"
        transport = info.config.transport if info.state != "untrusted" else "?"
        lines.append(
            f"| {_cell(info.name)} | {transport} | {info.state} | {plan} | "
            f"{_cell(info.last_error or '-')} |"
        )
    for info in manager.states():
        if not info.tools and not info.skipped:
            continue
        lines += ["", f"## {_cell(info.name)}", "", "| tool | annotations | in plan mode |"]
        lines.append("|---|---|---|")
        for tool in info.tools:
            allowed = "yes" if tool.plan_permitted else "no"
            lines.append(f"| `{_cell(tool.name)}` | {tool.hints.describe()} | {allowed} |")
        for name in info.skipped:
            lines.append(f"| {_cell(name)} | refused: schema too large or not an object | no |")
    lines += [
        "",
        "Plan mode offers a tool only when the server says readOnlyHint and your own config "
        'sets plan = "read-only-tools" for that server; tools that appear later wait for the '
        "next entry into plan mode.",
    ]
    return "\n".join(lines)
